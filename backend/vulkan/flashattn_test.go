package vulkan

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/kerneltest"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/planner"
)

// TestFlashAttention runs every Attention and ScaledDotProductAttention
// case of the kernel-test table (those of kerneltest's
// flashAttentionCases cross each tile edge of flashattn.comp) on the
// default device in fp32, and in the Float16 mode (where the softmax's
// input and output are rounded to float16, the kernel's two-pass form)
// every second one outside the long suites, and checks that every
// Attention case of more than one query row whose scores are no output
// runs on flashattn.comp, not on attention.comp.
func TestFlashAttention(t *testing.T) {
	base := openTest(t)
	for _, mode := range []kerneltest.Mode{kerneltest.FP32, kerneltest.Float16} {
		t.Run(mode.String(), func(t *testing.T) {
			declines := modeDeclines(t, base, mode)
			flash := 0
			only := func(c kerneltest.Case) bool {
				switch c.Node.OpType {
				case "ScaledDotProductAttention":
					// A decline is checked against the list.
					if l, ok := lower(c.Query(), base.caps()); ok && !strings.HasPrefix(l.shader, "flashattn") {
						t.Errorf("%v: lowered to %s, not flashattn", c, l.shader)
					}
					return true
				case "Attention":
				default:
					return false
				}
				l, ok := lower(c.Query(), base.caps())
				// Q is [batch, heads, seq, size] or [batch, seq, heads·size].
				qs := c.Args[0].T.Shape
				rows := !(len(c.Node.Outputs) > 3 && c.Node.Outputs[3] != "") && qs[len(qs)-2] > 1
				switch {
				case !ok:
					t.Errorf("%v: not lowered", c)
				case rows && !strings.HasPrefix(l.shader, "flashattn"):
					t.Errorf("%v: lowered to %s, not flashattn", c, l.shader)
				case rows:
					flash++
				}
				return true
			}
			// Float16 takes every second case outside the long suites (a
			// second the run on lavapipe).
			var sample *testenv.Sampler
			if mode == kerneltest.Float16 {
				sample = testenv.NewSampler(2)
			}
			kerneltest.Suite{Device: base, Mode: mode, Declines: declines, Only: only, Sample: sample}.Run(t)
			if flash < 100 {
				t.Errorf("%d cases on flashattn.comp, want the table's sweep of at least 100", flash)
			}
		})
	}
}

// TestFlashDecoding runs the Attention and ScaledDotProductAttention
// cases of the kernel-test table that flash-decoding splits, on the
// default device with the "split" schedule (a GPU's own choice, which
// lavapipe does not make), in fp32 and in the Float16 mode, and checks
// that they are the table's flash-decoding cases at least: each lowered
// to flashattn.comp's split pass and its combining dispatch. Every case
// is lowered and checked; a third of them run outside the long suites.
func TestFlashDecoding(t *testing.T) {
	base := openTest(t)
	d := openTest(t, WithSchedule(Schedule{Attention: "split"}))
	for _, mode := range []kerneltest.Mode{kerneltest.FP32, kerneltest.Float16} {
		t.Run(mode.String(), func(t *testing.T) {
			declines := modeDeclines(t, base, mode)
			split := 0
			only := func(c kerneltest.Case) bool {
				if c.Node.OpType != "Attention" && c.Node.OpType != "ScaledDotProductAttention" {
					return false
				}
				l, ok := lower(c.Query(), d.caps())
				if !ok || l.op != flashSplit {
					return false
				}
				if !strings.HasPrefix(l.shader, "flashattn") || len(l.then) == 0 || l.then[0].op != flashCombine || l.scratch == 0 {
					t.Errorf("%v: split pass without its combining dispatch", c)
				}
				split++
				return true
			}
			kerneltest.Suite{Device: d, Mode: mode, Declines: declines, Only: only, Sample: testenv.NewSampler(3)}.Run(t)
			// The table's flash-decoding cases: 18 of Attention, 2 of
			// ScaledDotProductAttention.
			if split < 20 {
				t.Errorf("%d cases split, want the table's 20 at least", split)
			}
		})
	}
}

