package backend_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/hostfallback"
	"github.com/onnxvk/onnxvk/planner"
)

// deviceTensor marks a value that lives on the fake device.
type deviceTensor struct{ *graph.Tensor }

// fakeGPU runs Relu only, on values it has been given by Upload, so any
// value that reaches it without a transfer fails the run.
type fakeGPU struct{ uploads, downloads int }

func (*fakeGPU) Name() string { return "fake:0" }
func (*fakeGPU) Supports(q planner.Query) bool {
	return q.Node.OpType == "Relu"
}
func (*fakeGPU) Close() error { return nil }
func (g *fakeGPU) Upload(v graph.Value) (graph.Value, error) {
	g.uploads++
	return deviceTensor{v.(*graph.Tensor)}, nil
}
func (g *fakeGPU) Download(v graph.Value) (graph.Value, error) {
	g.downloads++
	d, ok := v.(deviceTensor)
	if !ok {
		return nil, fmt.Errorf("download of a value not on the device: %T", v)
	}
	return d.Tensor, nil
}
func (g *fakeGPU) Compile(p *planner.Plan, steps []planner.Step) (backend.Program, error) {
	return programFunc(func(_ context.Context, f *backend.Frame) error {
		vals := f.Values[g.Name()]
		for _, st := range steps {
			in, ok := vals[st.In[0]].(deviceTensor)
			if !ok {
				return fmt.Errorf("%s: input %q is not on the device", st.Node, p.Values[st.In[0]])
			}
			out := graph.NewTensor(graph.Float, in.Shape)
			for i, x := range graph.View[float32](in.Tensor) {
				graph.View[float32](out)[i] = max(x, 0)
			}
			vals[st.Out[0]] = deviceTensor{out}
		}
		return nil
	}), nil
}

type programFunc func(context.Context, *backend.Frame) error

func (f programFunc) Run(ctx context.Context, fr *backend.Frame) error { return f(ctx, fr) }

// fakeExecutor plans and compiles m, whose input x is a float32 vector of
// 4, on gpu and the CPU, and returns the executor and an input x.
func fakeExecutor(t *testing.T, m *graph.Model, gpu backend.Device) (*backend.Executor, *graph.Tensor) {
	t.Helper()
	cpu := hostfallback.NewDevice(nil)
	p, err := planner.New(m, planner.Options{Devices: []planner.Device{gpu, cpu}})
	require.NoError(t, err)
	ex, err := backend.NewExecutor(p, []backend.Device{gpu, cpu})
	require.NoError(t, err)
	x, _ := graph.FromSlice(graph.Float, []int64{4}, []float32{-2, -1, 1, 2})
	return ex, x
}

// TestMixedPlacement runs a = Relu(x) and c = Relu(a) on the fake device,
// b = Neg(a) and y = Add(b, c) on the CPU: a is needed on both devices at
// once, so it is downloaded while its device copy stays in use.
func TestMixedPlacement(t *testing.T) {
	g := graph.NewGraph("mixed")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(4))}}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	g.Nodes = []*graph.Node{
		{Name: "r1", OpType: "Relu", Inputs: []string{"x"}, Outputs: []string{"a"}},
		{Name: "n", OpType: "Neg", Inputs: []string{"a"}, Outputs: []string{"b"}, Index: 1},
		{Name: "r2", OpType: "Relu", Inputs: []string{"a"}, Outputs: []string{"c"}, Index: 2},
		{Name: "add", OpType: "Add", Inputs: []string{"b", "c"}, Outputs: []string{"y"}, Index: 3},
	}
	m := &graph.Model{Name: "mixed", IRVersion: 8, Opsets: map[string]int64{"": 14}, Graph: g}
	gpu := &fakeGPU{}
	ex, x := fakeExecutor(t, m, gpu)
	out, err := ex.Run(context.Background(), map[string]graph.Value{"x": x})
	require.NoError(t, err)
	// y = -relu(x) + relu(relu(x)) = 0 everywhere.
	require.Equal(t, []float32{0, 0, 0, 0}, graph.View[float32](out["y"].(*graph.Tensor)))
	// x up; a down for Neg; c down for Add.
	require.Equal(t, 1, gpu.uploads)
	require.Equal(t, 2, gpu.downloads)
}

// panicGPU is fakeGPU with programs that panic, as a device bug would.
type panicGPU struct{ fakeGPU }

func (*panicGPU) Compile(*planner.Plan, []planner.Step) (backend.Program, error) {
	return programFunc(func(context.Context, *backend.Frame) error { panic("device bug") }), nil
}

// TestSegmentPanicIsError runs a plan whose device program panics: the
// Run fails with an error naming the segment's nodes and device, and the
// executor runs again (failing the same way).
func TestSegmentPanicIsError(t *testing.T) {
	g := graph.NewGraph("relus")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(4))}}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	g.Nodes = []*graph.Node{
		{Name: "r1", OpType: "Relu", Inputs: []string{"x"}, Outputs: []string{"a"}},
		{Name: "r2", OpType: "Relu", Inputs: []string{"a"}, Outputs: []string{"y"}, Index: 1},
	}
	m := &graph.Model{Name: "relus", IRVersion: 8, Opsets: map[string]int64{"": 14}, Graph: g}
	ex, x := fakeExecutor(t, m, &panicGPU{})
	for range 2 {
		_, err := ex.Run(context.Background(), map[string]graph.Value{"x": x})
		require.ErrorContains(t, err, `backend: model "relus": the 2 steps node "r1" (Relu, #0) … node "r2" (Relu, #1) on fake:0: panic: device bug`)
	}
}
