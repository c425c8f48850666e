//go:build !amd64

package hostfallback

// sgemmKernels returns the kernels that this CPU runs: the portable one.
func sgemmKernels() []*sgemmKernel { return []*sgemmKernel{gemmGo} }

// gemmDot is Σ a[i]·b[i] over len(a) ≤ len(b) values.
func gemmDot(a, b []float32) float32 { return gemmDotGo(a, b) }
