//go:build !noasm

package hostfallback

// convShiftAVX512 and convShiftAVX2 are the 8×32 and 6×16 tile kernels of
// shiftF32 (see convShiftKernel) for c ≥ 1 channels and taps ≥ 1 offsets.
//
//go:noescape
func convShiftAVX512(c int, a *float32, b *float32, plane int, offs *int, taps int, out *float32, ldc int, bias *float32)

//go:noescape
func convShiftAVX2(c int, a *float32, b *float32, plane int, offs *int, taps int, out *float32, ldc int, bias *float32)

// convShiftKernels lists shiftF32's tile kernels that the CPU has, the
// fastest first.
func convShiftKernels() []*convShiftKernel {
	var ks []*convShiftKernel
	if hasAVX512 {
		ks = append(ks, &convShiftKernel{name: "avx512-8x32", mr: 8, nr: 32, tile: convShiftAVX512})
	}
	if hasAVX2 {
		ks = append(ks, &convShiftKernel{name: "avx2-6x16", mr: 6, nr: 16, tile: convShiftAVX2, narrow: true})
	}
	return ks
}
