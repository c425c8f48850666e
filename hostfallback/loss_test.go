package hostfallback

import (
	"math"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

func TestNLLLoss(t *testing.T) {
	// Log-probabilities of 2 samples over 3 classes, targets 2 and 0.
	x := ewF32(ewShape(2, 3), -1, -2, -3, -4, -5, -6)
	tg := xI64(ewShape(2), 2, 0)
	w := ewF32(ewShape(3), 0.5, 1, 2)
	red := func(r string) ewAttrs { return ewWith(ewString("reduction", r)) }
	y := ewRun(t, "NegativeLogLikelihoodLoss", 13, red("none"), x, tg)
	ewCheck(t, "none", y, graph.Float, ewShape(2), []float64{3, 4}, 1e-6)
	y = ewRun(t, "NegativeLogLikelihoodLoss", 13, red("sum"), x, tg, w)
	ewCheck(t, "sum weighted", y, graph.Float, ewShape(), []float64{3*2 + 4*0.5}, 1e-6)
	y = ewRun(t, "NegativeLogLikelihoodLoss", 13, nil, x, tg, w)
	ewCheck(t, "mean weighted", y, graph.Float, ewShape(), []float64{(6 + 2) / 2.5}, 1e-6)
	y = ewRun(t, "NegativeLogLikelihoodLoss", 13, ewWith(ewInt("ignore_index", 0)), x, tg)
	ewCheck(t, "ignore", y, graph.Float, ewShape(), []float64{3}, 1e-6)
	// [N, C, d]: 1 sample, 2 classes, 2 positions.
	y = ewRun(t, "NegativeLogLikelihoodLoss", 13, red("none"), ewF32(ewShape(1, 2, 2), -1, -2, -3, -4), xI64(ewShape(1, 2), 1, 0))
	ewCheck(t, "spatial", y, graph.Float, ewShape(1, 2), []float64{3, 2}, 1e-6)
	ewFails(t, "NegativeLogLikelihoodLoss", 13, nil, x, xI64(ewShape(2), 3, 0))
	ewFails(t, "NegativeLogLikelihoodLoss", 13, nil, x, xI64(ewShape(3), 0, 0, 0))
	ewFails(t, "NegativeLogLikelihoodLoss", 13, red("max"), x, tg)
}

func TestSoftmaxCrossEntropyLoss(t *testing.T) {
	x := xF64(ewShape(2, 2), 0, 0, 1, 3)
	tg := xI64(ewShape(2), 0, 1)
	out := xOK(t, "", "SoftmaxCrossEntropyLoss", 13, ewWith(ewString("reduction", "none")), 2, x, tg)
	l1 := math.Log(2)
	l2 := math.Log(1 + math.Exp(-2))
	ewCheck(t, "loss", out[0], graph.Double, ewShape(2), []float64{l1, l2}, 1e-12)
	ewCheck(t, "log_prob", out[1], graph.Double, ewShape(2, 2), []float64{-l1, -l1, -2 - l2, -l2}, 1e-12)
	y := ewRun(t, "SoftmaxCrossEntropyLoss", 13, nil, x, tg)
	ewCheck(t, "mean", y, graph.Double, ewShape(), []float64{(l1 + l2) / 2}, 1e-12)
	ewFails(t, "SoftmaxCrossEntropyLoss", 13, nil, xF64(ewShape(2), 1, 2), tg)
}
