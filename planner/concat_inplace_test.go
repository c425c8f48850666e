package planner_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/hostfallback"
	"github.com/onnxvk/onnxvk/planner"
)

// concatModel builds x [batch, 3, 4] → Relu → a, x → Sigmoid → b, x → Neg
// → e, Concat(a, b, e) along axis → c, c → Abs → y. change, when set,
// edits the model first.
func concatModel(batch, axis int64, change func(g *graph.Graph)) *graph.Model {
	g := graph.NewGraph("concat")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(batch, 3, 4))}}
	g.Nodes = []*graph.Node{
		{Name: "relu", OpType: "Relu", Inputs: []string{"x"}, Outputs: []string{"a"}},
		{Name: "sigmoid", OpType: "Sigmoid", Inputs: []string{"x"}, Outputs: []string{"b"}},
		{Name: "neg", OpType: "Neg", Inputs: []string{"x"}, Outputs: []string{"e"}},
		{Name: "concat", OpType: "Concat", Inputs: []string{"a", "b", "e"}, Outputs: []string{"c"},
			Attrs: map[string]*graph.Attribute{"axis": {Name: "axis", Type: graph.AttrInt, I: axis}}},
		{Name: "abs", OpType: "Abs", Inputs: []string{"c"}, Outputs: []string{"y"}},
	}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	if change != nil {
		change(g)
	}
	for i, n := range g.Nodes {
		n.Index = i
	}
	return &graph.Model{Name: "concat", IRVersion: 8, Opsets: map[string]int64{"": 13}, Graph: g}
}

// TestPlanConcatInPlace checks that a Concat on the host whose inputs
// host steps write only for it has them written where its output holds
// them (parts of its buffer, which lives from the first of them on), that
// the plan's buffers never overlap while live, and that the CPU computes
// the same either way; and which Concats keep their copies: along an axis
// with a batch of 2 before it, an output that is a graph output, an input
// read twice, an input that is a graph input, an input made by a view.
func TestPlanConcatInPlace(t *testing.T) {
	cpu := hostfallback.NewDevice(nil)
	run := func(m *graph.Model, x *graph.Tensor) (*planner.Plan, []float32) {
		p, err := planner.New(m, planner.Options{Devices: []planner.Device{cpu}})
		require.NoError(t, err)
		checkNoOverlap(t, p)
		ex, err := backend.NewExecutor(p, []backend.Device{cpu})
		require.NoError(t, err)
		out, err := ex.Run(context.Background(), map[string]graph.Value{"x": x})
		require.NoError(t, err)
		return p, graph.View[float32](out["y"].(*graph.Tensor))
	}
	// want is y for input x along axis 1 of [1, 3, 4] inputs (or the
	// last axis).
	want := func(xs []float32, axis int) []float32 {
		parts := [3]func(float32) float32{
			func(v float32) float32 { return max(v, 0) },
			func(v float32) float32 { return float32(1 / (1 + math.Exp(-float64(v)))) },
			func(v float32) float32 { return -v },
		}
		var out []float32
		if axis == 1 {
			for _, f := range parts {
				for _, v := range xs {
					out = append(out, float32(math.Abs(float64(f(v)))))
				}
			}
			return out
		}
		for r := range 3 {
			for _, f := range parts {
				for _, v := range xs[4*r : 4*r+4] {
					out = append(out, float32(math.Abs(float64(f(v)))))
				}
			}
		}
		return out
	}
	x := graph.NewTensor(graph.Float, []int64{1, 3, 4})
	xs := graph.View[float32](x)
	for i := range xs {
		xs[i] = float32(math.Sin(float64(3*i + 1)))
	}
	p, got := run(concatModel(1, 1, nil), x)
	require.InDeltaSlice(t, want(xs, 1), got, 1e-6)
	c := p.Buffers[p.ValueIndex["c"]]
	require.NotNil(t, c)
	for i, name := range []string{"a", "b", "e"} {
		b := p.Buffers[p.ValueIndex[name]]
		require.NotNil(t, b, name)
		require.NotNil(t, b.Part, "%s: not written in place", name)
		require.Equal(t, p.ValueIndex["c"], b.Part.Of, name)
		require.Equal(t, c.Offset+int64(48*i), b.Offset, name)
		require.Equal(t, int64(48), b.Size, name)
	}
	require.Equal(t, p.Buffers[p.ValueIndex["a"]].First, c.First, "the Concat's buffer lives from its first part on")

	for _, tc := range []struct {
		name   string
		batch  int64
		axis   int64
		change func(g *graph.Graph)
	}{
		{"batch before the axis", 2, 1, nil},
		{"graph output", 1, 1, func(g *graph.Graph) { g.Outputs = append(g.Outputs, &graph.ValueInfo{Name: "c"}) }},
		{"read twice", 1, 1, func(g *graph.Graph) {
			g.Nodes = append(g.Nodes, &graph.Node{Name: "again", OpType: "Relu", Inputs: []string{"b"}, Outputs: []string{"z"}})
			g.Outputs = append(g.Outputs, &graph.ValueInfo{Name: "z"})
		}},
		{"graph input", 1, 1, func(g *graph.Graph) { g.Nodes[3].Inputs[1] = "x" }},
		{"view", 1, 1, func(g *graph.Graph) {
			g.Nodes[1] = &graph.Node{Name: "flat", OpType: "Identity", Inputs: []string{"x"}, Outputs: []string{"b"}}
		}},
	} {
		m := concatModel(tc.batch, tc.axis, tc.change)
		in := x
		if tc.batch == 2 {
			in = graph.NewTensor(graph.Float, []int64{2, 3, 4})
		}
		p, err := planner.New(m, planner.Options{Devices: []planner.Device{cpu}})
		require.NoError(t, err, tc.name)
		checkNoOverlap(t, p)
		for _, name := range []string{"a", "b", "e"} {
			if b := p.Buffers[p.ValueIndex[name]]; b != nil {
				require.Nil(t, b.Part, "%s: %s written in place", tc.name, name)
			}
		}
		ex, err := backend.NewExecutor(p, []backend.Device{cpu})
		require.NoError(t, err, tc.name)
		_, err = ex.Run(context.Background(), map[string]graph.Value{"x": in})
		require.NoError(t, err, tc.name)
	}
	// Along the last axis (rows of 4 from each input in turn) nothing
	// is in place, and the result is the same as computed by hand.
	p, got = run(concatModel(1, 2, nil), x)
	require.InDeltaSlice(t, want(xs, 2), got, 1e-6)
	require.Nil(t, p.Buffers[p.ValueIndex["a"]].Part)
}
