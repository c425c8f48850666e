package planner_test

import (
	"maps"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/x448/float16"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/planner"
)

// convChain builds x -> Conv -> Clip(0, 6) -> Conv -> Relu -> y, where the
// second Conv's output is also a graph output (so its Relu stays apart).
func convChain() *graph.Model {
	g := graph.NewGraph("convs")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(1, 2, 4, 4))}}
	g.Initializers["w"], _ = graph.FromSlice(graph.Float, []int64{2, 2, 1, 1}, []float32{1, 0, 0, 1})
	g.Initializers["lo"], _ = graph.FromSlice(graph.Float, nil, []float32{0})
	g.Initializers["hi"], _ = graph.FromSlice(graph.Float, nil, []float32{6})
	g.Nodes = []*graph.Node{
		{Name: "c1", OpType: "Conv", Inputs: []string{"x", "w"}, Outputs: []string{"a"}},
		{Name: "clip", OpType: "Clip", Inputs: []string{"a", "lo", "hi"}, Outputs: []string{"b"}, Index: 1},
		{Name: "c2", OpType: "Conv", Inputs: []string{"b", "w"}, Outputs: []string{"c"}, Index: 2},
		{Name: "relu", OpType: "Relu", Inputs: []string{"c"}, Outputs: []string{"y"}, Index: 3},
	}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}, {Name: "c"}}
	return &graph.Model{Name: "convs", IRVersion: 8, Opsets: map[string]int64{"": 13}, Graph: g}
}

func TestPlanFusesConvActivation(t *testing.T) {
	m := convChain()
	dev := fakeDevice{"cpu", map[string]bool{"Conv": true, "Clip": true, "Relu": true, "FusedConv": true}}
	p, err := planner.New(m, planner.Options{Devices: []planner.Device{dev}})
	require.NoError(t, err)
	require.Equal(t, 1, p.Fused)
	require.Len(t, p.Steps, 3)
	f := p.Steps[0].Node
	require.Equal(t, ops.FusedDomain, f.Domain)
	require.Equal(t, "FusedConv", f.OpType)
	require.Equal(t, []string{"b"}, f.Outputs)
	require.Equal(t, ops.ActClip, f.AttrString("activation", ""))
	require.Equal(t, float32(0), f.AttrFloat("alpha", -1))
	require.Equal(t, float32(6), f.AttrFloat("beta", -1))
	require.Equal(t, "Conv", p.Steps[1].Node.OpType)
	// The caller's model is untouched.
	require.Len(t, m.Graph.Nodes, 4)
	require.Equal(t, "Conv", m.Graph.Nodes[0].OpType)
	require.NotContains(t, m.Opsets, ops.FusedDomain)

	// A device without the fused op keeps the nodes apart.
	plain := fakeDevice{"cpu", map[string]bool{"Conv": true, "Clip": true, "Relu": true}}
	p, err = planner.New(m, planner.Options{Devices: []planner.Device{plain}})
	require.NoError(t, err)
	require.Zero(t, p.Fused)
	require.Len(t, p.Steps, 4)
}

// layerNormChain builds PyTorch's opset-13 LayerNormalization over the last
// axis of x[2, 4], of element type dt (float32 or float16): nine nodes
// from x to y.
func layerNormChain(dt graph.DType) *graph.Model {
	g := graph.NewGraph("ln")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(dt, graph.ShapeOf(2, 4))}}
	constant := func(shape []int64, v ...float32) *graph.Tensor {
		if dt == graph.Float16 {
			h := make([]uint16, len(v))
			for i, f := range v {
				h[i] = float16.Fromfloat32(f).Bits()
			}
			t, _ := graph.FromSlice(dt, shape, h)
			return t
		}
		t, _ := graph.FromSlice(dt, shape, v)
		return t
	}
	g.Initializers["two"], g.Initializers["eps"] = constant(nil, 2), constant(nil, 1e-5)
	g.Initializers["gamma"] = constant([]int64{4}, 1, 2, 3, 4)
	g.Initializers["beta"] = constant([]int64{4}, 0, 1, 0, 1)
	last := map[string]*graph.Attribute{"axes": {Name: "axes", Type: graph.AttrInts, Ints: []int64{-1}}}
	node := func(op string, in []string, out string) *graph.Node {
		n := &graph.Node{Name: out, OpType: op, Inputs: in, Outputs: []string{out}}
		if op == "ReduceMean" {
			n.Attrs = last
		}
		return n
	}
	g.Nodes = []*graph.Node{
		node("ReduceMean", []string{"x"}, "mean"),
		node("Sub", []string{"x", "mean"}, "d"),
		node("Pow", []string{"d", "two"}, "sq"),
		node("ReduceMean", []string{"sq"}, "var"),
		node("Add", []string{"var", "eps"}, "ve"),
		node("Sqrt", []string{"ve"}, "std"),
		node("Div", []string{"d", "std"}, "n"),
		node("Mul", []string{"n", "gamma"}, "scaled"),
		node("Add", []string{"scaled", "beta"}, "y"),
	}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	// PyTorch's export before opset 18, axes as attributes, in the form
	// loading gives it.
	m := &graph.Model{Name: "ln", IRVersion: 8, Opsets: map[string]int64{"": 13}, Graph: g}
	ops.Canonicalize(m)
	return m
}

