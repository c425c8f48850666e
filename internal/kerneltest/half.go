package kerneltest

import (
	"math"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/hostfallback"
)

// halfWeightOps are the ops whose constant weight (input 1) a device in
// the HalfWeights mode reads as fp16, by domain and name, each with the
// attributes its bare product keeps: the product or convolution alone,
// without bias, residual, C or activation.
var halfWeightOps = map[[2]string][]string{
	{"", "MatMul"}:                   nil,
	{ops.FusedDomain, "FusedMatMul"}: nil,
	{"", "Gemm"}:                     {"alpha", "transA", "transB"},
	{"", "Conv"}:                     convAttrs,
	{ops.FusedDomain, "FusedConv"}:   convAttrs,
	{"", "ConvTranspose"}:            append([]string{"output_padding", "output_shape"}, convAttrs...),
}

// convAttrs are the attributes of a bare convolution.
var convAttrs = []string{"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}

// halfMagnitude returns, for a case whose first output is a matrix
// product or convolution of a constant float32 weight, Σ|x|·|w| for each
// element of that output: the bare product of halfWeightOps run on the
// CPU on |x| and |w| (|alpha| for Gemm). It returns nil for other cases,
// which the HalfWeights mode computes in fp32.
//
// The bound leaves out what follows the sum: a bias or residual adds
// no weight error, and FusedConv's activations have slopes of at most 1
// but for Swish's 1.1, which the fp32 tolerance and the bound's worst
// case (every rounding the same way) absorb.
func halfMagnitude(t testing.TB, c Case) *graph.Tensor {
	t.Helper()
	n := c.Node
	keep, ok := halfWeightOps[[2]string{n.Domain, n.OpType}]
	if !ok || len(c.Args) < 2 || !c.Args[1].Const || c.Args[1].T.DType != graph.Float {
		return nil
	}
	op, opset := n.OpType, c.Opset
	switch op {
	case "FusedMatMul":
		op, opset = "MatMul", 13
	case "FusedConv":
		op, opset = "Conv", 11
	}
	bare := &graph.Node{OpType: op, Inputs: n.Inputs[:2], Outputs: n.Outputs[:1], Attrs: map[string]*graph.Attribute{}}
	for _, name := range keep {
		if a, ok := n.Attrs[name]; ok {
			bare.Attrs[name] = a
		}
	}
	if a, ok := bare.Attrs["alpha"]; ok {
		abs := *a
		abs.F = float32(math.Abs(float64(a.F)))
		bare.Attrs["alpha"] = &abs
	}
	call := &hostfallback.Call{Node: bare, Opset: opset, In: []graph.Value{absolute(c.Args[0].T), absolute(c.Args[1].T)}, Out: make([]graph.Value, 1)}
	if err := hostfallback.Lookup("", op)(call); err != nil {
		t.Fatalf("%s: Σ|x|·|w| of its bare %s: %v", n, op, err)
	}
	return call.Out[0].(*graph.Tensor)
}

// absolute returns a float32 tensor of x's shape holding |x|.
func absolute(x *graph.Tensor) *graph.Tensor {
	out := graph.NewTensor(graph.Float, x.Shape)
	o := graph.View[float32](out)
	for i, v := range graph.View[float32](x) {
		o[i] = float32(math.Abs(float64(v)))
	}
	return out
}
