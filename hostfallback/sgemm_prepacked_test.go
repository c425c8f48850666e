//go:build !noasm

package hostfallback

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/onnxvk/onnxvk/internal/testenv"
)

// The products with B packed whole exist only with an assembly kernel
// (convPackedUsable): the noasm build has none to test.

// BenchmarkSgemmPrepacked times whole products with B packed once, as a
// MatMul with a constant weight runs them, on shapes of BERT-base and
// GPT-2-sized models ([m,k,n]): against BenchmarkSgemmTile, it shows what
// the blocking, packing and threading around the kernel cost.
func BenchmarkSgemmPrepacked(b *testing.B) {
	if !convPackedUsable() {
		testenv.Skip(b, "no kernel reads a B packed whole on this CPU")
	}
	for _, s := range [][3]int{{1024, 768, 768}, {1024, 768, 3072}, {1024, 3072, 768}, {32, 1536, 512}, {32, 2048, 512}, {96, 1536, 512}, {196, 576, 64}} {
		m, k, n := s[0], s[1], s[2]
		b.Run(fmt.Sprintf("%dx%dx%d", m, k, n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			x, w, z := nnRandFloats(r, m*k), nnRandFloats(r, k*n), make([]float32, m*n)
			packed := gemmPackWhole(false, w, k, n, gemmBest.nr)
			b.ResetTimer()
			for range b.N {
				gemmPrepacked(nil, false, m, n, k, 1, x, k, packed, 0, z, n)
			}
			b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkSgemmPrepackedCold times the four products of a BERT-base
// layer over 128 tokens ([m,k,n]: in-projection, out-projection, the two
// feed-forward ones) as an encoder runs them: each with its own weights,
// 8 layers of them (226 MB), so that B comes from memory as in a model
// whose weights are larger than the last-level cache, where
// BenchmarkSgemmPrepacked keeps its one B in cache.
func BenchmarkSgemmPrepackedCold(b *testing.B) {
	if !convPackedUsable() {
		testenv.Skip(b, "no kernel reads a B packed whole on this CPU")
	}
	type product struct {
		m, k, n int
		x, w, z []float32
	}
	r := rand.New(rand.NewPCG(1, 2))
	var layer []product
	for range 8 {
		for _, s := range [][3]int{{128, 768, 2304}, {128, 768, 768}, {128, 768, 3072}, {128, 3072, 768}} {
			m, k, n := s[0], s[1], s[2]
			layer = append(layer, product{m, k, n, nnRandFloats(r, m*k), gemmPackWhole(false, nnRandFloats(r, k*n), k, n, gemmBest.nr), make([]float32, m*n)})
		}
	}
	threads := NewThreads(runtime.GOMAXPROCS(0))
	flops := 0
	for _, p := range layer {
		flops += 2 * p.m * p.n * p.k
	}
	b.ResetTimer()
	for range b.N {
		for _, p := range layer {
			gemmPrepacked(threads, false, p.m, p.n, p.k, 1, p.x, p.k, p.w, 0, p.z, p.n)
		}
	}
	b.ReportMetric(float64(flops)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// TestSgemmPrepacked checks gemmPacked with B packed whole (gemmPackWhole),
// as MatMul and the convolutions run it, against the naive product: shapes
// around the strip, block and k-slab sizes (a partial last A strip, of 2
// or 4 rows where the direct kernel has one of that height, a partial
// last B strip, k just over a slab), transposed and scaled A,
// beta 0 and 1, the bias epilogue, row strides past the matrices, on 1 to 3
// goroutines, with the direct kernel and with A packed.
func TestSgemmPrepacked(t *testing.T) {
	if !convPackedUsable() {
		testenv.Skip(t, "no kernel reads a B packed whole on this CPU")
	}
	packedA := *gemmBest
	packedA.direct = nil
	r := rand.New(rand.NewPCG(5, 6))
	shapes := [][3]int{{2, 4, 1}, {6, 16, 1}, {5, 17, 3}, {13, 24, 31}, {7, 25, 2}, {7, 33, 257}, {12, 49, 300}, {4, 20, 9}, {64, 49, 300}, {95, 16, 513}, {97, 130, 256}, {193, 196, 40}, {32, 512, 769}}
	for _, kn := range []*sgemmKernel{gemmBest, &packedA} {
		for si, s := range shapes {
			m, n, k := s[0], s[1], s[2]
			for _, transA := range []bool{false, true} {
				alpha := []float32{1, 0.5}[si%2]
				lda, ldc := k+5, n+3
				rowsA := m
				if transA {
					lda, rowsA = m+7, k
				}
				a := nnRandFloats(r, rowsA*lda)
				b := nnRandFloats(r, k*n)
				bPre := gemmPackWhole(false, b, k, n, kn.nr)
				bias := nnRandFloats(r, m)
				for _, beta := range []float32{0, 1} {
					for _, withBias := range []bool{false, true} {
						if withBias && beta != 0 {
							continue
						}
						c := nnRandFloats(r, m*ldc)
						want := append([]float32{}, c...)
						naiveGemm(transA, false, m, n, k, alpha, a, lda, b, n, beta, want, ldc)
						var bi []float32
						if withBias {
							bi = bias
							for i := range m {
								for j := range n {
									want[i*ldc+j] += bias[i]
								}
							}
						}
						for _, workers := range []int{1, 2, 3} {
							got := append([]float32{}, c...)
							gemmPacked(nil, kn, transA, false, m, n, k, alpha, a, lda, nil, n, bPre, beta, bi, got, ldc, workers)
							if i := nnClose(got, want, gemmTol.Abs, gemmTol.Rel); i >= 0 {
								t.Fatalf("%s direct=%v %d workers m=%d n=%d k=%d transA=%v alpha=%v beta=%v bias=%v: C[%d] = %v, want %v",
									kn.name, kn.direct != nil, workers, m, n, k, transA, alpha, beta, withBias, i, got[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}
