package hostfallback

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

// dynQuantRef is DynamicQuantizeLinear as the ONNX spec writes it, in
// float64 but for the float32 scale and quotient ONNX Runtime computes:
// the range widened to include 0, scale = (max − min)/255, zero point
// saturate(round(−min/scale)), y = saturate(round(x/scale) + zero point),
// rounding half to even.
func dynQuantRef(x []float32) (y []uint8, scale float32, zp uint8) {
	lo, hi := 0.0, 0.0
	for _, v := range x {
		lo, hi = math.Min(lo, float64(v)), math.Max(hi, float64(v))
	}
	scale = float32(hi-lo) / 255
	sat := func(q float64) float64 { return math.Min(math.Max(q, 0), 255) }
	if scale != 0 {
		zp = uint8(sat(math.RoundToEven(float64(float32(-lo) / scale))))
	}
	y = make([]uint8, len(x))
	for i, v := range x {
		q := float64(zp)
		if scale != 0 {
			q += math.RoundToEven(float64(v / scale))
		}
		y[i] = uint8(sat(q))
	}
	return y, scale, zp
}

// TestDynamicQuantizeLinearVector checks DynamicQuantizeLinear (with the
// vector loops where the CPU has them) against the spec over lengths
// around the vector's, inputs all positive, all negative, mixed, with
// ties (x/scale = k + ½), infinities beside finite values, and zeros.
func TestDynamicQuantizeLinearVector(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 7))
	kinds := []func(i, n int) float32{
		func(int, int) float32 { return float32(rng.NormFloat64()) },
		func(int, int) float32 { return float32(rng.Float64() * 3) },
		func(int, int) float32 { return -float32(rng.Float64() * 1e4) },
		// Ties: the range is [0, 255], so scale 1 and x/scale = x.
		func(i, n int) float32 {
			if i == n-1 {
				return 255
			}
			return float32(rng.IntN(255)) + 0.5
		},
		func(int, int) float32 { return 0 },
	}
	for ki, kind := range kinds {
		for n := range 70 {
			x := make([]float32, n)
			for i := range x {
				x[i] = kind(i, n)
			}
			checkDynQuant(t, ki, x)
		}
	}
	x := []float32{1, 2, float32(math.Inf(1)), 3, -4, 5, 6, 7, 8, 9}
	checkDynQuant(t, len(kinds), x)
}

func checkDynQuant(t *testing.T, kind int, x []float32) {
	t.Helper()
	out, err := nnRunOuts("DynamicQuantizeLinear", 11, nil, []string{"y", "s", "z"}, nnF32([]int64{int64(len(x))}, x...))
	if err != nil {
		t.Fatal(err)
	}
	y, scale, zp := dynQuantRef(x)
	gs, gz := graph.View[float32](out[1])[0], out[2].Data[0]
	if math.Float32bits(gs) != math.Float32bits(scale) || gz != zp {
		t.Fatalf("kind %d, %d values: scale %g zero point %d, want %g %d", kind, len(x), gs, gz, scale, zp)
	}
	for i, v := range y {
		if out[0].Data[i] != v {
			t.Fatalf("kind %d, %d values: y[%d] = %d for %g, want %d", kind, len(x), i, out[0].Data[i], x[i], v)
		}
	}
}

// TestDynQuantizeVector checks the vector quantization against the
// portable loop for scales the range never gives (tiny, huge, negative)
// and for NaNs and infinities in x.
func TestDynQuantizeVector(t *testing.T) {
	x := []float32{0.5, 1.5, -2.5, 3e38, -3e38, float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
		1e-40, -1e-40, 254.5, 255.5, -0.5, 100, -100, 7}
	for _, scale := range []float32{1, 1e-45, 3e38, -2, 0.3} {
		for _, zp := range []float32{0, 128, 255} {
			got, want := make([]uint8, len(x)), make([]uint8, len(x))
			dynQuantize(got, x, scale, zp)
			dynQuantizeGo(want, x, scale, zp)
			for i := range x {
				if got[i] != want[i] {
					t.Fatalf("scale %g zero point %g: y[%d] = %d for %g, want %d", scale, zp, i, got[i], x[i], want[i])
				}
			}
		}
	}
}
