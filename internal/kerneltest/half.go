package kerneltest

import (
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/x448/float16"

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

// fp32Inputs lists, by op, the float inputs that stay float32 when a
// case is made float16: those the ONNX schema types as float32 whatever
// the data's type.
var fp32Inputs = map[[2]string][]int{
	{"", "Resize"}:                {1, 2},
	{"", "DynamicQuantizeLinear"}: {0},
}

// halfPrecision names, by op, the attribute that sets the precision of an
// intermediate result and defaults to the inputs' type (Attention's
// softmax_precision): where a case leaves it out, its fp32 reference sets
// it to float16, so that the reference rounds that result as the float16
// case must.
var halfPrecision = map[[2]string]string{
	{"", "Attention"}: "softmax_precision",
}

// Float16Case returns c with its float32 tensors made float16 for the
// Float16 mode (half), and c with those tensors holding the same values as
// float32 (wide), the input of the fp32 reference, which computes at the
// precisions the float16 case implies (see halfPrecision). ok is false
// when c has no float32 tensor to make float16 or the op has no float16
// form.
func Float16Case(c Case) (half, wide Case, ok bool) {
	op := [2]string{c.Node.Domain, c.Node.OpType}
	keep := fp32Inputs[op]
	half, wide = c, c
	if name, ok := halfPrecision[op]; ok && c.Node.Attrs[name] == nil {
		n := *c.Node
		n.Attrs = maps.Clone(n.Attrs)
		if n.Attrs == nil {
			n.Attrs = map[string]*graph.Attribute{}
		}
		n.Attrs[name] = &graph.Attribute{Name: name, Type: graph.AttrInt, I: int64(graph.Float16)}
		wide.Node = &n
	}
	half.Args, wide.Args = slices.Clone(c.Args), slices.Clone(c.Args)
	for i, a := range c.Args {
		if a.T == nil || a.T.DType != graph.Float || slices.Contains(keep, i) {
			continue
		}
		h := graph.NewTensor(graph.Float16, a.T.Shape)
		w := graph.NewTensor(graph.Float, a.T.Shape)
		hv, wv := graph.View[uint16](h), graph.View[float32](w)
		for j, v := range graph.View[float32](a.T) {
			f := float16.Fromfloat32(v)
			hv[j], wv[j] = f.Bits(), f.Float32()
		}
		half.Args[i], wide.Args[i] = Arg{T: h, Const: a.Const}, Arg{T: w, Const: a.Const}
		ok = true
	}
	return half, wide, ok
}

// compareHalf checks the float16 tensor got against the fp32 reference
// want: the same shape, each element within tol widened to float16 (see
// ops.Tolerance.WithinFloat16), NaN where want has NaN.
func compareHalf(t testing.TB, what string, got, want *graph.Tensor, tol ops.Tolerance) {
	t.Helper()
	wide := graph.NewTensor(graph.Float, got.Shape)
	for i, b := range graph.View[uint16](got) {
		graph.View[float32](wide)[i] = float16.Frombits(b).Float32()
	}
	compareFloats(t, what, wide, want, func(int) ops.Tolerance { return tol }, ops.Tolerance.WithinFloat16)
}