func TestPlanFusesLayerNorm(t *testing.T) {
	ops9 := map[string]bool{"ReduceMean": true, "Sub": true, "Pow": true, "Add": true, "Sqrt": true, "Div": true, "Mul": true}
	withLN := map[string]bool{"LayerNormalization": true}
	for op := range ops9 {
		withLN[op] = true
	}
	for _, dt := range []graph.DType{graph.Float, graph.Float16} {
		m := layerNormChain(dt)
		p, err := planner.New(m, planner.Options{Devices: []planner.Device{fakeDevice{"cpu", withLN}}})
		require.NoError(t, err)
		require.Equal(t, 8, p.Fused, dt)
		require.Len(t, p.Steps, 1)
		f := p.Steps[0].Node
		require.Equal(t, ops.FusedDomain, f.Domain)
		require.Equal(t, "LayerNormalization", f.OpType)
		require.Equal(t, []string{"x", "gamma", "beta"}, f.Inputs)
		require.Equal(t, []string{"y"}, f.Outputs)
		require.InDelta(t, 1e-5, f.AttrFloat("epsilon", 0), 1e-7)
		require.Len(t, m.Graph.Nodes, 9)
	}

	// The centred value read elsewhere too keeps the nodes apart.
	m := layerNormChain(graph.Float)
	m.Graph.Outputs = append(m.Graph.Outputs, &graph.ValueInfo{Name: "d"})
	p, err := planner.New(m, planner.Options{Devices: []planner.Device{fakeDevice{"cpu", withLN}}})
	require.NoError(t, err)
	require.Zero(t, p.Fused)
	require.Len(t, p.Steps, 9)
}

// skipLayerNormChain is layerNormChain(graph.Float) of x = a + b, for
// inputs a[2, 4] and b of shape bShape.
func skipLayerNormChain(bShape ...int64) *graph.Model {
	m := layerNormChain(graph.Float)
	g := m.Graph
	g.Inputs = []*graph.ValueInfo{{Name: "a", Type: graph.TensorType(graph.Float, graph.ShapeOf(2, 4))},
		{Name: "b", Type: graph.TensorType(graph.Float, graph.ShapeOf(bShape...))}}
	g.Nodes = append([]*graph.Node{{Name: "res", OpType: "Add", Inputs: []string{"a", "b"}, Outputs: []string{"x"}}}, g.Nodes...)
	return m
}

