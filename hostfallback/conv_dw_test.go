package hostfallback

import (
	"math/rand/v2"
	"testing"
)

// TestDwRow3 checks the depthwise row kernel against the portable loop for
// both strides over lengths around the vector width.
func TestDwRow3(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	w := &[3]float32{0.5, -1.25, 2}
	for _, stride := range []int{1, 2} {
		for n := 1; n <= 70; n++ {
			x := nnRandFloats(r, stride*(n-1)+3)
			got := nnRandFloats(r, n)
			want := append([]float32{}, got...)
			dwRow3(got, x, stride, w)
			dwRow3Go(want, x, stride, w)
			if i := nnClose(got, want, 1e-5, 1e-5); i >= 0 {
				t.Fatalf("stride %d n %d: dst[%d] = %v, want %v", stride, n, i, got[i], want[i])
			}
		}
	}
}

// TestDwRow9 checks the three-row kernel against the portable loop.
func TestDwRow9(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	w := &[9]float32{0.5, -1.25, 2, 1, -0.5, 0.25, 3, -2, 1.5}
	for _, stride := range []int{1, 2} {
		for n := 1; n <= 70; n++ {
			x0 := nnRandFloats(r, stride*(n-1)+3)
			x1 := nnRandFloats(r, stride*(n-1)+4)
			x2 := nnRandFloats(r, stride*(n-1)+3)
			got := nnRandFloats(r, n)
			want := append([]float32{}, got...)
			dwRow9(got, x0, x1, x2, stride, w)
			dwRow9Go(want, x0, x1, x2, stride, w)
			if i := nnClose(got, want, 1e-5, 1e-5); i >= 0 {
				t.Fatalf("stride %d n %d: dst[%d] = %v, want %v", stride, n, i, got[i], want[i])
			}
		}
	}
}
