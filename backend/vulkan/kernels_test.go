package vulkan

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/internal/kerneltest"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/planner"
)

// forcedSchedules are the schedules a device could pick, each forced:
// every schedule of matmul.comp, each Conv kernel, and convgemm.comp
// without split-K and with three splits (its shape's choice splits the
// deeper cases of the table); in the long suites also the gemv schedule
// at each column count (outside them, the table's shapes give it a few).
// Outside the long suites it leaves out the depthwise Conv kernel and
// flash-decoding, whose cases TestDepthwiseConv and TestFlashDecoding run.
func forcedSchedules() []Schedule {
	out := ForcedSchedules()
	if !testenv.Long() {
		return slices.DeleteFunc(out, func(s Schedule) bool {
			return s == Schedule{Conv: "depthwise"} || s == Schedule{Attention: "split"}
		})
	}
	for cols := int64(1); cols <= 256; cols *= 2 {
		out = append(out, Schedule{MatMul: "gemv", GEMVColumns: cols})
	}
	return out
}

// launchKey describes what l dispatches: each part's shader and its
// variant, op, workgroups and push constants.
func launchKey(l *launch) string {
	var b strings.Builder
	for _, p := range l.parts() {
		fmt.Fprintf(&b, "%s/%t/%d/%d/%x;", p.shader, p.subgroup, p.op, p.groups, p.push)
	}
	return b.String()
}

// capsOf returns the caps of base's device opened in the fp16 weight
// mode (when half) and with schedule s, without opening it.
func capsOf(t *testing.T, base *Device, half bool, s Schedule) caps {
	d := &Device{info: base.info}
	if err := s.apply(d); err != nil {
		t.Fatal(err)
	}
	d.half.on, d.half.storage, d.intDot = half, base.half.storage, base.intDot
	return d.caps()
}

// newCases returns whether a device with caps c lowers a case to other
// dispatches (or takes or declines it) than a device with each of others:
// the cases that a schedule or mode adds to what the others run.
func newCases(c caps, others ...caps) func(kerneltest.Case) bool {
	return func(kc kerneltest.Case) bool {
		q := kc.Query()
		l, ok := lower(q, c)
		for _, o := range others {
			m, okO := lower(q, o)
			if ok == okO && (!ok || launchKey(l) == launchKey(m)) {
				return false
			}
		}
		return true
	}
}

// TestKernels runs the kernel-test suite on the default Vulkan device:
// the whole table in fp32 as the device picks its schedules, then, in
// fp32 and in the fp16 weight mode, under each schedule of
// forcedSchedules, the cases whose dispatches differ from those of the
// suites before (on lavapipe, which takes the blocked and direct kernels,
// the tiled and gemv products, convgemm and dwconv; on a GPU, the blocked
// and direct ones; in fp16, the products and convolutions of constant
// weights). A case the device declines must be listed in kerneltest's
// declines/vulkan.txt.
func TestKernels(t *testing.T) {
	base := openTest(t)
	t.Run("fp32 device", func(t *testing.T) {
		kerneltest.Suite{Device: base, Mode: kerneltest.FP32, Declines: "vulkan", Sample: testenv.NewSampler(3)}.Run(t)
	})
	// The suites of forced schedules and of the fp16 mode share a
	// sampler: between them they run a quarter of their cases outside the
	// long suites.
	forced := testenv.NewSampler(4)
	for _, mode := range []kerneltest.Mode{kerneltest.FP32, kerneltest.HalfWeights} {
		opts := []OpenOption{}
		if mode == kerneltest.HalfWeights {
			opts = append(opts, WithFP16())
		}
		for _, s := range append([]Schedule{{}}, forcedSchedules()...) {
			if s == (Schedule{}) && mode == kerneltest.FP32 {
				continue
			}
			t.Run(mode.String()+" "+s.String(), func(t *testing.T) {
				d, err := Open("vulkan", append(opts, WithSchedule(s))...)
				if err != nil {
					t.Fatal(err)
				}
				defer func() {
					if err := d.Close(); err != nil {
						t.Error(err)
					}
				}()
				if on, why := d.FP16(); mode == kerneltest.HalfWeights && !on {
					testenv.Skip(t, "no fp16 weight mode: "+why)
				}
				half := mode == kerneltest.HalfWeights
				others := []caps{capsOf(t, base, false, Schedule{})}
				if half && s != (Schedule{}) {
					others = append(others, capsOf(t, base, false, s), capsOf(t, base, true, Schedule{}))
				}
				kerneltest.Suite{Device: d, Mode: mode, Declines: "vulkan", Only: newCases(d.caps(), others...), Sample: forced}.Run(t)
			})
		}
	}
	kerneltest.CheckCasesUnchanged(t)
}

