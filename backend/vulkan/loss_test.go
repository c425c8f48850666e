package vulkan

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/kerneltest"
)

// TestLossMatchesCPU checks NegativeLogLikelihoodLoss and
// SoftmaxCrossEntropyLoss over ranks 2 to 4, int32 and int64 targets,
// with and without weights and ignore_index, every reduction, more rows
// than a workgroup has invocations, and the log_prob output.
func TestLossMatchesCPU(t *testing.T) {
	d := openTest(t)
	shapes := [][]int64{{1, 1}, {3, 5}, {2, 3, 7}, {2, 4, 3, 5}, {300, 5, 7}, {700, 3}}
	for op := range lossOps {
		t.Run(op, func(t *testing.T) {
			for i, x := range shapes {
				for _, tt := range []graph.DType{graph.Int64, graph.Int32} {
					for _, weight := range []bool{false, true} {
						for _, ignore := range []int64{absent, 1, -1} {
							for _, red := range []string{"none", "sum", "mean"} {
								r := rand.New(rand.NewPCG(uint64(i), 3))
								target := append([]int64{x[0]}, x[2:]...)
								tv := kerneltest.RandInts(r, tt, target, 0, x[1])
								if ignore == -1 {
									setInt(tv, 0, -1)
								}
								n := &graph.Node{OpType: op, Inputs: []string{"x", "t"}, Outputs: []string{"y"},
									Attrs: map[string]*graph.Attribute{"reduction": kerneltest.StringAttr("reduction", red)}}
								args := []kerneltest.Arg{{T: kerneltest.RandFloats(r, x, -3, 3)}, {T: tv}}
								if weight {
									n.Inputs = append(n.Inputs, "w")
									args = append(args, kerneltest.Arg{T: kerneltest.RandFloats(r, x[1:2], 0.1, 2)})
								}
								if ignore != absent {
									n.Attrs["ignore_index"] = kerneltest.IntAttr("ignore_index", ignore)
								}
								what := fmt.Sprintf("%s %v target %s weight %v ignore %d reduction %s", op, x, tt, weight, ignore, red)
								kerneltest.Check(t, d, what, kerneltest.Case{Node: n, Opset: 13, Args: args})
								if op == "SoftmaxCrossEntropyLoss" {
									n.Outputs = append(n.Outputs, "log_prob")
									kerneltest.Check(t, d, what+" log_prob", kerneltest.Case{Node: n, Opset: 13, Args: args})
								}
							}
						}
					}
				}
			}
		})
	}
}

// absent marks an absent ignore_index or k.
const absent = -1 << 40

// setInt sets element i of an int32 or int64 tensor.
func setInt(x *graph.Tensor, i int, v int64) {
	if x.DType == graph.Int32 {
		graph.View[int32](x)[i] = int32(v)
		return
	}
	graph.View[int64](x)[i] = v
}

// TestLossUnsupported checks that the loss kernels decline what they do
// not handle.
func TestLossUnsupported(t *testing.T) {
	d := openTest(t)
	r := rand.New(rand.NewPCG(1, 2))
	x, tv := kerneltest.RandFloats(r, []int64{3, 5}, -1, 1), kerneltest.RandInts(r, graph.Int64, []int64{3}, 0, 5)
	cases := map[string]struct {
		n    *graph.Node
		args []kerneltest.Arg
	}{
		"wide ignore_index": {&graph.Node{OpType: "NegativeLogLikelihoodLoss", Inputs: []string{"x", "t"}, Outputs: []string{"y"},
			Attrs: map[string]*graph.Attribute{"ignore_index": kerneltest.IntAttr("ignore_index", 1<<40)}}, []kerneltest.Arg{{T: x}, {T: tv}}},
		"float target": {&graph.Node{OpType: "NegativeLogLikelihoodLoss", Inputs: []string{"x", "t"}, Outputs: []string{"y"}},
			[]kerneltest.Arg{{T: x}, {T: kerneltest.RandFloats(r, []int64{3}, 0, 1)}}},
		"target shape": {&graph.Node{OpType: "SoftmaxCrossEntropyLoss", Inputs: []string{"x", "t"}, Outputs: []string{"y"}},
			[]kerneltest.Arg{{T: x}, {T: kerneltest.RandInts(r, graph.Int64, []int64{5}, 0, 5)}}},
	}
	for what, c := range cases {
		if _, _, ok := kerneltest.Run(t, d, kerneltest.Case{Node: c.n, Opset: 13, Args: c.args}); ok {
			t.Errorf("%s: supported", what)
		}
	}
}
