//go:build !noasm

package hostfallback

// expShiftAVX2 sets y[i] = exp(x[i] − m) for i < n, a positive multiple
// of 8, with a relative error of a few ulp, and returns their sum.
//
//go:noescape
func expShiftAVX2(x, y *float32, n int, m float32) float32

// expShiftF32 sets y[i] = exp(x[i] − m) and returns the sum of the y[i].
func expShiftF32(x, y []float32, m float32) float32 {
	y = y[:len(x)]
	n := 0
	var s float32
	if hasAVX2 {
		if n = len(x) &^ 7; n > 0 {
			s = expShiftAVX2(&x[0], &y[0], n, m)
		}
	}
	return s + expShiftF32Go(x[n:], y[n:], m)
}
