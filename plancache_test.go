package onnxvk_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/testenv"
)

// churnModel is y = relu(reshape(x, [-1, 8]) @ w * 2 + 1) for x of shape
// [A, B, C, D, 8]: a product with a weight every plan shares, then an
// elementwise chain that the Vulkan device fuses into one dispatch with
// parameters of its own per plan.
func churnModel() *graph.Model {
	g := graph.NewGraph("churn")
	dims := graph.Shape{graph.SymDim("A"), graph.SymDim("B"), graph.SymDim("C"), graph.SymDim("D"), graph.DimOf(8)}
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, dims)}}
	g.Outputs = []*graph.ValueInfo{{Name: "y", Type: graph.TensorType(graph.Float, graph.Shape{graph.SymDim("N"), graph.DimOf(8)})}}
	w := graph.NewTensor(graph.Float, []int64{8, 8})
	for i := range graph.View[float32](w) {
		graph.View[float32](w)[i] = float32(i%7) - 3
	}
	g.Initializers["w"] = w
	g.Initializers["two"], _ = graph.FromSlice(graph.Float, nil, []float32{2})
	g.Initializers["one"], _ = graph.FromSlice(graph.Float, nil, []float32{1})
	g.Initializers["rows"], _ = graph.FromSlice(graph.Int64, []int64{2}, []int64{-1, 8})
	g.Nodes = []*graph.Node{
		{Name: "flat", OpType: "Reshape", Inputs: []string{"x", "rows"}, Outputs: []string{"x2"}},
		{Name: "mm", OpType: "MatMul", Inputs: []string{"x2", "w"}, Outputs: []string{"p"}},
		{Name: "scale", OpType: "Mul", Inputs: []string{"p", "two"}, Outputs: []string{"q"}},
		{Name: "shift", OpType: "Add", Inputs: []string{"q", "one"}, Outputs: []string{"r"}},
		{Name: "relu", OpType: "Relu", Inputs: []string{"r"}, Outputs: []string{"y"}},
	}
	for i, n := range g.Nodes {
		n.Index = i
	}
	return &graph.Model{Name: "churn", IRVersion: 8, Opsets: map[string]int64{"": 14}, Graph: g}
}

// churnShapes returns n distinct input shapes of churnModel with the same
// number of elements (A·B·C·D = 720), so that every plan needs the same
// memory.
func churnShapes(n int) [][]int64 {
	var shapes [][]int64
	divisors := func(m int64) []int64 {
		var ds []int64
		for d := int64(1); d <= m; d++ {
			if m%d == 0 {
				ds = append(ds, d)
			}
		}
		return ds
	}
	for _, a := range divisors(720) {
		for _, b := range divisors(720 / a) {
			for _, c := range divisors(720 / a / b) {
				shapes = append(shapes, []int64{a, b, c, 720 / a / b / c, 8})
				if len(shapes) == n {
					return shapes
				}
			}
		}
	}
	panic("too few shapes")
}

// TestPlanEvictionFreesDeviceMemory runs a Vulkan session on 500 distinct
// input shapes in the long suites (48 otherwise), each a new plan
// (WithoutShapeClasses): once
// the plan cache is full, every new plan evicts one, whose device memory
// (execution contexts, per-plan weights) must be freed, so the memory in
// use stays where it was when the cache filled. The outputs must match
// the CPU's.
func TestPlanEvictionFreesDeviceMemory(t *testing.T) {
	n := 48
	if testenv.Long() {
		n = 500
	}
	gpu := vulkanSession(t, churnModel(), onnxvk.WithoutShapeClasses())
	cpu, err := onnxvk.NewSession(churnModel(), onnxvk.WithDevice("cpu"))
	require.NoError(t, err)
	defer cpu.Close()
	const maxPlans = 32 // the session's plan cache
	var full, peak int64
	for i, shape := range churnShapes(n) {
		data := make([]float32, 720*8)
		for k := range data {
			data[k] = float32((k+i)%11) / 4
		}
		x, err := onnxvk.NewTensor(shape, data)
		require.NoError(t, err)
		in := map[string]*onnxvk.Tensor{"x": x}
		got, err := gpu.Run(context.Background(), in)
		require.NoError(t, err)
		want, err := cpu.Run(context.Background(), in)
		require.NoError(t, err)
		wantY, err := onnxvk.Data[float32](want["y"])
		require.NoError(t, err)
		gotY, err := onnxvk.Data[float32](got["y"])
		require.NoError(t, err)
		for k := range wantY {
			if math.Abs(float64(gotY[k]-wantY[k])) > 1e-4 {
				t.Fatalf("shape %v: y[%d] is %g, the CPU's %g", shape, k, gotY[k], wantY[k])
			}
		}
		used := gpu.DeviceMemoryInUse()
		if i == maxPlans-1 {
			full = used
		}
		peak = max(peak, used)
	}
	t.Logf("%d shapes: %d bytes in use once the cache filled, at most %d after", n, full, peak)
	require.LessOrEqual(t, peak, full+full/10, "device memory grew past the full cache's")
}
