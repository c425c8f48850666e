package vulkan

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/kerneltest"
)

// TestCastMatchesCPU checks Cast and CastLike between float32, int32 and
// int64 (large and negative values, exact rounding to float32), and the
// copy of equal types.
func TestCastMatchesCPU(t *testing.T) {
	d := openTest(t)
	floats := []float32{0, -0.5, 0.99, -1.99, 3.5, 1e9, -2147483520, 2147483520, 5e9, -5e9, 9.2e18, -9.2e18, 123456.7}
	f, _ := graph.FromSlice(graph.Float, []int64{int64(len(floats))}, floats)
	longs := []int64{0, -1, 1, math.MaxInt32, math.MinInt32, math.MaxInt64, math.MinInt64, 1<<40 + 1, -(1<<40 + 3), 1<<24 + 1,
		1<<53 + 1<<29 + 1, 1<<53 + 1<<29, -(1<<60 + 1<<36), 0x7fffffc000000001, 16777217}
	l, _ := graph.FromSlice(graph.Int64, []int64{int64(len(longs))}, longs)
	small := graph.NewTensor(graph.Float, []int64{7, 13})
	for i := range graph.View[float32](small) {
		graph.View[float32](small)[i] = float32(i)*37.25 - 1500
	}
	ins := []*graph.Tensor{f, l, small, kerneltest.RandomTensor(graph.Int32, []int64{3, 5, 7}, 1), kerneltest.RandomTensor(graph.Int64, []int64{2, 70000}, 2)}
	for _, x := range ins {
		for _, to := range []graph.DType{graph.Float, graph.Int32, graph.Int64} {
			if x.DType == graph.Float && to == graph.Int32 && x == f {
				continue // values beyond int32: Go's conversion is implementation-specific
			}
			checkMove(t, d, kerneltest.Node("Cast", []string{"x"}, kerneltest.IntAttr("to", int64(to))), 13, kerneltest.Arg{T: x})
			checkMove(t, d, kerneltest.Node("CastLike", []string{"x", "like"}), 15, kerneltest.Arg{T: x}, kerneltest.Arg{T: graph.NewTensor(to, []int64{1})})
		}
	}
}

// TestCastBytesMatchesCPU checks Cast and CastLike to and from bool, uint8
// and int8, over odd sizes (1-byte elements share 32-bit words) and
// float32 values within the range of the target integer type.
func TestCastBytesMatchesCPU(t *testing.T) {
	d := openTest(t)
	r := rand.New(rand.NewPCG(17, 18))
	types := []graph.DType{graph.Float, graph.Int32, graph.Int64, graph.Bool, graph.Uint8, graph.Int8}
	for _, from := range types {
		for _, to := range types {
			if from.Size() >= 4 && to.Size() >= 4 {
				continue // TestCastMatchesCPU
			}
			for _, shape := range [][]int64{{}, {1}, {3}, {13}, {127}, {3, 1, 5}, {70001}} {
				x := kerneltest.EdgeValues(r, from, shape)
				if from == graph.Float && to != graph.Bool {
					lo, hi := float32(-128), float32(128)
					if to == graph.Uint8 {
						lo, hi = 0, 256
					}
					x = kerneltest.RandFloats(r, shape, lo, hi)
				}
				checkMove(t, d, kerneltest.Node("Cast", []string{"x"}, kerneltest.IntAttr("to", int64(to))), 13, kerneltest.Arg{T: x})
				checkMove(t, d, kerneltest.Node("CastLike", []string{"x", "like"}), 15, kerneltest.Arg{T: x}, kerneltest.Arg{T: graph.NewTensor(to, []int64{1})})
			}
		}
	}
}
