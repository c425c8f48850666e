//go:build !amd64

package hostfallback

// sgemmKernels returns the kernels that this CPU runs: the portable one.
func sgemmKernels() []*sgemmKernel { return []*sgemmKernel{gemmGo} }
