package vulkan

import (
	"slices"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/kerneltest"
	"github.com/onnxvk/onnxvk/planner"
)

// TestPadMatchesCPU checks Pad in every mode with pads as an attribute
// (opset 2) and as constant inputs with a constant value and axes,
// negative pads (crops) included.
func TestPadMatchesCPU(t *testing.T) {
	d := openTest(t)
	cases := []struct {
		shape, pads, axes []int64
	}{
		{[]int64{5}, []int64{2, 3}, nil},
		{[]int64{3, 4}, []int64{1, 0, 2, 3}, nil},
		{[]int64{2, 3, 4, 5}, []int64{0, 0, 1, 2, 0, 0, 2, 1}, nil},
		{[]int64{2, 3, 4, 5}, []int64{1, -1, 2, 1}, []int64{-1, 1}},
		{[]int64{1, 2, 3, 2, 3, 4}, []int64{0, 1, 0, 1, 0, 2, 0, 0, 1, 0, 1, 1}, nil},
	}
	for i, c := range cases {
		for _, mode := range []string{"constant", "edge", "reflect", "wrap"} {
			for _, dt := range wordTypes {
				n := kerneltest.Node("Pad", []string{"x", "p", "v"}, kerneltest.StringAttr("mode", mode))
				value := kerneltest.RandomTensor(dt, []int64{}, uint64(i))
				ins := []kerneltest.Arg{feed(dt, c.shape, uint64(i)), kerneltest.ConstInts(c.pads...), {T: value, Const: true}}
				if c.axes != nil {
					n.Inputs, ins = append(n.Inputs, "a"), append(ins, kerneltest.ConstInts(c.axes...))
				}
				if mode == "wrap" && slices.Min(c.pads) < 0 {
					continue
				}
				checkMove(t, d, n, 19, ins...)
			}
		}
	}
	n := kerneltest.Node("Pad", []string{"x", "p"}, kerneltest.StringAttr("mode", "reflect"))
	ty := []*graph.Type{graph.TensorType(graph.Float, graph.ShapeOf(3)), graph.TensorType(graph.Int64, graph.ShapeOf(2))}
	if d.Supports(planner.Query{Node: n, Opset: 13, Inputs: ty, Consts: []*graph.Tensor{nil, kerneltest.ConstInts(3, 0).T}}) {
		t.Error("Pad reflecting past the input's edge: supported, want unsupported")
	}
}
