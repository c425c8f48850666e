package planner_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/x448/float16"

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

// packedMHA is mhaChain with its heads cut out of a packed projection
// qkv[4, 2, 72] ([T, B, 3·H·d], H 3) by a Slice of the last axis and a
// Reshape to [4, 6, 8] each; extra names a value that is also a graph
// output.
func packedMHA(extra string) *graph.Model {
	m := mhaChain([]int64{4, 6, 8}, -1, extra)
	g := m.Graph
	g.Inputs = []*graph.ValueInfo{{Name: "qkv", Type: graph.TensorType(graph.Float, graph.ShapeOf(4, 2, 72))}}
	g.Initializers["heads"], _ = graph.FromSlice(graph.Int64, []int64{3}, []int64{4, 6, 8})
	g.Initializers["axis"], _ = graph.FromSlice(graph.Int64, []int64{1}, []int64{2})
	var cut []*graph.Node
	for i, h := range []string{"qh", "kh", "vh"} {
		lo, hi := "lo"+h, "hi"+h
		g.Initializers[lo], _ = graph.FromSlice(graph.Int64, []int64{1}, []int64{int64(24 * i)})
		g.Initializers[hi], _ = graph.FromSlice(graph.Int64, []int64{1}, []int64{int64(24 * (i + 1))})
		cut = append(cut, &graph.Node{Name: "slice" + h, OpType: "Slice", Inputs: []string{"qkv", lo, hi, "axis"}, Outputs: []string{"s" + h}},
			&graph.Node{Name: "reshape" + h, OpType: "Reshape", Inputs: []string{"s" + h, "heads"}, Outputs: []string{h}})
	}
	g.Nodes = append(cut, g.Nodes...)
	return m
}

// ofType returns m with its float32 graph inputs and constants made dt
// (float32 or float16, see asFloat16).
func ofType(dt graph.DType, m *graph.Model) *graph.Model {
	if dt == graph.Float16 {
		return asFloat16(m)
	}
	return m
}

// asFloat16 makes the float32 graph inputs and constants of m float16, but
// for those named in keep, and returns m.
func asFloat16(m *graph.Model, keep ...string) *graph.Model {
	g := m.Graph
	for _, in := range g.Inputs {
		if in.Type.Elem == graph.Float && !slices.Contains(keep, in.Name) {
			in.Type = graph.TensorType(graph.Float16, in.Type.Shape)
		}
	}
	for name, t := range g.Initializers {
		if t.DType != graph.Float || slices.Contains(keep, name) {
			continue
		}
		h := graph.NewTensor(graph.Float16, t.Shape)
		for i, f := range graph.View[float32](t) {
			graph.View[uint16](h)[i] = float16.Fromfloat32(f).Bits()
		}
		g.Initializers[name] = h
	}
	return m
}

// TestPlanFusesPackedAttention checks that the attention, float32 or
// float16, reads heads cut out of a packed projection through views
// instead of the Slices and Reshapes, and keeps those whose values are
// read elsewhere.
func TestPlanFusesPackedAttention(t *testing.T) {
	dev := fakeDevice{"cpu", map[string]bool{"MatMul": true, "Transpose": true, "Div": true, "Softmax": true, "Slice": true, "Reshape": true, "ScaledDotProductAttention": true}}
	for _, dt := range []graph.DType{graph.Float, graph.Float16} {
		p, err := planner.New(ofType(dt, packedMHA("")), planner.Options{Devices: []planner.Device{dev}})
		require.NoError(t, err)
		require.Equal(t, 13, p.Fused, dt)
		require.Len(t, p.Steps, 1)
		f := p.Steps[0].Node
		require.Equal(t, "ScaledDotProductAttention", f.OpType)
		require.Equal(t, []string{"qkv", "qkv", "qkv"}, f.Inputs)
		params := ops.Params[ops.ScaledDotProductAttentionParams](f, 1)
		// [T, B·H, d] of the packed [T, B, 3·H·d]: T at stride 144, B·H as
		// B at 72 then H at 8, d at 1; K and V 24 and 48 further on.
		require.Equal(t, []int64{0, 3, 1, 4, 144, 2, 2, 72, 3, 8, 1, 8, 1}, params.ViewQ)
		require.Equal(t, []int64{24, 3, 1, 4, 144, 2, 2, 72, 3, 8, 1, 8, 1}, params.ViewK)
		require.Equal(t, []int64{48, 3, 1, 4, 144, 2, 2, 72, 3, 8, 1, 8, 1}, params.ViewV)
		require.Equal(t, graph.TensorType(dt, graph.ShapeOf(4, 6, 8)), p.Types[p.Steps[0].Out[0]])

		// A head read elsewhere too keeps its Slice and Reshape.
		p, err = planner.New(ofType(dt, packedMHA("kh")), planner.Options{Devices: []planner.Device{dev}})
		require.NoError(t, err)
		require.Equal(t, 11, p.Fused, dt)
		f = p.Steps[len(p.Steps)-1].Node
		require.Equal(t, []string{"qkv", "kh", "qkv"}, f.Inputs)
		require.Nil(t, ops.Params[ops.ScaledDotProductAttentionParams](f, 1).ViewK)
	}
}

