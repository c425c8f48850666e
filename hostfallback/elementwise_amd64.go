//go:build !noasm

package hostfallback

// arithAVX2 sets d[i] to a[i]+b[i] (mul false) or a[i]·b[i] (mul true)
// for i < n, a positive multiple of 8, b[0] standing for every b[i] where
// scalar.
//
//go:noescape
func arithAVX2(d, a, b *float32, n int, mul, scalar bool)

// arithRowsAVX2 is arithRows for rows ≥ 1 and n ≥ 1, the lanes of a
// row's last n mod 8 values set in the eight int32 at mask.
//
//go:noescape
func arithRowsAVX2(d, a, s *float32, rows, n int, mul bool, mask *int32)

// arithTailMasks holds eight set lanes, then eight clear: the eight from
// 8-r on set the first r lanes.
var arithTailMasks = [16]int32{-1, -1, -1, -1, -1, -1, -1, -1}

// arithRows sets d[r·n+i] to a[r·n+i]+s[r] (mul false) or a[r·n+i]·s[r]
// (mul true) for every row r < len(s) and i < n: a tensor plus or times a
// value a channel, one call for all the rows (a run of n values each,
// where the broadcast's loop would make one call a run).
func arithRows(d, a, s []float32, n int, mul bool) {
	rows := len(s)
	if rows == 0 || n == 0 {
		return
	}
	_, _ = d[rows*n-1], a[rows*n-1]
	if !hasAVX2 {
		arithRowsGo(d, a, s, n, mul)
		return
	}
	arithRowsAVX2(&d[0], &a[0], &s[0], rows, n, mul, &arithTailMasks[8-n%8])
}

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
