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

// matmulPairs are MatMul input shapes: 1-D promotion on either side, odd
// sizes, batch broadcasting up to rank 6, results wider than a workgroup's
// tile and more tiles than a dispatch has workgroups.
var matmulPairs = [][2][]int64{
	{{1, 1}, {1, 1}}, {{13}, {13}}, {{13}, {13, 5}}, {{7, 13}, {13}}, {{13, 127}, {127, 3}}, {{127, 1}, {1, 13}},
	{{2, 3, 5}, {5, 7}}, {{5, 7}, {2, 7, 3}}, {{2, 1, 3, 5}, {4, 5, 6}}, {{1, 2, 1, 3, 4, 5}, {2, 1, 3, 5, 2}},
	{{2, 1, 2, 1, 3, 5}, {1, 2, 1, 2, 5, 9}}, {{3, 70, 65}, {3, 65, 129}}, {{4}, {2, 3, 4, 5}}, {{5, 33}, {33, 600}},
	{{70000, 1, 1}, {1, 1}},
}

// forEachSchedule runs f with each schedule of matmul.comp forced on d,
// the tiled one with its depth split in 3 (split-K, which it takes by
// itself only where a product's k is 128 or more), and, in the long
// suites where d's gemv schedule adds its slices' sums by subgroup
// shuffles, gemv without them.
func forEachSchedule(t *testing.T, d *Device, f func(t *testing.T)) {
	old, splits, rows := d.schedule, d.matmulSplits, d.subgroupRows
	t.Cleanup(func() { d.schedule, d.matmulSplits, d.subgroupRows = old, splits, rows })
	for _, s := range schedules {
		d.schedule = s.s
		t.Run(s.name, f)
	}
	if d.subgroupRows && d.info.SubgroupShuffle && testenv.Long() {
		// The gemv run above added its slices' sums by subgroup
		// shuffles; this one by the shared-memory tree alone (in the
		// long suites: nine more pipelines for lavapipe to compile).
		d.schedule, d.subgroupRows = scheduleGEMV, false
		t.Run("gemv-tree", f)
		d.subgroupRows = rows
	}
	d.schedule, d.matmulSplits = scheduleTiled, 3
	t.Run("tiled-3-splits", f)
}

// TestMatMulMatchesCPU checks MatMul against the CPU kernel, with B a
// runtime value and a weight.
func TestMatMulMatchesCPU(t *testing.T) {
	d := openTest(t)
	tol := ops.Lookup("", "MatMul", 13).Tolerance()
	forEachSchedule(t, d, func(t *testing.T) {
		for i, pair := range matmulPairs {
			if d.schedule != scheduleBlocked && d.info.Type == "cpu" && graph.NumElements(pair[0]) > 65535 {
				// Barriers make the GPU schedules slow on CPU
				// implementations; the blocked one covers the same loop
				// over more tiles than workgroups.
				continue
			}
			for _, weight := range []bool{false, true} {
				n := &graph.Node{OpType: "MatMul", Inputs: []string{"a", "b"}, Outputs: []string{"y"}}
				gpu, cpu, ok := runRandom(t, d, n, 13, []input{{shape: pair[0]}, {shape: pair[1], weight: weight}}, uniform(-2, 2), uint64(i))
				if !ok {
					t.Fatalf("MatMul %v %v unsupported", pair[0], pair[1])
				}
				kerneltest.CompareFloats(t, fmt.Sprintf("MatMul %v %v", pair[0], pair[1]), gpu, cpu, tol)
			}
		}
	})
}

