//go:build (!amd64 && !arm64) || noasm

package hostfallback

// sgemmVariants lists the kernels of this architecture: the portable one.
func sgemmVariants() []sgemmVariant { return []sgemmVariant{{gemmGo, nil, true}} }

// gemmDot is Σ a[i]·b[i] over len(a) ≤ len(b) values.
func gemmDot(a, b []float32) float32 { return gemmDotGo(a, b) }
