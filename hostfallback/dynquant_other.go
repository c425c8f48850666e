//go:build !amd64 || noasm

package hostfallback

// dynQuantRange is dynQuantRangeGo.
func dynQuantRange(x []float32) (lo, hi float32) { return dynQuantRangeGo(x) }

// dynQuantize is dynQuantizeGo.
func dynQuantize(y []uint8, x []float32, scale, zp float32) { dynQuantizeGo(y, x, scale, zp) }