// TestKernelsFloat16 runs the kernel-test suite in the Float16 mode on
// the default Vulkan device: every case of float32 tensors made float16,
// as the device picks its schedules, then, in the long suites, under each
// schedule of forcedSchedules the cases whose dispatches it changes, so
// that the float16 variant of every schedule (the blocked, tiled and gemv
// products, the direct and implicit-GEMM convolutions, split-K) meets the
// table's shapes, which cross every tile edge: a third of the shaders
// lavapipe compiles for this package, which TestKernels runs in float32
// in every run. A case the device declines must be listed in
// kerneltest's declines/vulkan-float16.txt.
func TestKernelsFloat16(t *testing.T) {
	base := openTest(t)
	if !base.half.storage {
		testenv.Skip(t, base.Decline(planner.Query{Inputs: []*graph.Type{graph.TensorType(graph.Float16, graph.ShapeOf(1))}}))
	}
	sample := testenv.NewSampler(3)
	t.Run("device", func(t *testing.T) {
		kerneltest.Suite{Device: base, Mode: kerneltest.Float16, Declines: "vulkan-float16", Sample: sample}.Run(t)
	})
	t.Run("matrix units", func(t *testing.T) {
		testMatrixUnits(t, base, sample)
	})
	t.Run("forced schedules", func(t *testing.T) {
		testenv.SkipLong(t)
		for _, s := range forcedSchedules() {
			t.Run(s.String(), func(t *testing.T) {
				d, err := Open("vulkan", WithSchedule(s))
				if err != nil {
					t.Fatal(err)
				}
				defer func() {
					if err := d.Close(); err != nil {
						t.Error(err)
					}
				}()
				only := newCases(d.caps(), capsOf(t, base, false, Schedule{}))
				kerneltest.Suite{Device: d, Mode: kerneltest.Float16, Declines: "vulkan-float16", Only: only, Sample: sample}.Run(t)
			})
		}
	})
	kerneltest.CheckCasesUnchanged(t)
}

// TestKernelTableCoversEveryKernel checks that kerneltest.Table has an
// entry for every op the Vulkan backend lowers, and none for an op it
// does not.
func TestKernelTableCoversEveryKernel(t *testing.T) {
	type key struct{ domain, op string }
	want := map[key]bool{{"", "Clip"}: true}
	for op := range lowerers {
		want[key{"", op}] = true
	}
	for op := range fusedLowerers {
		want[key{ops.FusedDomain, op}] = true
	}
	for op := range unaryOps {
		want[key{"", op}] = true
	}
	for op := range binaryOps {
		want[key{"", op}] = true
	}
	have := map[key]bool{}
	for _, e := range kerneltest.Table {
		k := key{e.Domain, e.Op}
		if have[k] {
			t.Errorf("%s: listed twice in kerneltest.Table", e)
		}
		have[k] = true
		if !want[k] {
			t.Errorf("%s: in kerneltest.Table but no Vulkan kernel lowers it", e)
		}
	}
	for _, k := range slices.SortedFunc(maps.Keys(want), func(a, b key) int { return strings.Compare(a.domain+"."+a.op, b.domain+"."+b.op) }) {
		if !have[k] {
			t.Errorf("%s: lowered by the Vulkan backend but missing from kerneltest.Table", kerneltest.Op{Domain: k.domain, Op: k.op})
		}
	}
}
