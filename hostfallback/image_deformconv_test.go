package hostfallback

import (
	"math/rand/v2"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

func TestDeformConv(t *testing.T) {
	x := ewF32(ewShape(1, 1, 3, 3), 0, 1, 2, 3, 4, 5, 6, 7, 8)
	w := ewF32(ewShape(1, 1, 2, 2), 1, 1, 1, 1)
	off := graph.NewTensor(graph.Float, ewShape(1, 8, 2, 2))
	y := ewRun(t, "DeformConv", 19, nil, x, w, off)
	ewCheck(t, "no offset", y, graph.Float, ewShape(1, 1, 2, 2), []float64{8, 12, 20, 24}, 1e-6)
	// Move tap (0, 0) of output (0, 0) down by half a pixel: it reads
	// (0 + 3) / 2 instead of 0. Mask tap (1, 1) of output (1, 1) to a half.
	graph.View[float32](off)[0] = 0.5
	mask := graph.NewTensor(graph.Float, ewShape(1, 4, 2, 2))
	for i := range graph.View[float32](mask) {
		graph.View[float32](mask)[i] = 1
	}
	graph.View[float32](mask)[3*4+3] = 0.5
	y = ewRun(t, "DeformConv", 19, nil, x, w, off, ewF32(ewShape(1), 1), mask)
	ewCheck(t, "offset mask", y, graph.Float, ewShape(1, 1, 2, 2), []float64{10.5, 13, 21, 21}, 1e-6)
	// Tap (0, 1) of output (0, 0) moved left to x = -1.5 reads zero
	// instead of 1.
	far := graph.NewTensor(graph.Float, ewShape(1, 8, 2, 2))
	graph.View[float32](far)[3*4] = -2.5
	y = ewRun(t, "DeformConv", 19, nil, x, w, far)
	ewCheck(t, "outside", y, graph.Float, ewShape(1, 1, 2, 2), []float64{7, 12, 20, 24}, 1e-6)
	ewFails(t, "DeformConv", 19, nil, x, w, graph.NewTensor(graph.Float, ewShape(1, 4, 2, 2)))
}

// TestDeformConvMatchesConv checks that zero offsets with groups, strides,
// padding and dilation give Conv's result.
func TestDeformConvMatchesConv(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	x := ewRandF32(r, ewShape(2, 4, 7, 6))
	w := ewRandF32(r, ewShape(6, 2, 3, 2))
	b := ewRandF32(r, ewShape(6))
	attrs := ewWith(ewInt("group", 2), ewInts("strides", 2, 1), ewInts("pads", 1, 0, 1, 1), ewInts("dilations", 1, 2))
	want := ewRun(t, "Conv", 11, attrs, x, w, b)
	attrs["offset_group"] = ewInt("offset_group", 2)
	off := graph.NewTensor(graph.Float, []int64{2, 2 * 2 * 6, want.Shape[2], want.Shape[3]})
	got := ewRun(t, "DeformConv", 19, attrs, x, w, off, b)
	ewCheck(t, "conv", got, graph.Float, want.Shape, ewValues(want), 1e-4)
}
