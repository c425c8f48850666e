package vulkan

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/kerneltest"
	"github.com/onnxvk/onnxvk/internal/testenv"
)

// TestArgMatchesCPU checks ArgMax and ArgMin on every axis, with and
// without keepdims and select_last_index, on inputs with many ties and
// with NaNs.
func TestArgMatchesCPU(t *testing.T) {
	d := openTest(t)
	sample := testenv.NewSampler(12)
	for _, op := range slices.Sorted(maps.Keys(argOps)) {
		t.Run(op, func(t *testing.T) {
			for i, shape := range rowShapes {
				for axis := -len(shape); axis < len(shape); axis++ {
					for _, keep := range []int64{0, 1} {
						for _, last := range []int64{0, 1} {
							if !sample.Take() {
								continue
							}
							r := rand.New(rand.NewPCG(uint64(i), uint64(axis+10)))
							x := kerneltest.RandFloats(r, shape, -3, 3)
							xs := graph.View[float32](x)
							for j := range xs {
								xs[j] = float32(math.Round(float64(xs[j])))
								if j%37 == 5 {
									xs[j] = float32(math.NaN())
								}
							}
							n := &graph.Node{OpType: op, Inputs: []string{"x"}, Outputs: []string{"y"},
								Attrs: map[string]*graph.Attribute{"axis": kerneltest.IntAttr("axis", int64(axis)),
									"keepdims": kerneltest.IntAttr("keepdims", keep), "select_last_index": kerneltest.IntAttr("select_last_index", last)}}
							what := fmt.Sprintf("%s %v axis %d keepdims %d last %d", op, shape, axis, keep, last)
							kerneltest.Check(t, d, what, kerneltest.Case{Node: n, Opset: 13, Args: []kerneltest.Arg{{T: x}}})
						}
					}
				}
			}
		})
	}
}
