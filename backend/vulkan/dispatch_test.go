package vulkan_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/backend/vulkan/internal/vk"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/testenv"
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
			b.Skip("no Vulkan device:", err)
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
		if n := vk.Submits() - before; n != 1 {
			t.Fatalf("run %d made %d submits, want 1", run, n)
		}
	}
}
