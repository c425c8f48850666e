//go:build !amd64 || noasm

package hostfallback

// qgemmVariants lists the integer micro-kernels of this architecture: the
// portable one.
func qgemmVariants() []qgemmVariant { return []qgemmVariant{{qgemmGo, nil, true}} }

// qgemmPairRows sets dst[c] to the pair of r0[c] (low half) and r1[c]
// (high half), int16s.
func qgemmPairRows(dst, r0, r1 []int32) { qgemmPairRowsGo(dst, r0, r1) }
