package planner_test

import (
	"context"
	"fmt"
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

// denseModel builds a DenseNet-like block on x [1, 2, 3]: a0 = Relu(x);
// layer i (1, 2, 3) reads c_i = Concat(a0, …, a_{i−1}) and writes a_i =
// Tanh(ReduceSum of c_i over its channels, kept) · (i+1) broadcast over 2
// channels; the block's output is Abs(Concat(a0, …, a3)). change, when
// set, edits the model first.
func denseModel(change func(g *graph.Graph)) *graph.Model {
	g := graph.NewGraph("dense")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(1, 2, 3))}}
	g.Initializers["axes"], _ = graph.FromSlice(graph.Int64, []int64{1}, []int64{1})
	g.Nodes = []*graph.Node{{Name: "relu", OpType: "Relu", Inputs: []string{"x"}, Outputs: []string{"a0"}}}
	concat := func(name string, ins []string, out string) *graph.Node {
		return &graph.Node{Name: name, OpType: "Concat", Inputs: append([]string{}, ins...), Outputs: []string{out},
			Attrs: map[string]*graph.Attribute{"axis": {Name: "axis", Type: graph.AttrInt, I: 1}}}
	}
	feats := []string{"a0"}
	for i := 1; i <= 3; i++ {
		c, s, tn, a := fmt.Sprint("c", i), fmt.Sprint("s", i), fmt.Sprint("t", i), fmt.Sprint("a", i)
		k := fmt.Sprint("k", i)
		g.Initializers[k], _ = graph.FromSlice(graph.Float, []int64{1, 2, 1}, []float32{float32(i + 1), -float32(i + 1)})
		g.Nodes = append(g.Nodes, concat("concat"+fmt.Sprint(i), feats, c),
			&graph.Node{Name: "sum" + fmt.Sprint(i), OpType: "ReduceSum", Inputs: []string{c, "axes"}, Outputs: []string{s}},
			&graph.Node{Name: "tanh" + fmt.Sprint(i), OpType: "Tanh", Inputs: []string{s}, Outputs: []string{tn}},
			&graph.Node{Name: "mul" + fmt.Sprint(i), OpType: "Mul", Inputs: []string{tn, k}, Outputs: []string{a}})
		feats = append(feats, a)
	}
	g.Nodes = append(g.Nodes, concat("concat4", feats, "c4"),
		&graph.Node{Name: "abs", OpType: "Abs", Inputs: []string{"c4"}, Outputs: []string{"y"}})
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	if change != nil {
		change(g)
	}
	for i, n := range g.Nodes {
		n.Index = i
	}
	return &graph.Model{Name: "dense", IRVersion: 8, Opsets: map[string]int64{"": 13}, Graph: g}
}

// TestPlanConcatChain checks that the Concats of a DenseNet-like block,
// each reading a prefix of the last one's inputs, all share the last one's
// buffer: its inputs written in place, the shorter Concats' outputs at its
// head, one buffer live from the first part's write to the last read of
// any part, no live buffers overlapping, and the result the same as
// computed by hand; and that a feature read by something else, or two
// Concats extending the same prefix differently, keep the copies.
func TestPlanConcatChain(t *testing.T) {
	cpu := hostfallback.NewDevice(nil)
	x := graph.NewTensor(graph.Float, []int64{1, 2, 3})
	xs := graph.View[float32](x)
	for i := range xs {
		xs[i] = float32(math.Sin(float64(5*i + 2)))
	}
	// want is y computed by hand.
	feats := [][]float32{make([]float32, 6)}
	for i, v := range xs {
		feats[0][i] = max(v, 0)
	}
	for i := 1; i <= 3; i++ {
		var s [3]float32
		for _, f := range feats {
			for ch := range len(f) / 3 {
				for j := range 3 {
					s[j] += f[3*ch+j]
				}
			}
		}
		a := make([]float32, 6)
		for j := range 3 {
			th := float32(math.Tanh(float64(s[j])))
			a[j], a[3+j] = th*float32(i+1), th*-float32(i+1)
		}
		feats = append(feats, a)
	}
	var want []float32
	for _, f := range feats {
		for _, v := range f {
			want = append(want, float32(math.Abs(float64(v))))
		}
	}
	run := func(m *graph.Model) (*planner.Plan, []float32) {
		p, err := planner.New(m, planner.Options{Devices: []planner.Device{cpu}})
		require.NoError(t, err)
		checkNoOverlap(t, p)
		ex, err := backend.NewExecutor(p, []backend.Device{cpu})
		require.NoError(t, err)
		out, err := ex.Run(context.Background(), map[string]graph.Value{"x": x})
		require.NoError(t, err)
		return p, graph.View[float32](out["y"].(*graph.Tensor))
	}
	p, got := run(denseModel(nil))
	require.InDeltaSlice(t, want, got, 1e-5)
	top := p.Buffers[p.ValueIndex["c4"]]
	require.NotNil(t, top)
	for i, name := range []string{"a0", "a1", "a2", "a3"} {
		b := p.Buffers[p.ValueIndex[name]]
		require.NotNil(t, b, name)
		require.NotNil(t, b.Part, "%s: not written in place", name)
		require.Equal(t, p.ValueIndex["c4"], b.Part.Of, name)
		require.Equal(t, top.Offset+int64(24*i), b.Offset, name)
	}
	for _, name := range []string{"c1", "c2", "c3"} {
		b := p.Buffers[p.ValueIndex[name]]
		require.NotNil(t, b, name)
		require.NotNil(t, b.Part, "%s: not at the head of c4's buffer", name)
		require.Equal(t, top.Offset, b.Offset, name)
	}
	require.Equal(t, p.Buffers[p.ValueIndex["a0"]].First, top.First, "the chain's buffer lives from its first part on")

	for _, tc := range []struct {
		name   string
		change func(g *graph.Graph)
	}{
		{"feature read by another op", func(g *graph.Graph) {
			g.Nodes = append(g.Nodes, &graph.Node{Name: "again", OpType: "Neg", Inputs: []string{"a2"}, Outputs: []string{"z"}})
			g.Outputs = append(g.Outputs, &graph.ValueInfo{Name: "z"})
		}},
		{"two extensions of one prefix", func(g *graph.Graph) {
			g.Nodes = append(g.Nodes, &graph.Node{Name: "other", OpType: "Concat", Inputs: []string{"a0", "a1", "a3"}, Outputs: []string{"o"},
				Attrs: map[string]*graph.Attribute{"axis": {Name: "axis", Type: graph.AttrInt, I: 1}}},
				&graph.Node{Name: "oabs", OpType: "Abs", Inputs: []string{"o"}, Outputs: []string{"z"}})
			g.Outputs = append(g.Outputs, &graph.ValueInfo{Name: "z"})
		}},
	} {
		p, got := run(denseModel(tc.change))
		require.InDeltaSlice(t, want, got, 1e-5, tc.name)
		for _, name := range []string{"c1", "c2", "c3"} {
			if b := p.Buffers[p.ValueIndex[name]]; b != nil {
				require.Nil(t, b.Part, "%s: %s at the head of c4's buffer", tc.name, name)
			}
		}
	}
}
