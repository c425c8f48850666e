package hostfallback

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// gemvDepths and gemvWidths are the k and n of the GEMV tests: around the
// unrolling by four, the 16-column blocks and the k-slab of the packing.
var (
	gemvDepths = []int{1, 2, 3, 4, 5, 7, 8, 9, 31, 64, 255, 256, 257, 513}
	gemvWidths = []int{1, 2, 7, 8, 15, 16, 17, 31, 32, 33, 48, 63, 64, 100}
)

// zmmSettings returns the settings of a package switch for AVX-512
// kernels (gemvZMM, actZMM) that a test runs: off, and on where the CPU
// has AVX-512 (the switch's value). The switch is set back when t ends.
func zmmSettings(t *testing.T, flag *bool) []bool {
	was := *flag
	t.Cleanup(func() { *flag = was })
	if was {
		return []bool{false, true}
	}
	return []bool{false}
}

// TestGemvRows checks gemvRows (with the AVX2 kernel where the CPU has
// it, and again with the AVX-512 one where it has that too) and gemvGo
// against the float64 sum of naiveGemm, adding to a C of random values,
// with B's rows wider than the product's.
func TestGemvRows(t *testing.T) {
	type kernel struct {
		name string
		f    func(a, b []float32, ldb int, c []float32)
		zmm  bool
	}
	kernels := []kernel{{"gemvGo", gemvGo, false}}
	for _, z := range zmmSettings(t, &gemvZMM) {
		kernels = append(kernels, kernel{fmt.Sprintf("gemvRows (AVX-512 %v)", z), gemvRows, z})
	}
	r := rand.New(rand.NewPCG(11, 12))
	for _, k := range gemvDepths {
		for _, n := range gemvWidths {
			ldb := n + 3
			a, b, c := nnRandFloats(r, k), nnRandFloats(r, k*ldb), nnRandFloats(r, n)
			want := append([]float32{}, c...)
			naiveGemm(false, false, 1, n, k, 1, a, k, b, ldb, 1, want, n)
			for _, kn := range kernels {
				gemvZMM = kn.zmm
				got := append([]float32{}, c...)
				kn.f(a, b, ldb, got)
				if i := nnClose(got, want, gemmTol.Abs, gemmTol.Rel); i >= 0 {
					t.Fatalf("%s k=%d n=%d: C[%d] = %v, want %v", kn.name, k, n, i, got[i], want[i])
				}
			}
		}
	}
}

// TestGemvPacked checks gemvPacked on one to four rows of A against
// naiveGemm, with B packed in the 32- and 16-wide strips of the AVX-512
// and AVX2 kernels and in 2-wide ones, storing and adding, on one
// goroutine and on several, for every pair of gemvDepths and gemvWidths
// and for one product large enough (gemvWork) to be split.
func TestGemvPacked(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	var sizes [][2]int
	for _, k := range gemvDepths {
		for _, n := range gemvWidths {
			sizes = append(sizes, [2]int{k, n})
		}
	}
	sizes = append(sizes, [2]int{1000, gemvWork/1000 + 37})
	for _, nr := range []int{32, 16, 2} {
		for _, kn := range sizes {
			k, n := kn[0], kn[1]
			m := 1 + (k+n)%gemvMaxRows
			lda, ldc := k+1, n+2
			a, b, c := nnRandFloats(r, m*lda), nnRandFloats(r, k*n), nnRandFloats(r, m*ldc)
			packed := gemmPackWhole(false, b, k, n, nr)
			for _, add := range []bool{false, true} {
				want := append([]float32{}, c...)
				beta := float32(0)
				if add {
					beta = 1
				}
				naiveGemm(false, false, m, n, k, 1, a, lda, b, n, beta, want, ldc)
				for _, workers := range []int{1, 3} {
					got := append([]float32{}, c...)
					gemvPacked(NewThreads(workers), m, n, k, a, lda, packed, nr, add, got, ldc)
					if i := nnClose(got, want, gemmTol.Abs, gemmTol.Rel); i >= 0 {
						t.Fatalf("nr=%d m=%d k=%d n=%d add=%v workers=%d: C[%d] = %v, want %v", nr, m, k, n, add, workers, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestGemvSmallRows runs sgemm on one to four rows of unpacked, untransposed
// operands (gemmSmall's gemvRows path), a strided B and C, beta 0 over NaN
// and beta ½.
func TestGemvSmallRows(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, k := range gemvDepths {
		for _, n := range gemvWidths {
			for m := 1; m <= gemvMaxRows; m++ {
				if gemmTakesPacked(m, n, k) {
					continue
				}
				lda, ldb, ldc := k+2, n+5, n+1
				a, b, c := nnRandFloats(r, m*lda), nnRandFloats(r, k*ldb), nnRandFloats(r, m*ldc)
				for _, beta := range []float32{0, 0.5} {
					want := append([]float32{}, c...)
					naiveGemm(false, false, m, n, k, 1, a, lda, b, ldb, beta, want, ldc)
					got := append([]float32{}, c...)
					if beta == 0 {
						for i := range m {
							got[i*ldc] = float32(math.NaN())
						}
					}
					sgemm(nil, false, false, m, n, k, 1, a, lda, b, ldb, beta, got, ldc)
					if i := nnClose(got, want, gemmTol.Abs, gemmTol.Rel); i >= 0 {
						t.Fatalf("m=%d k=%d n=%d beta=%v: C[%d] = %v, want %v", m, k, n, beta, i, got[i], want[i])
					}
				}
			}
		}
	}
}
