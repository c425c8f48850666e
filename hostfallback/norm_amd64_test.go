//go:build !noasm

package hostfallback

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/onnxvk/onnxvk/internal/testenv"
)

// TestNormRowsAVX2 checks the vector squared deviations and normalisation
// against the portable loops: rows of every length up to 40 and BERT's
// 768, at offsets off the vector alignment, with and without a bias, and
// values far from zero (a mean that dominates the deviations).
func TestNormRowsAVX2(t *testing.T) {
	if !hasAVX2 {
		testenv.Skip(t, "the portable row loops are the only ones here")
	}
	r := rand.New(rand.NewPCG(41, 42))
	lengths := []int{768}
	for n := range 41 {
		lengths = append(lengths, n)
	}
	for _, n := range lengths {
		for _, off := range []int{0, 3} {
			for _, shift := range []float32{0, 1000} {
				buf := nnRandFloats(r, n+off)
				for i := range buf {
					buf[i] += shift
				}
				x := buf[off:]
				m := sumF64Go(x) / math.Max(float64(n), 1)
				if got, want := rowSqDev(x, m), rowSqDevGo(x, m); math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
					t.Fatalf("rowSqDev of %d (+%v) at %d: %v, want %v", n, shift, off, got, want)
				}
				scale, bias := nnRandFloats(r, n), nnRandFloats(r, n)
				for _, b := range [][]float32{nil, bias} {
					got, want := make([]float32, n), make([]float32, n)
					normRow(got, x, scale, b, float32(m), 0.7)
					normRowGo(want, x, scale, b, float32(m), 0.7)
					if i := nnClose(got, want, 0, 1e-6); i >= 0 {
						t.Fatalf("normRow of %d (+%v) at %d, bias %v: element %d = %v, want %v", n, shift, off, b != nil, i, got[i], want[i])
					}
				}
			}
		}
	}
}
