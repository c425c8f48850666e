package hostfallback

import (
	"math"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

func TestAdagrad(t *testing.T) {
	attrs := ewWith(ewFloat("norm_coefficient", 0.5), ewFloat("epsilon", 0), ewFloat("decay_factor", 1))
	r, tt := ewF32(ewShape(), 1), xI64(ewShape(), 1)
	out := xOK(t, ops.DomainTraining, "Adagrad", 1, attrs, 2, r, tt, ewF32(ewShape(1), 2), ewF32(ewShape(1), 2), ewF32(ewShape(1), 0))
	// r' = 1/2, g' = 2 + 0.5·2 = 3, h = 9, x = 2 - 0.5·3/3.
	ewCheck(t, "x", out[0], graph.Float, ewShape(1), []float64{1.5}, 1e-6)
	ewCheck(t, "h", out[1], graph.Float, ewShape(1), []float64{9}, 1e-6)
	if _, err := xRun(t, ops.DomainTraining, "Adagrad", 1, attrs, 2, r, tt, ewF32(ewShape(1), 2)); err == nil {
		t.Error("no error for a missing group")
	}
}

func TestAdam(t *testing.T) {
	attrs := ewWith(ewFloat("alpha", 0.5), ewFloat("beta", 0.5), ewFloat("epsilon", 0))
	out := xOK(t, ops.DomainTraining, "Adam", 1, attrs, 3, xF64(ewShape(), 1), xI64(ewShape(), 0),
		xF64(ewShape(1), 1), xF64(ewShape(1), 2), xF64(ewShape(1), 0), xF64(ewShape(1), 0))
	// v = 1, h = 2, x = 1 - 1/√2.
	ewCheck(t, "x", out[0], graph.Double, ewShape(1), []float64{1 - 1/math.Sqrt2}, 1e-12)
	ewCheck(t, "v", out[1], graph.Double, ewShape(1), []float64{1}, 1e-12)
	ewCheck(t, "h", out[2], graph.Double, ewShape(1), []float64{2}, 1e-12)
}

func TestMomentum(t *testing.T) {
	attrs := ewWith(ewFloat("alpha", 0.5), ewFloat("beta", 0.25), ewFloat("norm_coefficient", 0), ewString("mode", "standard"))
	args := []*graph.Tensor{ewF32(ewShape(), 0.1), xI64(ewShape(), 1), ewF32(ewShape(2), 1, 2), ewF32(ewShape(2), 4, 8), ewF32(ewShape(2), 2, 0)}
	out := xOK(t, ops.DomainTraining, "Momentum", 1, attrs, 2, args...)
	// v = 0.5·v + 0.25·g = [2, 2]; x -= 0.1·v.
	ewCheck(t, "x", out[0], graph.Float, ewShape(2), []float64{0.8, 1.8}, 1e-6)
	ewCheck(t, "v", out[1], graph.Float, ewShape(2), []float64{2, 2}, 1e-6)
	attrs["mode"] = ewString("mode", "nesterov")
	out = xOK(t, ops.DomainTraining, "Momentum", 1, attrs, 2, args...)
	// x -= 0.1·(g + 0.5·v) = 0.1·[5, 9].
	ewCheck(t, "nesterov", out[0], graph.Float, ewShape(2), []float64{0.5, 1.1}, 1e-6)
	delete(attrs, "alpha")
	if _, err := xRun(t, ops.DomainTraining, "Momentum", 1, attrs, 2, args...); err == nil {
		t.Error("no error without alpha")
	}
}
