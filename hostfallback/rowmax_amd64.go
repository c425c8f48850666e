//go:build !noasm

package hostfallback

// rowMaxAVX2 returns the largest of x[i], i < n (a positive multiple of
// 8), or NaN when one of them is NaN.
//
//go:noescape
func rowMaxAVX2(x *float32, n int) float32

// rowMaxF32 is the largest element of x (NaN when x holds one), −∞ for an
// empty x: blocks of 8 with AVX2 where the CPU has it, the rest in Go.
func rowMaxF32(x []float32) float32 {
	n := 0
	if hasAVX2 {
		if n = len(x) &^ 7; n > 0 {
			return max(rowMaxAVX2(&x[0], n), rowMaxF32Go(x[n:]))
		}
	}
	return rowMaxF32Go(x)
}
