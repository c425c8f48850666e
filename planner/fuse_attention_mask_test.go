package planner_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/planner"
)

// maskedChain builds a decoder's attention core on [1, 4, ·, 8] heads: q
// [1, 4, 5, 8], kᵀ [1, 4, 8, 7] and v [1, 4, 7, 8], MatMul, then the
// nodes of steps between the scores and the Softmax, each named by what
// it does: "scale" (Mul by 0.5), "negscale" (Mul by −0.5), "where" (Where
// of the bool input cond writing the constant fill where cond is false),
// "where-hides" (where it is true), "add" (Add of the float input m),
// "add-first" (the same, m first). cond and m have shape mask; fill is
// −inf unless set.
func maskedChain(mask []int64, fill float32, steps ...string) *graph.Model {
	g := graph.NewGraph("masked")
	f32 := func(s ...int64) *graph.Type { return graph.TensorType(graph.Float, graph.ShapeOf(s...)) }
	g.Inputs = []*graph.ValueInfo{{Name: "q", Type: f32(1, 4, 5, 8)}, {Name: "kt", Type: f32(1, 4, 8, 7)}, {Name: "v", Type: f32(1, 4, 7, 8)},
		{Name: "cond", Type: graph.TensorType(graph.Bool, graph.ShapeOf(mask...))}, {Name: "m", Type: f32(mask...)}}
	g.Initializers["half"], _ = graph.FromSlice(graph.Float, nil, []float32{0.5})
	g.Initializers["neghalf"], _ = graph.FromSlice(graph.Float, nil, []float32{-0.5})
	g.Initializers["fill"], _ = graph.FromSlice(graph.Float, nil, []float32{fill})
	g.Nodes = []*graph.Node{{Name: "qk", OpType: "MatMul", Inputs: []string{"q", "kt"}, Outputs: []string{"s0"}}}
	prev := "s0"
	for i, st := range steps {
		out := "s" + string(rune('1'+i))
		n := &graph.Node{Name: st, Outputs: []string{out}, Index: i + 1}
		switch st {
		case "scale":
			n.OpType, n.Inputs = "Mul", []string{prev, "half"}
		case "negscale":
			n.OpType, n.Inputs = "Mul", []string{prev, "neghalf"}
		case "where":
			n.OpType, n.Inputs = "Where", []string{"cond", prev, "fill"}
		case "where-hides":
			n.OpType, n.Inputs = "Where", []string{"cond", "fill", prev}
		case "add":
			n.OpType, n.Inputs = "Add", []string{prev, "m"}
		case "add-first":
			n.OpType, n.Inputs = "Add", []string{"m", prev}
		}
		g.Nodes = append(g.Nodes, n)
		prev = out
	}
	g.Nodes = append(g.Nodes,
		&graph.Node{Name: "sm", OpType: "Softmax", Inputs: []string{prev}, Outputs: []string{"p"}, Index: len(steps) + 1,
			Attrs: map[string]*graph.Attribute{"axis": {Name: "axis", Type: graph.AttrInt, I: -1}}},
		&graph.Node{Name: "pv", OpType: "MatMul", Inputs: []string{"p", "v"}, Outputs: []string{"y"}, Index: len(steps) + 2})
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	return &graph.Model{Name: "masked", IRVersion: 8, Opsets: map[string]int64{"": 13}, Graph: g}
}

