//go:build !noasm

package hostfallback

// sdpaPackRowsAVX2 sets dst[16p+l] = scale·src[p·ld+l] for p < rows (at
// least 1) and l < 16.
//
//go:noescape
func sdpaPackRowsAVX2(dst, src *float32, rows, ld int, scale float32)

// sdpaPackColsAVX2 sets dst[16p+l] = scale·src[l·ld+p] for p < kc (a
// positive multiple of 8) and l < 16.
//
//go:noescape
func sdpaPackColsAVX2(dst, src *float32, kc, ld int, scale float32)

// sdpaPackStrip16 packs a full 16-wide strip of sdpaPack, kc steps of
// B(p, l) = scale·x[at + p·rs + l·cs], into strip with AVX2 when the CPU
// has it and the strip's rows or columns lie contiguous, and reports
// whether it did.
func sdpaPackStrip16(strip, x []float32, at, rs, cs, kc int, scale float32) bool {
	if !hasAVX2 || kc == 0 {
		return false
	}
	_ = strip[16*kc-1]
	switch {
	case cs == 1:
		_ = x[at+(kc-1)*rs+15]
		sdpaPackRowsAVX2(&strip[0], &x[at], kc, rs, scale)
		return true
	case rs == 1 && kc >= 8:
		_ = x[at+15*cs+kc-1]
		n := kc &^ 7
		sdpaPackColsAVX2(&strip[0], &x[at], n, cs, scale)
		for l := range 16 {
			for p := n; p < kc; p++ {
				strip[16*p+l] = scale * x[at+l*cs+p]
			}
		}
		return true
	}
	return false
}

// sdpaScaleRowsAVX2 sets c[r·ldc+x] *= f[r] for r < rows (at least 1) and
// x < cols (a positive multiple of 8).
//
//go:noescape
func sdpaScaleRowsAVX2(c *float32, ldc, rows, cols int, f *float32)

// sdpaScaleRows multiplies row r of the rows×cols block at c (rows ldc
// apart) by f[r].
func sdpaScaleRows(c []float32, ldc, rows, cols int, f []float32) {
	n := 0
	if hasAVX2 && rows > 0 {
		if n = cols &^ 7; n > 0 {
			_, _ = c[(rows-1)*ldc+n-1], f[rows-1]
			sdpaScaleRowsAVX2(&c[0], ldc, rows, n, &f[0])
		}
	}
	if n < cols {
		sdpaScaleRowsGo(c[n:], ldc, rows, cols-n, f)
	}
}
