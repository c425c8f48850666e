//go:build !amd64 || noasm

package hostfallback

// arithF32 is addLoop or mulLoop (mul) for float32.
func arithF32(d, a, b []float32, m runMode, mul bool) {
	if mul {
		mulLoop(d, a, b, m)
	} else {
		addLoop(d, a, b, m)
	}
}