func TestPlanFusesSkipLayerNorm(t *testing.T) {
	ops10 := map[string]bool{"ReduceMean": true, "Sub": true, "Pow": true, "Add": true, "Sqrt": true, "Div": true, "Mul": true, "LayerNormalization": true}
	withSkip := map[string]bool{"SkipLayerNormalization": true}
	for op := range ops10 {
		withSkip[op] = true
	}
	p, err := planner.New(skipLayerNormChain(2, 4), planner.Options{Devices: []planner.Device{fakeDevice{"cpu", withSkip}}})
	require.NoError(t, err)
	require.Equal(t, 9, p.Fused)
	require.Len(t, p.Steps, 1)
	f := p.Steps[0].Node
	require.Equal(t, ops.FusedDomain, f.Domain)
	require.Equal(t, "SkipLayerNormalization", f.OpType)
	require.Equal(t, []string{"a", "b", "gamma", "beta"}, f.Inputs)
	require.Equal(t, []string{"y"}, f.Outputs)
	require.InDelta(t, 1e-5, f.AttrFloat("epsilon", 0), 1e-7)
	require.Equal(t, graph.ShapeOf(2, 4), p.Types[p.Steps[0].Out[0]].Shape)

	// The Add stays apart, the normalization fused alone, on a device
	// without the fused form, for a sum read elsewhere too, and for an
	// Add that broadcasts.
	shared := skipLayerNormChain(2, 4)
	shared.Graph.Outputs = append(shared.Graph.Outputs, &graph.ValueInfo{Name: "x"})
	for name, tc := range map[string]struct {
		m   *graph.Model
		dev fakeDevice
	}{
		"no device":  {skipLayerNormChain(2, 4), fakeDevice{"cpu", ops10}},
		"shared":     {shared, fakeDevice{"cpu", withSkip}},
		"broadcasts": {skipLayerNormChain(4), fakeDevice{"cpu", withSkip}},
	} {
		p, err := planner.New(tc.m, planner.Options{Devices: []planner.Device{tc.dev}})
		require.NoError(t, err, name)
		require.Equal(t, 8, p.Fused, name)
		require.Len(t, p.Steps, 2, name)
		require.Equal(t, "Add", p.Steps[0].Node.OpType, name)
		require.Equal(t, "LayerNormalization", p.Steps[1].Node.OpType, name)
	}
}

func TestPlanFusesMatMulBias(t *testing.T) {
	g := graph.NewGraph("linear")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(2, 3))}}
	g.Initializers["w"], _ = graph.FromSlice(graph.Float, []int64{3, 2}, []float32{1, 2, 3, 4, 5, 6})
	g.Initializers["b"], _ = graph.FromSlice(graph.Float, []int64{2}, []float32{1, -1})
	g.Nodes = []*graph.Node{
		{Name: "mm", OpType: "MatMul", Inputs: []string{"x", "w"}, Outputs: []string{"p"}},
		{Name: "add", OpType: "Add", Inputs: []string{"b", "p"}, Outputs: []string{"y"}, Index: 1},
	}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	m := &graph.Model{Name: "linear", IRVersion: 8, Opsets: map[string]int64{"": 13}, Graph: g}
	dev := fakeDevice{"cpu", map[string]bool{"MatMul": true, "Add": true, "FusedMatMul": true}}
	p, err := planner.New(m, planner.Options{Devices: []planner.Device{dev}})
	require.NoError(t, err)
	require.Equal(t, 1, p.Fused)
	require.Len(t, p.Steps, 1)
	f := p.Steps[0].Node
	require.Equal(t, "FusedMatMul", f.OpType)
	require.Equal(t, []string{"x", "w", "b"}, f.Inputs)
	require.Equal(t, []string{"y"}, f.Outputs)
}

// attentionScores builds q·Transpose(k, perm) -> y for q[2, 3, 5] and
// k[2, 4, 5], k's transpose also a graph output when shared is set.
func attentionScores(perm []int64, shared bool) *graph.Model {
	g := graph.NewGraph("scores")
	g.Inputs = []*graph.ValueInfo{{Name: "q", Type: graph.TensorType(graph.Float, graph.ShapeOf(2, 3, 5))},
		{Name: "k", Type: graph.TensorType(graph.Float, graph.ShapeOf(2, 4, 5))}}
	tr := &graph.Node{Name: "tr", OpType: "Transpose", Inputs: []string{"k"}, Outputs: []string{"kt"}}
	if perm != nil {
		tr.Attrs = map[string]*graph.Attribute{"perm": {Name: "perm", Type: graph.AttrInts, Ints: perm}}
	}
	g.Nodes = []*graph.Node{tr, {Name: "mm", OpType: "MatMul", Inputs: []string{"q", "kt"}, Outputs: []string{"y"}, Index: 1}}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	if shared {
		g.Outputs = append(g.Outputs, &graph.ValueInfo{Name: "kt"})
	}
	return &graph.Model{Name: "scores", IRVersion: 8, Opsets: map[string]int64{"": 13}, Graph: g}
}

