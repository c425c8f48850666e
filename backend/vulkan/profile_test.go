package vulkan_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/backend/vulkan/internal/vk"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/sessionvalues"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/planner"
)

// TestProfilePerNode runs attentionModel, every node of which is on
// Vulkan, under a trace: there must be one event per node, named after it,
// with a positive device time, or none and a note where the node records
// no dispatch of its own (fused into another's, a view), and an untraced
// Run afterwards must still agree with the CPU.
func TestProfilePerNode(t *testing.T) {
	m := attentionModel()
	for i, n := range m.Graph.Nodes {
		n.Name = fmt.Sprintf("n%d", i)
	}
	gpu, err := onnxvk.NewSession(m, onnxvk.WithDevice("vulkan"))
	if errors.Is(err, backend.ErrDeviceUnavailable) {
		testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", err))
	}
	if err != nil {
		t.Fatal(err)
	}
	defer gpu.Close()
	cpu, err := onnxvk.NewSession(attentionModel(), onnxvk.WithDevice("cpu"))
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	data := make([]float32, 2*5*16)
	for i := range data {
		data[i] = float32(i%11)/5 - 1
	}
	x, err := onnxvk.NewTensor([]int64{2, 5, 16}, data)
	if err != nil {
		t.Fatal(err)
	}
	in := map[string]*onnxvk.Tensor{"x": x}
	if _, err := gpu.Run(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	tr := backend.NewTrace()
	traced, err := gpu.Run(backend.WithTrace(context.Background(), tr), in)
	if err != nil {
		t.Fatal(err)
	}
	want, err := cpu.Run(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	untraced, err := gpu.Run(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	match(t, traced, untraced)
	match(t, untraced, want)

	p, err := sessionvalues.Of(gpu).Plan(nil)
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[string]string{}
	for _, st := range p.Steps {
		if st.Kind == planner.Compute {
			nodes[st.Node.Name] = st.Node.OpType
		}
	}
	seen := map[string]bool{}
	timestamps := false
	for _, ev := range tr.Events() {
		if ev.Op == "transfer" {
			continue
		}
		op, ok := nodes[ev.Name]
		if !ok || ev.Op != op || !strings.HasPrefix(ev.Device, "vulkan:") || ev.Steps > 1 {
			t.Errorf("event %+v is not one Vulkan node of the plan", ev)
			continue
		}
		if seen[ev.Name] {
			t.Errorf("two events for node %q", ev.Name)
		}
		seen[ev.Name] = true
		if ev.Note != "" {
			if ev.DeviceDur != 0 {
				t.Errorf("node %q (%s), %s, has a device time of its own: %v", ev.Name, ev.Op, ev.Note, ev.DeviceDur)
			}
			continue
		}
		timestamps = ev.DeviceDur > 0
		if ev.DeviceDur <= 0 || ev.Dur != ev.DeviceDur {
			t.Errorf("node %q (%s): device time %v, host slice %v; want a positive device time", ev.Name, ev.Op, ev.DeviceDur, ev.Dur)
		}
	}
	if len(seen) != len(nodes) {
		t.Errorf("%d node events, want %d (one per node)", len(seen), len(nodes))
	}
	if !timestamps {
		t.Log("the device has no timestamp queries")
	}
}

// rowsModel computes y = Sigmoid(Relu(x + b)) on x [n, 64], n symbolic,
// all on Vulkan.
func rowsModel() *graph.Model {
	g := graph.NewGraph("rows")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.Shape{{Param: "n"}, {Value: 64}})}}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	b := graph.NewTensor(graph.Float, []int64{64})
	bs := graph.View[float32](b)
	for i := range bs {
		bs[i] = float32(i%5) - 2
	}
	g.Initializers["b"] = b
	g.Nodes = []*graph.Node{
		{Name: "add", OpType: "Add", Inputs: []string{"x", "b"}, Outputs: []string{"a"}},
		{Name: "relu", OpType: "Relu", Inputs: []string{"a"}, Outputs: []string{"r"}},
		{Name: "sigmoid", OpType: "Sigmoid", Inputs: []string{"r"}, Outputs: []string{"y"}},
	}
	for i, n := range g.Nodes {
		n.Index = i
	}
	return &graph.Model{Name: "rows", IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g}
}

func rows(t *testing.T, n int64) map[string]*onnxvk.Tensor {
	r := rand.New(rand.NewPCG(uint64(n), 1))
	data := make([]float32, n*64)
	for i := range data {
		data[i] = 8*r.Float32() - 4
	}
	x, err := onnxvk.NewTensor([]int64{n, 64}, data)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*onnxvk.Tensor{"x": x}
}

// TestOutOfMemory caps the device memory of a session: a Run that needs
// more fails with ErrOutOfMemory and a message that names what it was
// allocating; a smaller Run afterwards works; with WithCPUFallbackOnOOM
// the large Run succeeds on the CPU; after Close no Vulkan object is left.
func TestOutOfMemory(t *testing.T) {
	before := vk.Live()
	const limit = 1 << 20
	const big = 16 << 10 // rows: 4 MiB of input, 4 MiB of output
	open := func(opts ...onnxvk.Option) *onnxvk.Session {
		s, err := onnxvk.NewSession(rowsModel(), append(opts, onnxvk.WithDevice("vulkan"))...)
		if errors.Is(err, backend.ErrDeviceUnavailable) {
			testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", err))
		}
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	cpu, err := onnxvk.NewSession(rowsModel(), onnxvk.WithDevice("cpu"))
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	want := func(in map[string]*onnxvk.Tensor) map[string]*onnxvk.Tensor {
		out, err := cpu.Run(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}

	s := open(onnxvk.WithDeviceMemoryLimit(limit))
	_, err = s.Run(context.Background(), rows(t, big))
	if !errors.Is(err, onnxvk.ErrOutOfMemory) {
		t.Fatalf("Run over the memory limit: %v, want ErrOutOfMemory", err)
	}
	// The three nodes are one chain.comp dispatch: no arena, 4 MiB of io
	// for x and y each.
	for _, part := range []string{"allocating the input/output buffer (8388608 bytes)", "node \"add\"", "VK_ERROR_OUT_OF_DEVICE_MEMORY"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not say %q", err, part)
		}
	}
	for range 2 {
		small := rows(t, 8)
		got, err := s.Run(context.Background(), small)
		if err != nil {
			t.Fatalf("Run within the limit after an out-of-memory Run: %v", err)
		}
		match(t, got, want(small))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = open(onnxvk.WithDeviceMemoryLimit(limit), onnxvk.WithCPUFallbackOnOOM())
	for range 2 {
		in := rows(t, big)
		got, err := s.Run(context.Background(), in)
		if err != nil {
			t.Fatalf("Run with CPU fallback: %v", err)
		}
		match(t, got, want(in))
	}
	p, err := sessionvalues.Of(s).Plan(map[string]*graph.Type{"x": graph.TensorType(graph.Float, graph.ShapeOf(3, 64))})
	if err != nil {
		t.Fatal(err)
	}
	if p.Steps[len(p.Steps)-2].Device != s.Device() {
		t.Fatalf("the fallback changed the plan of other shapes")
	}
	small := rows(t, 3)
	got, err := s.Run(context.Background(), small)
	if err != nil {
		t.Fatal(err)
	}
	match(t, got, want(small))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := vk.Live(); got != before {
		t.Fatalf("%d Vulkan objects live after Close, want %d", got, before)
	}
}
