//go:build !noasm

package hostfallback

// erfAVX2 sets y[i] to erfF32(x[i]) or, with gelu, to geluErfF32(x[i]),
// for i < n, a positive multiple of 8 (AVX2 and FMA: the polynomials'
// products and sums are fused, a rounding apart from erfF32's).
//
//go:noescape
func erfAVX2(x, y *float32, n int, gelu bool)

// erfVec sets d[i] to erf(s[i]) or, with gelu, to GELU(s[i]): blocks of 8
// with AVX2 where the CPU has it, the rest in Go.
func erfVec(d, s []float32, gelu bool) {
	s = s[:len(d)]
	n := 0
	if hasAVX2 {
		if n = len(d) &^ 7; n > 0 {
			erfAVX2(&s[0], &d[0], n, gelu)
		}
	}
	if gelu {
		geluErfLoopGo(d[n:], s[n:])
		return
	}
	erfLoopGo(d[n:], s[n:])
}
