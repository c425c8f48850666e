//go:build !noasm

package hostfallback

import "unsafe"

// convPackAVX2 is convPackStrip16Go with AVX2, on raw pointers.
//
//go:noescape
func convPackAVX2(dst, plane *float32, segs *convVecSeg, np, nt, t, rows, stride, st, pitch int)

// convPackVec reports whether convIm2colPacked packs strips of
// convolutions 16 lanes at a time with convPackStrip16 (where it has
// AVX2).
var convPackVec = hasAVX2

// convPackStrip16 is convPackStrip16Go, with AVX2 where the CPU has it;
// the planes hold the given number of channels.
func convPackStrip16(dst, x []float32, segs []convVecSeg, np, nt, t, kcs, pitch, stride, st, channels int) {
	if !hasAVX2 {
		convPackStrip16Go(dst, x, segs, np, nt, t, kcs, pitch, stride, st)
		return
	}
	if kcs < 1 || np < 1 || pitch < 16 || len(dst) < (kcs-1)*pitch+16 || len(segs) < nt*np || (t+kcs+nt-1)/nt > channels || len(x) < channels*stride || st < 1 || st > convPackMaxStride || unsafe.Sizeof(convVecSeg{}) != 72 {
		panic("hostfallback: convPackStrip16 out of bounds")
	}
	convPackAVX2(&dst[0], &x[0], &segs[0], np, nt, t, kcs, stride, st, pitch)
}
