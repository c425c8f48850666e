//go:build !amd64 || noasm

package hostfallback

// clampF32 sets each element v of y to lo where v < lo and to hi where
// v > hi, in place; NaN stays NaN.
func clampF32(y []float32, lo, hi float32) { clampF32Go(y, lo, hi) }

// sigmoidF32 sets each element v of y to σ(v) = 1/(1+e⁻ᵛ) or, with swish,
// to v·σ(v), in place.
func sigmoidF32(y []float32, swish bool) { sigmoidF32Go(y, swish) }

// tanhSlice sets each element v of y to tanhF32(v), in place.
func tanhSlice(y []float32) {
	for i, v := range y {
		y[i] = tanhF32(v)
	}
}

// actZMM reports whether sigmoidF32 takes 16 lanes at a time with
// AVX-512: never without the assembly.
var actZMM = false

// hardSigmoidF32 sets d[i] to max(0, min(1, alpha·s[i] + beta)) or, with
// swish, to that times s[i]; d and s are the same slice or do not overlap.
func hardSigmoidF32(d, s []float32, alpha, beta float32, swish bool) {
	hardSigmoidF32Go(d, s, alpha, beta, swish)
}

// affineF32 sets d[i] to s[i]·a + b (the product rounded, then the sum);
// d and s are the same slice or do not overlap.
func affineF32(d, s []float32, a, b float32) { affineF32Go(d, s, a, b) }

// clampAddF32 adds s (when not nil) to rows×cols values of y, rows ld
// apart from y[at], s laid out like y, then clamps them to [lo, hi] as
// clampF32 does, in place.
func clampAddF32(y, s []float32, at, rows, cols, ld int, lo, hi float32) {
	clampAddF32Go(y, s, at, rows, cols, ld, lo, hi)
}