func TestPlanFusesTransposedB(t *testing.T) {
	dev := fakeDevice{"cpu", map[string]bool{"MatMul": true, "Transpose": true, "MatMulTransB": true}}
	p, err := planner.New(attentionScores([]int64{0, 2, 1}, false), planner.Options{Devices: []planner.Device{dev}})
	require.NoError(t, err)
	require.Equal(t, 1, p.Fused)
	require.Len(t, p.Steps, 1)
	f := p.Steps[0].Node
	require.Equal(t, ops.FusedDomain, f.Domain)
	require.Equal(t, "MatMulTransB", f.OpType)
	require.Equal(t, []string{"q", "k"}, f.Inputs)
	require.Equal(t, []string{"y"}, f.Outputs)
	require.Equal(t, graph.ShapeOf(2, 3, 4), p.Types[p.Steps[0].Out[0]].Shape)

	// Not fused: a transpose that is read elsewhere, a device without
	// the fused op, another permutation (with shapes that multiply).
	for name, tc := range map[string]struct {
		m   *graph.Model
		dev fakeDevice
	}{
		"shared":    {attentionScores([]int64{0, 2, 1}, true), dev},
		"no device": {attentionScores([]int64{0, 2, 1}, false), fakeDevice{"cpu", map[string]bool{"MatMul": true, "Transpose": true}}},
	} {
		p, err := planner.New(tc.m, planner.Options{Devices: []planner.Device{tc.dev}})
		require.NoError(t, err, name)
		require.Zero(t, p.Fused, name)
		require.Len(t, p.Steps, 2, name)
	}
	m := attentionScores([]int64{2, 1, 0}, false)
	m.Graph.Inputs[1].Type = graph.TensorType(graph.Float, graph.ShapeOf(5, 4, 2))
	m.Graph.Inputs[0].Type = graph.TensorType(graph.Float, graph.ShapeOf(2, 3, 4))
	p, err = planner.New(m, planner.Options{Devices: []planner.Device{dev}})
	require.NoError(t, err)
	require.Zero(t, p.Fused)
}

// residualBlock builds x -> Conv c1 -> a and x -> Conv c2 -> r, then
// Add(a, r) -> s -> Relu -> y, the Conv c2 coming after c1 so that the
// fused node must go where the Add or Relu was; outputs lists extra
// graph outputs.
func residualBlock(outputs ...string) *graph.Model {
	g := graph.NewGraph("residual")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(1, 2, 4, 4))}}
	g.Initializers["w"], _ = graph.FromSlice(graph.Float, []int64{2, 2, 1, 1}, []float32{1, 0, 0, 1})
	g.Initializers["b"], _ = graph.FromSlice(graph.Float, []int64{2}, []float32{1, 2})
	g.Nodes = []*graph.Node{
		{Name: "c1", OpType: "Conv", Inputs: []string{"x", "w", "b"}, Outputs: []string{"a"}},
		{Name: "c2", OpType: "Conv", Inputs: []string{"x", "w"}, Outputs: []string{"r"}, Index: 1},
		{Name: "add", OpType: "Add", Inputs: []string{"a", "r"}, Outputs: []string{"s"}, Index: 2},
		{Name: "relu", OpType: "Relu", Inputs: []string{"s"}, Outputs: []string{"y"}, Index: 3},
	}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	for _, o := range outputs {
		g.Outputs = append(g.Outputs, &graph.ValueInfo{Name: o})
	}
	return &graph.Model{Name: "residual", IRVersion: 8, Opsets: map[string]int64{"": 13}, Graph: g}
}

