//go:build !noasm

package hostfallback

// qgemmAVX2Tile is the 4×16 AVX2 tile (see qgemm_amd64.s).
//
//go:noescape
func qgemmAVX2Tile(pairs int, a *int16, lda int, b *int32, c *int32, ldc int)

// qgemmChecked returns the tile function of the assembly tile: it checks
// the extent of the operands, which the assembly reads and writes
// unchecked, and runs it.
func qgemmChecked(tile func(pairs int, a *int16, lda int, b *int32, c *int32, ldc int)) func(pairs int, a []int16, lda int, b []int32, c []int32, ldc int) {
	return func(pairs int, a []int16, lda int, b []int32, c []int32, ldc int) {
		_ = a[(qgemmMR-1)*lda+2*pairs-1]
		_ = b[qgemmNR*pairs-1]
		_ = c[(qgemmMR-1)*ldc+qgemmNR-1]
		tile(pairs, &a[0], lda, &b[0], &c[0], ldc)
	}
}

// qgemmVNNITile is qgemmAVX2Tile with AVX512-VNNI (see qgemm_amd64.s).
//
//go:noescape
func qgemmVNNITile(pairs int, a *int16, lda int, b *int32, c *int32, ldc int)

// hasVNNI reports AVX512-VNNI with AVX512VL (its ymm forms), less what
// GODEBUG turns off: cpu.avx512f=off turns it off too.
var hasVNNI = func() bool {
	if !hasAVX512 {
		return false
	}
	_, ebx7, ecx7, _ := cpuid(7, 0)
	const vl, vnni = 1 << 31, 1 << 11
	return ebx7&vl != 0 && ecx7&vnni != 0
}()

// qgemmPairRowsAVX2 is qgemmPairRowsGo over n values, n a positive
// multiple of 8.
//
//go:noescape
func qgemmPairRowsAVX2(dst, r0, r1 *int32, n int)

// qgemmPairRows sets dst[c] to the pair of r0[c] (low half) and r1[c]
// (high half), int16s: eight at a time with AVX2 where the CPU has it.
func qgemmPairRows(dst, r0, r1 []int32) {
	r0, r1 = r0[:len(dst)], r1[:len(dst)]
	n := 0
	if hasAVX2 {
		if n = len(dst) &^ 7; n > 0 {
			qgemmPairRowsAVX2(&dst[0], &r0[0], &r1[0], n)
		}
	}
	qgemmPairRowsGo(dst[n:], r0[n:], r1[n:])
}

// qgemmVariants lists the integer micro-kernels of amd64, fastest first;
// the portable one is last.
func qgemmVariants() []qgemmVariant {
	return []qgemmVariant{
		{&qgemmKernel{name: "avx512vnni-4x16", tile: qgemmChecked(qgemmVNNITile)}, []string{"avx512f", "avx512vl", "avx512_vnni"}, hasVNNI},
		{&qgemmKernel{name: "avx2-4x16", tile: qgemmChecked(qgemmAVX2Tile)}, []string{"avx2", "fma"}, hasAVX2},
		{qgemmGo, nil, true},
	}
}
