package ops

// HalfRule says how a node of one op runs in the float16 mode of float32
// models (planner.Options.Float16): its float32 tensors are stored as
// float16 on the device, or the node stays float32. In float16 the
// kernels widen what they read to float32, so products, sums, means,
// normalization statistics and Softmax's maximum and sum are computed
// and accumulated in float32 and only each result is rounded to float16.
type HalfRule struct {
	// Half tells that the op runs on float16 tensors.
	Half bool
	// Float32Inputs lists the inputs that stay float32 when the op runs
	// in float16 (Resize's roi and scales, whose type ONNX fixes).
	Float32Inputs []int
	// Why says why the op stays float32, or what of it stays float32.
	Why string
}

// Reasons shared by several ops.
const (
	halfStorage  = "float16 storage, float32 arithmetic in the kernel"
	halfProducts = "float16 storage, products accumulated in float32"
	halfMoves    = "moves values without arithmetic"
	halfStats    = "float16 storage; statistics (mean, variance or maximum and sum) computed in float32 in the kernel"
	bigSums      = "a sum over many elements can exceed float16's largest value, 65504"
	noHalfRule   = "no float16 rule: kept float32"
)

// halfRules is the policy of the float16 mode, by op (default domain and
// FusedDomain): the one source of truth for which ops run in float16. An
// op not listed stays float32 (noHalfRule).
var halfRules = map[string]HalfRule{
	// Products and convolutions.
	"MatMul": {Half: true, Why: halfProducts}, "Gemm": {Half: true, Why: halfProducts},
	"Conv": {Half: true, Why: halfProducts}, "FusedConv": {Half: true, Why: halfProducts},
	"FusedMatMul": {Half: true, Why: halfProducts}, "MatMulTransB": {Half: true, Why: halfProducts},
	// The fused attention: its scores, softmax and product by V stay in
	// float32 inside the kernel (Vulkan's flashattn.comp), between float16
	// operands and output.
	"ScaledDotProductAttention": {Half: true, Why: halfProducts},
	// Elementwise ops whose results stay within float16's range for
	// inputs in it.
	"Add": {Half: true, Why: halfStorage}, "Sub": {Half: true, Why: halfStorage}, "Mul": {Half: true, Why: halfStorage},
	"Div": {Half: true, Why: halfStorage}, "Neg": {Half: true, Why: halfStorage}, "Abs": {Half: true, Why: halfStorage},
	"Relu": {Half: true, Why: halfStorage}, "LeakyRelu": {Half: true, Why: halfStorage}, "Sigmoid": {Half: true, Why: halfStorage},
	"HardSigmoid": {Half: true, Why: halfStorage}, "HardSwish": {Half: true, Why: halfStorage}, "Tanh": {Half: true, Why: halfStorage},
	"Erf": {Half: true, Why: halfStorage}, "Gelu": {Half: true, Why: halfStorage}, "Clip": {Half: true, Why: halfStorage},
	"Max": {Half: true, Why: halfStorage}, "Min": {Half: true, Why: halfStorage}, "Sqrt": {Half: true, Why: halfStorage},
	"Elu": {Half: true, Why: halfStorage}, "Where": {Half: true, Why: halfStorage},
	// Normalizations, Softmax and means.
	"BatchNormalization": {Half: true, Why: halfStats}, "LayerNormalization": {Half: true, Why: halfStats},
	"Softmax": {Half: true, Why: halfStats}, "LogSoftmax": {Half: true, Why: halfStats},
	"ReduceMean": {Half: true, Why: halfStats}, "ReduceMax": {Half: true, Why: halfMoves}, "ReduceMin": {Half: true, Why: halfMoves},
	"GlobalAveragePool": {Half: true, Why: halfStats}, "AveragePool": {Half: true, Why: halfStats},
	"MaxPool": {Half: true, Why: halfMoves}, "GlobalMaxPool": {Half: true, Why: halfMoves},
	// Data movement.
	"Reshape": {Half: true, Why: halfMoves}, "Transpose": {Half: true, Why: halfMoves}, "Concat": {Half: true, Why: halfMoves},
	"Slice": {Half: true, Why: halfMoves}, "Gather": {Half: true, Why: halfMoves}, "Flatten": {Half: true, Why: halfMoves},
	"Squeeze": {Half: true, Why: halfMoves}, "Unsqueeze": {Half: true, Why: halfMoves}, "Split": {Half: true, Why: halfMoves},
	"Expand": {Half: true, Why: halfMoves}, "Identity": {Half: true, Why: halfMoves}, "Pad": {Half: true, Why: halfMoves},
	"Resize": {Half: true, Float32Inputs: []int{1, 2}, Why: halfMoves},
	// Kept float32.
	"ReduceSum": {Why: bigSums}, "ReduceSumSquare": {Why: bigSums}, "ReduceL1": {Why: bigSums}, "ReduceL2": {Why: bigSums},
	"ReduceLogSum": {Why: bigSums}, "ReduceLogSumExp": {Why: bigSums}, "ReduceProd": {Why: "a product of many elements leaves float16's range"},
	"CumSum": {Why: "running sums can exceed float16's largest value, 65504"},
	"Pow":    {Why: "powers leave float16's range for moderate bases (x² overflows beyond 256)"},
	"Exp":    {Why: "e^x exceeds float16's largest value for x > 11.1"},
}

// HalfRuleOf returns the float16 rule of op in domain (see halfRules).
func HalfRuleOf(domain, op string) HalfRule {
	if domain != "" && domain != FusedDomain {
		return HalfRule{Why: noHalfRule}
	}
	if r, ok := halfRules[op]; ok {
		return r
	}
	return HalfRule{Why: noHalfRule}
}
