package ops

import (
	"fmt"

	"github.com/onnxvk/onnxvk/graph"
)

// FusedDomain is the operator domain of the nodes that the planner's
// fusion passes create. Models never import it and the loader never sees
// its ops; the planner imports it at version 1 in the graphs it rewrites.
const FusedDomain = "onnxvk"

// Fused activations: the values of a fused node's "activation" attribute,
// each the ONNX op of that name applied to the node's output. Clip's
// bounds are the "alpha" (min) and "beta" (max) attributes, LeakyRelu's
// slope is "alpha", HardSigmoid's slope and offset are "alpha" and "beta"
// (HardSwish's are fixed, 1/6 and 0.5, and not read). Swish is
// x·Sigmoid(x) (SiLU), which models spell as Sigmoid and Mul: the Swish op
// with alpha 1 (the fused node's alpha is not read).
const (
	ActRelu        = "Relu"
	ActClip        = "Clip"
	ActLeakyRelu   = "LeakyRelu"
	ActSigmoid     = "Sigmoid"
	ActSwish       = "Swish"
	ActHardSigmoid = "HardSigmoid"
	ActHardSwish   = "HardSwish"
)

func init() {
	// FusedConv is Conv (opset 11 semantics), plus the optional input 3
	// (Sum, of the output's type and shape), followed by an activation
	// ("" for none).
	Register(&Schema{Domain: FusedDomain, Name: "FusedConv", Since: 1, MinInputs: 2, MaxInputs: 4, MinOutputs: 1, MaxOutputs: 1,
		Attrs: []AttrSpec{defString("auto_pad", "NOTSET"), opt("dilations", graph.AttrInts), defInt("group", 1),
			opt("kernel_shape", graph.AttrInts), opt("pads", graph.AttrInts), opt("strides", graph.AttrInts),
			defString("activation", ""), defFloat("alpha", 0), defFloat("beta", 0)},
		Infer: inferConv, Tol: accumulating})
	// FusedBatchNorm is BatchNormalization in inference mode (X, scale, B,
	// input_mean, input_var) followed by an activation, as FusedConv's.
	Register(&Schema{Domain: FusedDomain, Name: "FusedBatchNorm", Since: 1, MinInputs: 5, MaxInputs: 5, MinOutputs: 1, MaxOutputs: 1,
		Attrs: []AttrSpec{defFloat("epsilon", 1e-05), defString("activation", ""), defFloat("alpha", 0), defFloat("beta", 0)},
		Infer: inferBatchNorm, Tol: accumulating})
	// FusedMatMul is MatMul(A, B) + Bias, Bias a vector along the last
	// dimension of the product.
	Register(&Schema{Domain: FusedDomain, Name: "FusedMatMul", Since: 1, MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
		Infer: inferMatMul, Tol: accumulating})
	// MatMulTransB is MatMul(A, Bᵀ), Bᵀ being B (at least 2-D) with its
	// last two axes swapped: a product that reads B transposed in place of
	// a Transpose that only it reads (attention's Q·Kᵀ).
	Register(&Schema{Domain: FusedDomain, Name: "MatMulTransB", Since: 1, MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Infer: inferMatMulTransB, Tol: accumulating})
	// Gelu is ONNX Gelu-20 with approximate "none", x·(1 + erf(x/√2))·½,
	// for models that import an older opset and spell it out in
	// elementwise ops.
	Register(&Schema{Domain: FusedDomain, Name: "Gelu", Since: 1, MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Infer: passThrough, Tol: transcendental, Props: Elementwise})
	// LayerNormalization is ONNX LayerNormalization-17, for models that
	// import an older opset and spell it out in elementwise ops.
	Register(&Schema{Domain: FusedDomain, Name: "LayerNormalization", Since: 1, MinInputs: 2, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
		Attrs: []AttrSpec{defInt("axis", -1), defFloat("epsilon", 1e-05), defInt("stash_type", 1)},
		Infer: inferLayerNorm, Tol: accumulating})
}

// FusedActivation reads the activation of a FusedConv or FusedBatchNorm
// node: its name ("" for none) and its parameters, LeakyRelu's slope in
// alpha, Clip's bounds or HardSigmoid's slope and offset in alpha and beta.
// Clip's bounds have no default (the planner writes both), so a fused Clip
// that lacks one is refused rather than clipped to [0, 0].
func FusedActivation(n *graph.Node, opset int64) (name string, alpha, beta float32, err error) {
	if n.OpType == "FusedBatchNorm" {
		p := Params[FusedBatchNormParams](n, opset)
		name, alpha, beta = p.Activation, p.Alpha, p.Beta
	} else {
		p := Params[FusedConvParams](n, opset)
		name, alpha, beta = p.Activation, p.Alpha, p.Beta
	}
	if name == ActClip && (n.Attr("alpha") == nil || n.Attr("beta") == nil) {
		return "", 0, 0, fmt.Errorf("%s: fused Clip without both bounds (alpha and beta)", n)
	}
	return name, alpha, beta, nil
}

// StridedProduct reports whether n is a matrix product whose operands a
// device may read through strides, so that a Transpose before it folds
// into it: MatMul and FusedMatMul (MatMul plus a bias). The planner keeps
// a Transpose's input alive for such a fold; the Vulkan device folds.
func StridedProduct(n *graph.Node) bool {
	return n.Domain == graph.DefaultDomain && n.OpType == "MatMul" || n.Domain == FusedDomain && n.OpType == "FusedMatMul"
}