// TestPlanFusesAttention checks the fusion of float32 and float16
// attentions: the scale the inverse of the constant of the attention's
// type (√8, 2.828125 in float16), and what keeps a chain apart.
func TestPlanFusesAttention(t *testing.T) {
	dev := fakeDevice{"cpu", map[string]bool{"MatMul": true, "Transpose": true, "Div": true, "Softmax": true, "ScaledDotProductAttention": true}}
	for _, dt := range []graph.DType{graph.Float, graph.Float16} {
		m := ofType(dt, mhaChain([]int64{4, 6, 8}, -1, ""))
		root := float32(m.Graph.Initializers["root"].Float64At(0))
		p, err := planner.New(m, planner.Options{Devices: []planner.Device{dev}})
		require.NoError(t, err)
		require.Equal(t, 7, p.Fused, dt)
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
		require.InDelta(t, 2.828427, root, 2e-3)
		require.Equal(t, 1/root, params.Scale, dt)
		require.Equal(t, graph.TensorType(dt, graph.ShapeOf(4, 6, 8)), p.Types[p.Steps[0].Out[0]])

		// The result's Transpose is read elsewhere: the fused node ends at
		// the second product and the Transpose stays.
		p, err = planner.New(ofType(dt, mhaChain([]int64{4, 6, 8}, 2, "o")), planner.Options{Devices: []planner.Device{dev}})
		require.NoError(t, err)
		require.Equal(t, 6, p.Fused, dt)
		require.Len(t, p.Steps, 2)
		require.Equal(t, "ScaledDotProductAttention", p.Steps[0].Node.OpType)
		require.Nil(t, ops.Params[ops.ScaledDotProductAttentionParams](p.Steps[0].Node, 1).PermY)

		// A division by zero stays apart (with the queries' Transpose
		// before it), the fused node reading its result.
		byZero := ofType(dt, mhaChain([]int64{4, 6, 8}, -1, ""))
		byZero.Graph.Initializers["root"] = graph.NewTensor(dt, nil)
		p, err = planner.New(byZero, planner.Options{Devices: []planner.Device{dev}})
		require.NoError(t, err)
		require.Len(t, p.Steps, 3)
		f = p.Steps[2].Node
		require.Equal(t, []string{"qs", "kh", "vh"}, f.Inputs)
		require.Equal(t, float32(1), ops.Params[ops.ScaledDotProductAttentionParams](f, 1).Scale)

		// Not fused: the probabilities read elsewhere, a device without
		// the fused op, keys broadcast over the batch, Softmax over another
		// axis.
		for name, tc := range map[string]struct {
			m   *graph.Model
			dev fakeDevice
		}{
			"shared":    {mhaChain([]int64{4, 6, 8}, -1, "p"), dev},
			"no device": {mhaChain([]int64{4, 6, 8}, -1, ""), fakeDevice{"cpu", map[string]bool{"MatMul": true, "Transpose": true, "Div": true, "Softmax": true}}},
			"broadcast": {mhaChain([]int64{4, 1, 8}, -1, ""), dev},
			"axis":      {mhaChain([]int64{4, 6, 8}, 1, ""), dev},
		} {
			requireUnfused(t, ofType(dt, tc.m), tc.dev, name)
		}
	}
}

// requireUnfused requires the plan of m on dev to hold no
// ScaledDotProductAttention.
func requireUnfused(t *testing.T, m *graph.Model, dev planner.Device, name string) {
	t.Helper()
	p, err := planner.New(m, planner.Options{Devices: []planner.Device{dev}})
	require.NoError(t, err, name)
	for _, st := range p.Steps {
		require.NotEqual(t, "ScaledDotProductAttention", st.Node.OpType, name)
	}
}

// float32SDPA is a fakeDevice whose ScaledDotProductAttention takes
// float32 tensors only.
type float32SDPA struct{ fakeDevice }

func (d float32SDPA) Supports(q planner.Query) bool {
	if q.Node.OpType == "ScaledDotProductAttention" && (len(q.Inputs) == 0 || q.Inputs[0] == nil || q.Inputs[0].Elem != graph.Float) {
		return false
	}
	return d.fakeDevice.Supports(q)
}

// TestPlanKeepsMixedAttention checks that an attention mixing float16 and
// float32 values stays apart, and that a float16 one stays apart on a
// device whose fused node takes float32 only, which fuses the float32 one.
func TestPlanKeepsMixedAttention(t *testing.T) {
	dev := fakeDevice{"cpu", map[string]bool{"MatMul": true, "Transpose": true, "Div": true, "Softmax": true, "ScaledDotProductAttention": true}}
	for name, tc := range map[string]struct {
		m   *graph.Model
		dev planner.Device
	}{
		"float32 values":  {asFloat16(mhaChain([]int64{4, 6, 8}, -1, ""), "vh"), dev},
		"float32 keys":    {asFloat16(mhaChain([]int64{4, 6, 8}, -1, ""), "kh"), dev},
		"float32 queries": {asFloat16(mhaChain([]int64{4, 6, 8}, -1, ""), "qh", "root"), dev},
		"float32 only":    {asFloat16(mhaChain([]int64{4, 6, 8}, -1, "")), float32SDPA{dev}},
	} {
		requireUnfused(t, tc.m, tc.dev, name)
	}
	p, err := planner.New(mhaChain([]int64{4, 6, 8}, -1, ""), planner.Options{Devices: []planner.Device{float32SDPA{dev}}})
	require.NoError(t, err)
	require.Equal(t, 7, p.Fused)
}
