package ops

import (
	"math"

	"github.com/x448/float16"
)

// Tolerances of the ops whose kernels accumulate many terms or evaluate
// transcendental functions, where implementations legitimately differ in
// the last bits.

// accumulating is the tolerance of ops that sum many products.
var accumulating = Tolerance{Abs: 1e-4, Rel: 1e-3}

// quantized is the tolerance of ops that requantize: one quantization
// unit.
var quantized = Tolerance{Units: 1}

// transcendental is the tolerance of elementwise math functions.
var transcendental = Tolerance{Abs: 2e-5, Rel: 5e-4}

func init() {
	for _, name := range []string{"Conv", "ConvTranspose", "ConvInteger", "DeformConv",
		"Gemm", "MatMul", "MatMulInteger", "Einsum", "AveragePool", "LpPool",
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
	// QLinearConv and QLinearMatMul requantize their int32 sums: the CPU
	// kernel in float64, Vulkan's requant.comp in float32 (as ONNX
	// Runtime), which may round a product near a tie the other way.
	for _, name := range []string{"QLinearConv", "QLinearMatMul"} {
		SetTolerance("", name, quantized)
	}
}

// Float16ModelTolerance bounds the largest absolute difference of a
// whole model's output computed on float16 values (weights, or weights and
// activations) from the float32 model's, as a fraction of the float32
// output's largest magnitude. Each op is within its own float16 tolerance
// (Tolerance.Float16); across a model the roundings of every activation
// and weight to float16 add up: resnet18 and the transformer encoder
// differ by about 2e-3 of their peak on lavapipe, and by 2.7e-3 and
// 4.1e-3 (absolute, their peaks of order 1) from PyTorch's float32 output
// on an NVIDIA H100.
const Float16ModelTolerance = 1e-2

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
	return Tolerance{Abs: t.Abs + HalfWeightError*mag, Rel: t.Rel, Units: t.Units}
}

// Float16Error is the relative error of rounding a result to float16
// (2^-11, half of float16's machine epsilon), and Float16Tiny the absolute
// error below float16's normal range (2^-25, half its least subnormal).
const (
	Float16Error = 1.0 / 2048
	Float16Tiny  = 1.0 / (1 << 25)
)

// Float16 returns the tolerance of a float16 result of the op whose
// tolerance is t, computed by a kernel that reads float16 tensors, does
// its arithmetic in fp32 (sums of products, statistics, a Softmax's
// maximum and sum) and rounds its result once to float16, against a
// reference computed in fp32 from the same float16 inputs: t widened by
// two roundings to float16 (the reference's value may lie between two
// float16 neighbours, either of which a correct kernel may give), 2·2^-11
// relative and 2·2^-25 absolute. A result beyond float16's range is
// infinite (see Tolerance.WithinFloat16).
func (t Tolerance) Float16() Tolerance {
	return Tolerance{Abs: t.Abs + 2*Float16Tiny, Rel: t.Rel + 2*Float16Error, Units: t.Units}
}

// WithinFloat16 reports whether a float16 result got agrees with the fp32
// reference want under t.Float16(), or equals want rounded to float16 (an
// infinity where want is beyond float16's range).
func (t Tolerance) WithinFloat16(got, want float64) bool {
	return got == float64(float16.Fromfloat32(float32(want)).Float32()) || t.Float16().Within(got, want)
}
