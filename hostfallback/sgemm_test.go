package hostfallback

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// naiveGemm is the triple-loop reference of sgemm, accumulating in float64.
func naiveGemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	for i := range m {
		for j := range n {
			var s float64
			for p := range k {
				var av, bv float32
				if transA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if transB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += float64(av) * float64(bv)
			}
			v := float64(alpha) * s
			if beta != 0 {
				v += float64(beta) * float64(c[i*ldc+j])
			}
			c[i*ldc+j] = float32(v)
		}
	}
}

// nnRandFloats returns n seeded values in [-1, 1).
func nnRandFloats(r *rand.Rand, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = r.Float32()*2 - 1
	}
	return out
}

// nnClose reports the first index where got and want differ by more
// than abs + rel·|want|, or -1.
func nnClose(got, want []float32, abs, rel float64) int {
	for i := range want {
		g, w := float64(got[i]), float64(want[i])
		if math.IsNaN(w) != math.IsNaN(g) || (!math.IsNaN(w) && math.Abs(g-w) > abs+rel*math.Abs(w)) {
			return i
		}
	}
	return -1
}

// gemmTol is the tolerance of sgemm against naiveGemm: Gemm's.
var gemmTol = opTol("Gemm")

func TestSgemmHandComputed(t *testing.T) {
	a := []float32{1, 2, 3, 4, 5, 6}    // 2×3
	b := []float32{7, 8, 9, 10, 11, 12} // 3×2
	c := []float32{1, 1, 1, 1}
	sgemm(nil, false, false, 2, 2, 3, 1, a, 3, b, 2, 0.5, c, 2)
	want := []float32{58.5, 64.5, 139.5, 154.5}
	if i := nnClose(c, want, 0, 0); i >= 0 {
		t.Fatalf("got %v, want %v", c, want)
	}
	// Aᵀ·Bᵀ with alpha 2 and beta 0 over NaN garbage in C.
	c = []float32{float32(math.NaN()), 0, 0, float32(math.NaN())}
	sgemm(nil, true, true, 2, 2, 3, 2, []float32{1, 4, 2, 5, 3, 6}, 2, []float32{7, 9, 11, 8, 10, 12}, 3, 0, c, 2)
	want = []float32{116, 128, 278, 308}
	if i := nnClose(c, want, 0, 0); i >= 0 {
		t.Fatalf("transposed: got %v, want %v", c, want)
	}
	// k = 0 only scales C.
	c = []float32{1, 2}
	sgemm(nil, false, false, 1, 2, 0, 1, nil, 0, nil, 2, 3, c, 2)
	if c[0] != 3 || c[1] != 6 {
		t.Fatalf("k=0: got %v", c)
	}
}

func TestSgemmRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	dims := []int{1, 2, 3, 4, 5, 7, 13, 33, 127, 300}
	type shape struct{ m, n, k int }
	var shapes []shape
	for _, m := range dims {
		for _, n := range dims {
			for _, k := range []int{1, 5, 13, 127, 259} {
				if m*n*k <= 300*127*259 && (m < 100 || n < 100 || k < 100) {
					shapes = append(shapes, shape{m, n, k})
				}
			}
		}
	}
	shapes = append(shapes, shape{300, 300, 300}, shape{257, 2100, 9}, shape{64, 64, 530}, shape{1000, 1, 300}, shape{2, 3000, 100})
	scales := [][2]float32{{1, 0}, {0.5, 1}, {-1.5, 0.25}}
	for si, s := range shapes {
		for ti, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			ab := scales[(si+ti)%len(scales)]
			m, n, k := s.m, s.n, s.k
			lda, ldb, ldc := k+1, n+3, n+2
			if tr[0] {
				lda = m + 2
			}
			if tr[1] {
				ldb = k + 1
			}
			rowsA, rowsB := m, k
			if tr[0] {
				rowsA = k
			}
			if tr[1] {
				rowsB = n
			}
			a := nnRandFloats(r, rowsA*lda)
			b := nnRandFloats(r, rowsB*ldb)
			c := nnRandFloats(r, m*ldc)
			want := append([]float32{}, c...)
			serial := append([]float32{}, c...)
			naiveGemm(tr[0], tr[1], m, n, k, ab[0], a, lda, b, ldb, ab[1], want, ldc)
			sgemm(nil, tr[0], tr[1], m, n, k, ab[0], a, lda, b, ldb, ab[1], c, ldc)
			if i := nnClose(c, want, gemmTol.Abs, gemmTol.Rel); i >= 0 {
				t.Fatalf("m=%d n=%d k=%d trans=%v alpha,beta=%v: C[%d] = %v, want %v", m, n, k, tr, ab, i, c[i], want[i])
			}
			sgemmSerial(tr[0], tr[1], m, n, k, ab[0], a, lda, b, ldb, ab[1], serial, ldc)
			if i := nnClose(serial, c, 0, 0); i >= 0 {
				t.Fatalf("m=%d n=%d k=%d: serial C[%d] = %v, parallel %v", m, n, k, i, serial[i], c[i])
			}
		}
	}
}

