package ops

import "math"

// Tolerances of the ops whose kernels accumulate many terms or evaluate
// transcendental functions, where implementations legitimately differ in
// the last bits.

// accumulating is the tolerance of ops that sum many products.
var accumulating = Tolerance{Abs: 1e-4, Rel: 1e-3}

// transcendental is the tolerance of elementwise math functions.
var transcendental = Tolerance{Abs: 2e-5, Rel: 5e-4}

func init() {
	for _, name := range []string{"Conv", "ConvTranspose", "ConvInteger", "DeformConv", "QLinearConv",
		"Gemm", "MatMul", "MatMulInteger", "QLinearMatMul", "Einsum", "AveragePool", "LpPool",
		"GlobalAveragePool", "GlobalLpPool", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
		"ReduceMean", "ReduceProd", "ReduceSum", "ReduceSumSquare", "Softmax", "LogSoftmax",
		"LayerNormalization", "BatchNormalization", "InstanceNormalization", "GroupNormalization",
		"LpNormalization", "MeanVarianceNormalization", "LRN", "CumSum", "RNN", "GRU", "LSTM",
		"Resize", "Upsample", "GridSample", "RoiAlign", "Col2Im", "DFT", "STFT", "MelWeightMatrix",
		"Det", "Mean", "Sum", "Attention", "RMSNormalization"} {
		SetTolerance("", name, accumulating)
	}
	for _, name := range []string{"Exp", "Log", "Pow", "Sqrt", "Reciprocal", "Sin", "Cos", "Tan", "Asin",
		"Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Tanh", "Sigmoid", "HardSigmoid",
		"Erf", "Gelu", "Elu", "Selu", "Celu", "Softplus", "Softsign", "Mish", "HardSwish",
		"HannWindow", "HammingWindow", "BlackmanWindow"} {
		SetTolerance("", name, transcendental)
	}
}

// Within reports whether a result got agrees with the reference want
// under t: equal (infinities included), or |got − want| ≤ Abs + Rel·|want|.
// NaN agrees with nothing; callers that expect NaN check for it.
func (t Tolerance) Within(got, want float64) bool {
	return got == want || math.Abs(got-want) <= t.Abs+t.Rel*math.Abs(want)
}

// HalfWeightError is the relative error of one weight rounded to fp16
// (2^-11, half of fp16's machine epsilon): the error of a device's fp16
// weight mode, where the constant weights of matrix products and
// convolutions are stored as fp16 and widened to fp32 for an fp32
// accumulation (see Tolerance.HalfWeights). Weights beyond fp16's range
// saturate at ±65504 instead.
const HalfWeightError = 1.0 / 2048

// HalfWeights returns the tolerance of an element y = Σ x·w of a matrix
// product or convolution whose weights w are read as fp16, where mag is
// Σ|x|·|w| over the element's products: t with HalfWeightError·mag added
// to Abs, the most the weights' rounding can move y (for random signs
// the error itself grows as √K·|x|·|w| with the depth K).
func (t Tolerance) HalfWeights(mag float64) Tolerance {
	return Tolerance{Abs: t.Abs + HalfWeightError*mag, Rel: t.Rel}
}
