package vulkan

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/kerneltest"
)

// TestGatherElementsMatchesCPU checks GatherElements on every axis of
// ranks 1 to 6, with indices smaller than the data along other axes,
// negative indices, int32 and int64 indices, runtime and constant, and
// float32, int32 and int64 data.
func TestGatherElementsMatchesCPU(t *testing.T) {
	d := openTest(t)
	shapes := [][]int64{{13}, {3, 5}, {2, 3, 7}, {1, 2, 3, 4}, {2, 1, 3, 1, 5}, {1, 2, 1, 3, 2, 3}, {70000, 2}}
	for i, x := range shapes {
		for axis := -len(x); axis < len(x); axis++ {
			a, _ := normAxis(int64(axis), len(x))
			for _, dt := range []graph.DType{graph.Float, graph.Int32, graph.Int64} {
				for _, it := range []graph.DType{graph.Int64, graph.Int32} {
					r := rand.New(rand.NewPCG(uint64(i), uint64(axis+10)))
					data := kerneltest.RandFloats(r, x, -5, 5)
					if dt != graph.Float {
						data = kerneltest.RandInts(r, dt, x, -1<<30, 1<<30)
					}
					ind := append([]int64{}, x...)
					ind[a] = 1 + r.Int64N(2*x[a])
					if len(x) > 1 {
						b := (a + 1) % len(x)
						ind[b] = 1 + r.Int64N(x[b])
					}
					idx := kerneltest.RandInts(r, it, ind, -x[a], x[a])
					n := &graph.Node{OpType: "GatherElements", Inputs: []string{"x", "i"}, Outputs: []string{"y"},
						Attrs: map[string]*graph.Attribute{"axis": kerneltest.IntAttr("axis", int64(axis))}}
					what := fmt.Sprintf("GatherElements %s %v axis %d indices %s %v", dt, x, axis, it, ind)
					kerneltest.Check(t, d, what, kerneltest.Case{Node: n, Opset: 13, Args: []kerneltest.Arg{{T: data}, {T: idx, Const: i%2 == 0}}})
				}
			}
		}
	}
}
