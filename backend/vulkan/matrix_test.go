package vulkan

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/onnxvk/onnxvk/backend/vulkan/internal/vk"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/kerneltest"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/planner"
)

// testMatrixUnits runs the kernel-test suite's float16 matrix products
// (MatMul, Gemm and the fused ones) and convolutions that convgemm.comp
// takes, whose shapes cross every tile edge, on the matrix units of
// base's device (matrixShaders["matmul"+halfSuffix]s), with two and four fragments a side a
// subgroup, unsplit and with their depth split in 3, and checks that
// both shaders ran. It skips where the device has no matrix units for
// fp16 products.
func testMatrixUnits(t *testing.T, base *Device, sample *testenv.Sampler) {
	if base.info.MatrixUnit[0] == 0 {
		// A device's lack, not a missing tool: Debian 12's lavapipe
		// (Mesa 22.3) has no VK_KHR_cooperative_matrix; Mesa 26's has
		// (docs/GPU.md).
		testenv.SkipDeclined(t, fmt.Sprintf("%s (%s) has no matrix units for fp16 products with fp32 sums (cooperative matrix extension: %v)",
			base.name, base.info.Name, base.info.CooperativeMatrix))
	}
	on := Schedule{MatMul: "tiled", Conv: "gemm", MatrixUnits: "on"}
	split, four := on, on
	split.MatMulSplits, split.ConvSplits = 3, 3
	four.MatrixFragments = 4
	fourSplit := split
	fourSplit.MatrixFragments = 4
	for _, s := range []Schedule{on, split, four, fourSplit} {
		t.Run(s.String(), func(t *testing.T) {
			d := openTest(t, WithSchedule(s))
			c := d.caps()
			gemms := func(kc kerneltest.Case) bool {
				l, ok := lower(kc.Query(), c)
				return ok && (l.runs("matmul") || l.runs("convgemm"))
			}
			kerneltest.Suite{Device: d, Mode: kerneltest.Float16, Declines: "vulkan-float16", Only: gemms, Sample: sample}.Run(t)
			for i, c := range alignedGEMMs() {
				half, wide, ok := kerneltest.Float16Case(c)
				if !ok {
					t.Fatalf("aligned case %d has no float16 form", i)
				}
				got, ok := kerneltest.RunOn(t, d, half)
				if !ok {
					t.Fatalf("aligned case %d (%s) declined", i, c.Node.OpType)
				}
				kerneltest.Compare(t, fmt.Sprintf("aligned %s %d", c.Node.OpType, i), half, kerneltest.Float16, got, kerneltest.Reference(t, wide))
			}
			d.mu.Lock()
			defer d.mu.Unlock()
			for _, shader := range matrixShaders {
				if !slices.ContainsFunc(slices.Collect(maps.Keys(d.pipelines)), func(k pipelineKey) bool { return k.shader == shader }) {
					t.Errorf("nothing ran on %s", shader)
				}
			}
		})
	}
}

// alignedGEMMs are products and convolutions whose rows run in multiples
// of 8 elements from multiples of 8, which the matrix-unit shaders read 8
// at a time (the kernel table's shapes, odd on purpose, mostly do not):
// batched and folded-batch products, b transposed, several tiles a side,
// and convolutions of depths 144 and 32 (a 1x1 one).
func alignedGEMMs() []kerneltest.Case {
	r := rand.New(rand.NewPCG(3, 4))
	rt := func(shape ...int64) kerneltest.Arg { return kerneltest.Arg{T: kerneltest.RandFloats(r, shape, -1, 1)} }
	w := func(shape ...int64) kerneltest.Arg {
		return kerneltest.Arg{T: kerneltest.RandFloats(r, shape, -1, 1), Const: true}
	}
	mm := kerneltest.Node("MatMul", []string{"a", "b"})
	return []kerneltest.Case{
		{Node: mm, Opset: 13, Args: []kerneltest.Arg{rt(3, 40, 64), rt(3, 64, 72)}},
		{Node: mm, Opset: 13, Args: []kerneltest.Arg{rt(2, 130, 64), w(64, 200)}},
		{Node: kerneltest.Node("Gemm", []string{"a", "b", "c"}, kerneltest.IntAttr("transB", 1)), Opset: 13,
			Args: []kerneltest.Arg{rt(40, 64), w(72, 64), w(72)}},
		{Node: kerneltest.Node("Conv", []string{"x", "w"}, kerneltest.IntsAttr("pads", 1, 1, 1, 1)), Opset: 11,
			Args: []kerneltest.Arg{rt(1, 16, 9, 9), w(24, 16, 3, 3)}},
		{Node: kerneltest.Node("Conv", []string{"x", "w", "b"}), Opset: 11, Args: []kerneltest.Arg{rt(2, 32, 7, 7), w(40, 32, 1, 1), w(40)}},
	}
}

