//go:build !noasm

package hostfallback

import "math"

// dynQuantRangeAVX2 returns the least and greatest of n float32s and 0, n
// a positive multiple of 8, and whether any is NaN.
//
//go:noescape
func dynQuantRangeAVX2(x *float32, n int) (lo, hi float32, nan bool)

// dynQuantizeAVX2 is dynQuantizeGo over n values, n a positive multiple of
// 8, for a finite, non-zero scale (a NaN gives 0, as uint8 of a NaN does
// in Go on amd64).
//
//go:noescape
func dynQuantizeAVX2(y *uint8, x *float32, n int, scale, zp float32)

// dynQuantRange is dynQuantRangeGo, eight values at a time with AVX2
// where the CPU has it (the portable loop for NaNs, so that its answer
// stays the same).
func dynQuantRange(x []float32) (lo, hi float32) {
	n := len(x) &^ 7
	if !hasAVX2 || n == 0 {
		return dynQuantRangeGo(x)
	}
	lo, hi, nan := dynQuantRangeAVX2(&x[0], n)
	if nan {
		return dynQuantRangeGo(x)
	}
	l, h := dynQuantRangeGo(x[n:])
	return min(lo, l), max(hi, h)
}

// dynQuantize is dynQuantizeGo, eight values at a time with AVX2 where the
// CPU has it and the scale is finite and not zero.
func dynQuantize(y []uint8, x []float32, scale, zp float32) {
	n := len(x) &^ 7
	if !hasAVX2 || scale == 0 || math.IsInf(float64(scale), 0) || scale != scale {
		n = 0
	}
	if n > 0 {
		_ = y[n-1]
		dynQuantizeAVX2(&y[0], &x[0], n, scale, zp)
	}
	dynQuantizeGo(y[n:], x[n:], scale, zp)
}
