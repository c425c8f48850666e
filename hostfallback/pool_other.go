//go:build !amd64 || noasm

package hostfallback

// maxRows sets dst[i] to the maximum of src[offs[t]+i] over the taps t in
// order, by maxPlane's rule: a tap replaces the running value when it is
// greater or when the running value is NaN. offs must not be empty, and
// 0 ≤ offs[t] ≤ len(src)−len(dst) for every t.
func maxRows(dst, src []float32, offs []int) { maxRowsGo(dst, src, offs) }

// maxRowsPitch is maxRows over rows rows of n outputs, dstPitch apart in
// dst, the taps of each srcPitch on in src from the last's.
func maxRowsPitch(dst, src []float32, offs []int, n, rows, dstPitch, srcPitch int) {
	maxRowsPitchGo(dst, src, offs, n, rows, dstPitch, srcPitch)
}

// meanRows sets dst[i] to the sum of src[offs[t]+i] over the taps t in
// order, from zero (so −0 alone sums to +0), divided by d.
func meanRows(dst, src []float32, offs []int, d float32) { meanRowsGo(dst, src, offs, d) }

// sumF64 returns the sum of x accumulated in float64.
func sumF64(x []float32) float64 { return sumF64Go(x) }
