package hostfallback

import (
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// Erf and the exact GELU over float32, vectorised where the CPU allows
// (erf_amd64.go): GELU is x·(1 + erf(x/√2))·½, as PyTorch writes F.gelu out
// before opset 20 in five nodes that the planner fuses into one Gelu of
// ops.FusedDomain (one pass over the activations instead of five).

func init() {
	RegisterDomainChecked(ops.FusedDomain, "Gelu", unaryKernel(unaryOp{f32: geluErfLoopF32}), Support{In: []Types{{graph.Float, graph.Float16, graph.BFloat16}}})
}

// invSqrt2 is 1/√2 rounded to float32.
const invSqrt2 = float32(0.70710678118654752440)

// erfF32 is erf in float32 arithmetic, as Eigen's and XNNPACK's
// vectorised kernels compute it: the argument clamped to [−4, 4] (beyond,
// erf rounds to ±1 in float32; NaN stays NaN), then an odd degree-13
// polynomial over an even degree-8 one in x. The error is a few ulp, a
// tenth of the float64 math.Erf's cost (GELU's Erf in a BERT encoder).
// erfAVX2 computes the same polynomials.
func erfF32(x float32) float32 {
	x = min(max(x, -4), 4)
	x2 := x * x
	p := x2*-2.72614225801306e-10 + 2.77068142495902e-08
	p = x2*p + -2.10102402082508e-06
	p = x2*p + -5.69250639462346e-05
	p = x2*p + -7.34990630326855e-04
	p = x2*p + -2.95459980854025e-03
	p = x2*p + -1.60960333262415e-02
	q := x2*-1.45660718464996e-05 + -2.13374055278905e-04
	q = x2*q + -1.68282697438203e-03
	q = x2*q + -7.37332916720468e-03
	q = x2*q + -1.42647390514189e-02
	return x * p / q
}

// geluErfF32 is the exact GELU in float32, in the order of PyTorch's
// written-out form: x·(1 + erf(x/√2)), then ·½ (so that −∞ gives NaN as
// that form does).
func geluErfF32(x float32) float32 { return x * (1 + erfF32(x*invSqrt2)) * 0.5 }

// erfLoopGo is the portable erfLoopF32.
func erfLoopGo(d, s []float32) {
	for i, v := range s[:len(d)] {
		d[i] = erfF32(v)
	}
}

// geluErfLoopGo is the portable geluErfLoopF32.
func geluErfLoopGo(d, s []float32) {
	for i, v := range s[:len(d)] {
		d[i] = geluErfF32(v)
	}
}

// erfLoopF32 is Erf in float32 arithmetic (erfF32).
func erfLoopF32(d, s []float32, _ *unaryParams) { erfVec(d, s, false) }

// geluErfLoopF32 is the exact GELU in float32 arithmetic (geluErfF32).
func geluErfLoopF32(d, s []float32, _ *unaryParams) { erfVec(d, s, true) }
