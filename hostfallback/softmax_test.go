package hostfallback

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

// ewNaiveSoftmax normalises v (a group of values) as Softmax, LogSoftmax
// or Hardmax.
func ewNaiveSoftmax(op string, v []float64) []float64 {
	m, best := math.Inf(-1), 0
	for i, f := range v {
		if f > m {
			m, best = f, i
		}
	}
	s := 0.0
	for _, f := range v {
		s += math.Exp(f - m)
	}
	out := make([]float64, len(v))
	for i, f := range v {
		switch op {
		case "Softmax":
			out[i] = math.Exp(f-m) / s
		case "LogSoftmax":
			out[i] = f - m - math.Log(s)
		default:
			if i == best {
				out[i] = 1
			}
		}
	}
	return out
}

func TestSoftmaxValues(t *testing.T) {
	x := ewF32(ewShape(2, 3), 1, 2, 3, 1000, 1000, float32(-ewInf))
	ewCheck(t, "Softmax", ewRun(t, "Softmax", 13, nil, x), graph.Float, ewShape(2, 3),
		[]float64{0.09003057317038046, 0.24472847105479764, 0.6652409557748219, 0.5, 0.5, 0}, 1e-7)
	ewCheck(t, "LogSoftmax", ewRun(t, "LogSoftmax", 13, nil, x), graph.Float, ewShape(2, 3),
		[]float64{-2.4076059644443806, -1.4076059644443806, -0.4076059644443806, -math.Ln2, -math.Ln2, -ewInf}, 1e-7)
	ewCheck(t, "Hardmax", ewRun(t, "Hardmax", 13, nil, x), graph.Float, ewShape(2, 3), []float64{0, 0, 1, 1, 0, 0}, 0)
	ewCheck(t, "Softmax double", ewRun(t, "Softmax", 13, nil, ewT(graph.Double, ewShape(2), 0.0, math.Log(3))), graph.Double, ewShape(2), []float64{0.25, 0.75}, 1e-15)
	ewCheck(t, "Softmax float16", ewRun(t, "Softmax", 13, nil, ewT(graph.Float16, ewShape(2), uint16(0x3C00), 0x3C00)), graph.Float16, ewShape(2), []float64{0.5, 0.5}, 0)
	ewCheck(t, "empty", ewRun(t, "Softmax", 13, nil, ewF32(ewShape(0, 3))), graph.Float, ewShape(0, 3), nil, 0)
	ewFails(t, "Softmax", 13, ewWith(ewInt("axis", 2)), x)
	ewFails(t, "Softmax", 13, nil, ewF32(nil, 1))
	ewFails(t, "LogSoftmax", 13, nil, ewT(graph.Int32, ewShape(1), int32(1)))
}

// TestSoftmaxOpsetSemantics checks the 2-D coercion of opsets before 13
// against the single axis of opset 13 on random 3-D and 4-D inputs.
func TestSoftmaxOpsetSemantics(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, shape := range [][]int64{{2, 3, 4}, {3, 1, 13, 2}, {1, 127}, {5, 2100, 3}} {
		x := ewRandF32(rng, shape)
		xs := ewValues(x)
		for _, op := range []string{"Softmax", "LogSoftmax", "Hardmax"} {
			for axis := range len(shape) {
				outer, n, inner := axisGeom(shape, axis)
				// Opset 13: each group along axis.
				want := make([]float64, len(xs))
				for o := range outer {
					for j := range inner {
						g := make([]float64, n)
						for r := range n {
							g[r] = xs[(o*n+r)*inner+j]
						}
						for r, v := range ewNaiveSoftmax(op, g) {
							want[(o*n+r)*inner+j] = v
						}
					}
				}
				y := ewRun(t, op, 13, ewWith(ewInt("axis", int64(axis))), x)
				ewCheck(t, op+"-13", y, graph.Float, shape, want, 1e-6)
				// Opset 11: rows of everything from axis on.
				row := n * inner
				for o := range outer {
					copy(want[o*row:], ewNaiveSoftmax(op, xs[o*row:(o+1)*row]))
				}
				y = ewRun(t, op, 11, ewWith(ewInt("axis", int64(axis))), x)
				ewCheck(t, op+"-11", y, graph.Float, shape, want, 1e-6)
			}
		}
	}
	// The default axis is 1 before opset 13 and -1 from it.
	x := ewF32(ewShape(2, 2, 2), 0, 0, 0, 0, 1, 1, 1, 1)
	ewCheck(t, "default 11", ewRun(t, "Softmax", 11, nil, x), graph.Float, ewShape(2, 2, 2), []float64{0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25}, 1e-7)
	ewCheck(t, "default 13", ewRun(t, "Softmax", 13, nil, x), graph.Float, ewShape(2, 2, 2), []float64{0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5}, 1e-7)
}

// TestRowMaxF32 checks rowMaxF32 against a plain loop on rows of every
// length up to 41 (the vector loop's blocks of 16 and 8 and the tail),
// and that a NaN anywhere gives NaN.
func TestRowMaxF32(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	if m := rowMaxF32(nil); !math.IsInf(float64(m), -1) {
		t.Fatalf("empty row: %v, want -Inf", m)
	}
	for n := 1; n <= 41; n++ {
		x := nnRandFloats(r, n)
		want := x[0]
		for _, v := range x {
			if v > want {
				want = v
			}
		}
		if got := rowMaxF32(x); got != want {
			t.Fatalf("length %d: %v, want %v", n, got, want)
		}
		for i := range x {
			y := slices.Clone(x)
			y[i] = float32(math.NaN())
			if got := rowMaxF32(y); !math.IsNaN(float64(got)) {
				t.Fatalf("length %d, NaN at %d: %v", n, i, got)
			}
		}
	}
}
