package ops

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
