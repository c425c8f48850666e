package vulkan

import (
	"context"
	"math"
	"testing"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/hostfallback"
	"github.com/onnxvk/onnxvk/internal/kerneltest"
	"github.com/onnxvk/onnxvk/planner"
)

// TestStagedIO runs nodes with the inputs and outputs going through a
// staging buffer and copies recorded in the command buffer, the path of a
// discrete GPU, which lavapipe's unified memory would otherwise skip: a
// MatMul with a resident weight, and an Identity, which is a view of its
// input (the same io range copied in and out).
func TestStagedIO(t *testing.T) {
	d := openTest(t, WithStaging())
	cases := []struct {
		n   *graph.Node
		ins []input
	}{
		{&graph.Node{OpType: "MatMul", Inputs: []string{"a", "b"}, Outputs: []string{"y"}}, []input{{shape: []int64{5, 33}}, {shape: []int64{33, 7}, weight: true}}},
		{&graph.Node{OpType: "Identity", Inputs: []string{"x"}, Outputs: []string{"y"}}, []input{{shape: []int64{3, 13}}}},
	}
	for i, c := range cases {
		gpu, cpu, ok := runRandom(t, d, c.n, 17, c.ins, uniform(-2, 2), uint64(i))
		if !ok {
			t.Fatalf("%s unsupported", c.n.OpType)
		}
		kerneltest.CompareFloats(t, c.n.OpType+" through staging", gpu, cpu, ops.Lookup("", c.n.OpType, 17).Tolerance())
	}
	staged := 0
	for _, pr := range d.programs {
		for _, ec := range pr.contexts.all {
			if ec.stage != nil {
				staged++
			}
		}
	}
	if staged != len(cases) {
		t.Errorf("%d contexts used a staging buffer, want %d", staged, len(cases))
	}
}

// TestStagedDeviceTensors feeds a kept output back as the next Run's
// input three times with staged io: the device copies into and out of the
// io buffer then sit beside the staging copies of the other values.
func TestStagedDeviceTensors(t *testing.T) {
	d := openTest(t, WithStaging())
	f32 := graph.TensorType(graph.Float, graph.ShapeOf(3, 5))
	g := graph.NewGraph("loop")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: f32}, {Name: "h", Type: f32}}
	g.Nodes = []*graph.Node{
		{OpType: "Add", Inputs: []string{"x", "h"}, Outputs: []string{"s"}},
		{OpType: "Tanh", Inputs: []string{"s"}, Outputs: []string{"y"}},
	}
	g.Outputs = []*graph.ValueInfo{{Name: "y", Type: f32}, {Name: "s", Type: f32}}
	ex := executorOf(t, d, g)
	x, xs := ramp()
	var h graph.Value = graph.NewTensor(graph.Float, []int64{3, 5})
	want := make([]float32, len(xs))
	for step := range 3 {
		out, err := ex.RunWith(context.Background(), map[string]graph.Value{"x": x, "h": h}, backend.RunOptions{Keep: []string{"y"}})
		if err != nil {
			t.Fatal(err)
		}
		dt, ok := out["y"].(*DeviceTensor)
		if !ok {
			t.Fatalf("step %d: y is a %T, want a *DeviceTensor", step, out["y"])
		}
		for i := range want {
			want[i] = float32(math.Tanh(float64(xs[i] + want[i])))
		}
		if r, ok := h.(*DeviceTensor); ok {
			r.Release()
		}
		h = dt
	}
	got, err := h.(*DeviceTensor).Read()
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range graph.View[float32](got) {
		if math.Abs(float64(v-want[i])) > 1e-5 {
			t.Fatalf("y[%d] = %v, want %v", i, v, want[i])
		}
	}
}

// TestStagedKeptView keeps an output on the device while the host reads
// a view of it (an Identity placed on its io range) with staged io: the
// range is copied to the device tensor and to the staging buffer both.
// The staging copy was once skipped for every range a DeviceTensor took,
// and the host read the view as zeros (on discrete GPUs only).
func TestStagedKeptView(t *testing.T) {
	d := openTest(t, WithStaging())
	f32 := graph.TensorType(graph.Float, graph.ShapeOf(3, 5))
	g := graph.NewGraph("view")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: f32}}
	g.Nodes = []*graph.Node{
		{OpType: "Tanh", Inputs: []string{"x"}, Outputs: []string{"s"}},
		{OpType: "Identity", Inputs: []string{"s"}, Outputs: []string{"y"}},
	}
	g.Outputs = []*graph.ValueInfo{{Name: "y", Type: f32}, {Name: "s", Type: f32}}
	ex := executorOf(t, d, g)
	x, xs := ramp()
	out, err := ex.RunWith(context.Background(), map[string]graph.Value{"x": x}, backend.RunOptions{Keep: []string{"s"}})
	if err != nil {
		t.Fatal(err)
	}
	kept, ok := out["s"].(*DeviceTensor)
	if !ok {
		t.Fatalf("s is a %T, want a *DeviceTensor", out["s"])
	}
	defer kept.Release()
	s, err := kept.Read()
	if err != nil {
		t.Fatal(err)
	}
	y, ok := out["y"].(*graph.Tensor)
	if !ok {
		t.Fatalf("y is a %T, want a host tensor", out["y"])
	}
	for i, v := range xs {
		want := float32(math.Tanh(float64(v)))
		if got := graph.View[float32](y)[i]; math.Abs(float64(got-want)) > 1e-6 {
			t.Fatalf("y[%d] = %v, want %v", i, got, want)
		}
		if got := graph.View[float32](s)[i]; math.Abs(float64(got-want)) > 1e-6 {
			t.Fatalf("s[%d] = %v, want %v", i, got, want)
		}
	}
}

// executorOf plans graph g, of opset 17, on d and the CPU and returns its
// executor.
func executorOf(t *testing.T, d *Device, g *graph.Graph) *backend.Executor {
	t.Helper()
	m := &graph.Model{Name: g.Name, IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g}
	p, err := planner.New(m, planner.Options{Devices: []planner.Device{d, hostfallback.NewDevice(nil)}})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := backend.NewExecutor(p, []backend.Device{d, hostfallback.NewDevice(nil)})
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

// ramp returns a [3, 5] tensor of values from -1 up in steps of 1/7, and
// its data.
func ramp() (*graph.Tensor, []float32) {
	x := graph.NewTensor(graph.Float, []int64{3, 5})
	xs := graph.View[float32](x)
	for i := range xs {
		xs[i] = float32(i)/7 - 1
	}
	return x, xs
}
