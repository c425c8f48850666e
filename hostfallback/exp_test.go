package hostfallback

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestExpShiftF32 checks the vectorised exp and the portable one against
// math.Exp, over lengths that exercise the 8-wide loop and its tail.
func TestExpShiftF32(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 7, 8, 9, 16, 31, 64, 100} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64() * 20)
		}
		x[0] = -200 // far below the clamp: a tiny positive value
		m := float32(3)
		for name, f := range map[string]func(x, y []float32, m float32) float32{"expShiftF32": expShiftF32, "expShiftF32Go": expShiftF32Go} {
			y := make([]float32, n)
			s := f(x, y, m)
			want := 0.0
			for i, v := range x {
				e := math.Exp(float64(v - m))
				want += float64(y[i])
				if e < 1e-37 {
					if y[i] < 0 || y[i] > 2e-38 {
						t.Errorf("%s n=%d: exp(%g) = %g, want about 0", name, n, v-m, y[i])
					}
					continue
				}
				if d := math.Abs(float64(y[i])-e) / e; d > 4e-7 {
					t.Errorf("%s n=%d: exp(%g) = %g, want %g (relative error %.2g)", name, n, v-m, y[i], e, d)
				}
			}
			if d := math.Abs(float64(s)-want) / want; d > 1e-5 {
				t.Errorf("%s n=%d: sum %g, want %g", name, n, s, want)
			}
		}
	}
	y := make([]float32, 9)
	x := make([]float32, 9)
	x[2], x[8] = float32(math.NaN()), float32(math.NaN())
	if s := expShiftF32(x, y, 0); !math.IsNaN(float64(s)) || !math.IsNaN(float64(y[2])) || !math.IsNaN(float64(y[8])) || y[0] != 1 {
		t.Errorf("NaN: sum %g, y %v; want NaN at 2 and 8, 1 elsewhere", s, y)
	}
}

// TestTanhF32 checks the float32 tanh against math.Tanh on both sides of
// its switch from the polynomial to the exponential, near 0 (where the
// relative error matters), far out and at NaN and ±Inf.
func TestTanhF32(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	xs := []float32{0, 1e-30, -1e-7, 0.6249999, 0.625, -0.625, 0.7, 9, 20, -50, 1e30}
	for range 20000 {
		xs = append(xs, float32(r.NormFloat64()*3), float32(r.NormFloat64()*1e-3))
	}
	for _, x := range xs {
		want := math.Tanh(float64(x))
		got := tanhF32(x)
		if d := math.Abs(float64(got) - want); d > 4e-7*math.Abs(want) && d > 1e-45 {
			t.Errorf("tanhF32(%g) = %g, want %g (relative error %.2g)", x, got, want, d/math.Abs(want))
		}
	}
	inf := float32(math.Inf(1))
	if got := tanhF32(inf); got != 1 {
		t.Errorf("tanhF32(+Inf) = %g, want 1", got)
	}
	if got := tanhF32(-inf); got != -1 {
		t.Errorf("tanhF32(-Inf) = %g, want -1", got)
	}
	if got := tanhF32(float32(math.NaN())); got == got {
		t.Errorf("tanhF32(NaN) = %g, want NaN", got)
	}
}