func TestPlanFusesConvAdd(t *testing.T) {
	dev := fakeDevice{"cpu", map[string]bool{"Conv": true, "Add": true, "Relu": true, "FusedConv": true}}
	p, err := planner.New(residualBlock(), planner.Options{Devices: []planner.Device{dev}})
	require.NoError(t, err)
	require.Equal(t, 2, p.Fused)
	require.Len(t, p.Steps, 2)
	require.Equal(t, "c2", p.Steps[0].Node.Name)
	f := p.Steps[1].Node
	require.Equal(t, "FusedConv", f.OpType)
	require.Equal(t, []string{"x", "w", "b", "r"}, f.Inputs)
	require.Equal(t, []string{"y"}, f.Outputs)
	require.Equal(t, ops.ActRelu, f.AttrString("activation", ""))

	// With the sum a graph output, the Relu stays apart.
	p, err = planner.New(residualBlock("s"), planner.Options{Devices: []planner.Device{dev}})
	require.NoError(t, err)
	require.Equal(t, 1, p.Fused)
	require.Len(t, p.Steps, 3)
	f = p.Steps[1].Node
	require.Equal(t, "FusedConv", f.OpType)
	require.Equal(t, []string{"s"}, f.Outputs)
	require.Equal(t, "", f.AttrString("activation", ""))
	require.Equal(t, "Relu", p.Steps[2].Node.OpType)

	// A broadcast addend is left to Add.
	m := residualBlock()
	m.Graph.Initializers["one"], _ = graph.FromSlice(graph.Float, []int64{1}, []float32{1})
	m.Graph.Nodes[1] = &graph.Node{Name: "c2", OpType: "Identity", Inputs: []string{"one"}, Outputs: []string{"r"}, Index: 1}
	dev.ops["Identity"] = true
	p, err = planner.New(m, planner.Options{Devices: []planner.Device{dev}})
	require.NoError(t, err)
	require.Zero(t, p.Fused)

	// A device without the fused op keeps the nodes apart.
	plain := fakeDevice{"cpu", map[string]bool{"Conv": true, "Add": true, "Relu": true}}
	p, err = planner.New(residualBlock(), planner.Options{Devices: []planner.Device{plain}})
	require.NoError(t, err)
	require.Zero(t, p.Fused)
}

// siluConv builds x -> Conv -> a, then Mul(a, Sigmoid(a)) -> y, with the
// Mul's operands in the given order.
func siluConv(sigmoidFirst bool) *graph.Model {
	g := graph.NewGraph("silu")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(1, 2, 4, 4))}}
	g.Initializers["w"], _ = graph.FromSlice(graph.Float, []int64{2, 2, 1, 1}, []float32{1, 0, 0, 1})
	mul := []string{"a", "s"}
	if sigmoidFirst {
		mul = []string{"s", "a"}
	}
	g.Nodes = []*graph.Node{
		{Name: "c", OpType: "Conv", Inputs: []string{"x", "w"}, Outputs: []string{"a"}},
		{Name: "sig", OpType: "Sigmoid", Inputs: []string{"a"}, Outputs: []string{"s"}, Index: 1},
		{Name: "mul", OpType: "Mul", Inputs: mul, Outputs: []string{"y"}, Index: 2},
	}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	return &graph.Model{Name: "silu", IRVersion: 8, Opsets: map[string]int64{"": 13}, Graph: g}
}

func TestPlanFusesConvSwish(t *testing.T) {
	dev := fakeDevice{"cpu", map[string]bool{"Conv": true, "Sigmoid": true, "Mul": true, "FusedConv": true}}
	for _, first := range []bool{false, true} {
		p, err := planner.New(siluConv(first), planner.Options{Devices: []planner.Device{dev}})
		require.NoError(t, err)
		require.Equal(t, 2, p.Fused)
		require.Len(t, p.Steps, 1)
		f := p.Steps[0].Node
		require.Equal(t, "FusedConv", f.OpType)
		require.Equal(t, []string{"x", "w"}, f.Inputs)
		require.Equal(t, []string{"y"}, f.Outputs)
		require.Equal(t, ops.ActSwish, f.AttrString("activation", ""))
	}

	// A Mul of the conv by something else is not SiLU: nothing is fused.
	m := siluConv(false)
	m.Graph.Nodes[2].Inputs = []string{"a", "x"}
	m.Graph.Outputs = append(m.Graph.Outputs, &graph.ValueInfo{Name: "s"})
	p, err := planner.New(m, planner.Options{Devices: []planner.Device{dev}})
	require.NoError(t, err)
	require.Zero(t, p.Fused)
}

