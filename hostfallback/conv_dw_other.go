//go:build !amd64 || noasm

package hostfallback

// dwRows sets the rows×ow values of dst, row r at r·ow, to the taps of a
// depthwise kernel: dst[r·ow+i] = bias + Σₜ w[t]·src[offs[t]+r·wq+i],
// clamped to [lo, hi] (NaN stays NaN). The caller ensures that 0 ≤
// offs[t] and offs[t]+dwSpan(rows, ow, wq) ≤ len(src) for every t (the
// amd64 vector loops read whole vectors and groups of rows, unchecked).
func dwRows(dst, src []float32, offs []int, w []float32, rows, ow, wq int, bias, lo, hi float32) {
	dwRowsGo(dst, src, offs, w, rows, ow, wq, bias, lo, hi)
}

// dwZMM is false: there is no AVX-512 kernel.
var dwZMM = false

// dwSplit2 would split x's even and odd elements; the portable build
// leaves it all to the caller and returns 0.
func dwSplit2(even, odd, x []float32) int { return 0 }

// dwCopyRows would copy rows of a plane in one call; the portable build
// leaves it to the caller and returns false.
func dwCopyRows(dst, src []float32, rows, n, srcPitch, dstPitch int) bool { return false }

// dwSplitRows would split rows' even and odd values in one call; the
// portable build leaves it to the caller and returns false.
func dwSplitRows(even, odd, src []float32, rows, ne, no, srcPitch, dstPitch int) bool { return false }
