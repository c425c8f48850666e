//go:build !amd64 || noasm

package hostfallback

// convShiftKernels lists shiftF32's tile kernels: none in this build.
func convShiftKernels() []*convShiftKernel { return nil }
