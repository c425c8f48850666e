package vulkan

import (
	"fmt"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/internal/kerneltest"
)

// TestBatchNormMatchesCPU checks BatchNormalization in inference form at
// every opset that differs, with the parameters weights and runtime
// values, and the non-spatial mode of opsets before 9.
func TestBatchNormMatchesCPU(t *testing.T) {
	d := openTest(t)
	tol := ops.Lookup("", "BatchNormalization", 15).Tolerance()
	shapes := [][]int64{{1, 1}, {13, 3}, {2, 5, 127}, {1, 64, 14, 14}, {2, 3, 4, 5, 6}}
	for _, opset := range []int64{1, 6, 7, 9, 14, 15} {
		for i, x := range shapes {
			for _, spatial := range []int64{1, 0} {
				if spatial == 0 && opset >= 9 {
					continue
				}
				features := x[1]
				if spatial == 0 {
					features = graph.NumElements(x[1:])
				}
				for _, weight := range []bool{true, false} {
					n := &graph.Node{OpType: "BatchNormalization", Inputs: []string{"x", "scale", "b", "mean", "var"}, Outputs: []string{"y"},
						Attrs: map[string]*graph.Attribute{"epsilon": {Name: "epsilon", Type: graph.AttrFloat, F: 1e-3}}}
					switch {
					case opset < 6:
						n.Attrs["consumed_inputs"] = kerneltest.IntsAttr("consumed_inputs", 0, 0, 0, 1, 1)
						n.Attrs["is_test"] = kerneltest.IntAttr("is_test", 1)
					case opset < 7:
						n.Attrs["is_test"] = kerneltest.IntAttr("is_test", 1)
					}
					if opset < 9 {
						n.Attrs["spatial"] = kerneltest.IntAttr("spatial", spatial)
					}
					p := []int64{features}
					ins := []input{{shape: x}, {shape: p, weight: weight}, {shape: p, weight: weight}, {shape: p, weight: weight}, {shape: p, weight: weight}}
					what := fmt.Sprintf("BatchNormalization-%d X%v spatial=%d weights=%v", opset, x, spatial, weight)
					// Every input is drawn from positive values: the
					// variance must be.
					gpu, cpu, ok := runRandom(t, d, n, opset, ins, uniform(0.1, 3), uint64(i))
					if !ok {
						t.Fatalf("%s unsupported", what)
					}
					kerneltest.CompareFloats(t, what, gpu, cpu, tol)
				}
			}
		}
	}
}
