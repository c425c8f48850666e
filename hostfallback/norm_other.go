//go:build !amd64 || noasm

package hostfallback

// rowSqDev returns the float64 sum of (x[i] − m)².
func rowSqDev(x []float32, m float64) float64 { return rowSqDevGo(x, m) }

// normRow sets y[i] = (x[i] − m)·s·scale[i] + bias[i] (no bias when nil).
func normRow(y, x, scale, bias []float32, m, s float32) { normRowGo(y, x, scale, bias, m, s) }
