//go:build !amd64 || noasm

package hostfallback

// clampF32 sets each element v of y to lo where v < lo and to hi where
// v > hi, in place; NaN stays NaN.
func clampF32(y []float32, lo, hi float32) { clampF32Go(y, lo, hi) }

// sigmoidF32 sets each element v of y to σ(v) = 1/(1+e⁻ᵛ) or, with swish,
// to v·σ(v), in place.
func sigmoidF32(y []float32, swish bool) { sigmoidF32Go(y, swish) }
