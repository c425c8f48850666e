package vulkan

import (
	"fmt"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/internal/kerneltest"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/planner"
)

// TestGEMVColumns checks the columns per workgroup of the gemv schedule:
// 32 where that makes enough workgroups, down to 2 for short results, up
// where k is short, down to n.
func TestGEMVColumns(t *testing.T) {
	for _, c := range []struct{ tiles, n, k, want int64 }{
		{1, 1536, 512, 4}, {1, 2048, 512, 8}, {1, 512, 2048, 2}, {1, 1024, 512, 4}, {1, 4096, 4096, 16},
		{1, 8192, 4096, 32}, {8, 1030, 33, 32}, {8, 129, 64, 4}, {8, 512, 64, 16}, {8, 64, 512, 2},
		{1, 40, 16, 16}, {1, 100, 4, 64}, {2, 300, 2, 128}, {3, 300, 1, 256}, {1, 3, 129, 2}, {1, 2, 257, 2},
		{1, 1, 300, 1}, {70000, 1, 1, 1},
	} {
		if got := gemvColumns(c.tiles, c.n, c.k); got != c.want {
			t.Errorf("gemvColumns(%d, %d, %d) = %d, want %d", c.tiles, c.n, c.k, got, c.want)
		}
	}
}

// TestGEMVShuffles checks that the gemv schedule, and it alone, takes
// matmul.comp's SUBGROUP variant where the caps say so.
func TestGEMVShuffles(t *testing.T) {
	mm := &graph.Node{OpType: "MatMul", Inputs: []string{"a", "b"}, Outputs: []string{"y"}}
	f32 := func(s ...int64) *graph.Type { return graph.TensorType(graph.Float, graph.ShapeOf(s...)) }
	for _, tc := range []struct {
		m        int64
		shuffled bool
		want     bool
	}{{1, true, true}, {4, true, true}, {1, false, false}, {64, true, false}} {
		c := caps{maxElems: 1 << 30, tiledMatMul: true, shuffledGEMV: tc.shuffled}
		l, ok := lower(planner.Query{Node: mm, Opset: 13, Inputs: []*graph.Type{f32(tc.m, 96), f32(96, 80)}}, c)
		if !ok {
			t.Fatalf("m=%d: not lowered", tc.m)
		}
		if l.subgroup != tc.want {
			t.Errorf("m=%d, shuffles %v: op %d, SUBGROUP variant %v, want %v", tc.m, tc.shuffled, l.op, l.subgroup, tc.want)
		}
	}
}

// gemvEdges are sizes of n and k on both sides of the schedules' tile
// widths and of the gemv schedule's slices of k.
var gemvEdges = []int64{1, 31, 33, 63, 65, 127, 129, 257}