// TestUseMatrixUnits checks which products useMatrixUnits moves to the
// matrix units and how: float16 ones of the tiled schedule, four
// subgroups a workgroup, in tiles of 4M × 4N, or 8M × 8N for a product of
// 256 such tiles or more where the shared memory holds them, or where
// forced; not float32 ones, gemv ones, nor any where the device has no
// matrix units. A float16 convolution's GEMM moves with its split-K,
// its reduction does not.
func TestUseMatrixUnits(t *testing.T) {
	f16 := func(s ...int64) *graph.Type { return graph.TensorType(graph.Float16, graph.ShapeOf(s...)) }
	f32 := func(s ...int64) *graph.Type { return graph.TensorType(graph.Float, graph.ShapeOf(s...)) }
	mm := &graph.Node{OpType: "MatMul", Inputs: []string{"a", "b"}, Outputs: []string{"y"}}
	c := caps{maxElems: 1 << 30, tiledMatMul: true, half16: true, subgroupSize: 32, matrixUnit: [3]uint32{16, 16, 16}, sharedMem: 48 << 10}
	small, four := c, c
	small.sharedMem = 16 << 10
	four.matrixFragments = 4
	for _, tc := range []struct {
		a, b      *graph.Type
		c         caps
		groups, f int64
	}{
		{f16(2, 130, 70), f16(2, 70, 90), c, 2 * 3 * 2, 2},
		{f16(64, 64), f16(64, 64), c, 1, 2},
		{f16(2048, 64), f16(64, 2048), c, 16 * 16, 4},
		{f16(2048, 64), f16(64, 2048), small, 32 * 32, 2},
		{f16(2, 130, 70), f16(2, 70, 90), four, 2 * 2 * 1, 4},
		{f32(130, 70), f32(70, 90), c, 0, 0},
		{f16(3, 70), f16(70, 90), c, 0, 0},
		{f16(130, 70), f16(70, 90), caps{maxElems: 1 << 30, tiledMatMul: true, half16: true, subgroupSize: 32}, 0, 0},
	} {
		l, ok := lower(planner.Query{Node: mm, Opset: 13, Inputs: []*graph.Type{tc.a, tc.b}}, tc.c)
		if !ok {
			t.Fatalf("%v × %v: not lowered", tc.a, tc.b)
		}
		ls := []*launch{l}
		useMatrixUnits(tc.c, ls)
		l = ls[0]
		what := fmt.Sprintf("%v × %v, units %v", tc.a, tc.b, tc.c.matrixUnit)
		if tc.groups == 0 {
			if l.shader == matrixShaders["matmul"+halfSuffix] {
				t.Errorf("%s: moved to the matrix units", what)
			}
			continue
		}
		if want := []int32{16, 16, 16, int32(tc.f)}; l.shader != matrixShaders["matmul"+halfSuffix] || l.groups != tc.groups || l.workgroup != 128 || !slices.Equal(l.specs, want) {
			t.Errorf("%s: shader %s, %d groups of %d, specs %v; want %s, %d groups of 128, specs %v",
				what, l.shader, l.groups, l.workgroup, l.specs, matrixShaders["matmul"+halfSuffix], tc.groups, want)
		}
	}
	// Subgroups of 8: an invocation of 32 would hold 16 units of a's
	// 8M × 8N tile's slices, over matrixUnitsHeld, so 4M × 4N; of 4, not
	// even those.
	for _, tc := range []struct {
		subgroup int64
		f        int32
	}{{8, 2}, {4, 0}} {
		narrow := c
		narrow.subgroupSize = tc.subgroup
		l, _ := lower(planner.Query{Node: mm, Opset: 13, Inputs: []*graph.Type{f16(2048, 64), f16(64, 2048)}}, narrow)
		ls := []*launch{l}
		useMatrixUnits(narrow, ls)
		moved := ls[0].shader == matrixShaders["matmul"+halfSuffix]
		if tc.f == 0 && moved || tc.f != 0 && (!moved || ls[0].specs[3] != tc.f || ls[0].workgroup != 4*tc.subgroup) {
			t.Errorf("subgroups of %d: shader %s, specs %v, workgroup %d; want %d fragments a side (0: not moved)",
				tc.subgroup, ls[0].shader, ls[0].specs, ls[0].workgroup, tc.f)
		}
	}
	conv := &graph.Node{OpType: "Conv", Inputs: []string{"x", "w"}, Outputs: []string{"y"},
		Attrs: attrs(&graph.Attribute{Name: "pads", Type: graph.AttrInts, Ints: []int64{1, 1, 1, 1}})}
	c.tiledConv = true
	l, ok := lower(planner.Query{Node: conv, Opset: 13, Inputs: []*graph.Type{f16(1, 64, 56, 56), f16(64, 64, 3, 3)}}, c)
	if !ok || l.shader != "convgemm"+halfSuffix || len(l.then) != 1 {
		t.Fatalf("Conv: lowered to %+v, %v; want convgemm_f16 split in K", l, ok)
	}
	ls := []*launch{l}
	useMatrixUnits(c, ls)
	// 64 channels by 56·56 positions: 49 tiles of 64×64 (too few for
	// 8M × 8N), in the 6 splits the lowering chose for them.
	if want := []int32{16, 16, 16, 2}; ls[0].shader != "convgemm_f16_cm" || ls[0].groups != 49*6 || !slices.Equal(ls[0].specs, want) ||
		ls[0].then[0].shader != "convgemm"+halfSuffix {
		t.Errorf("Conv: %s, %d groups, specs %v, then %s; want convgemm_f16_cm, %d groups, specs %v, then convgemm_f16",
			ls[0].shader, ls[0].groups, ls[0].specs, ls[0].then[0].shader, 49*6, want)
	}
}

