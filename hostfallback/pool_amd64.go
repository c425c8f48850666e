//go:build !noasm

package hostfallback

// maxRowsAVX2 is maxRowsPitch for taps ≥ 1 offsets, n ≥ 1 outputs and
// rows ≥ 1.
//
//go:noescape
func maxRowsAVX2(dst, src *float32, offs *int, taps, n, rows, dstPitch, srcPitch int)

// maxRows sets dst[i] to the maximum of src[offs[t]+i] over the taps t in
// order, by maxPlane's rule: a tap replaces the running value when it is
// greater or when the running value is NaN. offs must not be empty, and
// 0 ≤ offs[t] ≤ len(src)−len(dst) for every t.
func maxRows(dst, src []float32, offs []int) {
	maxRowsPitch(dst, src, offs, len(dst), 1, 0, 0)
}

// maxRowsPitch is maxRows over rows rows of n outputs, dstPitch apart in
// dst, the taps of each srcPitch on in src from the last's, in one call.
func maxRowsPitch(dst, src []float32, offs []int, n, rows, dstPitch, srcPitch int) {
	if n <= 0 || rows <= 0 {
		return
	}
	if !hasAVX2 {
		maxRowsPitchGo(dst, src, offs, n, rows, dstPitch, srcPitch)
		return
	}
	_ = dst[(rows-1)*dstPitch : (rows-1)*dstPitch+n]
	for _, off := range offs {
		_ = src[off : off+(rows-1)*srcPitch+n]
	}
	maxRowsAVX2(&dst[0], &src[0], &offs[0], len(offs), n, rows, dstPitch, srcPitch)
}

// meanRowsAVX2 is meanRowsGo for taps ≥ 1 offsets and n ≥ 1 outputs.
//
//go:noescape
func meanRowsAVX2(dst, src *float32, offs *int, taps, n int, d float32)

// meanRows sets dst[i] to the sum of src[offs[t]+i] over the taps t in
// order, from zero (as avgPlane2D adds a window's taps: so −0 alone sums
// to +0), divided by d. offs must not be empty, and 0 ≤ offs[t] ≤
// len(src)−len(dst) for every t.
func meanRows(dst, src []float32, offs []int, d float32) {
	if !hasAVX2 || len(dst) == 0 {
		meanRowsGo(dst, src, offs, d)
		return
	}
	for _, off := range offs {
		_ = src[off : off+len(dst)]
	}
	meanRowsAVX2(&dst[0], &src[0], &offs[0], len(offs), len(dst), d)
}

// sumF64AVX2 is the float64 sum of x[:n], n a positive multiple of 8,
// in four interleaved vector partial sums.
//
//go:noescape
func sumF64AVX2(x *float32, n int) float64

// sumF64 returns the sum of x accumulated in float64 (in an order that
// depends on the CPU's vector width).
func sumF64(x []float32) float64 {
	n := 0
	var s float64
	if hasAVX2 {
		if n = len(x) &^ 7; n > 0 {
			s = sumF64AVX2(&x[0], n)
		}
	}
	return s + sumF64Go(x[n:])
}
