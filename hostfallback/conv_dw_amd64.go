//go:build !noasm

package hostfallback

// dwRowsAVX2 is dwRowsGo for taps ≥ 1 offsets and weights, rows ≥ 1 and
// ow ≥ 1.
//
//go:noescape
func dwRowsAVX2(dst, src *float32, offs *int, w *float32, taps, rows, ow, wq int, bias, lo, hi float32)

// dwRowsAVX512 is dwRowsAVX2 on 16 lanes, for the masks of dwMasks(ow).
// dwRows takes it for rows of more than 8 outputs: on narrower ones its
// masked 64-byte loads cost more than the AVX2 kernel's 32-byte ones.
//
//go:noescape
func dwRowsAVX512(dst, src *float32, offs *int, w *float32, taps, rows, ow, wq int, bias, lo, hi float32, masks uint64)

// dwZMM reports whether dwRows runs the AVX-512 kernel; the tests turn it
// off to run the AVX2 one too.
var dwZMM = hasAVX512

// dwMasks returns the lanes of the last vectors of dwRowsAVX512's rows of
// ow outputs, four 16-bit masks: of its one vector (ow ≤ 16), its two
// (ow ≤ 32), or the four of its last chunk of 64 columns.
func dwMasks(ow int) uint64 {
	tail := ow
	if ow > 32 {
		tail = ow - (ow-1)/64*64
	}
	var m uint64
	for j := range 4 {
		lanes := min(max(tail-16*j, 0), 16)
		m |= (1<<lanes - 1) << (16 * j)
	}
	return m
}

// dwRows sets the rows×ow values of dst, row r at r·ow, to the taps of a
// depthwise kernel: dst[r·ow+i] = bias + Σₜ w[t]·src[offs[t]+r·wq+i],
// clamped to [lo, hi] (NaN stays NaN). The caller ensures that 0 ≤
// offs[t] and offs[t]+dwSpan(rows, ow, wq) ≤ len(src) for every t: the
// vector loops read whole vectors, and whole groups of rows, unchecked.
func dwRows(dst, src []float32, offs []int, w []float32, rows, ow, wq int, bias, lo, hi float32) {
	if !hasAVX2 || len(offs) == 0 || rows == 0 || ow == 0 {
		dwRowsGo(dst, src, offs, w, rows, ow, wq, bias, lo, hi)
		return
	}
	_ = dst[rows*ow-1]
	w = w[:len(offs)]
	if dwZMM && ow > 8 {
		dwRowsAVX512(&dst[0], &src[0], &offs[0], &w[0], len(offs), rows, ow, wq, bias, lo, hi, dwMasks(ow))
		return
	}
	dwRowsAVX2(&dst[0], &src[0], &offs[0], &w[0], len(offs), rows, ow, wq, bias, lo, hi)
}

// dwSplit2AVX2 sets even[i] = x[2i] and odd[i] = x[2i+1] for i < n, a
// positive multiple of 8.
//
//go:noescape
func dwSplit2AVX2(even, odd, x *float32, n int)

// dwSplit2 sets even[i] = x[2i] and odd[i] = x[2i+1] for i below some n
// that it returns, at most len(even), len(odd) and len(x)/2; the rest is
// left to the caller.
func dwSplit2(even, odd, x []float32) int {
	n := min(len(even), len(odd), len(x)/2) &^ 7
	if !hasAVX2 || n == 0 {
		return 0
	}
	dwSplit2AVX2(&even[0], &odd[0], &x[0], n)
	return n
}

// dwCopyRowsAVX2 is dwCopyRows' copy, for rows ≥ 1 and n ≥ 1.
//
//go:noescape
func dwCopyRowsAVX2(dst, src *float32, rows, n, srcPitch, dstPitch int)

// dwCopyRows copies rows rows of n values, srcPitch apart in src, to dst,
// dstPitch apart, in one call, and reports whether it did. Each row's
// last vector of 8 is stored whole, zeros past the row: dst must hold
// zeros or a later row there (as the padding and rows of dwPoly's layout
// do), and room for the last row's whole vectors.
func dwCopyRows(dst, src []float32, rows, n, srcPitch, dstPitch int) bool {
	if !hasAVX2 || rows <= 0 || n <= 0 || (rows-1)*srcPitch+n > len(src) || (rows-1)*dstPitch+(n+7)&^7 > len(dst) {
		return false
	}
	dwCopyRowsAVX2(&dst[0], &src[0], rows, n, srcPitch, dstPitch)
	return true
}

// dwSplitRowsAVX2 is dwSplitRows' split: q whole chunks of 8 even and 8 odd
// values a row, then re even and ro odd ones from the next m values.
//
//go:noescape
func dwSplitRowsAVX2(even, odd, src *float32, rows, q, re, ro, m, srcPitch, dstPitch int)

// dwSplitRows sets even[r·dstPitch+k] = src[r·srcPitch+2k] for k < ne and
// odd[r·dstPitch+k] = src[r·srcPitch+2k+1] for k < no, for rows rows, in
// one call, and reports whether it did; it takes ne ≥ 1 and no at most
// one from ne, as a plane's even and odd columns are.
func dwSplitRows(even, odd, src []float32, rows, ne, no, srcPitch, dstPitch int) bool {
	if !hasAVX2 || rows <= 0 || ne < 1 || no < 0 || ne > no+1 || no > ne+1 {
		return false
	}
	q := min(ne, no) / 8
	re, ro := ne-8*q, no-8*q
	m := max(2*re-1, 2*ro)
	if (rows-1)*srcPitch+16*q+m > len(src) || (rows-1)*dstPitch+ne > len(even) || (rows-1)*dstPitch+no > len(odd) {
		return false
	}
	dwSplitRowsAVX2(&even[0], &odd[0], &src[0], rows, q, re, ro, m, srcPitch, dstPitch)
	return true
}
