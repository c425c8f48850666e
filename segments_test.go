package onnxvk_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/graph"
)

// splitModel computes y = Relu(x) + Hardmax(-x) for x [4, 8] with no
// Hardmax kernel on Vulkan: Relu and Neg make one Vulkan segment, Hardmax
// runs on the CPU, and the Add a second Vulkan segment, which reads
// Relu(x) from the first.
func splitModel() *graph.Model {
	g := graph.NewGraph("split")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(4, 8))}}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	g.Nodes = []*graph.Node{
		{Name: "relu", OpType: "Relu", Inputs: []string{"x"}, Outputs: []string{"a"}},
		{Name: "neg", OpType: "Neg", Inputs: []string{"x"}, Outputs: []string{"b"}},
		{Name: "hardmax", OpType: "Hardmax", Inputs: []string{"b"}, Outputs: []string{"h"}},
		{Name: "add", OpType: "Add", Inputs: []string{"a", "h"}, Outputs: []string{"y"}},
	}
	for i, n := range g.Nodes {
		n.Index = i
	}
	return &graph.Model{Name: "split", IRVersion: 8, Opsets: map[string]int64{"": 14}, Graph: g}
}

// TestSegmentsPassOnDevice runs splitModel on Vulkan: Relu(x), which only
// the second Vulkan segment reads, stays on the GPU between the two (a
// device copy, no readback and upload), so a Run is two submissions and
// moves x in, -x out to the CPU, Hardmax(-x) in and y out: 4 times 128
// bytes. The output equals the CPU's.
func TestSegmentsPassOnDevice(t *testing.T) {
	sess := vulkanSession(t, splitModel())
	cpu, err := onnxvk.NewSession(splitModel(), onnxvk.WithDevice("cpu"))
	require.NoError(t, err)
	defer cpu.Close()
	data := make([]float32, 32)
	for i := range data {
		data[i] = float32(math.Sin(float64(i)))
	}
	x, err := onnxvk.NewTensor([]int64{4, 8}, data)
	require.NoError(t, err)
	in := map[string]*onnxvk.Tensor{"x": x}
	want, err := cpu.Run(context.Background(), in)
	require.NoError(t, err)
	wy, err := onnxvk.Data[float32](want["y"])
	require.NoError(t, err)
	for range 3 {
		before := sess.Counters()
		out, err := sess.Run(context.Background(), in)
		require.NoError(t, err)
		did := sess.Counters().Sub(before)
		gy, err := onnxvk.Data[float32](out["y"])
		require.NoError(t, err)
		require.Equal(t, wy, gy, "y against the CPU's")
		require.Equal(t, int64(2), did.Submits, "submissions per Run")
		require.Equal(t, int64(4*128), did.HostDeviceBytes, "bytes between host and device per Run")
	}
}
