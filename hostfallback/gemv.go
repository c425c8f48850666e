package hostfallback

// Products of a few rows (a decode step's single token, M ≤ gemvMaxRows):
// each row of C is a sum of rows of B scaled by the row of A, which streams
// B once from memory. The packed GEMM would pad A to its micro-kernel's
// height and pack B anew per call; here B is read row-major as it is or,
// when it is a constant weight, in the packed layout of gemmPackWhole made
// once per plan, whose nr-wide strips are contiguous kc×nr blocks.

// gemvMaxRows is the most rows of A that take the GEMV paths.
const gemvMaxRows = 4

// gemvGo is the portable gemvRows: c[j] += Σ_p a[p]·b[p·ldb+j] for j <
// len(c), p < len(a).
func gemvGo(a, b []float32, ldb int, c []float32) {
	n := len(c)
	for p, av := range a {
		row := b[p*ldb:][:n]
		for j, bv := range row {
			c[j] += av * bv
		}
	}
}

// gemvWork is the product size (k·n) from which gemvPacked splits its
// strips over goroutines. Below it (1 MiB of weights, within a core's L2)
// the kernel takes a few microseconds, and handing half of it to another
// goroutine costs about as much as that half: an LSTM's 128×512 recurrent
// products, one a time step, ran 8–12 % slower split.
const gemvWork = 256 * 1024

// gemvPacked sets C (m×n, row stride ldc, m ≤ gemvMaxRows) to A·B for a
// row-major A (m×k, row stride lda) and a k×n B packed whole in nr-wide
// strips (see gemmPanelIndex), or, with add, adds A·B to C. The strips
// are shared among the goroutines of threads.
func gemvPacked(threads *Threads, m, n, k int, a []float32, lda int, bPre []float32, nr int, add bool, c []float32, ldc int) {
	strips := gemmCeil(n, nr)
	run := func(lo, hi int) {
		var tmp [gemmMaxTile]float32
		for s := lo; s < hi; s++ {
			j := s * nr
			cols := min(nr, n-j)
			for i := range m {
				dst := c[i*ldc+j:][:cols]
				if cols < nr {
					dst = tmp[:nr]
					clear(dst)
				} else if !add {
					clear(dst)
				}
				arow := a[i*lda:][:k]
				for pc := 0; pc < k; pc += gemmKC {
					kc := min(gemmKC, k-pc)
					gemvRows(arow[pc:pc+kc], bPre[pc*strips*nr+s*kc*nr:][:kc*nr], nr, dst)
				}
				if cols < nr {
					out := c[i*ldc+j:][:cols]
					if !add {
						clear(out)
					}
					for x, v := range dst[:cols] {
						out[x] += v
					}
				}
			}
		}
	}
	if k*n < gemvWork {
		run(0, strips)
		return
	}
	threads.For(strips, max(1, gemvWork/(k*nr)/2), run)
}
