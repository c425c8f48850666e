package planner_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/planner"
)

// mhaChain builds the attention core that PyTorch's nn.MultiheadAttention
// exports: heads qh, kh, vh of [4, 6, 8] ([T, B·H, d]) transposed to
// [6, 4, 8] (kh to Kᵀ, [6, 8, 4]), the queries divided by √8, MatMul,
// Softmax over axis, MatMul and the Transpose back to [4, 6, 8]. khShape
// is kh's shape; extra names a value that is also a graph output.
func mhaChain(khShape []int64, axis int64, extra string) *graph.Model {
	g := graph.NewGraph("mha")
	heads := graph.TensorType(graph.Float, graph.ShapeOf(4, 6, 8))
	g.Inputs = []*graph.ValueInfo{{Name: "qh", Type: heads}, {Name: "kh", Type: graph.TensorType(graph.Float, graph.ShapeOf(khShape...))}, {Name: "vh", Type: heads}}
	g.Initializers["root"], _ = graph.FromSlice(graph.Float, nil, []float32{2.828427})
	perm := func(p ...int64) map[string]*graph.Attribute {
		return map[string]*graph.Attribute{"perm": {Name: "perm", Type: graph.AttrInts, Ints: p}}
	}
	g.Nodes = []*graph.Node{
		{Name: "tq", OpType: "Transpose", Inputs: []string{"qh"}, Outputs: []string{"qt"}, Attrs: perm(1, 0, 2)},
		{Name: "div", OpType: "Div", Inputs: []string{"qt", "root"}, Outputs: []string{"qs"}, Index: 1},
		{Name: "tk", OpType: "Transpose", Inputs: []string{"kh"}, Outputs: []string{"kt"}, Attrs: perm(1, 2, 0), Index: 2},
		{Name: "qk", OpType: "MatMul", Inputs: []string{"qs", "kt"}, Outputs: []string{"s"}, Index: 3},
		{Name: "sm", OpType: "Softmax", Inputs: []string{"s"}, Outputs: []string{"p"}, Index: 4,
			Attrs: map[string]*graph.Attribute{"axis": {Name: "axis", Type: graph.AttrInt, I: axis}}},
		{Name: "tv", OpType: "Transpose", Inputs: []string{"vh"}, Outputs: []string{"vt"}, Attrs: perm(1, 0, 2), Index: 5},
		{Name: "pv", OpType: "MatMul", Inputs: []string{"p", "vt"}, Outputs: []string{"o"}, Index: 6},
		{Name: "ty", OpType: "Transpose", Inputs: []string{"o"}, Outputs: []string{"y"}, Attrs: perm(1, 0, 2), Index: 7},
	}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	if extra != "" {
		g.Outputs = append(g.Outputs, &graph.ValueInfo{Name: extra})
	}
	return &graph.Model{Name: "mha", IRVersion: 8, Opsets: map[string]int64{"": 13}, Graph: g}
}

func TestPlanFusesAttention(t *testing.T) {
	dev := fakeDevice{"cpu", map[string]bool{"MatMul": true, "Transpose": true, "Div": true, "Softmax": true, "ScaledDotProductAttention": true}}
	p, err := planner.New(mhaChain([]int64{4, 6, 8}, -1, ""), planner.Options{Devices: []planner.Device{dev}})
	require.NoError(t, err)
	require.Equal(t, 7, p.Fused)
	require.Len(t, p.Steps, 1)
	f := p.Steps[0].Node
	require.Equal(t, ops.FusedDomain, f.Domain)
	require.Equal(t, "ScaledDotProductAttention", f.OpType)
	require.Equal(t, []string{"qh", "kh", "vh"}, f.Inputs)
	require.Equal(t, []string{"y"}, f.Outputs)
	params := ops.Params[ops.ScaledDotProductAttentionParams](f, 1)
	require.Equal(t, []int64{1, 0, 2}, params.PermQ)
	require.Equal(t, []int64{1, 2, 0}, params.PermK)
	require.Equal(t, []int64{1, 0, 2}, params.PermV)
	require.Equal(t, []int64{1, 0, 2}, params.PermY)
	require.InDelta(t, 1/2.828427, params.Scale, 1e-7)
	require.Equal(t, graph.ShapeOf(4, 6, 8), p.Types[p.Steps[0].Out[0]].Shape)

	// The result's Transpose is read elsewhere: the fused node ends at the
	// second product and the Transpose stays.
	p, err = planner.New(mhaChain([]int64{4, 6, 8}, 2, "o"), planner.Options{Devices: []planner.Device{dev}})
	require.NoError(t, err)
	require.Equal(t, 6, p.Fused)
	require.Len(t, p.Steps, 2)
	require.Equal(t, "ScaledDotProductAttention", p.Steps[0].Node.OpType)
	require.Nil(t, ops.Params[ops.ScaledDotProductAttentionParams](p.Steps[0].Node, 1).PermY)

	// A division by zero stays apart (with the queries' Transpose before
	// it), the fused node reading its result.
	byZero := mhaChain([]int64{4, 6, 8}, -1, "")
	byZero.Graph.Initializers["root"], _ = graph.FromSlice(graph.Float, nil, []float32{0})
	p, err = planner.New(byZero, planner.Options{Devices: []planner.Device{dev}})
	require.NoError(t, err)
	require.Len(t, p.Steps, 3)
	f = p.Steps[2].Node
	require.Equal(t, []string{"qs", "kh", "vh"}, f.Inputs)
	require.Equal(t, float32(1), ops.Params[ops.ScaledDotProductAttentionParams](f, 1).Scale)

	// Not fused: the probabilities read elsewhere, a device without the
	// fused op, keys broadcast over the batch, Softmax over another axis.
	for name, tc := range map[string]struct {
		m   *graph.Model
		dev fakeDevice
	}{
		"shared":    {mhaChain([]int64{4, 6, 8}, -1, "p"), dev},
		"no device": {mhaChain([]int64{4, 6, 8}, -1, ""), fakeDevice{"cpu", map[string]bool{"MatMul": true, "Transpose": true, "Div": true, "Softmax": true}}},
		"broadcast": {mhaChain([]int64{4, 1, 8}, -1, ""), dev},
		"axis":      {mhaChain([]int64{4, 6, 8}, 1, ""), dev},
	} {
		p, err := planner.New(tc.m, planner.Options{Devices: []planner.Device{tc.dev}})
		require.NoError(t, err, name)
		for _, st := range p.Steps {
			require.NotEqual(t, "ScaledDotProductAttention", st.Node.OpType, name)
		}
	}
}
