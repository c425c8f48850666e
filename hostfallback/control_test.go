package hostfallback

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

// cfNode builds a node of op with the given input and output names; attrs
// alternate names and values (int64, []int64, *graph.Graph, *graph.Type).
func cfNode(op string, in, out []string, attrs ...any) *graph.Node {
	n := &graph.Node{OpType: op, Inputs: in, Outputs: out, Attrs: map[string]*graph.Attribute{}}
	for i := 0; i+1 < len(attrs); i += 2 {
		name := attrs[i].(string)
		a := &graph.Attribute{Name: name}
		switch v := attrs[i+1].(type) {
		case int64:
			a.Type, a.I = graph.AttrInt, v
		case []int64:
			a.Type, a.Ints = graph.AttrInts, v
		case *graph.Graph:
			a.Type, a.G = graph.AttrGraph, v
		case *graph.Type:
			a.Type, a.TP = graph.AttrTypeProto, v
		}
		n.Attrs[name] = a
	}
	return n
}

// cfGraph builds a graph with the given inputs and outputs (names; types
// are float32 tensors of unknown shape unless given in types) and nodes.
func cfGraph(ins, outs []string, types map[string]*graph.Type, nodes ...*graph.Node) *graph.Graph {
	g := graph.NewGraph("body")
	vi := func(name string) *graph.ValueInfo {
		t := types[name]
		if t == nil {
			t = graph.TensorType(graph.Float, nil)
		}
		return &graph.ValueInfo{Name: name, Type: t}
	}
	for _, n := range ins {
		g.Inputs = append(g.Inputs, vi(n))
	}
	for _, n := range outs {
		g.Outputs = append(g.Outputs, vi(n))
	}
	for i, n := range nodes {
		n.Index = i
	}
	g.Nodes = nodes
	return g
}

// cfRun runs n's kernel on in; outer names values that subgraphs may
// read from the enclosing scope.
func cfRun(t *testing.T, n *graph.Node, opset int64, nOut int, outer map[string]graph.Value, in ...graph.Value) ([]graph.Value, error) {
	t.Helper()
	k := Lookup("", n.OpType)
	if k == nil {
		t.Fatalf("no kernel for %s", n.OpType)
	}
	look := func(name string) (graph.Value, bool) { v, ok := outer[name]; return v, ok }
	c := &Call{Node: n, Opset: opset, In: in, Out: make([]graph.Value, nOut)}
	c.RunGraph = func(g *graph.Graph, args []graph.Value) ([]graph.Value, error) {
		return RunGraph(context.Background(), nil, g, map[string]int64{"": opset}, args, look)
	}
	err := k(c)
	return c.Out, err
}