// TestGemmMatchesCPU checks Gemm over transposes, alpha and beta, and the
// shapes C broadcasts from, with C absent too.
func TestGemmMatchesCPU(t *testing.T) {
	d := openTest(t)
	tol := ops.Lookup("", "Gemm", 13).Tolerance()
	forEachSchedule(t, d, func(t *testing.T) {
		for i, mnk := range [][3]int64{{1, 1, 1}, {13, 7, 5}, {127, 13, 66}, {3, 127, 1}, {70, 65, 129}} {
			m, nn, k := mnk[0], mnk[1], mnk[2]
			if d.schedule == scheduleGEMV && m > 16 {
				// GPUs use gemv for up to 4 rows; TestGEMVMatchesCPU
				// covers its row blocks.
				continue
			}
			for _, c := range [][]int64{nil, {}, {1}, {nn}, {1, nn}, {m, 1}, {m, nn}} {
				for tr := range 4 {
					ta, tb := int64(tr&1), int64(tr>>1)
					a, b := []int64{m, k}, []int64{k, nn}
					if ta != 0 {
						a = []int64{k, m}
					}
					if tb != 0 {
						b = []int64{nn, k}
					}
					n := &graph.Node{OpType: "Gemm", Inputs: []string{"a", "b"}, Outputs: []string{"y"}, Attrs: map[string]*graph.Attribute{
						"transA": {Name: "transA", Type: graph.AttrInt, I: ta}, "transB": {Name: "transB", Type: graph.AttrInt, I: tb},
						"alpha": {Name: "alpha", Type: graph.AttrFloat, F: 0.75}, "beta": {Name: "beta", Type: graph.AttrFloat, F: -1.5}}}
					ins := []input{{shape: a}, {shape: b, weight: true}}
					if c != nil {
						n.Inputs = append(n.Inputs, "c")
						ins = append(ins, input{shape: c, weight: tr == 1})
					}
					what := fmt.Sprintf("Gemm transA=%d transB=%d %v %v C %v", ta, tb, a, b, c)
					gpu, cpu, ok := runRandom(t, d, n, 13, ins, uniform(-2, 2), uint64(i))
					if !ok {
						t.Fatalf("%s unsupported", what)
					}
					kerneltest.CompareFloats(t, what, gpu, cpu, tol)
				}
			}
		}
	})
}

// TestScheduleOption checks that WithSchedule sets what it names, leaves
// the rest to the device type, and refuses names it does not know.
func TestScheduleOption(t *testing.T) {
	openTest(t)
	for _, s := range []Schedule{{MatMul: "fast"}, {Conv: "winograd"}, {GEMVColumns: 3}, {GEMVColumns: 512}, {ConvSplits: -1}} {
		if d, err := Open("vulkan", WithSchedule(s)); err == nil {
			d.Close()
			t.Errorf("Open with %+v: no error", s)
		}
	}
	d, err := Open("vulkan", WithSchedule(Schedule{MatMul: "gemv", GEMVColumns: 8, Conv: "gemm", ConvSplits: 3}))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	gpu := d.info.Type != "cpu"
	if c := d.caps(); c.schedule != scheduleGEMV || c.gemvColumns != 8 || !c.tiledConv || c.convSplits != 3 || c.tiledMatMul != gpu {
		t.Errorf("caps %+v; want the gemv schedule with 8 columns, convgemm with 3 splits, tiledMatMul %v", c, gpu)
	}
}

// TestSplitProducts checks which tiled products splitProducts splits and
// how: BERT-base's [128, 768] by [768, 768] projection, 24 tiles, in 10
// splits of 5 steps of 16 (240 workgroups), a product whose tiles fill a
// GPU and one too shallow to split left whole.
func TestSplitProducts(t *testing.T) {
	c := caps{tiledMatMul: true, maxElems: 1 << 30}
	for _, s := range []struct {
		a, b           []int64
		splits, groups int64
	}{
		{[]int64{128, 768}, []int64{768, 768}, 10, 240},
		{[]int64{1024, 256}, []int64{256, 1024}, 1, 256},
		{[]int64{128, 96}, []int64{96, 64}, 1, 2},
	} {
		g, ok := newMatMulGeom(s.a, s.b)
		if !ok {
			t.Fatalf("%v %v: no geometry", s.a, s.b)
		}
		ls := []*launch{g.launch(c, []slot{{false, 0}, {false, 1}, {false, 0}, {true, 0}, {false, 0}})}
		splitProducts(c, ls, []*planner.Step{{}})
		l := ls[0]
		if l.groups != s.groups {
			t.Errorf("%v %v: %d workgroups, want %d", s.a, s.b, l.groups, s.groups)
		}
		if s.splits == 1 {
			if len(l.then) != 0 || l.op != 1 {
				t.Errorf("%v %v: split (op %d, %d more dispatches), want it whole", s.a, s.b, l.op, len(l.then))
			}
			continue
		}
		elems := s.a[0] * s.b[1]
		if len(l.then) != 1 || l.op != matmulSplit|1 || l.then[0].op != matmulReduce || l.scratch != uint64(4*s.splits*elems) {
			t.Errorf("%v %v: op %d, %d more dispatches, %d bytes of scratch, want the split GEMM and its reduction over %d splits", s.a, s.b, l.op, len(l.then), l.scratch, s.splits)
		}
	}
}
