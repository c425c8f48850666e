package vulkan

import (
	"fmt"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/internal/kerneltest"
)

// poolCases cover 1-D, 2-D and 3-D windows; batches; strides 1, 2 and 3;
// dilations; symmetric and asymmetric pads, including windows wholly in
// the padding; every auto_pad; ceil_mode; kernels 1, 2, 3, 5 and 7.
var poolCases = []struct {
	x     []int64
	attrs []*graph.Attribute
}{
	{[]int64{1, 1, 1, 1}, []*graph.Attribute{kerneltest.IntsAttr("kernel_shape", 1, 1)}},
	{[]int64{1, 64, 28, 28}, []*graph.Attribute{kerneltest.IntsAttr("kernel_shape", 3, 3), kerneltest.IntsAttr("strides", 2, 2), kerneltest.IntsAttr("pads", 1, 1, 1, 1)}},
	{[]int64{2, 3, 13, 11}, []*graph.Attribute{kerneltest.IntsAttr("kernel_shape", 3, 2), kerneltest.IntsAttr("strides", 2, 3), kerneltest.IntsAttr("pads", 0, 1, 2, 0)}},
	{[]int64{2, 3, 13, 11}, []*graph.Attribute{kerneltest.IntsAttr("kernel_shape", 3, 3), kerneltest.IntsAttr("strides", 2, 2), kerneltest.IntAttr("ceil_mode", 1)}},
	{[]int64{1, 2, 14, 13}, []*graph.Attribute{kerneltest.IntsAttr("kernel_shape", 2, 3), kerneltest.IntsAttr("strides", 3, 2), kerneltest.IntsAttr("pads", 1, 2, 1, 2), kerneltest.IntAttr("ceil_mode", 1)}},
	{[]int64{1, 2, 19, 17}, []*graph.Attribute{kerneltest.IntsAttr("kernel_shape", 3, 3), kerneltest.IntsAttr("dilations", 2, 3), kerneltest.IntsAttr("pads", 2, 1, 1, 2)}},
	{[]int64{1, 2, 5, 5}, []*graph.Attribute{kerneltest.IntsAttr("kernel_shape", 3, 3), kerneltest.IntsAttr("pads", 2, 2, 2, 2), kerneltest.IntsAttr("strides", 3, 3)}},
	{[]int64{1, 3, 13, 13}, []*graph.Attribute{kerneltest.IntsAttr("kernel_shape", 3, 3), kerneltest.IntsAttr("strides", 2, 2), kerneltest.StringAttr("auto_pad", "SAME_UPPER")}},
	{[]int64{1, 3, 13, 12}, []*graph.Attribute{kerneltest.IntsAttr("kernel_shape", 4, 4), kerneltest.StringAttr("auto_pad", "SAME_LOWER")}},
	{[]int64{1, 3, 13, 12}, []*graph.Attribute{kerneltest.IntsAttr("kernel_shape", 5, 7), kerneltest.StringAttr("auto_pad", "VALID"), kerneltest.IntsAttr("strides", 2, 1)}},
	{[]int64{2, 3, 127}, []*graph.Attribute{kerneltest.IntsAttr("kernel_shape", 5), kerneltest.IntsAttr("strides", 3), kerneltest.IntsAttr("pads", 2, 1)}},
	{[]int64{1, 2, 5, 6, 7}, []*graph.Attribute{kerneltest.IntsAttr("kernel_shape", 3, 2, 3), kerneltest.IntsAttr("pads", 1, 0, 1, 1, 1, 0), kerneltest.IntsAttr("strides", 1, 2, 2)}},
}

// TestPoolMatchesCPU checks MaxPool and AveragePool (with and without
// count_include_pad) against the CPU kernels.
func TestPoolMatchesCPU(t *testing.T) {
	d := openTest(t)
	for _, op := range []string{"MaxPool", "AveragePool"} {
		tol := ops.Lookup("", op, 19).Tolerance()
		for i, c := range poolCases {
			for include := range 2 {
				if op == "MaxPool" && include == 1 {
					continue
				}
				n := &graph.Node{OpType: op, Inputs: []string{"x"}, Outputs: []string{"y"}, Attrs: map[string]*graph.Attribute{}}
				for _, a := range c.attrs {
					n.Attrs[a.Name] = a
				}
				opset := int64(12)
				if op == "AveragePool" {
					n.Attrs["count_include_pad"] = kerneltest.IntAttr("count_include_pad", int64(include))
					if _, ok := n.Attrs["dilations"]; ok {
						opset = 19
					}
				}
				what := fmt.Sprintf("%s X%v %v include_pad=%d", op, c.x, convCase{attrs: c.attrs}, include)
				gpu, cpu, ok := runRandom(t, d, n, opset, []input{{shape: c.x}}, uniform(-4, 4), uint64(i))
				if !ok {
					t.Fatalf("%s unsupported", what)
				}
				kerneltest.CompareFloats(t, what, gpu, cpu, tol)
			}
		}
	}
}

// TestGlobalPoolMatchesCPU checks GlobalMaxPool and GlobalAveragePool over
// one to three spatial axes.
func TestGlobalPoolMatchesCPU(t *testing.T) {
	d := openTest(t)
	for _, op := range []string{"GlobalMaxPool", "GlobalAveragePool"} {
		tol := ops.Lookup("", op, 1).Tolerance()
		for i, x := range [][]int64{{1, 1, 1}, {2, 3, 127}, {1, 512, 7, 7}, {2, 13, 27, 29}, {1, 3, 4, 5, 6}} {
			n := &graph.Node{OpType: op, Inputs: []string{"x"}, Outputs: []string{"y"}}
			gpu, cpu, ok := runRandom(t, d, n, 1, []input{{shape: x}}, uniform(-4, 4), uint64(i))
			if !ok {
				t.Fatalf("%s X%v unsupported", op, x)
			}
			kerneltest.CompareFloats(t, fmt.Sprintf("%s X%v", op, x), gpu, cpu, tol)
		}
	}
}
