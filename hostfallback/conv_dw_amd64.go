//go:build !noasm

package hostfallback

// dwRowsAVX2 is dwRowsGo for taps ≥ 1 offsets and weights, rows ≥ 1 and
// ow ≥ 1.
//
//go:noescape
func dwRowsAVX2(dst, src *float32, offs *int, w *float32, taps, rows, ow, wq int, bias, lo, hi float32)

// dwRows sets the rows×ow values of dst, row r at r·ow, to the taps of a
// depthwise kernel: dst[r·ow+i] = bias + Σₜ w[t]·src[offs[t]+r·wq+i],
// clamped to [lo, hi] (NaN stays NaN). The caller ensures that 0 ≤
// offs[t] and offs[t]+(rows−1)·wq+⌈ow/8⌉·8 ≤ len(src) for every t: the
// vector loop reads whole vectors, unchecked.
func dwRows(dst, src []float32, offs []int, w []float32, rows, ow, wq int, bias, lo, hi float32) {
	if !hasAVX2 || len(offs) == 0 || rows == 0 || ow == 0 {
		dwRowsGo(dst, src, offs, w, rows, ow, wq, bias, lo, hi)
		return
	}
	_ = dst[rows*ow-1]
	w = w[:len(offs)]
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