// TestPlanFusesConvHardSigmoid checks that HardSigmoid and HardSwish fold
// into the Conv before them, HardSigmoid's slope and offset with it.
func TestPlanFusesConvHardSigmoid(t *testing.T) {
	g := graph.NewGraph("hard")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(1, 2, 4, 4))}}
	g.Initializers["w"] = graph.NewTensor(graph.Float, []int64{2, 2, 1, 1})
	g.Nodes = []*graph.Node{
		{Name: "c1", OpType: "Conv", Inputs: []string{"x", "w"}, Outputs: []string{"a"}},
		{Name: "hs", OpType: "HardSigmoid", Inputs: []string{"a"}, Outputs: []string{"b"}, Index: 1,
			Attrs: map[string]*graph.Attribute{"alpha": {Name: "alpha", Type: graph.AttrFloat, F: 0.25}}},
		{Name: "c2", OpType: "Conv", Inputs: []string{"b", "w"}, Outputs: []string{"c"}, Index: 2},
		{Name: "hw", OpType: "HardSwish", Inputs: []string{"c"}, Outputs: []string{"y"}, Index: 3},
	}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	m := &graph.Model{Name: "hard", IRVersion: 8, Opsets: map[string]int64{"": 14}, Graph: g}
	dev := fakeDevice{"cpu", map[string]bool{"Conv": true, "HardSigmoid": true, "HardSwish": true, "FusedConv": true}}
	p, err := planner.New(m, planner.Options{Devices: []planner.Device{dev}})
	require.NoError(t, err)
	require.Equal(t, 2, p.Fused)
	require.Len(t, p.Steps, 2)
	f := p.Steps[0].Node
	require.Equal(t, ops.ActHardSigmoid, f.AttrString("activation", ""))
	require.Equal(t, float32(0.25), f.AttrFloat("alpha", -1))
	require.Equal(t, float32(0.5), f.AttrFloat("beta", -1))
	require.Equal(t, ops.ActHardSwish, p.Steps[1].Node.AttrString("activation", ""))
}

// TestPlanFusesBatchNormActivation checks that an inference
// BatchNormalization read only by a Relu becomes one FusedBatchNorm with
// its epsilon, and that one in training mode stays apart.
func TestPlanFusesBatchNormActivation(t *testing.T) {
	build := func(training int64) *graph.Model {
		g := graph.NewGraph("bn")
		g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(1, 2, 4, 4))}}
		for _, name := range []string{"s", "b", "m", "v"} {
			g.Initializers[name] = graph.NewTensor(graph.Float, []int64{2})
		}
		g.Nodes = []*graph.Node{
			{Name: "bn", OpType: "BatchNormalization", Inputs: []string{"x", "s", "b", "m", "v"}, Outputs: []string{"a"},
				Attrs: map[string]*graph.Attribute{
					"epsilon":       {Name: "epsilon", Type: graph.AttrFloat, F: 0.25},
					"training_mode": {Name: "training_mode", Type: graph.AttrInt, I: training}}},
			{Name: "relu", OpType: "Relu", Inputs: []string{"a"}, Outputs: []string{"y"}, Index: 1},
		}
		g.Outputs = []*graph.ValueInfo{{Name: "y"}}
		return &graph.Model{Name: "bn", IRVersion: 8, Opsets: map[string]int64{"": 15}, Graph: g}
	}
	dev := fakeDevice{"cpu", map[string]bool{"BatchNormalization": true, "Relu": true, "FusedBatchNorm": true}}
	p, err := planner.New(build(0), planner.Options{Devices: []planner.Device{dev}})
	require.NoError(t, err)
	require.Equal(t, 1, p.Fused)
	require.Len(t, p.Steps, 1)
	f := p.Steps[0].Node
	require.Equal(t, "FusedBatchNorm", f.OpType)
	require.Equal(t, []string{"y"}, f.Outputs)
	require.Equal(t, ops.ActRelu, f.AttrString("activation", ""))
	require.Equal(t, float32(0.25), f.AttrFloat("epsilon", -1))

	p, err = planner.New(build(1), planner.Options{Devices: []planner.Device{dev}})
	require.NoError(t, err)
	require.Zero(t, p.Fused)
}