// TestMatrixUnitShape checks which listed cooperative matrix shape Info
// takes: fp16 a and b, fp32 sums and result, subgroup scope, sides of 8,
// 16 or 32, 16×16×16 first.
func TestMatrixUnitShape(t *testing.T) {
	shape := func(m, n, k uint32, a, c, scope int32) vk.CooperativeMatrixPropertiesKHR {
		return vk.CooperativeMatrixPropertiesKHR{MSize: m, NSize: n, KSize: k, AType: a, BType: a, CType: c, ResultType: c, Scope: scope}
	}
	const f16, f32, sub = vk.ComponentTypeFloat16KHR, vk.ComponentTypeFloat32KHR, vk.ScopeSubgroupKHR
	for _, tc := range []struct {
		what   string
		shapes []vk.CooperativeMatrixPropertiesKHR
		want   [3]uint32
	}{
		{"16×16×16 after another", []vk.CooperativeMatrixPropertiesKHR{shape(16, 8, 16, f16, f32, sub), shape(16, 16, 16, f16, f32, sub)}, [3]uint32{16, 16, 16}},
		{"the first that fits", []vk.CooperativeMatrixPropertiesKHR{shape(8, 8, 8, f16, f16, sub), shape(8, 16, 16, f16, f32, sub), shape(8, 8, 8, f16, f32, sub)}, [3]uint32{8, 16, 16}},
		{"fp16 sums, a side of 24, workgroup scope", []vk.CooperativeMatrixPropertiesKHR{shape(16, 16, 16, f16, f16, sub), shape(24, 16, 16, f16, f32, sub), shape(16, 16, 16, f16, f32, 2)}, [3]uint32{}},
		{"none", nil, [3]uint32{}},
	} {
		if got := matrixUnit(tc.shapes); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.what, got, tc.want)
		}
	}
}