// TestFlashWide runs every Attention and ScaledDotProductAttention case
// of the kernel-test table under the "wide" schedule, flashattn.comp's
// GPU configuration (workgroups of flashWideWG invocations, fewer query
// rows a workgroup, dot products spread over lanes), which lavapipe does
// not pick itself, in fp32 and in the Float16 mode (every second case
// outside the long suites), and checks that every case of more than one
// query row whose scores are no output takes it, with dot groups of 1, 2
// and 4 lanes among them, and that the cases that split keep
// flash-decoding.
func TestFlashWide(t *testing.T) {
	base := openTest(t)
	if !base.info.SubgroupShuffle {
		testenv.Skip(t, base.info.Name+" has no subgroup shuffles in compute shaders")
	}
	d := openTest(t, WithSchedule(Schedule{Attention: "wide"}))
	for _, mode := range []kerneltest.Mode{kerneltest.FP32, kerneltest.Float16} {
		t.Run(mode.String(), func(t *testing.T) {
			declines := modeDeclines(t, base, mode)
			wide, split := 0, 0
			groups := map[uint32]int{}
			only := func(c kerneltest.Case) bool {
				if c.Node.OpType != "Attention" && c.Node.OpType != "ScaledDotProductAttention" {
					return false
				}
				l, ok := lower(c.Query(), d.caps())
				if !ok || !strings.HasPrefix(l.shader, "flashattn") {
					return true
				}
				if l.op == flashSplit {
					split++
				}
				if l.subgroup != (l.workgroup == flashWideWG) {
					t.Errorf("%v: subgroup variant %t with a workgroup of %d", c, l.subgroup, l.workgroup)
				}
				// The tiles word of the push constants (see the shader).
				tiles := binary.LittleEndian.Uint32(l.push[60:])
				switch rows := tiles & 31; {
				case rows > 1 && !l.subgroup:
					t.Errorf("%v: %d query rows a workgroup outside the GPU configuration", c, rows)
				case rows > 1:
					wide++
					groups[1<<(tiles>>14&3)]++
				}
				return true
			}
			kerneltest.Suite{Device: d, Mode: mode, Declines: declines, Only: only, Sample: testenv.NewSampler(2)}.Run(t)
			if wide < 100 || groups[1] == 0 || groups[2] == 0 || groups[4] == 0 || split == 0 {
				t.Errorf("%d cases in the GPU configuration (dot groups %v), %d split; want the table's sweep of at least 100, groups of 1, 2 and 4 lanes, and flash-decoding", wide, groups, split)
			}
		})
	}
}

// TestFlashTiles checks flashattn.comp's configurations: lavapipe's
// (and a GPU's decode steps), and the GPU one's rows, key tiles and dot
// groups on a GPU of 32-wide subgroups.
func TestFlashTiles(t *testing.T) {
	cpu := caps{sharedMem: 1 << 15, subgroupSize: 8}
	gpu := caps{sharedMem: 1 << 16, subgroupSize: 32, wideAttention: true}
	for _, tc := range []struct {
		name                 string
		c                    caps
		heads, sq, dim, vdim int
		want                 flashTile
	}{
		{"bert on lavapipe", cpu, 12, 128, 64, 64, flashTile{64, 16, 63, 1}},
		{"bert", gpu, 12, 128, 64, 64, flashTile{256, 4, 63, 1}},
		{"many heads", gpu, 96, 512, 64, 64, flashTile{256, 16, 63, 1}},
		{"some heads", gpu, 32, 100, 64, 64, flashTile{256, 8, 63, 1}},
		{"wide heads", gpu, 2, 17, 128, 128, flashTile{256, 2, 31, 4}},
		{"one tile", gpu, 2, 5, 128, 128, flashTile{256, 8, 31, 1}},
		{"two rows", gpu, 2, 2, 64, 64, flashTile{256, 2, 63, 2}},
		{"narrow values", gpu, 1, 200, 8, 8, flashTile{256, 16, 64, 1}},
		{"decode", gpu, 8, 1, 64, 64, flashTile{64, 1, 256, 1}},
		{"small subgroups", caps{sharedMem: 1 << 16, subgroupSize: 2, wideAttention: true}, 2, 17, 128, 128, flashTile{256, 2, 31, 2}},
	} {
		got, ok := flashTiles(tc.c, tc.heads, tc.sq, tc.dim, tc.vdim)
		if !ok || got != tc.want {
			t.Errorf("%s: flashTiles(%d heads, %d rows, %d, %d) = %+v, %t; want %+v", tc.name, tc.heads, tc.sq, tc.dim, tc.vdim, got, ok, tc.want)
		}
	}
}

// TestFlashChunks checks flash-decoding's split rule: about flashWanted
// workgroups, chunks of at least flashChunkKeys keys in whole tiles, at
// least two of them.
func TestFlashChunks(t *testing.T) {
	for _, tc := range []struct{ items, total, tk, per, chunks int }{
		{8, 2048, 256, 1, 8},       // 256-key chunks: 64 workgroups
		{8, 8192, 256, 1, 32},      // 32 chunks a head: 256 workgroups
		{1, 1 << 20, 256, 16, 256}, // 4096-key chunks
		{4, 2839, 63, 5, 10},       // 315 keys: 5 tiles of 63
		{2, 256, 256, 0, 1},        // one chunk: no split
		{2, 257, 256, 1, 2},        // the last chunk one key
		{256, 1 << 20, 256, 0, 1},  // the heads fill the device
		{0, 4096, 256, 0, 1},       // no batch
	} {
		per, chunks := flashChunks(tc.items, tc.total, tc.tk)
		if per != tc.per || chunks != tc.chunks {
			t.Errorf("flashChunks(%d, %d, %d) = %d, %d; want %d, %d", tc.items, tc.total, tc.tk, per, chunks, tc.per, tc.chunks)
		}
	}
}

