package planner

import "github.com/onnxvk/onnxvk/graph"

// elementwiseOps are the default-domain ops whose every output element
// depends only on the input elements at the same position, after
// multidirectional broadcasting: a shard of their output needs only the
// matching shards of their inputs, so they keep their inputs' sharding.
var elementwiseOps = map[string]bool{
	"Abs": true, "Acos": true, "Acosh": true, "Asin": true, "Asinh": true, "Atan": true, "Atanh": true,
	"Ceil": true, "Cos": true, "Cosh": true, "Elu": true, "Erf": true, "Exp": true, "Floor": true,
	"Gelu": true, "HardSigmoid": true, "HardSwish": true, "Identity": true, "IsInf": true, "IsNaN": true,
	"LeakyRelu": true, "Log": true, "Mish": true, "Neg": true, "Not": true, "Reciprocal": true,
	"Relu": true, "Round": true, "Selu": true, "Sigmoid": true, "Sign": true, "Sin": true, "Sinh": true,
	"Softplus": true, "Softsign": true, "Sqrt": true, "Tan": true, "Tanh": true, "ThresholdedRelu": true,
	"Celu": true, "Shrink": true, "Cast": true, "Clip": true,
	"Add": true, "Sub": true, "Mul": true, "Div": true, "Pow": true, "Mod": true, "PRelu": true,
	"And": true, "Or": true, "Xor": true, "Equal": true, "Greater": true, "Less": true,
	"GreaterOrEqual": true, "LessOrEqual": true, "BitShift": true, "Where": true,
	"Max": true, "Min": true, "Sum": true, "Mean": true,
}

// elementwise reports whether n is an elementwise op (see elementwiseOps)
// with one output.
func elementwise(n *graph.Node) bool {
	return n.Domain == graph.DefaultDomain && elementwiseOps[n.OpType] && len(n.Outputs) == 1
}
