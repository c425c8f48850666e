//go:build !noasm

package hostfallback

// qgemmAVX2Tile is the 4×16 AVX2 tile (see qgemm_amd64.s).
//
//go:noescape
func qgemmAVX2Tile(pairs int, a *int16, lda int, b *int16, c *int32, ldc int)

// qgemmTileAVX2 checks the extent of the operands, which the assembly
// reads and writes unchecked, and runs qgemmAVX2Tile.
func qgemmTileAVX2(pairs int, a []int16, lda int, b []int16, c []int32, ldc int) {
	_ = a[(qgemmMR-1)*lda+2*pairs-1]
	_ = b[2*qgemmNR*pairs-1]
	_ = c[(qgemmMR-1)*ldc+qgemmNR-1]
	qgemmAVX2Tile(pairs, &a[0], lda, &b[0], &c[0], ldc)
}

// qgemmVariants lists the integer micro-kernels of amd64, fastest first;
// the portable one is last.
func qgemmVariants() []qgemmVariant {
	return []qgemmVariant{
		{&qgemmKernel{name: "avx2-4x16", tile: qgemmTileAVX2}, []string{"avx2", "fma"}, hasAVX2},
		{qgemmGo, nil, true},
	}
}
