//go:build !noasm

package hostfallback

// arithAVX2 sets d[i] to a[i]+b[i] (mul false) or a[i]·b[i] (mul true)
// for i < n, a positive multiple of 8, b[0] standing for every b[i] where
// scalar.
//
//go:noescape
func arithAVX2(d, a, b *float32, n int, mul, scalar bool)

// arithF32 is addLoop or mulLoop (mul) for float32, in AVX2 where the CPU
// has it.
func arithF32(d, a, b []float32, m runMode, mul bool) {
	if m == runSV {
		a, b, m = b, a, runVS
	}
	a = a[:len(d)]
	n := 0
	if hasAVX2 {
		if n = len(d) &^ 7; n > 0 {
			if m == runVV {
				b = b[:len(d)]
			}
			arithAVX2(&d[0], &a[0], &b[0], n, mul, m != runVV)
		}
	}
	if m == runVV {
		b = b[n:]
	}
	if mul {
		mulLoop(d[n:], a[n:], b, m)
	} else {
		addLoop(d[n:], a[n:], b, m)
	}
}
