package vulkan

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/kerneltest"
	"github.com/onnxvk/onnxvk/planner"
)

// TestCumSumMatchesCPU checks CumSum on every axis (negative ones too) of
// odd shapes, in the four exclusive/reverse modes, with int32 and int64
// axes, against the CPU kernel.
func TestCumSumMatchesCPU(t *testing.T) {
	d := openTest(t)
	r := rand.New(rand.NewPCG(11, 3))
	shapes := [][]int64{{1}, {13}, {127}, {3, 5}, {2, 13, 7}, {1, 2, 3, 4}, {2, 1, 3, 1, 5}, {3000}, {5, 20000}}
	for _, shape := range shapes {
		for axis := -int64(len(shape)); axis < int64(len(shape)); axis++ {
			for mode := range 4 {
				n := &graph.Node{OpType: "CumSum", Inputs: []string{"x", "axis"}, Outputs: []string{"y"}, Attrs: map[string]*graph.Attribute{
					"exclusive": {Name: "exclusive", Type: graph.AttrInt, I: int64(mode & 1)},
					"reverse":   {Name: "reverse", Type: graph.AttrInt, I: int64(mode >> 1)}}}
				at := graph.NewTensor(graph.Int64, []int64{})
				graph.View[int64](at)[0] = axis
				if mode == 3 {
					at = graph.NewTensor(graph.Int32, []int64{1})
					graph.View[int32](at)[0] = int32(axis)
				}
				kerneltest.Check(t, d, fmt.Sprintf("CumSum %v axis %d mode %d", shape, axis, mode), kerneltest.Case{Node: n, Opset: 14, Args: []kerneltest.Arg{{T: kerneltest.RandFloats(r, shape, -1, 1)}, {T: at, Const: true}}})
			}
		}
	}
}

// TestCumSumDeclines checks that CumSum with a runtime axis or a line too
// long for one invocation stays on the CPU.
func TestCumSumDeclines(t *testing.T) {
	d := openTest(t)
	f32 := func(dims ...int64) *graph.Type { return graph.TensorType(graph.Float, graph.ShapeOf(dims...)) }
	i64 := graph.TensorType(graph.Int64, graph.ShapeOf())
	n := &graph.Node{OpType: "CumSum", Inputs: []string{"x", "axis"}, Outputs: []string{"y"}}
	zero := graph.NewTensor(graph.Int64, []int64{})
	if d.Supports(planner.Query{Node: n, Opset: 14, Inputs: []*graph.Type{f32(3, 4), i64}}) {
		t.Error("CumSum with a runtime axis: supported")
	}
	if d.Supports(planner.Query{Node: n, Opset: 14, Inputs: []*graph.Type{f32(70000), i64}, Consts: []*graph.Tensor{nil, zero}}) {
		t.Error("CumSum over 70000 elements: supported")
	}
}
