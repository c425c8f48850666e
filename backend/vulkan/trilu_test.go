package vulkan

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/kerneltest"
)

// TestTriluMatchesCPU checks Trilu, upper and lower, without k and with k
// inside and beyond the matrix, runtime and constant, on float32, int32
// and int64 batches of square and oblong matrices.
func TestTriluMatchesCPU(t *testing.T) {
	d := openTest(t)
	shapes := [][]int64{{1, 1}, {3, 5}, {5, 3}, {2, 3, 7, 4}, {4, 300, 70}}
	for i, x := range shapes {
		for _, dt := range []graph.DType{graph.Float, graph.Int32, graph.Int64} {
			for _, upper := range []int64{0, 1} {
				for _, k := range []int64{absent, 0, 2, -3, 400, -1 << 35} {
					r := rand.New(rand.NewPCG(uint64(i), uint64(upper)))
					data := kerneltest.RandFloats(r, x, -5, 5)
					if dt != graph.Float {
						data = kerneltest.RandInts(r, dt, x, -1<<30, 1<<30)
					}
					n := &graph.Node{OpType: "Trilu", Inputs: []string{"x"}, Outputs: []string{"y"},
						Attrs: map[string]*graph.Attribute{"upper": kerneltest.IntAttr("upper", upper)}}
					args := []kerneltest.Arg{{T: data}}
					if k != absent {
						kt, _ := graph.FromSlice(graph.Int64, []int64{}, []int64{k})
						n.Inputs = append(n.Inputs, "k")
						args = append(args, kerneltest.Arg{T: kt, Const: k == 2})
					}
					what := fmt.Sprintf("Trilu %s %v upper %d k %d", dt, x, upper, k)
					kerneltest.Check(t, d, what, kerneltest.Case{Node: n, Opset: 14, Args: args})
				}
			}
		}
	}
}
