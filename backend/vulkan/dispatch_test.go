package vulkan_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/backend/vulkan"
	"github.com/onnxvk/onnxvk/backend/vulkan/internal/vk"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/sessionvalues"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/planner"
)

// reluChain is n Relu nodes in a row over a [1, 64] tensor: n dispatches
// of almost no work, whose cost per Run is the cost of dispatching.
func reluChain(n int) *graph.Model {
	g := graph.NewGraph("chain")
	t := graph.TensorType(graph.Float, graph.ShapeOf(1, 64))
	g.Inputs = []*graph.ValueInfo{{Name: "v0", Type: t}}
	for i := range n {
		g.Nodes = append(g.Nodes, &graph.Node{Index: i, OpType: "Relu", Inputs: []string{fmt.Sprint("v", i)}, Outputs: []string{fmt.Sprint("v", i+1)}})
	}
	g.Outputs = []*graph.ValueInfo{{Name: fmt.Sprint("v", n), Type: t}}
	return &graph.Model{Name: "chain", IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g}
}

// BenchmarkDispatch times Runs of Relu chains of 1 and 257 nodes, all on
// Vulkan, and reports the cost of each dispatch beyond the first: what a
// Run's fixed cost (copies in and out, one submit, the wait) leaves.
func BenchmarkDispatch(b *testing.B) {
	perRun := map[int]float64{}
	for _, n := range []int{1, 257} {
		s, err := onnxvk.NewSession(reluChain(n), onnxvk.WithDevice("vulkan"))
		if errors.Is(err, backend.ErrDeviceUnavailable) {
			testenv.Skip(b, fmt.Sprint("no Vulkan device: ", err))
		}
		if err != nil {
			b.Fatal(err)
		}
		x, err := onnxvk.NewTensor([]int64{1, 64}, make([]float32, 64))
		if err != nil {
			b.Fatal(err)
		}
		in := map[string]*onnxvk.Tensor{"v0": x}
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Run(context.Background(), in); err != nil {
					b.Fatal(err)
				}
			}
			perRun[n] = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			if one := perRun[1]; n > 1 && one > 0 {
				b.ReportMetric((perRun[n]-one)/float64(n-1)/1e3, "µs/dispatch")
			}
		})
		s.Close()
	}
}

// TestOneSubmitPerRun runs a model whose every node is on Vulkan and
// requires each Run to be one vkQueueSubmit: the plan is one segment,
// recorded once and replayed.
func TestOneSubmitPerRun(t *testing.T) {
	s, err := onnxvk.NewSession(reluChain(9), onnxvk.WithDevice("vulkan"))
	if errors.Is(err, backend.ErrDeviceUnavailable) {
		testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", err))
	}
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	x, err := onnxvk.NewTensor([]int64{1, 64}, make([]float32, 64))
	if err != nil {
		t.Fatal(err)
	}
	in := map[string]*onnxvk.Tensor{"v0": x}
	for run := range 3 {
		before := vk.Submits()
		if _, err := s.Run(context.Background(), in); err != nil {
			t.Fatal(err)
		}
		want := int64(1)
		if run == 0 {
			want += compileSubmits(t)
		}
		if n := vk.Submits() - before; n != want {
			t.Fatalf("run %d made %d submits, want %d", run, n, want)
		}
	}
}

// compileSubmits is the number of submissions the first Run of a plan with
// constants (weights, the programs of fused chains) makes besides its own:
// one copying them from a staging buffer into device memory on a device
// without unified memory (a discrete GPU), none where they are written in
// place.
func compileSubmits(t *testing.T) int64 {
	t.Helper()
	infos, err := vulkan.Devices()
	if err != nil {
		t.Fatal(err)
	}
	if infos[vulkan.DefaultIndex(infos)].UnifiedMemory {
		return 0
	}
	return 1
}

