package hostfallback

import (
	"math"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

// xRun runs the kernel of domain.op at opset with nOut outputs on the
// inputs (nil for an omitted one).
func xRun(t *testing.T, domain, op string, opset int64, attrs ewAttrs, nOut int, in ...*graph.Tensor) ([]*graph.Tensor, error) {
	t.Helper()
	k := Lookup(domain, op)
	if k == nil {
		t.Fatalf("no kernel for %s.%s", domain, op)
	}
	n := ewNode(op, attrs)
	n.Domain = domain
	n.Outputs = make([]string, nOut)
	for i := range n.Outputs {
		n.Outputs[i] = "y"
	}
	c := &Call{Node: n, Opset: opset, In: make([]graph.Value, len(in)), Out: make([]graph.Value, nOut)}
	for i, x := range in {
		if x != nil {
			c.In[i] = x
		}
	}
	if err := k(c); err != nil {
		return nil, err
	}
	out := make([]*graph.Tensor, nOut)
	for i, v := range c.Out {
		out[i], _ = v.(*graph.Tensor)
	}
	return out, nil
}

// xOK is xRun for a call that must succeed.
func xOK(t *testing.T, domain, op string, opset int64, attrs ewAttrs, nOut int, in ...*graph.Tensor) []*graph.Tensor {
	t.Helper()
	out, err := xRun(t, domain, op, opset, attrs, nOut, in...)
	if err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	return out
}

// xFails checks that a call fails.
func xFails(t *testing.T, op string, opset int64, attrs ewAttrs, in ...*graph.Tensor) {
	t.Helper()
	if _, err := xRun(t, "", op, opset, attrs, 1, in...); err == nil {
		t.Errorf("%s: no error", op)
	}
}

// xI64 returns an int64 tensor.
func xI64(shape []int64, v ...int64) *graph.Tensor { return ewT(graph.Int64, shape, v...) }

// xF64 returns a float64 tensor.
func xF64(shape []int64, v ...float64) *graph.Tensor { return ewT(graph.Double, shape, v...) }

func TestDet(t *testing.T) {
	y := ewRun(t, "Det", 11, nil, ewF32(ewShape(2, 2), 1, 2, 3, 4))
	ewCheck(t, "2x2", y, graph.Float, ewShape(), []float64{-2}, 1e-6)
	y = ewRun(t, "Det", 11, nil, xF64(ewShape(2, 3, 3),
		2, 0, 0, 0, 3, 0, 0, 0, 4, // diagonal: 24
		0, 1, 0, 1, 0, 0, 0, 0, 1)) // one swap: -1
	ewCheck(t, "batch", y, graph.Double, ewShape(2), []float64{24, -1}, 1e-12)
	y = ewRun(t, "Det", 11, nil, ewF32(ewShape(2, 2), 1, 2, 2, 4))
	ewCheck(t, "singular", y, graph.Float, ewShape(), []float64{0}, 0)
	ewFails(t, "Det", 11, nil, ewF32(ewShape(2, 3), 1, 2, 3, 4, 5, 6))
	ewFails(t, "Det", 11, nil, xI64(ewShape(1, 1), 1))
}

func TestFloatHelpers(t *testing.T) {
	if !isFloatType(graph.BFloat16) || isFloatType(graph.Int8) {
		t.Error("isFloatType")
	}
	half := ewT(graph.Float16, ewShape(2), f32ToF16(1.5), f32ToF16(-2))
	y := ewRun(t, "Det", 11, nil, ewT(graph.Float16, ewShape(1, 1), f32ToF16(1.5)))
	ewCheck(t, "half det", y, graph.Float16, ewShape(), []float64{1.5}, 0)
	if v, ok := toFloat64s(half); !ok || v[1] != -2 || math.IsNaN(v[0]) {
		t.Errorf("toFloat64s = %v", v)
	}
}
