package hostfallback

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/planner"
)

// convModel is y = Conv(x, w) on x[1, 1, 3, 3] and w[1, 1, 1, 1] of dt.
func convModel(dt graph.DType) *graph.Model {
	g := graph.NewGraph("conv")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(dt, graph.ShapeOf(1, 1, 3, 3))}}
	g.Initializers["w"] = graph.NewTensor(dt, []int64{1, 1, 1, 1})
	g.Nodes = []*graph.Node{{Name: "conv", OpType: "Conv", Inputs: []string{"x", "w"}, Outputs: []string{"y"}}}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	return &graph.Model{Name: "conv", IRVersion: 8, Opsets: map[string]int64{"": 13}, Graph: g}
}

// TestPlanDeclinesUnsupportedType checks that a node of an element type its
// CPU kernel has no case for fails at planning, naming the node, its input
// types and the reason, while a type it has plans.
func TestPlanDeclinesUnsupportedType(t *testing.T) {
	devices := []planner.Device{NewDevice(nil)}
	_, err := planner.New(convModel(graph.Float16), planner.Options{Devices: devices})
	require.NoError(t, err)
	_, err = planner.New(convModel(graph.Int32), planner.Options{Devices: devices})
	require.ErrorIs(t, err, planner.ErrUnsupported)
	require.ErrorContains(t, err, `node "conv" (Conv, #0) with inputs (int32[1 1 3 3], int32[1 1 1 1])`)
	require.ErrorContains(t, err, "cpu: input 0 of element type int32 (the CPU kernel takes float32, float64, float16, bfloat16)")
}

// TestSupportChecksAttributes checks a Support's Check at planning and in
// the kernel: LayerNormalization with an integer stash_type.
func TestSupportChecksAttributes(t *testing.T) {
	f32 := graph.TensorType(graph.Float, graph.ShapeOf(2, 4))
	n := &graph.Node{Name: "ln", OpType: "LayerNormalization", Inputs: []string{"x", "s"}, Outputs: []string{"y"}}
	q := planner.Query{Node: n, Opset: 17, Inputs: []*graph.Type{f32, graph.TensorType(graph.Float, graph.ShapeOf(4))}}
	require.Empty(t, Decline(q))
	n.Attrs = map[string]*graph.Attribute{"stash_type": {Name: "stash_type", Type: graph.AttrInt, I: int64(graph.Int32)}}
	require.Equal(t, "stash_type int32 (the CPU kernel takes float32, float64, float16, bfloat16)", Decline(q))

	// The kernel refuses what planning would have, for nodes it runs
	// unplanned (a subgraph's).
	x, _ := graph.FromSlice(graph.Float, []int64{2, 4}, make([]float32, 8))
	s, _ := graph.FromSlice(graph.Float, []int64{4}, make([]float32, 4))
	c := &Call{Node: n, Opset: 17, In: []graph.Value{x, s}, Out: make([]graph.Value, 1)}
	require.ErrorIs(t, Lookup("", "LayerNormalization")(c), ErrUnsupported)
	n.Attrs = nil
	require.NoError(t, Lookup("", "LayerNormalization")(c))
	c.In[0] = graph.NewTensor(graph.Int32, []int64{2, 4})
	require.ErrorIs(t, Lookup("", "LayerNormalization")(c), ErrUnsupported)

	require.Equal(t, "no CPU kernel for NoSuchOp", Decline(planner.Query{Node: &graph.Node{OpType: "NoSuchOp"}}))
}