func BenchmarkSgemm(b *testing.B) {
	for _, s := range []int{64, 256, 1024} {
		b.Run(fmt.Sprint(s), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			x, y, z := nnRandFloats(r, s*s), nnRandFloats(r, s*s), make([]float32, s*s)
			b.ResetTimer()
			for range b.N {
				sgemm(nil, false, false, s, s, s, 1, x, s, y, s, 0, z, s)
			}
			b.ReportMetric(2*float64(s*s*s)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// eachSgemmKernel calls f with every kernel this CPU runs, as a subtest
// named after it, and logs the kernels of this architecture it skips for
// the CPU features they need.
func eachSgemmKernel(t *testing.T, f func(t *testing.T, kn *sgemmKernel)) {
	t.Helper()
	for _, v := range sgemmVariants() {
		if !v.runs {
			t.Logf("%s not run: it needs %s, which this CPU lacks", v.kernel.name, strings.Join(v.needs, " and "))
			continue
		}
		t.Logf("%s runs", v.kernel.name)
		t.Run(v.kernel.name, func(t *testing.T) { f(t, v.kernel) })
	}
}

// TestSgemmKernels checks every micro-kernel this CPU runs against the
// naive product over odd shapes, transposes and scalings, serial and split
// over goroutines; the log says which kernels ran.
func TestSgemmKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	shapes := [][3]int{{2, 4, 1}, {5, 7, 3}, {6, 16, 1}, {8, 32, 2}, {13, 17, 19}, {31, 33, 35}, {64, 64, 64}, {97, 130, 257}, {7, 300, 530}, {129, 65, 600}, {300, 2100, 9}, {9, 49, 4}, {16, 50, 5}, {17, 196, 1}, {11, 25, 7}, {8, 42, 33}}
	scales := [][2]float32{{1, 0}, {1, 1}, {0.5, 1}, {-1.5, 0.25}}
	eachSgemmKernel(t, func(t *testing.T, kn *sgemmKernel) {
		for si, s := range shapes {
			for ti, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
				ab := scales[(si+ti)%len(scales)]
				m, n, k := s[0], s[1], s[2]
				lda, ldb, ldc := k+1, n+3, n+2
				rowsA, rowsB := m, k
				if tr[0] {
					lda, rowsA = m+2, k
				}
				if tr[1] {
					ldb, rowsB = k+1, n
				}
				a := nnRandFloats(r, rowsA*lda)
				b := nnRandFloats(r, rowsB*ldb)
				c := nnRandFloats(r, m*ldc)
				want := append([]float32{}, c...)
				naiveGemm(tr[0], tr[1], m, n, k, ab[0], a, lda, b, ldb, ab[1], want, ldc)
				for _, workers := range []int{1, 2, 3} {
					got := append([]float32{}, c...)
					gemmPacked(nil, kn, tr[0], tr[1], m, n, k, ab[0], a, lda, b, ldb, nil, ab[1], nil, got, ldc, workers)
					if i := nnClose(got, want, gemmTol.Abs, gemmTol.Rel); i >= 0 {
						t.Fatalf("%s %d workers m=%d n=%d k=%d trans=%v alpha,beta=%v: C[%d] = %v, want %v", kn.name, workers, m, n, k, tr, ab, i, got[i], want[i])
					}
				}
				if ab[1] != 0 {
					continue
				}
				// The bias epilogue: C = alpha·op(A)·op(B) + bias[i].
				bias := nnRandFloats(r, m)
				for i := range m {
					for j := range n {
						want[i*ldc+j] += bias[i]
					}
				}
				got := append([]float32{}, c...)
				gemmRun(nil, kn, tr[0], tr[1], m, n, k, ab[0], a, lda, b, ldb, 0, bias, got, ldc, 2)
				if i := nnClose(got, want, gemmTol.Abs, gemmTol.Rel); i >= 0 {
					t.Fatalf("%s with bias m=%d n=%d k=%d trans=%v alpha=%v: C[%d] = %v, want %v", kn.name, m, n, k, tr, ab[0], i, got[i], want[i])
				}
			}
		}
	})
}

func BenchmarkSgemmKernels(b *testing.B) {
	for _, kn := range sgemmKernels() {
		for _, s := range []int{256, 1024} {
			b.Run(fmt.Sprintf("%s/%d", kn.name, s), func(b *testing.B) {
				r := rand.New(rand.NewPCG(1, 2))
				x, y, z := nnRandFloats(r, s*s), nnRandFloats(r, s*s), make([]float32, s*s)
				workers := runtime.GOMAXPROCS(0)
				b.ResetTimer()
				for range b.N {
					gemmRun(nil, kn, false, false, s, s, s, 1, x, s, y, s, 0, nil, z, s, workers)
				}
				b.ReportMetric(2*float64(s*s*s)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkSgemmTile times each micro-kernel alone on one goroutine, its
// strips (kc 256) resident in L1 and L2 as in gemmPacked's inner loop: the
// GFLOP/s against the core's peak (2 FMA pipes × 8 lanes × 2 flops a cycle
// with AVX2) is the kernel's efficiency.
func BenchmarkSgemmTile(b *testing.B) {
	const kc = 256
	for _, kn := range sgemmKernels() {
		b.Run(kn.name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			ap, bp := nnRandFloats(r, kn.mr*kc), nnRandFloats(r, kn.nr*kc)
			c := make([]float32, kn.mr*kn.nr)
			for range b.N {
				kn.tile(kc, &ap[0], &bp[0], &c[0], kn.nr, true, nil)
			}
			b.ReportMetric(2*float64(kn.mr*kn.nr*kc)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// TestGemmDot checks the dot product against a float64 sum over lengths
// around the vector widths.
func TestGemmDot(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for n := range 200 {
		a, b := nnRandFloats(r, n), nnRandFloats(r, n+3)
		var want float64
		for i := range a {
			want += float64(a[i]) * float64(b[i])
		}
		if got := gemmDot(a, b); !opTol("MatMul").Within(float64(got), want) {
			t.Fatalf("n %d: dot = %v, want %v", n, got, want)
		}
	}
}
