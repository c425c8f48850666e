package vulkan

import (
	"math/rand/v2"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/kerneltest"
)

// TestWhereMatchesCPU checks Where on elements of 4 and 8 bytes with all
// three inputs broadcast, up to rank 6.
func TestWhereMatchesCPU(t *testing.T) {
	d := openTest(t)
	r := rand.New(rand.NewPCG(11, 12))
	for _, s := range [][3][]int64{
		{{}, {}, {}},
		{{1}, {13}, {}},
		{{127}, {1}, {127}},
		{{13, 1}, {1, 127}, {13, 127}},
		{{2, 1, 5}, {3, 1}, {1, 1, 1, 5}},
		{{1, 2, 1, 3, 1, 5}, {4, 1, 1, 1, 1, 1}, {2, 1, 3, 2, 1}},
		{{70001}, {70001}, {1}},
	} {
		for _, dt := range []graph.DType{graph.Float, graph.Int32, graph.Int64, graph.Uint64} {
			checkMove(t, d, kerneltest.Node("Where", []string{"c", "a", "b"}), 16,
				kerneltest.Arg{T: kerneltest.EdgeValues(r, graph.Bool, s[0])}, kerneltest.Arg{T: kerneltest.EdgeValues(r, dt, s[1])}, kerneltest.Arg{T: kerneltest.EdgeValues(r, dt, s[2]), Const: true})
		}
	}
}
