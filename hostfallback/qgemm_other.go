//go:build !amd64 || noasm

package hostfallback

// qgemmVariants lists the integer micro-kernels of this architecture: the
// portable one.
func qgemmVariants() []qgemmVariant { return []qgemmVariant{{qgemmGo, nil, true}} }
