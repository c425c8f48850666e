package vulkan

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/hostfallback"
	"github.com/onnxvk/onnxvk/planner"
)

// releaseModel is y = relu(x @ w * 2 + 1): a product with a weight, and a
// chain whose parameters each compile uploads anew.
func releaseModel() *graph.Model {
	g := graph.NewGraph("release")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(4, 8))}}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	w := graph.NewTensor(graph.Float, []int64{8, 8})
	for i := range graph.View[float32](w) {
		graph.View[float32](w)[i] = float32(i%5) - 2
	}
	g.Initializers["w"] = w
	g.Initializers["two"], _ = graph.FromSlice(graph.Float, nil, []float32{2})
	g.Initializers["one"], _ = graph.FromSlice(graph.Float, nil, []float32{1})
	g.Nodes = []*graph.Node{
		{Name: "mm", OpType: "MatMul", Inputs: []string{"x", "w"}, Outputs: []string{"p"}},
		{Name: "scale", OpType: "Mul", Inputs: []string{"p", "two"}, Outputs: []string{"q"}},
		{Name: "shift", OpType: "Add", Inputs: []string{"q", "one"}, Outputs: []string{"r"}},
		{Name: "relu", OpType: "Relu", Inputs: []string{"r"}, Outputs: []string{"y"}},
	}
	for i, n := range g.Nodes {
		n.Index = i
	}
	return &graph.Model{Name: "release", IRVersion: 8, Opsets: map[string]int64{"": 14}, Graph: g}
}

// TestReleaseFreesMemory compiles the same model twice (two plans sharing
// the weight w, each with chain parameters of its own), runs both, and
// releases them one after the other: the first release frees the first
// program's memory but not the weight the second still binds, which keeps
// running right; the second brings the device's memory back to where it
// was before either compiled, with no program, block or weight left. In
// fp32 and in the fp16 weight mode (w held as fp16).
func TestReleaseFreesMemory(t *testing.T) {
	t.Run("fp32", func(t *testing.T) { checkRelease(t, openTest(t)) })
	t.Run("fp16", func(t *testing.T) { checkRelease(t, openHalf(t)) })
}

func checkRelease(t *testing.T, d *Device) {
	cpu := hostfallback.NewDevice(nil)
	resident := func() int { return len(d.weights) + len(d.half.weights) }
	m := releaseModel()
	x := graph.NewTensor(graph.Float, []int64{4, 8})
	for i := range graph.View[float32](x) {
		graph.View[float32](x)[i] = float32(i%9)/4 - 1
	}
	feeds := map[string]graph.Value{"x": x}
	refPlan, err := planner.New(m, planner.Options{Devices: []planner.Device{cpu}})
	require.NoError(t, err)
	ref, err := backend.NewExecutor(refPlan, []backend.Device{cpu})
	require.NoError(t, err)
	want, err := ref.Run(context.Background(), feeds)
	require.NoError(t, err)

	before := d.MemoryInUse()
	var exs []*backend.Executor
	for range 2 {
		p, err := planner.New(m, planner.Options{Devices: []planner.Device{d, cpu}})
		require.NoError(t, err)
		require.Equal(t, d.Name(), p.Steps[len(p.Steps)-2].Device)
		ex, err := backend.NewExecutor(p, []backend.Device{d, cpu})
		require.NoError(t, err)
		exs = append(exs, ex)
	}
	run := func(ex *backend.Executor) error {
		got, err := ex.Run(context.Background(), feeds)
		if err == nil {
			require.Equal(t, graph.View[float32](want["y"].(*graph.Tensor)), graph.View[float32](got["y"].(*graph.Tensor)))
		}
		return err
	}
	for _, ex := range exs {
		require.NoError(t, run(ex))
	}
	both := d.MemoryInUse()
	require.Len(t, d.programs, 2)
	require.Equal(t, 3, resident(), "w and each plan's chain parameters")
	if d.half.on {
		require.Len(t, d.half.weights, 1, "w as fp16")
	}

	exs[0].Release()
	one := d.MemoryInUse()
	require.Less(t, one, both)
	require.Equal(t, 2, resident(), "the first plan's chain parameters stayed")
	require.NoError(t, run(exs[1]), "the second plan after the first's release")
	require.ErrorContains(t, run(exs[0]), "released")

	exs[1].Release()
	exs[1].Release()
	require.Equal(t, before, d.MemoryInUse(), "memory in use after both releases (%d with both plans, %d with one)", both, one)
	require.Empty(t, d.programs)
	require.Empty(t, d.blocks)
	require.Zero(t, resident())
	require.Empty(t, d.users)
}

// TestCompilePanicIsError compiles a segment whose step names a value the
// plan does not have, which the lowering does not check: the panic
// becomes an error naming the node, and the weights the compile made
// resident are freed.
func TestCompilePanicIsError(t *testing.T) {
	d := openTest(t)
	p, err := planner.New(releaseModel(), planner.Options{Devices: []planner.Device{d, hostfallback.NewDevice(nil)}})
	require.NoError(t, err)
	first := slices.IndexFunc(p.Steps, func(st planner.Step) bool { return st.Device == d.Name() })
	bad := p.Steps[first]
	bad.In = []int{len(p.Values) + 7, bad.In[1]}
	before := d.MemoryInUse()
	_, err = d.Compile(p, []planner.Step{bad})
	require.ErrorContains(t, err, "panic")
	require.ErrorContains(t, err, bad.Node.String())
	require.Equal(t, before, d.MemoryInUse())
	require.Empty(t, d.weights)
}

// TestSupportsPanicIsNo asks whether the device runs a Gather with one
// input, which its lowering does not check (the loader refuses such a
// node): the answer is no, and the CPU would run the node.
func TestSupportsPanicIsNo(t *testing.T) {
	d := openTest(t)
	n := &graph.Node{Name: "g", OpType: "Gather", Inputs: []string{"a"}, Outputs: []string{"y"}}
	f32 := graph.TensorType(graph.Float, graph.ShapeOf(2, 3))
	require.False(t, d.Supports(planner.Query{Node: n, Opset: 14, Inputs: []*graph.Type{f32}, Consts: []*graph.Tensor{nil}}))
}