// convNet is a small classifier with weights on every layer: Conv (3×3,
// bias) → Relu → GlobalAveragePool → Flatten → Gemm (bias) → Softmax, over
// an input [1, 3, 16, 16], with seeded random weights.
func convNet() *graph.Model {
	r := rand.New(rand.NewPCG(3, 4))
	weight := func(shape ...int64) *graph.Tensor {
		t := graph.NewTensor(graph.Float, shape)
		v := graph.View[float32](t)
		for i := range v {
			v[i] = r.Float32() - 0.5
		}
		return t
	}
	g := graph.NewGraph("convnet")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(1, 3, 16, 16))}}
	g.Initializers = map[string]*graph.Tensor{"w": weight(8, 3, 3, 3), "b": weight(8), "fw": weight(10, 8), "fb": weight(10)}
	pads := &graph.Attribute{Name: "pads", Type: graph.AttrInts, Ints: []int64{1, 1, 1, 1}}
	transB := &graph.Attribute{Name: "transB", Type: graph.AttrInt, I: 1}
	g.Nodes = []*graph.Node{
		{Index: 0, OpType: "Conv", Inputs: []string{"x", "w", "b"}, Outputs: []string{"c"}, Attrs: map[string]*graph.Attribute{"pads": pads}},
		{Index: 1, OpType: "Relu", Inputs: []string{"c"}, Outputs: []string{"r"}},
		{Index: 2, OpType: "GlobalAveragePool", Inputs: []string{"r"}, Outputs: []string{"p"}},
		{Index: 3, OpType: "Flatten", Inputs: []string{"p"}, Outputs: []string{"f"}},
		{Index: 4, OpType: "Gemm", Inputs: []string{"f", "fw", "fb"}, Outputs: []string{"l"}, Attrs: map[string]*graph.Attribute{"transB": transB}},
		{Index: 5, OpType: "Softmax", Inputs: []string{"l"}, Outputs: []string{"y"}},
	}
	g.Outputs = []*graph.ValueInfo{{Name: "y", Type: graph.TensorType(graph.Float, graph.ShapeOf(1, 10))}}
	return &graph.Model{Name: "convnet", IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g}
}

// TestOneSubmitWithWeights runs a model whose every layer has weights,
// all on Vulkan, and requires each Run to be one submission that moves
// only the input and the output between host and device (the weights are
// resident from compile time, uploaded by the first Run, which compiles
// the plan), with the CPU's results.
func TestOneSubmitWithWeights(t *testing.T) {
	s, err := onnxvk.NewSession(convNet(), onnxvk.WithDevice("vulkan"))
	if errors.Is(err, backend.ErrDeviceUnavailable) {
		testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", err))
	}
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cpu, err := onnxvk.NewSession(convNet(), onnxvk.WithDevice("cpu"))
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	xs := make([]float32, 3*16*16)
	for i := range xs {
		xs[i] = float32(i%17) / 17
	}
	x, err := onnxvk.NewTensor([]int64{1, 3, 16, 16}, xs)
	if err != nil {
		t.Fatal(err)
	}
	in := map[string]*onnxvk.Tensor{"x": x}
	p, err := sessionvalues.Of(s).Plan(map[string]*graph.Type{"x": graph.TensorType(graph.Float, graph.ShapeOf(1, 3, 16, 16))})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range p.Steps {
		if st.Kind == planner.Transfer && p.Constants[st.In[0]] != nil {
			t.Errorf("the plan moves weight %q to %s", p.Values[st.In[0]], st.To)
		}
	}
	want, err := cpu.Run(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	wantY, _ := want["y"].Float32s()
	var weights int64
	for _, w := range convNet().Graph.Initializers {
		weights += int64(len(w.Data))
	}
	for run := range 3 {
		before := s.Counters()
		got, err := s.Run(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		c := s.Counters().Sub(before)
		want := int64(1)
		if run == 0 {
			want += compileSubmits(t)
		}
		if c.Submits != want {
			t.Errorf("run %d made %d submits, want %d", run, c.Submits, want)
		}
		io := int64(len(xs)+len(wantY)) * 4
		if run == 0 {
			io += weights
		}
		if c.HostDeviceBytes != io {
			t.Errorf("run %d moved %d bytes between host and device, want %d (the input and the output, and the weights the first time)", run, c.HostDeviceBytes, io)
		}
		if c.Dispatches < 1 || c.Dispatches > int64(len(convNet().Graph.Nodes)) {
			t.Errorf("run %d made %d dispatches for %d nodes", run, c.Dispatches, len(convNet().Graph.Nodes))
		}
		gotY, _ := got["y"].Float32s()
		for i := range wantY {
			if math.Abs(float64(gotY[i]-wantY[i])) > 1e-5 {
				t.Fatalf("run %d: y[%d] = %v, the CPU's %v", run, i, gotY[i], wantY[i])
			}
		}
	}
}
