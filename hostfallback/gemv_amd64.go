//go:build !noasm

package hostfallback

// gemvAVX2 is c[j] += Σ_{p<k} a[p]·b[p·ldb+j] for j < 16·blocks, for k ≥ 1
// and blocks ≥ 1.
//
//go:noescape
func gemvAVX2(k int, a, b *float32, ldb int, c *float32, blocks int)

// gemvAVX512 is gemvAVX2 for blocks of 32 columns, with the same sums in
// the same order, for k ≥ 1 and blocks ≥ 1.
//
//go:noescape
func gemvAVX512(k int, a, b *float32, ldb int, c *float32, blocks int)

// gemvZMM reports whether gemvRows takes 32-column blocks with
// gemvAVX512 (where the CPU has AVX-512).
var gemvZMM = hasAVX512

// gemvRows is c[j] += Σ_p a[p]·b[p·ldb+j] for j < len(c), p < len(a): the
// 32-column blocks with AVX-512 and the 16-column ones with AVX2 where
// the CPU has them, the rest with gemvGo.
func gemvRows(a, b []float32, ldb int, c []float32) {
	k, n := len(a), len(c)
	if k == 0 {
		return
	}
	j := 0
	if blocks := n / 32; gemvZMM && blocks > 0 {
		// The kernels read unchecked: check the last element each reads.
		_ = b[(k-1)*ldb+32*blocks-1]
		gemvAVX512(k, &a[0], &b[0], ldb, &c[0], blocks)
		j = 32 * blocks
	}
	if blocks := (n - j) / 16; hasAVX2 && blocks > 0 {
		_ = b[(k-1)*ldb+j+16*blocks-1]
		gemvAVX2(k, &a[0], &b[j], ldb, &c[j], blocks)
		j += 16 * blocks
	}
	if j < n {
		gemvGo(a, b[j:], ldb, c[j:])
	}
}