// TestMatMulTransBSupport checks the Support of the planner's fused
// MatMulTransB at planning (types and B's rank) and in the kernel.
func TestMatMulTransBSupport(t *testing.T) {
	n := &graph.Node{Name: "mmt", Domain: ops.FusedDomain, OpType: "MatMulTransB", Inputs: []string{"a", "b"}, Outputs: []string{"y"}}
	q := func(a, b *graph.Type) planner.Query {
		return planner.Query{Node: n, Opset: 1, Inputs: []*graph.Type{a, b}}
	}
	f32 := graph.TensorType(graph.Float, graph.ShapeOf(2, 3))
	require.Empty(t, Decline(q(f32, graph.TensorType(graph.Float, graph.ShapeOf(4, 3)))))
	require.Empty(t, Decline(q(graph.TensorType(graph.Float16, graph.ShapeOf(5, 2, 3)), graph.TensorType(graph.Float16, graph.ShapeOf(4, 3)))))
	require.Empty(t, Decline(q(f32, nil)), "an unknown B passes")
	require.Equal(t, "input 0 of element type int32 (the CPU kernel takes float32, float64, float16, bfloat16)",
		Decline(q(graph.TensorType(graph.Int32, graph.ShapeOf(2, 3)), graph.TensorType(graph.Int32, graph.ShapeOf(4, 3)))))
	require.Equal(t, "A of element type float32 and B of float16 (the CPU kernel takes one type for both)",
		Decline(q(f32, graph.TensorType(graph.Float16, graph.ShapeOf(4, 3)))))
	require.Equal(t, "B of rank 1 (the CPU kernel takes rank 2 or more)", Decline(q(f32, graph.TensorType(graph.Float, graph.ShapeOf(3)))))

	// Run unplanned, the kernel refuses the types planning would have.
	a, _ := graph.FromSlice(graph.Float, []int64{2, 3}, []float32{1, 2, 3, 4, 5, 6})
	b, _ := graph.FromSlice(graph.Float, []int64{1, 3}, []float32{1, 0, -1})
	c := &Call{Node: n, Opset: 1, In: []graph.Value{a, b}, Out: make([]graph.Value, 1)}
	require.NoError(t, Lookup(ops.FusedDomain, "MatMulTransB")(c))
	require.Equal(t, []float32{-2, -2}, graph.View[float32](c.Out[0].(*graph.Tensor)))
	c.In[1] = graph.NewTensor(graph.Int32, []int64{1, 3})
	require.ErrorIs(t, Lookup(ops.FusedDomain, "MatMulTransB")(c), ErrUnsupported)
}

// TestSupportAgreesWithKernel checks, for single-input kernels over every
// element type, that a type the CPU accepts at planning runs, and one it
// declines is refused at Run too: a Support that admits a type the kernel
// has no case for fails here.
func TestSupportAgreesWithKernel(t *testing.T) {
	ints := func(name string, v ...int64) *graph.Attribute {
		return &graph.Attribute{Name: name, Type: graph.AttrInts, Ints: v}
	}
	pool := map[string]*graph.Attribute{"kernel_shape": ints("kernel_shape", 1, 1)}
	// A case's inputs are the same tensor.
	cases := []struct {
		op     string
		attrs  map[string]*graph.Attribute
		inputs int
	}{
		{"Abs", nil, 1}, {"Neg", nil, 1}, {"Exp", nil, 1}, {"BitwiseNot", nil, 1}, {"Relu", nil, 1}, {"Shrink", nil, 1},
		{"Gelu", nil, 1}, {"Sigmoid", nil, 1},
		{"GlobalAveragePool", nil, 1}, {"GlobalMaxPool", nil, 1}, {"GlobalLpPool", nil, 1},
		{"MaxPool", pool, 1}, {"AveragePool", pool, 1}, {"LpPool", pool, 1},
		{"LRN", map[string]*graph.Attribute{"size": {Name: "size", Type: graph.AttrInt, I: 1}}, 1},
		{"LpNormalization", nil, 1}, {"MeanVarianceNormalization", nil, 1},
		{"Softmax", nil, 1}, {"LogSoftmax", nil, 1}, {"Hardmax", nil, 1},
		{"ReduceSum", nil, 1}, {"ReduceMax", nil, 1}, {"ReduceMin", nil, 1}, {"ReduceProd", nil, 1}, {"ReduceL2", nil, 1},
		{"ReduceLogSumExp", nil, 1}, {"ReduceMean", nil, 1},
		{"Equal", nil, 2}, {"Less", nil, 2}, {"GreaterOrEqual", nil, 2}, {"MatMul", nil, 2},
	}
	shape := []int64{1, 1, 2, 2}
	for _, tc := range cases {
		n := &graph.Node{Name: "n", OpType: tc.op, Inputs: make([]string, tc.inputs), Outputs: []string{"y"}, Attrs: tc.attrs}
		var accepted int
		for dt := graph.DType(1); dt.Valid(); dt++ {
			q := planner.Query{Node: n, Opset: 20, Inputs: make([]*graph.Type, len(n.Inputs))}
			c := &Call{Node: n, Opset: 20, In: make([]graph.Value, len(n.Inputs)), Out: make([]graph.Value, 1)}
			x := graph.NewTensor(dt, shape)
			for i := range n.Inputs {
				n.Inputs[i] = "x"
				q.Inputs[i] = graph.TensorType(dt, graph.ShapeOf(shape...))
				c.In[i] = x
			}
			reason := Decline(q)
			err := Lookup("", tc.op)(c)
			if reason != "" {
				require.ErrorIs(t, err, ErrUnsupported, "%s on %s declined (%s)", tc.op, dt, reason)
				continue
			}
			require.NoError(t, err, "%s on %s", tc.op, dt)
			accepted++
		}
		require.Positive(t, accepted, tc.op)
	}
}
