//go:build !amd64 || noasm

package hostfallback

// arithRows sets d[r·n+i] to a[r·n+i]+s[r] (mul false) or a[r·n+i]·s[r]
// (mul true) for every row r < len(s) and i < n.
func arithRows(d, a, s []float32, n int, mul bool) { arithRowsGo(d, a, s, n, mul) }

// arithF32 is addLoop or mulLoop (mul) for float32.
func arithF32(d, a, b []float32, m runMode, mul bool) {
	if mul {
		mulLoop(d, a, b, m)
	} else {
		addLoop(d, a, b, m)
	}
}