// modeDeclines returns the declines list of base's device in mode,
// skipping t in the Float16 mode where the device has no 16-bit storage.
func modeDeclines(t *testing.T, base *Device, mode kerneltest.Mode) string {
	if mode != kerneltest.Float16 {
		return "vulkan"
	}
	if !base.half.storage {
		testenv.Skip(t, base.Decline(planner.Query{Inputs: []*graph.Type{graph.TensorType(graph.Float16, graph.ShapeOf(1))}}))
	}
	return "vulkan-float16"
}

// TestAttentionTiming times Attention under each of its schedules
// (flashattn.comp, attention.comp, flash-decoding: "split", and
// flashattn.comp's GPU configuration: "wide", where the device has
// subgroup shuffles), alternating run by run: the median device time of
// 11 Runs each, from timestamp queries where the device has them. The
// shapes: Q, K and V of [1, 8, 512, 64], without and with is_causal, and
// of BERT-base's [1, 12, 128, 64], decode steps, one query of [1, 8, 1,
// 64] against K and V of [1, 8, 2048, 64], [1, 8, 8192, 64] and [1, 8,
// 32768, 64], and 4 queries against [1, 8, 8192, 64].
func TestAttentionTiming(t *testing.T) {
	testenv.SkipUnlessEnv(t, "ONNXVK_ATTN_TIMING", "times the Attention kernels")
	const runs = 11
	r := rand.New(rand.NewPCG(1, 2))
	shuffle := openTest(t).info.SubgroupShuffle
	for _, tc := range []struct {
		q, kv  []int64
		causal int64
	}{{[]int64{1, 8, 512, 64}, []int64{1, 8, 512, 64}, 0}, {[]int64{1, 8, 512, 64}, []int64{1, 8, 512, 64}, 1},
		{[]int64{1, 12, 128, 64}, []int64{1, 12, 128, 64}, 0}, {[]int64{1, 8, 1, 64}, []int64{1, 8, 2048, 64}, 0}, {[]int64{1, 8, 1, 64}, []int64{1, 8, 8192, 64}, 0},
		{[]int64{1, 8, 4, 64}, []int64{1, 8, 8192, 64}, 0}, {[]int64{1, 8, 1, 64}, []int64{1, 8, 32768, 64}, 0}} {
		n := kerneltest.Node("Attention", []string{"q", "k", "v"}, kerneltest.IntAttr("is_causal", tc.causal))
		g := graph.NewGraph("attention")
		for i, name := range n.Inputs {
			shape := tc.kv
			if i == 0 {
				shape = tc.q
			}
			g.Inputs = append(g.Inputs, &graph.ValueInfo{Name: name, Type: graph.TensorType(graph.Float, graph.ShapeOf(shape...))})
		}
		g.Nodes = []*graph.Node{n}
		g.Outputs = []*graph.ValueInfo{{Name: "y"}}
		m := &graph.Model{Name: "attention", IRVersion: 8, Opsets: map[string]int64{"": 23}, Graph: g}
		in := []*graph.Tensor{kerneltest.RandFloats(r, tc.q, -1, 1), kerneltest.RandFloats(r, tc.kv, -1, 1), kerneltest.RandFloats(r, tc.kv, -1, 1)}
		var run []func() time.Duration
		var kernels []string
		for _, kernel := range AttentionSchedules() {
			if kernel == "wide" && !shuffle {
				continue
			}
			d, err := Open("vulkan", WithSchedule(Schedule{Attention: kernel}))
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			run, kernels = append(run, timedRun(t, d, m, in...)), append(kernels, kernel)
		}
		med := medianTimes(run, 1, runs)
		line := fmt.Sprintf("Attention q%v kv%v is_causal=%d:", tc.q, tc.kv, tc.causal)
		for k, kernel := range kernels {
			line += fmt.Sprintf("  %s %.2f ms", kernel, float64(med[k])/1e6)
		}
		line += fmt.Sprintf("; rows/flash %.2f, rows/split %.2f", float64(med[1])/float64(med[0]), float64(med[1])/float64(med[2]))
		if len(kernels) > 3 {
			line += fmt.Sprintf(", flash/wide %.2f", float64(med[0])/float64(med[3]))
		}
		t.Log(line)
	}
}

