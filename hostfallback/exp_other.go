//go:build !amd64 || noasm

package hostfallback

// expShiftF32 sets y[i] = exp(x[i] − m) and returns the sum of the y[i].
func expShiftF32(x, y []float32, m float32) float32 { return expShiftF32Go(x, y, m) }