// TestMatMulEdgesMatchCPU checks every schedule of matmul.comp on
// products of 1 to 5 rows whose n and k straddle the tile sizes (a sample
// outside the long suites), batched and broadcast products, products that
// give the gemv schedule each of its column counts, and Gemm's
// transposes, alpha, beta and C on few rows.
func TestMatMulEdgesMatchCPU(t *testing.T) {
	d := openTest(t)
	mmTol := ops.Lookup("", "MatMul", 13).Tolerance()
	gemmTol := ops.Lookup("", "Gemm", 13).Tolerance()
	pairs := [][2][]int64{
		// Batched and broadcast: attention's scores and context at one
		// query, both operands broadcast.
		{{2, 3, 1, 65}, {3, 65, 33}}, {{1, 8, 1, 64}, {1, 8, 64, 129}}, {{1, 8, 1, 129}, {1, 8, 129, 64}},
		{{4, 1, 3, 33}, {1, 5, 33, 31}}, {{2, 4, 65}, {65, 63}},
		// Each of gemv's column counts (see TestGEMVColumns), 1-D
		// operands, a k long enough for the unrolled loop and its tail,
		// and row blocks.
		{{8, 1, 33}, {8, 33, 1030}}, {{1, 40}, {40, 40}}, {{1, 4}, {4, 100}}, {{2, 1, 2}, {2, 2, 300}},
		{{3, 1}, {1, 300}}, {{300}, {300}}, {{2, 257}, {257, 2}}, {{129}, {129, 3}}, {{1, 2000}, {2000, 40}},
		{{5, 65}, {65, 33}}, {{2, 9, 31}, {31, 17}},
	}
	forEachSchedule(t, d, func(t *testing.T) {
		// Every 5th case for gemv, every 10th for the older schedules,
		// which the other tests cover too.
		every := 10
		if d.schedule == scheduleGEMV {
			every = 5
		}
		s := testenv.NewSampler(every)
		seed := uint64(0)
		for m := int64(1); m <= 5; m++ {
			for _, n := range gemvEdges {
				for _, k := range gemvEdges {
					seed++
					if !s.Take() {
						continue
					}
					checkMatMul(t, d, [2][]int64{{m, k}, {k, n}}, seed%2 == 0, seed, mmTol)
				}
			}
		}
		for i, pair := range pairs {
			checkMatMul(t, d, pair, i%2 == 1, uint64(1000+i), mmTol)
		}
		s = testenv.NewSampler(3)
		for _, m := range []int64{1, 2, 4, 5} {
			for _, nk := range [][2]int64{{33, 65}, {129, 31}, {1, 257}} {
				nn, k := nk[0], nk[1]
				for tr := range 4 {
					for _, c := range [][]int64{nil, {nn}, {m, 1}, {m, nn}} {
						seed++
						if s.Take() {
							checkGemm(t, d, m, nn, k, int64(tr&1), int64(tr>>1), c, seed, gemmTol)
						}
					}
				}
			}
		}
	})
}

// checkMatMul checks MatMul of operands of shapes pair against the CPU,
// with b a weight or a runtime input.
func checkMatMul(t *testing.T, d *Device, pair [2][]int64, weight bool, seed uint64, tol ops.Tolerance) {
	t.Helper()
	n := &graph.Node{OpType: "MatMul", Inputs: []string{"a", "b"}, Outputs: []string{"y"}}
	gpu, cpu, ok := runRandom(t, d, n, 13, []input{{shape: pair[0]}, {shape: pair[1], weight: weight}}, uniform(-2, 2), seed)
	if !ok {
		t.Fatalf("MatMul %v %v unsupported", pair[0], pair[1])
	}
	kerneltest.CompareFloats(t, fmt.Sprintf("MatMul %v %v", pair[0], pair[1]), gpu, cpu, tol)
}

// checkGemm checks Gemm of an m x k by k x nn product with transposes ta
// and tb, alpha 0.75, beta -1.5 and C of shape c (none where nil) against
// the CPU.
func checkGemm(t *testing.T, d *Device, m, nn, k, ta, tb int64, c []int64, seed uint64, tol ops.Tolerance) {
	t.Helper()
	a, b := []int64{m, k}, []int64{k, nn}
	if ta != 0 {
		a = []int64{k, m}
	}
	if tb != 0 {
		b = []int64{nn, k}
	}
	n := &graph.Node{OpType: "Gemm", Inputs: []string{"a", "b"}, Outputs: []string{"y"}, Attrs: attrs(
		kerneltest.IntAttr("transA", ta), kerneltest.IntAttr("transB", tb),
		&graph.Attribute{Name: "alpha", Type: graph.AttrFloat, F: 0.75}, &graph.Attribute{Name: "beta", Type: graph.AttrFloat, F: -1.5})}
	ins := []input{{shape: a}, {shape: b, weight: seed%2 == 0}}
	if c != nil {
		n.Inputs = append(n.Inputs, "c")
		ins = append(ins, input{shape: c})
	}
	what := fmt.Sprintf("Gemm transA=%d transB=%d %v %v C %v", ta, tb, a, b, c)
	gpu, cpu, ok := runRandom(t, d, n, 13, ins, uniform(-2, 2), seed)
	if !ok {
		t.Fatalf("%s unsupported", what)
	}
	kerneltest.CompareFloats(t, what, gpu, cpu, tol)
}
