//go:build !noasm

package hostfallback

// rowSqDevAVX2 returns the sum of (x[i] − m)², i < n (a positive multiple
// of 8), in float64 in eight lanes.
//
//go:noescape
func rowSqDevAVX2(x *float32, n int, m float64) float64

// normRowAVX2 is normRowGo for n, a positive multiple of 8, elements;
// bias may be nil.
//
//go:noescape
func normRowAVX2(y, x, scale, bias *float32, n int, m, s float32)

// rowSqDev returns the float64 sum of (x[i] − m)².
func rowSqDev(x []float32, m float64) float64 {
	n := 0
	var s float64
	if hasAVX2 {
		if n = len(x) &^ 7; n > 0 {
			s = rowSqDevAVX2(&x[0], n, m)
		}
	}
	return s + rowSqDevGo(x[n:], m)
}

// normRow sets y[i] = (x[i] − m)·s·scale[i] + bias[i] (no bias when nil).
func normRow(y, x, scale, bias []float32, m, s float32) {
	x, scale = x[:len(y)], scale[:len(y)]
	n := 0
	if hasAVX2 {
		if n = len(y) &^ 7; n > 0 {
			var b *float32
			if bias != nil {
				bias = bias[:len(y)]
				b = &bias[0]
			}
			normRowAVX2(&y[0], &x[0], &scale[0], b, n, m, s)
		}
	}
	if bias != nil {
		bias = bias[n:]
	}
	normRowGo(y[n:], x[n:], scale[n:], bias, m, s)
}