func cfF32(t *testing.T, shape []int64, v ...float32) *graph.Tensor {
	t.Helper()
	x, err := graph.FromSlice(graph.Float, shape, v)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func cfI64(t *testing.T, shape []int64, v ...int64) *graph.Tensor {
	t.Helper()
	x, err := graph.FromSlice(graph.Int64, shape, v)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// cfWant checks that v is a tensor of shape and float values want.
func cfWant(t *testing.T, what string, v graph.Value, shape []int64, want ...float64) {
	t.Helper()
	x, ok := v.(*graph.Tensor)
	if !ok {
		t.Fatalf("%s: got %v, want a tensor", what, valueTypeOf(v))
	}
	got := make([]float64, x.NumElements())
	for i := range got {
		got[i] = x.Float64At(int64(i))
	}
	if !slices.Equal(x.Shape, shape) || !slices.Equal(got, want) {
		t.Fatalf("%s: got %v %v, want %v %v", what, x.Shape, got, shape, want)
	}
}

func TestIf(t *testing.T) {
	thenG := cfGraph(nil, []string{"a"}, nil)
	elseG := cfGraph(nil, []string{"y"}, nil, cfNode("Neg", []string{"a"}, []string{"y"}))
	n := cfNode("If", []string{"c"}, []string{"out"}, "then_branch", thenG, "else_branch", elseG)
	outer := map[string]graph.Value{"a": cfF32(t, []int64{2}, 1, 2)}
	for _, tc := range []struct {
		cond bool
		want []float64
	}{{true, []float64{1, 2}}, {false, []float64{-1, -2}}} {
		out, err := cfRun(t, n, 16, 1, outer, graph.Scalar(graph.Bool, tc.cond))
		if err != nil {
			t.Fatal(err)
		}
		cfWant(t, "If", out[0], []int64{2}, tc.want...)
	}
	if _, err := cfRun(t, n, 16, 1, outer, cfF32(t, []int64{2}, 1, 0)); err == nil {
		t.Fatal("a two-element condition was accepted")
	}
	if _, err := cfRun(t, n, 16, 2, outer, graph.Scalar(graph.Bool, true)); err == nil {
		t.Fatal("a branch with too few outputs was accepted")
	}
}

// loopBody adds the iteration number to an int64 accumulator, emits the
// new sum as a scan output and continues while i < limit (an outer value).
func loopBody() *graph.Graph {
	i64 := graph.TensorType(graph.Int64, graph.Shape{})
	types := map[string]*graph.Type{"i": i64, "acc": i64, "acc_out": i64, "scan": i64,
		"cond": graph.TensorType(graph.Bool, graph.Shape{}), "cond_out": graph.TensorType(graph.Bool, graph.Shape{})}
	return cfGraph([]string{"i", "cond", "acc"}, []string{"cond_out", "acc_out", "scan"}, types,
		cfNode("Add", []string{"acc", "i"}, []string{"acc_out"}),
		cfNode("Less", []string{"i", "limit"}, []string{"cond_out"}),
		cfNode("Identity", []string{"acc_out"}, []string{"scan"}))
}

func TestLoop(t *testing.T) {
	n := cfNode("Loop", []string{"M", "cond", "acc0"}, []string{"acc", "scan"}, "body", loopBody())
	zero := graph.Scalar(graph.Int64, int64(0))
	big := map[string]graph.Value{"limit": graph.Scalar(graph.Int64, int64(100))}
	out, err := cfRun(t, n, 16, 2, big, graph.Scalar(graph.Int64, int64(4)), graph.Scalar(graph.Bool, true), zero)
	if err != nil {
		t.Fatal(err)
	}
	cfWant(t, "acc", out[0], nil, 6)
	cfWant(t, "scan", out[1], []int64{4}, 0, 1, 3, 6)

	// No trip count: the body's condition ends the loop after i = 2.
	small := map[string]graph.Value{"limit": graph.Scalar(graph.Int64, int64(2))}
	out, err = cfRun(t, n, 16, 2, small, nil, graph.Scalar(graph.Bool, true), zero)
	if err != nil {
		t.Fatal(err)
	}
	cfWant(t, "acc", out[0], nil, 3)
	cfWant(t, "scan", out[1], []int64{3}, 0, 1, 3)

	// A false condition runs no iteration: the scan output is empty.
	out, err = cfRun(t, n, 16, 2, big, graph.Scalar(graph.Int64, int64(4)), graph.Scalar(graph.Bool, false), zero)
	if err != nil {
		t.Fatal(err)
	}
	cfWant(t, "acc", out[0], nil, 0)
	cfWant(t, "scan", out[1], []int64{0})

	if _, err := cfRun(t, n, 16, 2, big, cfF32(t, nil, 2), nil, zero); err == nil {
		t.Fatal("a float trip count was accepted")
	}
}

func TestLoopCarriesSequences(t *testing.T) {
	seqT := &graph.Type{Kind: graph.SequenceKind, Inner: graph.TensorType(graph.Float, nil)}
	types := map[string]*graph.Type{"i": graph.TensorType(graph.Int64, graph.Shape{}), "s": seqT, "s_out": seqT,
		"cond": graph.TensorType(graph.Bool, nil), "cond_out": graph.TensorType(graph.Bool, nil)}
	body := cfGraph([]string{"i", "cond", "s"}, []string{"cond_out", "s_out"}, types,
		cfNode("Identity", []string{"cond"}, []string{"cond_out"}),
		cfNode("SequenceInsert", []string{"s", "x"}, []string{"s_out"}))
	n := cfNode("Loop", []string{"M", "", "s0"}, []string{"s"}, "body", body)
	outer := map[string]graph.Value{"x": cfF32(t, []int64{1}, 7)}
	out, err := cfRun(t, n, 16, 1, outer, graph.Scalar(graph.Int64, int64(3)), nil, &graph.Sequence{Elem: graph.TensorType(graph.Float, nil)})
	if err != nil {
		t.Fatal(err)
	}
	s, ok := out[0].(*graph.Sequence)
	if !ok || len(s.Items) != 3 {
		t.Fatalf("got %v, want a sequence of 3", valueTypeOf(out[0]))
	}
}

// scanBody sums its input slices into the state and emits each new sum.
func scanBody() *graph.Graph {
	return cfGraph([]string{"sum", "x"}, []string{"sum_out", "y"}, nil,
		cfNode("Add", []string{"sum", "x"}, []string{"sum_out"}),
		cfNode("Identity", []string{"sum_out"}, []string{"y"}))
}

func TestScan9(t *testing.T) {
	x := cfF32(t, []int64{3, 2}, 1, 2, 3, 4, 5, 6)
	init := cfF32(t, []int64{2}, 0, 0)
	n := cfNode("Scan", []string{"init", "x"}, []string{"sum", "ys"}, "body", scanBody(), "num_scan_inputs", int64(1))
	out, err := cfRun(t, n, 11, 2, nil, init, x)
	if err != nil {
		t.Fatal(err)
	}
	cfWant(t, "sum", out[0], []int64{2}, 9, 12)
	cfWant(t, "ys", out[1], []int64{3, 2}, 1, 2, 4, 6, 9, 12)

	// Scan along axis 1, backwards, stacking the outputs along axis 1 in
	// reverse: the state is [3], the input slices are the columns.
	n = cfNode("Scan", []string{"init", "x"}, []string{"sum", "ys"}, "body", scanBody(), "num_scan_inputs", int64(1),
		"scan_input_axes", []int64{1}, "scan_input_directions", []int64{1},
		"scan_output_axes", []int64{-1}, "scan_output_directions", []int64{1})
	out, err = cfRun(t, n, 11, 2, nil, cfF32(t, []int64{3}, 0, 0, 0), x)
	if err != nil {
		t.Fatal(err)
	}
	cfWant(t, "sum", out[0], []int64{3}, 3, 7, 11)
	// Steps: column 1 (2 4 6), then +column 0 (3 7 11); reversed on output.
	cfWant(t, "ys", out[1], []int64{3, 2}, 3, 2, 7, 4, 11, 6)

	bad := cfNode("Scan", []string{"init", "x"}, []string{"sum", "ys"}, "body", scanBody(), "num_scan_inputs", int64(1),
		"scan_input_axes", []int64{2})
	if _, err := cfRun(t, bad, 11, 2, nil, init, x); err == nil {
		t.Fatal("an out-of-range scan axis was accepted")
	}
}

func TestScan8(t *testing.T) {
	// Batch of 2, sequences of 3 steps of [1]; the second batch entry
	// runs 2 steps and its scan output is padded with zeros.
	x := cfF32(t, []int64{2, 3, 1}, 1, 2, 3, 10, 20, 30)
	init := cfF32(t, []int64{2, 1}, 0, 100)
	n := cfNode("Scan", []string{"lens", "init", "x"}, []string{"sum", "ys"}, "body", scanBody(), "num_scan_inputs", int64(1))
	out, err := cfRun(t, n, 8, 2, nil, cfI64(t, []int64{2}, 3, 2), init, x)
	if err != nil {
		t.Fatal(err)
	}
	cfWant(t, "sum", out[0], []int64{2, 1}, 6, 130)
	cfWant(t, "ys", out[1], []int64{2, 3, 1}, 1, 3, 6, 110, 130, 0)

	out, err = cfRun(t, cfNode("Scan", []string{"", "init", "x"}, []string{"sum", "ys"}, "body", scanBody(),
		"num_scan_inputs", int64(1), "directions", []int64{1}), 8, 2, nil, nil, init, x)
	if err != nil {
		t.Fatal(err)
	}
	cfWant(t, "ys", out[1], []int64{2, 3, 1}, 3, 5, 6, 130, 150, 160)

	if _, err := cfRun(t, n, 8, 2, nil, cfI64(t, []int64{2}, 4, 1), init, x); err == nil {
		t.Fatal("a sequence length beyond the data was accepted")
	}
}

func TestControlFlowBodyErrors(t *testing.T) {
	body := cfGraph(nil, []string{"y"}, nil, cfNode("NoSuchOp", nil, []string{"y"}))
	n := cfNode("If", []string{"c"}, []string{"out"}, "then_branch", body, "else_branch", body)
	_, err := cfRun(t, n, 16, 1, nil, graph.Scalar(graph.Bool, true))
	if err == nil || errors.Is(err, ErrUnsupported) {
		t.Fatalf("got %v, want a subgraph error", err)
	}
}
