package loader

import (
	"errors"
	"strings"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

// outOfOrder builds y = Relu(Neg(x)) + x with the nodes listed back to
// front, and an If whose branch reads the Neg's output.
func outOfOrder() *graph.Model {
	g := graph.NewGraph("main")
	f := graph.TensorType(graph.Float, graph.ShapeOf(2))
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: f}, {Name: "c", Type: graph.TensorType(graph.Bool, graph.ShapeOf())}}
	g.Outputs = []*graph.ValueInfo{{Name: "y", Type: f}, {Name: "z", Type: f}}
	branch := func(op string) *graph.Graph {
		b := graph.NewGraph(op)
		b.Outputs = []*graph.ValueInfo{{Name: op + "_out", Type: f}}
		// The branch's own nodes are out of order too.
		b.Nodes = []*graph.Node{
			{OpType: "Abs", Inputs: []string{op + "_mid"}, Outputs: []string{op + "_out"}},
			{OpType: op, Inputs: []string{"n"}, Outputs: []string{op + "_mid"}},
		}
		return b
	}
	g.Nodes = []*graph.Node{
		{OpType: "Add", Inputs: []string{"r", "x"}, Outputs: []string{"y"}},
		{OpType: "If", Inputs: []string{"c"}, Outputs: []string{"z"}, Attrs: map[string]*graph.Attribute{
			"then_branch": {Name: "then_branch", Type: graph.AttrGraph, G: branch("Neg")},
			"else_branch": {Name: "else_branch", Type: graph.AttrGraph, G: branch("Relu")}}},
		{OpType: "Relu", Inputs: []string{"n"}, Outputs: []string{"r"}},
		{OpType: "Neg", Inputs: []string{"x"}, Outputs: []string{"n"}},
	}
	for i, n := range g.Nodes {
		n.Index = i
	}
	return &graph.Model{Name: "m", IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g}
}

func TestSortGraphs(t *testing.T) {
	m := outOfOrder()
	if err := validate(m); err == nil || !strings.Contains(err.Error(), "topological order") {
		t.Fatalf("the unsorted model validates: %v", err)
	}
	warnings := sortGraphs(m)
	if err := validate(m); err != nil {
		t.Fatal(err)
	}
	var ops []string
	for i, n := range m.Graph.Nodes {
		ops = append(ops, n.OpType)
		if n.Index != i {
			t.Errorf("%s has index %d at position %d", n.OpType, n.Index, i)
		}
	}
	// Stable: Neg first (nothing else is ready), then the If (it reads n
	// through its branches) before Relu, as listed, then Add.
	if got := strings.Join(ops, " "); got != "Neg If Relu Add" {
		t.Errorf("order %s, want Neg If Relu Add", got)
	}
	if len(warnings) != 3 || !strings.Contains(warnings[len(warnings)-1], `graph "main": 2 of 4 nodes were not in topological order; reordered`) {
		t.Errorf("warnings %q", warnings)
	}
	if again := sortGraphs(m); again != nil {
		t.Errorf("a sorted model is reordered again: %q", again)
	}

	// A cycle is left for validation to report.
	g := graph.NewGraph("cycle")
	f := graph.TensorType(graph.Float, graph.ShapeOf(1))
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: f}}
	g.Outputs = []*graph.ValueInfo{{Name: "b", Type: f}}
	g.Nodes = []*graph.Node{{OpType: "Add", Inputs: []string{"x", "b"}, Outputs: []string{"a"}}, {OpType: "Neg", Inputs: []string{"a"}, Outputs: []string{"b"}}}
	cyc := &graph.Model{Name: "cycle", IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g}
	sortGraphs(cyc)
	if err := validate(cyc); !errors.Is(err, ErrInvalidModel) {
		t.Errorf("a cycle: %v", err)
	}
}
