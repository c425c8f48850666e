//go:build !amd64 || noasm

package hostfallback

// convPackVec reports whether convIm2colPacked packs 16-wide strips of
// convolutions with convPackStrip16: not without a vector kernel,
// where convPutSeg's copies do as well.
var convPackVec = false

// convPackStrip16 is convPackStrip16Go; the planes hold the given number
// of channels.
func convPackStrip16(dst, x []float32, segs []convVecSeg, np, nt, t, kcs, pitch, stride, st, channels int) {
	convPackStrip16Go(dst, x, segs, np, nt, t, kcs, pitch, stride, st)
}
