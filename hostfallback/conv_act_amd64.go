//go:build !noasm

package hostfallback

// clampAVX2 is clampF32Go over y[:n], n a positive multiple of 8.
//
//go:noescape
func clampAVX2(y *float32, n int, lo, hi float32)

// clampF32 sets each element v of y to lo where v < lo and to hi where
// v > hi, in place; NaN stays NaN.
func clampF32(y []float32, lo, hi float32) {
	n := 0
	if hasAVX2 {
		if n = len(y) &^ 7; n > 0 {
			clampAVX2(&y[0], n, lo, hi)
		}
	}
	clampF32Go(y[n:], lo, hi)
}

// clampAddAVX2 is clampAddF32Go over rows rows of cols values from y, ld
// floats apart, s (nil: none) laid out like y, cols a positive multiple
// of 8.
//
//go:noescape
func clampAddAVX2(y, s *float32, ld, rows, cols int, lo, hi float32)

// clampAddF32 adds s (when not nil) to rows×cols values of y, rows ld
// apart from y[at], s laid out like y, then clamps them to [lo, hi] as
// clampF32 does, in place.
func clampAddF32(y, s []float32, at, rows, cols, ld int, lo, hi float32) {
	n := 0
	if hasAVX2 && rows > 0 {
		if n = cols &^ 7; n > 0 {
			end := at + (rows-1)*ld + cols
			_ = y[at:end]
			var sp *float32
			if s != nil {
				_ = s[at:end]
				sp = &s[at]
			}
			clampAddAVX2(&y[at], sp, ld, rows, n, lo, hi)
		}
	}
	if n < cols {
		var st []float32
		if s != nil {
			st = s[n:]
		}
		clampAddF32Go(y[n:], st, at, rows, cols-n, ld, lo, hi)
	}
}

// sigmoidAVX2 sets y[i] to σ(y[i]) or, with swish, to y[i]·σ(y[i]) for
// i < n, a positive multiple of 8, σ computed in float32 with a relative
// error of a few ulp.
//
//go:noescape
func sigmoidAVX2(y *float32, n int, swish bool)

// sigmoidAVX512 is sigmoidAVX2 with zmm registers (the same operations,
// lane by lane) for n a positive multiple of 16.
//
//go:noescape
func sigmoidAVX512(y *float32, n int, swish bool)

// tanhAVX2 is tanhF32 on n elements of y in place, n a positive multiple
// of 8 (with FMA in the polynomial: within a few ulp of tanhF32).
//
//go:noescape
func tanhAVX2(y *float32, n int)

// tanhAVX512 is tanhAVX2 with zmm registers (the same operations, lane by
// lane) for n a positive multiple of 16.
//
//go:noescape
func tanhAVX512(y *float32, n int)

// actZMM reports whether sigmoidF32 and tanhSlice take 16 lanes at a time
// with sigmoidAVX512 and tanhAVX512 (where the CPU has AVX-512).
var actZMM = hasAVX512

// sigmoidF32 sets each element v of y to σ(v) = 1/(1+e⁻ᵛ) or, with swish,
// to v·σ(v), in place.
func sigmoidF32(y []float32, swish bool) {
	n := 0
	if actZMM {
		if n = len(y) &^ 15; n > 0 {
			sigmoidAVX512(&y[0], n, swish)
		}
	}
	if hasAVX2 {
		if m := (len(y) - n) &^ 7; m > 0 {
			sigmoidAVX2(&y[n], m, swish)
			n += m
		}
	}
	sigmoidF32Go(y[n:], swish)
}

// tanhSlice sets each element v of y to tanhF32(v), in place, within a
// few ulp.
func tanhSlice(y []float32) {
	n := 0
	if actZMM {
		if n = len(y) &^ 15; n > 0 {
			tanhAVX512(&y[0], n)
		}
	}
	if hasAVX2 {
		if m := (len(y) - n) &^ 7; m > 0 {
			tanhAVX2(&y[n], m)
			n += m
		}
	}
	for i, v := range y[n:] {
		y[n+i] = tanhF32(v)
	}
}

// hardSigmoidAVX2 is hardSigmoidF32Go over n elements, n a positive
// multiple of 8.
//
//go:noescape
func hardSigmoidAVX2(d, s *float32, n int, alpha, beta float32, swish bool)

// hardSigmoidF32 sets d[i] to max(0, min(1, alpha·s[i] + beta)) or, with
// swish, to that times s[i]; d and s are the same slice or do not overlap.
func hardSigmoidF32(d, s []float32, alpha, beta float32, swish bool) {
	s = s[:len(d)]
	n := 0
	if hasAVX2 {
		if n = len(d) &^ 7; n > 0 {
			hardSigmoidAVX2(&d[0], &s[0], n, alpha, beta, swish)
		}
	}
	hardSigmoidF32Go(d[n:], s[n:], alpha, beta, swish)
}

// affineAVX2 is affineF32Go over n elements, n a positive multiple of 8.
//
//go:noescape
func affineAVX2(d, s *float32, n int, a, b float32)

// affineF32 sets d[i] to s[i]·a + b (the product rounded, then the sum);
// d and s are the same slice or do not overlap.
func affineF32(d, s []float32, a, b float32) {
	s = s[:len(d)]
	n := 0
	if hasAVX2 {
		if n = len(d) &^ 7; n > 0 {
			affineAVX2(&d[0], &s[0], n, a, b)
		}
	}
	affineF32Go(d[n:], s[n:], a, b)
}
