package hostfallback

import (
	"math"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

func TestSVMRegressor(t *testing.T) {
	x := ewF32(ewShape(2, 2), 1, 0, 0, 2)
	sv := ewWith(ewInt("n_supports", 2), ewFloats("support_vectors", 1, 0, 0, 1), ewFloats("coefficients", 2, -1),
		ewFloats("rho", 0.5), ewString("kernel_type", "RBF"), ewFloats("kernel_params", 0.5, 0, 0))
	y := mlRun(t, "SVMRegressor", 1, sv, 1, x)[0]
	// Row 0: 2·e^0 − e^{−1} + 0.5; row 1: 2·e^{−2.5} − e^{−0.5} + 0.5.
	ewCheck(t, "rbf", y, graph.Float, ewShape(2, 1), []float64{2.5 - math.Exp(-1), 2*math.Exp(-2.5) - math.Exp(-0.5) + 0.5}, 1e-6)
	lin := ewWith(ewFloats("coefficients", 1, -1), ewFloats("rho", 0.5))
	y = mlRun(t, "SVMRegressor", 1, lin, 1, x)[0]
	ewCheck(t, "linear", y, graph.Float, ewShape(2, 1), []float64{1.5, -1.5}, 1e-6)
	lin["one_class"] = ewInt("one_class", 1)
	y = mlRun(t, "SVMRegressor", 1, lin, 1, x)[0]
	ewCheck(t, "one class", y, graph.Float, ewShape(2, 1), []float64{1, -1}, 0)
	sv["kernel_type"] = ewString("kernel_type", "POLY")
	sv["kernel_params"] = ewFloats("kernel_params", 1, 1, 2)
	y = mlRun(t, "SVMRegressor", 1, sv, 1, x)[0]
	// Row 0: 2·(1+1)² − (0+1)² + 0.5; row 1: 2·1 − (2+1)² + 0.5.
	ewCheck(t, "poly", y, graph.Float, ewShape(2, 1), []float64{7.5, -6.5}, 1e-6)
}

func TestSVMClassifier(t *testing.T) {
	lin := ewWith(ewFloats("coefficients", 1, 0, 0, 1, -1, -1), ewFloats("rho", 0.5), ewInts("classlabels_ints", 7, 8, 9))
	out := mlRun(t, "SVMClassifier", 1, lin, 2, ewF32(ewShape(1, 2), 3, 1))
	ewCheck(t, "linear label", out[0], graph.Int64, ewShape(1), []float64{7}, 0)
	ewCheck(t, "linear scores", out[1], graph.Float, ewShape(1, 3), []float64{3.5, 1.5, -3.5}, 1e-6)
	// Two classes, one support vector each, linear kernel: s = x0 − x1.
	svc := ewWith(ewInts("vectors_per_class", 1, 1), ewFloats("support_vectors", 1, 0, 0, 1),
		ewFloats("coefficients", 1, -1), ewFloats("rho", 0), ewInts("classlabels_ints", 10, 20))
	x := ewF32(ewShape(2, 2), 2, 1, 0, 3)
	out = mlRun(t, "SVMClassifier", 1, svc, 2, x)
	ewCheck(t, "svc labels", out[0], graph.Int64, ewShape(2), []float64{10, 20}, 0)
	ewCheck(t, "svc scores", out[1], graph.Float, ewShape(2, 2), []float64{-1, 1, 3, -3}, 1e-6)
	svc["prob_a"], svc["prob_b"] = ewFloats("prob_a", -1), ewFloats("prob_b", 0)
	out = mlRun(t, "SVMClassifier", 1, svc, 2, x)
	q := 1 / (1 + math.Exp(-1))
	ewCheck(t, "svc probabilities", out[1], graph.Float, ewShape(2, 2), []float64{q, 1 - q, 1 - 1/(1+math.Exp(-3)), 1 / (1 + math.Exp(-3))}, 3e-3)
	// Three classes vote pairwise: s01 = 1, s02 = 1, s12 = −0.5.
	three := ewWith(ewInts("vectors_per_class", 1, 1, 1), ewFloats("support_vectors", 1, 1, 1),
		ewFloats("coefficients", 1, -1, 1, 1, 1, -2), ewFloats("rho", 1, -1, 0.5), ewStringsAttr("classlabels_strings", "a", "b", "c"))
	out = mlRun(t, "SVMClassifier", 1, three, 2, ewF32(ewShape(1, 1), 1))
	checkStrings(t, "votes", out[0], ewShape(1), "a")
	ewCheck(t, "pairwise", out[1], graph.Float, ewShape(1, 3), []float64{1, 1, -0.5}, 1e-6)
	three["vectors_per_class"] = ewInts("vectors_per_class", 1, 1)
	if _, err := xRun(t, "ai.onnx.ml", "SVMClassifier", 1, three, 2, ewF32(ewShape(1, 1), 1)); err == nil {
		t.Error("no error for vectors_per_class of the wrong length")
	}
}
