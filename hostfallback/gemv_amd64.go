//go:build !noasm

package hostfallback

// gemvAVX2 is c[j] += Σ_{p<k} a[p]·b[p·ldb+j] for j < 16·blocks, for k ≥ 1
// and blocks ≥ 1.
//
//go:noescape
func gemvAVX2(k int, a, b *float32, ldb int, c *float32, blocks int)

// gemvRows is c[j] += Σ_p a[p]·b[p·ldb+j] for j < len(c), p < len(a): the
// 16-column blocks with AVX2 where the CPU has it, the rest with gemvGo.
func gemvRows(a, b []float32, ldb int, c []float32) {
	k, n := len(a), len(c)
	blocks := 0
	if hasAVX2 && k > 0 {
		blocks = n / 16
	}
	if blocks > 0 {
		// The kernel reads unchecked: check the last element it reads.
		_ = b[(k-1)*ldb+16*blocks-1]
		gemvAVX2(k, &a[0], &b[0], ldb, &c[0], blocks)
	}
	if j := 16 * blocks; j < n {
		gemvGo(a, b[j:], ldb, c[j:])
	}
}