// TestPlanFusesMaskedAttention checks the fusion of attentions masked by
// a Where that writes −inf or the lowest float32, as Hugging Face's
// exports do (either way round, the scale before or after it), or by an
// added float mask (the scale before it), the mask becoming the fused
// node's fourth input, and what keeps a masked chain apart.
func TestPlanFusesMaskedAttention(t *testing.T) {
	dev := fakeDevice{"cpu", map[string]bool{"MatMul": true, "Mul": true, "Where": true, "Add": true, "Softmax": true, "ScaledDotProductAttention": true}}
	inf := float32(math.Inf(-1))
	for _, tc := range []struct {
		name  string
		mask  []int64
		fill  float32
		steps []string
		input string
		hides bool
		scale float32
	}{
		{"causal where", []int64{5, 7}, inf, []string{"scale", "where-hides"}, "cond", true, 0.5},
		{"where then scale", []int64{1, 1, 5, 7}, inf, []string{"where", "scale"}, "cond", false, 0.5},
		{"lowest float32", []int64{5, 7}, -math.MaxFloat32, []string{"where-hides", "scale"}, "cond", true, 0.5},
		{"padding add", []int64{1, 1, 1, 7}, inf, []string{"scale", "add"}, "m", false, 0.5},
		{"add first", []int64{4, 1, 7}, inf, []string{"add-first"}, "m", false, 1},
		{"keys only", []int64{7}, inf, []string{"where"}, "cond", false, 1},
	} {
		p, err := planner.New(maskedChain(tc.mask, tc.fill, tc.steps...), planner.Options{Devices: []planner.Device{dev}})
		require.NoError(t, err, tc.name)
		require.Len(t, p.Steps, 1, tc.name)
		f := p.Steps[0].Node
		require.Equal(t, "ScaledDotProductAttention", f.OpType, tc.name)
		require.Equal(t, []string{"q", "kt", "v", tc.input}, f.Inputs, tc.name)
		params := ops.Params[ops.ScaledDotProductAttentionParams](f, 1)
		require.Equal(t, tc.scale, params.Scale, tc.name)
		require.Equal(t, tc.hides, params.MaskHides == 1, tc.name)
		require.Equal(t, graph.TensorType(graph.Float, graph.ShapeOf(1, 4, 5, 8)), p.Types[p.Steps[0].Out[0]], tc.name)
	}
	// A Where's mask, then an added one (Hugging Face's GPT-2): one float
	// mask, a Where of the condition, the added mask and the fill in the
	// Add's place, which the fused node reads.
	for _, hides := range []bool{false, true} {
		where := "where"
		if hides {
			where = "where-hides"
		}
		m := maskedChain([]int64{5, 7}, -math.MaxFloat32, "scale", where, "add")
		m.Graph.Inputs[4].Type = graph.TensorType(graph.Float, graph.ShapeOf(1, 1, 1, 7))
		p, err := planner.New(m, planner.Options{Devices: []planner.Device{dev}})
		require.NoError(t, err, where)
		require.Len(t, p.Steps, 2, where)
		c, f := p.Steps[0].Node, p.Steps[1].Node
		want := []string{"cond", "m", "fill"}
		if hides {
			want = []string{"cond", "fill", "m"}
		}
		require.Equal(t, "Where", c.OpType, where)
		require.Equal(t, want, c.Inputs, where)
		require.Equal(t, graph.TensorType(graph.Float, graph.ShapeOf(1, 1, 5, 7)), p.Types[p.Steps[0].Out[0]], where)
		require.Equal(t, "ScaledDotProductAttention", f.OpType, where)
		require.Equal(t, []string{"q", "kt", "v", c.Outputs[0]}, f.Inputs, where)
		params := ops.Params[ops.ScaledDotProductAttentionParams](f, 1)
		require.Equal(t, float32(0.5), params.Scale, where)
		require.Zero(t, params.MaskHides, where)
	}
	// Not fused: a scale after an added mask (which it would scale), a
	// negative one after a Where (−inf to +inf), a fill above the lowest
	// float16, or scaled above it, a mask that widens the scores, two
	// Wheres.
	for _, tc := range []struct {
		name  string
		mask  []int64
		fill  float32
		steps []string
	}{
		{"add then scale", []int64{1, 1, 1, 7}, inf, []string{"add", "scale"}},
		{"where then negative scale", []int64{5, 7}, inf, []string{"where", "negscale"}},
		{"high fill", []int64{5, 7}, -1e4, []string{"where"}},
		{"fill scaled high", []int64{5, 7}, -1e5, []string{"where", "scale"}},
		{"widening", []int64{2, 1, 5, 7}, inf, []string{"where"}},
		{"rows widened", []int64{1, 7}, inf, nil},
		{"two Wheres", []int64{5, 7}, inf, []string{"where", "where"}},
	} {
		m := maskedChain(tc.mask, tc.fill, tc.steps...)
		if tc.name == "rows widened" {
			// Scores of one query row, a mask of five.
			g := m.Graph
			g.Inputs[0].Type = graph.TensorType(graph.Float, graph.ShapeOf(1, 4, 1, 8))
			g.Inputs[3].Type = graph.TensorType(graph.Bool, graph.ShapeOf(5, 7))
			g.Nodes = append(g.Nodes[:1:1], append([]*graph.Node{{Name: "where", OpType: "Where", Inputs: []string{"cond", "s0", "fill"}, Outputs: []string{"s1"}, Index: 1}}, g.Nodes[1:]...)...)
			g.Nodes[2].Inputs = []string{"s1"}
		}
		requireUnfused(t, m, dev, tc.name)
	}
}
