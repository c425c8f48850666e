//go:build !noasm

package hostfallback

// convShiftAVX512 is a convShiftKernel for c ≥ 1 channels and taps ≥ 1
// offsets.
//
//go:noescape
func convShiftAVX512(c int, a *float32, b *float32, plane int, offs *int, taps int, out *float32, ldc int, bias *float32)

// convShiftTile is convShiftF32's tile kernel where the CPU has one.
var convShiftTile = func() convShiftKernel {
	if hasAVX512 {
		return convShiftAVX512
	}
	return nil
}()
