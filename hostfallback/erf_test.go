package hostfallback

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/x448/float16"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// TestErfVec checks erfVec (vectorised where this CPU runs AVX2) against
// the portable loops within a few ulp (of the argument, for GELU), and both against float64 erf and
// GELU within the ops' tolerance, over lengths that exercise the 8-wide
// loop and its tail, past the clamp at ±4, and at NaN and ±Inf.
func TestErfVec(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	inf := float32(math.Inf(1))
	special := []float32{0, float32(math.Copysign(0, -1)), 1e-30, -1e-7, 3.99, 4, -4.01, 6, -6, 40, -1e30, inf, -inf, float32(math.NaN())}
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 33, 100, 1000} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64() * 3)
			if i%5 == 0 {
				x[i] = special[(i/5)%len(special)]
			}
		}
		for _, gelu := range []bool{false, true} {
			got, port := make([]float32, n), make([]float32, n)
			erfVec(got, x, gelu)
			want, tol := erfLoopGo, opTol("Erf")
			if gelu {
				want, tol = geluErfLoopGo, opTol("Gelu")
			}
			want(port, x)
			for i, v := range x {
				ref := math.Erf(float64(v))
				if gelu {
					ref = float64(v) * (1 + math.Erf(float64(v)/math.Sqrt2)) * 0.5
				}
				g, p := float64(got[i]), float64(port[i])
				if math.IsNaN(ref) {
					if !math.IsNaN(g) || !math.IsNaN(p) {
						t.Fatalf("gelu=%v n=%d x=%g: got %g, portable %g, want NaN", gelu, n, v, g, p)
					}
					continue
				}
				if !tol.Within(g, ref) || !tol.Within(p, ref) {
					t.Fatalf("gelu=%v n=%d x=%g: got %g, portable %g, want %g", gelu, n, v, g, p, ref)
				}
				// GELU's 1 + erf cancels for negative x: its error scales with x.
				if g != p && math.Abs(g-p) > 4e-7*max(math.Abs(p), math.Abs(float64(v)), 1e-3) {
					t.Fatalf("gelu=%v n=%d x=%g: got %g, portable %g: more than a few ulp apart", gelu, n, v, g, p)
				}
			}
		}
	}
}

// TestFusedGelu checks the Gelu of ops.FusedDomain against the five
// kernels of the form it replaces (Div by √2, Erf, Add 1, Mul by x, Mul by
// ½) and against the ai.onnx Gelu; on float16, against float64 GELU.
func TestFusedGelu(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	vals := make([]float32, 3*37)
	for i := range vals {
		vals[i] = float32(r.NormFloat64() * 3)
	}
	gelu := func(x *graph.Tensor) *graph.Tensor {
		n := &graph.Node{Name: "g", OpType: "Gelu", Domain: ops.FusedDomain, Outputs: []string{"y"}}
		c := &Call{Node: n, Opset: 1, In: []graph.Value{x}, Out: make([]graph.Value, 1)}
		if err := Lookup(ops.FusedDomain, "Gelu")(c); err != nil {
			t.Fatal(err)
		}
		return c.Out[0].(*graph.Tensor)
	}
	x := ewT(graph.Float, []int64{3, 37}, vals...)
	scalar := func(v float32) *graph.Tensor { return ewT(graph.Float, nil, v) }
	e := ewRun(t, "Erf", 13, nil, ewRun(t, "Div", 14, nil, x, scalar(math.Sqrt2)))
	want := graph.View[float32](ewRun(t, "Mul", 14, nil, ewRun(t, "Mul", 14, nil, x, ewRun(t, "Add", 14, nil, e, scalar(1))), scalar(0.5)))
	got := graph.View[float32](gelu(x))
	onnx := graph.View[float32](ewRun(t, "Gelu", 20, nil, x))
	tol := opTol("Gelu")
	for i := range vals {
		if !tol.Within(float64(got[i]), float64(want[i])) || !tol.Within(float64(got[i]), float64(onnx[i])) {
			t.Fatalf("element %d (x %g): fused %g, want %g (five kernels) and %g (ai.onnx Gelu)", i, vals[i], got[i], want[i], onnx[i])
		}
	}
	h := make([]float16.Float16, len(vals))
	for i, v := range vals {
		h[i] = float16.Fromfloat32(v)
	}
	gotH := graph.View[float16.Float16](gelu(ewT(graph.Float16, []int64{3, 37}, h...)))
	for i, v := range h {
		xv := float64(v.Float32())
		if w := xv * (1 + math.Erf(xv/math.Sqrt2)) / 2; !tol.WithinFloat16(float64(gotH[i].Float32()), w) {
			t.Fatalf("float16 element %d (x %g): fused %g, want %g", i, xv, gotH[i].Float32(), w)
		}
	}
}
