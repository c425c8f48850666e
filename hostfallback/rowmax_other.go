//go:build !amd64 || noasm

package hostfallback

// rowMaxF32 is the largest element of x (NaN when x holds one), −∞ for an
// empty x.
func rowMaxF32(x []float32) float32 { return rowMaxF32Go(x) }