// TestCommonBatch checks commonBatch on the batch factors of the layouts
// the planner's fusion writes, with masks broadcast over some axes, and
// that it refuses incompatible ones.
func TestCommonBatch(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lists [5][][2]int64
		want  []batchAxis
	}{
		// nn.MultiheadAttention's B·H heads read from the packed
		// projection (B at 48, then H at 8) and written as one axis, a
		// mask broadcast over them.
		{"packed heads", [5][][2]int64{{{2, 48}, {2, 8}}, {{2, 48}, {2, 8}}, {{2, 48}, {2, 8}}, {{4, 8}}, {{4, 0}}},
			[]batchAxis{{2, [5]int64{48, 48, 48, 16, 0}}, {2, [5]int64{8, 8, 8, 8, 0}}}},
		// [B, H] heads that every operand walks row-major: one axis; a
		// mask of its own per (B, H) keeps it one.
		{"merged", [5][][2]int64{{{2, 96}, {3, 32}}, {{2, 96}, {3, 32}}, {{2, 60}, {3, 20}}, {{2, 96}, {3, 32}}, {{2, 105}, {3, 35}}},
			[]batchAxis{{6, [5]int64{32, 32, 20, 32, 35}}}},
		// BERT's padding mask [B, 1, 1, N] splits the axis the operands
		// would merge: B, then H.
		{"padding mask", [5][][2]int64{{{2, 96}, {3, 32}}, {{2, 96}, {3, 32}}, {{2, 60}, {3, 20}}, {{2, 96}, {3, 32}}, {{2, 7}, {3, 0}}},
			[]batchAxis{{2, [5]int64{96, 96, 60, 96, 7}}, {3, [5]int64{32, 32, 20, 32, 0}}}},
		{"ones dropped", [5][][2]int64{{{1, 7}, {5, 3}}, {{5, 3}}, {{5, 4}, {1, 1}}, {{5, 2}}, {{5, 0}}},
			[]batchAxis{{5, [5]int64{3, 3, 4, 2, 0}}}},
		{"none", [5][][2]int64{}, nil},
		{"incompatible", [5][][2]int64{{{2, 9}, {3, 3}}, {{3, 2}, {2, 1}}, {{6, 1}}, {{6, 1}}, {{6, 0}}}, nil},
		{"empty", [5][][2]int64{{{0, 1}}, {{0, 1}}, {{0, 1}}, {{0, 1}}, {{0, 0}}}, nil},
	} {
		got, ok := commonBatch(tc.lists)
		if wantOK := tc.want != nil || tc.name == "none"; ok != wantOK || !slices.Equal(got, tc.want) {
			t.Errorf("%s: commonBatch(%v) = %v, %t; want %v, %t", tc.name, tc.lists, got, ok, tc.want, wantOK)
		}
	}
}

// TestKVGroups checks kvGroups on the axes commonBatch gives
// grouped-query attention: Q's 8 heads over K's and V's 2 (a stride-0
// repeat of 4 inside them) become one axis of 8 heads reading 2, after
// a batch of 3; one K and V head for all; a repeat whose outer axis Q
// does not walk as one axis with it (more than two axes) is refused; no
// repeat leaves the axes, padded to two.
func TestKVGroups(t *testing.T) {
	for _, tc := range []struct {
		name string
		bs   []batchAxis
		want []batchAxis
		hkv  int64
	}{
		{"batch and groups", []batchAxis{{3, [5]int64{2048, 1024, 1024, 2048, 0}}, {2, [5]int64{1024, 512, 512, 1024, 0}}, {4, [5]int64{256, 0, 0, 256, 0}}},
			[]batchAxis{{3, [5]int64{2048, 1024, 1024, 2048, 0}}, {8, [5]int64{256, 512, 512, 256, 0}}}, 2},
		{"one kv head", []batchAxis{{4, [5]int64{256, 0, 0, 256, 64}}},
			[]batchAxis{{1, [5]int64{}}, {4, [5]int64{256, 0, 0, 256, 64}}}, 4},
		{"split heads", []batchAxis{{3, [5]int64{2048, 1024, 1024, 2048, 0}}, {2, [5]int64{999, 512, 512, 1024, 0}}, {4, [5]int64{256, 0, 0, 256, 0}}}, nil, 0},
		{"no repeat", []batchAxis{{6, [5]int64{32, 32, 20, 32, 35}}},
			[]batchAxis{{1, [5]int64{}}, {6, [5]int64{32, 32, 20, 32, 35}}}, 6},
	} {
		got, hkv, ok := kvGroups(tc.bs)
		if ok != (tc.want != nil) || !slices.Equal(got, tc.want) || hkv != tc.hkv {
			t.Errorf("%s: kvGroups = %v, %d, %t; want %v, %d", tc.name, got, hkv, ok, tc.want, tc.hkv)
		}
	}
}
