package ops

import (
	"fmt"
	"testing"
	"time"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/testenv"
)

// TestFoldDeepNesting folds 3000 nested Ifs whose every else_branch is an
// Identity of a constant: each branch folds to an initializer, and the
// whole nesting folds in time linear in its size (each level marked the
// uses of its whole subtree again: a 3000-deep model of 400 KB took
// 90 s to load and run; found by the hostile sweep). The bound of 30 s
// is some 50 times what the linear fold takes on a busy 2-core machine.
func TestFoldDeepNesting(t *testing.T) {
	testenv.SkipShort(t, "times a fold")
	const depth = 3000
	branches := func(then *graph.Graph, d int) map[string]*graph.Attribute {
		e := graph.NewGraph(fmt.Sprint("e", d))
		e.Nodes = []*graph.Node{{Name: fmt.Sprint("id", d), OpType: "Identity", Inputs: []string{"c"}, Outputs: []string{fmt.Sprint("e", d, "o")}}}
		e.Outputs = []*graph.ValueInfo{{Name: fmt.Sprint("e", d, "o")}}
		return map[string]*graph.Attribute{
			"then_branch": {Name: "then_branch", Type: graph.AttrGraph, G: then},
			"else_branch": {Name: "else_branch", Type: graph.AttrGraph, G: e},
		}
	}
	inner := graph.NewGraph("leaf")
	inner.Outputs = []*graph.ValueInfo{{Name: "c"}}
	for d := range depth {
		g := graph.NewGraph(fmt.Sprint("g", d))
		g.Nodes = []*graph.Node{{Name: fmt.Sprint("if", d), OpType: "If", Inputs: []string{"c"}, Outputs: []string{fmt.Sprint("o", d)}, Attrs: branches(inner, d)}}
		g.Outputs = []*graph.ValueInfo{{Name: fmt.Sprint("o", d)}}
		inner = g
	}
	m := &graph.Model{Graph: graph.NewGraph("main"), Opsets: map[string]int64{"": 13}}
	m.Graph.Nodes = []*graph.Node{{Name: "top", OpType: "If", Inputs: []string{"c"}, Outputs: []string{"y"}, Attrs: branches(inner, depth)}}
	m.Graph.Outputs = []*graph.ValueInfo{{Name: "y"}}
	known := map[string]*graph.Tensor{"c": graph.Scalar(graph.Bool, true)}
	for d := range depth + 1 {
		known[fmt.Sprint("e", d, "o")] = known["c"]
	}
	start := time.Now()
	if n := FoldConstants(m, known); n != depth+1 {
		t.Errorf("FoldConstants removed %d nodes, want %d", n, depth+1)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("folding %d nested Ifs took %v", depth, took)
	}
	// Each else_branch keeps its output as an initializer.
	top := m.Graph.Nodes[0].Attrs["else_branch"].G
	if len(top.Nodes) != 0 || top.Initializers[fmt.Sprint("e", depth, "o")] == nil {
		t.Errorf("the top else_branch has %d nodes and initializers %v", len(top.Nodes), top.Initializers)
	}
}