// TestPlanFusesNormConv checks that a pre-activation BatchNormalization and
// Relu read only by a pointwise Conv (itself followed by a Relu) become
// one NormConv reading the normalization's input and parameters, with both
// activations and epsilon (and with a plain Conv, the normalization's
// alone), and that a padded 3×3 Conv, a strided 1×1 one,
// a normalized input that another node reads too and a device without
// NormConv keep the FusedBatchNorm apart.
func TestPlanFusesNormConv(t *testing.T) {
	build := func(kernel, stride, pad int64, shared, post bool) *graph.Model {
		g := graph.NewGraph("normconv")
		g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(1, 4, 6, 6))}}
		for _, name := range []string{"s", "b", "m", "v"} {
			g.Initializers[name] = graph.NewTensor(graph.Float, []int64{4})
		}
		g.Initializers["w"] = graph.NewTensor(graph.Float, []int64{3, 4, kernel, kernel})
		g.Initializers["c"] = graph.NewTensor(graph.Float, []int64{3})
		g.Nodes = []*graph.Node{
			{Name: "bn", OpType: "BatchNormalization", Inputs: []string{"x", "s", "b", "m", "v"}, Outputs: []string{"n"},
				Attrs: map[string]*graph.Attribute{"epsilon": {Name: "epsilon", Type: graph.AttrFloat, F: 0.25}}},
			{Name: "relu", OpType: "Relu", Inputs: []string{"n"}, Outputs: []string{"a"}, Index: 1},
			{Name: "conv", OpType: "Conv", Inputs: []string{"a", "w", "c"}, Outputs: []string{"z"}, Index: 2,
				Attrs: map[string]*graph.Attribute{
					"strides": {Name: "strides", Type: graph.AttrInts, Ints: []int64{stride, stride}},
					"pads":    {Name: "pads", Type: graph.AttrInts, Ints: []int64{pad, pad, pad, pad}}}},
			{Name: "relu2", OpType: "Relu", Inputs: []string{"z"}, Outputs: []string{"y"}, Index: 3},
		}
		g.Outputs = []*graph.ValueInfo{{Name: "y"}}
		if shared {
			g.Outputs = append(g.Outputs, &graph.ValueInfo{Name: "a"})
		}
		if !post {
			g.Nodes = g.Nodes[:3]
			g.Nodes[2].Outputs = []string{"y"}
		}
		return &graph.Model{Name: "normconv", IRVersion: 8, Opsets: map[string]int64{"": 15}, Graph: g}
	}
	all := map[string]bool{"BatchNormalization": true, "Relu": true, "Conv": true, "FusedBatchNorm": true, "FusedConv": true, "NormConv": true}
	dev := fakeDevice{"cpu", all}
	p, err := planner.New(build(1, 1, 0, false, true), planner.Options{Devices: []planner.Device{dev}})
	require.NoError(t, err)
	require.Equal(t, 3, p.Fused)
	require.Len(t, p.Steps, 1)
	f := p.Steps[0].Node
	require.Equal(t, "NormConv", f.OpType)
	require.Equal(t, []string{"x", "w", "c", "s", "b", "m", "v"}, f.Inputs)
	require.Equal(t, []string{"y"}, f.Outputs)
	require.Equal(t, ops.ActRelu, f.AttrString("activation", ""))
	require.Equal(t, ops.ActRelu, f.AttrString("norm_activation", ""))
	require.Equal(t, float32(0.25), f.AttrFloat("epsilon", -1))

	p, err = planner.New(build(1, 1, 0, false, false), planner.Options{Devices: []planner.Device{dev}})
	require.NoError(t, err)
	require.Len(t, p.Steps, 1)
	f = p.Steps[0].Node
	require.Equal(t, "NormConv", f.OpType)
	require.Equal(t, "", f.AttrString("activation", ""))
	require.Equal(t, ops.ActRelu, f.AttrString("norm_activation", ""))

	without := fakeDevice{"cpu", maps.Clone(all)}
	delete(without.ops, "NormConv")
	for _, c := range []struct {
		name string
		m    *graph.Model
		dev  fakeDevice
	}{
		{"3×3 padded", build(3, 1, 1, false, true), dev},
		{"1×1 strided", build(1, 2, 0, false, true), dev},
		{"normalized input read twice", build(1, 1, 0, true, true), dev},
		{"no NormConv on the device", build(1, 1, 0, false, true), without},
	} {
		p, err := planner.New(c.m, planner.Options{Devices: []planner.Device{c.dev}})
		require.NoError(t, err, c.name)
		var got []string
		for _, st := range p.Steps {
			got = append(got, st.Node.OpType)
		}
		require.Equal(t, []string{"FusedBatchNorm", "FusedConv"}, got, c.name)
	}
}
