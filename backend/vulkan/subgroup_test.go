package vulkan

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/kerneltest"
	"github.com/onnxvk/onnxvk/internal/testenv"
)

// rowLengths are the row lengths of TestRowKernels: rows short enough for
// an invocation each, one subgroup's width on lavapipe and either side of
// it, either side of the widths of a workgroup (64 and 256, see
// rowWorkgroup), and rows of several thousand.
var rowLengths = []int64{1, 7, 8, 9, 33, 63, 64, 65, 255, 256, 257, 4099}

// rowCases returns the cases of the row kernels over rows of length n:
// along the last axis of [m, n] and, strided, along the first of [n, m],
// m 3, or 300 where each invocation takes a row (more rows than a
// workgroup has invocations). Inputs hold ties (whole numbers), and a NaN
// or -inf where the op must pass it on or step over it.
func rowCases(r *rand.Rand, n int64) []kerneltest.Case {
	var cs []kerneltest.Case
	m := int64(3)
	if n <= serialRowLen {
		m = 300
	}
	x := func(lo, hi float32, shape ...int64) kerneltest.Arg {
		return kerneltest.Arg{T: kerneltest.RandFloats(r, shape, lo, hi)}
	}
	// special sets element i of row 0 of a to v.
	special := func(a kerneltest.Arg, i int64, v float32) kerneltest.Arg {
		graph.View[float32](a.T)[i%n] = v
		return a
	}
	whole := func(a kerneltest.Arg) kerneltest.Arg {
		for i, v := range graph.View[float32](a.T) {
			graph.View[float32](a.T)[i] = float32(math.Round(float64(v)))
		}
		return a
	}
	for _, op := range []string{"Softmax", "LogSoftmax"} {
		for _, axis := range []int64{-1, 0} {
			shape := []int64{m, n}
			if axis == 0 {
				shape = []int64{n, m}
			}
			cs = append(cs, kerneltest.Case{Node: kerneltest.Node(op, []string{"x"}, kerneltest.IntAttr("axis", axis)), Opset: 13,
				Args: []kerneltest.Arg{x(-8, 8, shape...)}})
		}
		// A masked row: -inf where attention masks a key.
		masked := x(-8, 8, m, n)
		for i := range n / 3 {
			graph.View[float32](masked.T)[3*i] = float32(math.Inf(-1))
		}
		cs = append(cs, kerneltest.Case{Node: kerneltest.Node(op, []string{"x"}), Opset: 13, Args: []kerneltest.Arg{masked}})
	}
	cs = append(cs,
		kerneltest.Case{Node: kerneltest.Node("LayerNormalization", []string{"x", "scale", "b"}, kerneltest.IntAttr("axis", -1), kerneltest.FloatAttr("epsilon", 1e-3)),
			Opset: 17, Args: []kerneltest.Arg{x(5, 9, m, n), x(-2, 2, n), x(-2, 2, n)}},
		kerneltest.Case{Node: kerneltest.Node("RMSNormalization", []string{"x", "scale"}, kerneltest.IntAttr("axis", -1)),
			Opset: 23, Args: []kerneltest.Arg{x(-3, 3, m, n), x(-2, 2, n)}})
	for _, op := range []string{"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceLogSumExp", "ReduceL2"} {
		for _, axis := range []int64{1, 0} {
			shape := []int64{m, n}
			if axis == 0 {
				shape = []int64{n, m}
			}
			in := x(-3, 3, shape...)
			if op == "ReduceProd" {
				in = x(0.99, 1.01, shape...)
			}
			if op == "ReduceMax" || op == "ReduceMin" {
				in = special(in, n/2, float32(math.NaN()))
			}
			cs = append(cs, kerneltest.Case{Node: kerneltest.Node(op, []string{"x", "axes"}, kerneltest.IntAttr("keepdims", 0)), Opset: 18,
				Args: []kerneltest.Arg{in, kerneltest.ConstInts(axis)}})
		}
	}
	for _, op := range []string{"ArgMax", "ArgMin"} {
		for _, last := range []int64{0, 1} {
			for _, axis := range []int64{-1, 0} {
				shape := []int64{m, n}
				if axis == 0 {
					shape = []int64{n, m}
				}
				in := whole(x(-3, 3, shape...))
				if axis == -1 {
					in = special(in, n/3, float32(math.NaN()))
					in = special(in, 2*n/3, float32(math.NaN()))
				}
				cs = append(cs, kerneltest.Case{Node: kerneltest.Node(op, []string{"x"}, kerneltest.IntAttr("axis", axis), kerneltest.IntAttr("select_last_index", last)),
					Opset: 13, Args: []kerneltest.Arg{in}})
			}
		}
	}
	return cs
}

// TestRowKernels checks softmax.comp, layernorm.comp, reduce.comp and
// argmax.comp against the CPU kernels at rowLengths, in float32 and
// float16, with each reduction of Schedule.Rows: through subgroup
// operations (skipped where the device has none) and in the shared-memory
// tree. Each case must run the variant its schedule names.
func TestRowKernels(t *testing.T) {
	base := openTest(t)
	sample := testenv.NewSampler(3)
	for _, rows := range RowSchedules() {
		t.Run(rows, func(t *testing.T) {
			if rows == "subgroup" && !base.Info().SubgroupArithmetic {
				testenv.Skip(t, base.Info().Name+" has no subgroup arithmetic in compute shaders")
			}
			d, err := Open("vulkan", WithSchedule(Schedule{Rows: rows}))
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := d.Close(); err != nil {
					t.Error(err)
				}
			}()
			for _, n := range rowLengths {
				r := rand.New(rand.NewPCG(uint64(n), 3))
				for _, c := range rowCases(r, n) {
					modes := []kerneltest.Mode{kerneltest.FP32}
					if d.half.storage {
						modes = append(modes, kerneltest.Float16)
					}
					for _, mode := range modes {
						if !sample.Take() {
							continue
						}
						what := fmt.Sprintf("%s %s %s %s", c.Node.OpType, c, mode, rows)
						half, wide := c, c
						if mode == kerneltest.Float16 {
							var ok bool
							if half, wide, ok = kerneltest.Float16Case(c); !ok {
								t.Fatalf("%s: no float16 form", what)
							}
						}
						l, ok := lower(kerneltest.Canonical(t, half).Query(), d.caps())
						if !ok {
							t.Fatalf("%s: declined", what)
						}
						if l.subgroup != (rows == "subgroup") {
							t.Errorf("%s: runs %s with subgroup %t", what, l.shader, l.subgroup)
						}
						got, ok := kerneltest.RunOn(t, d, half)
						if !ok {
							t.Fatalf("%s: declined", what)
						}
						kerneltest.Compare(t, what, half, mode, got, kerneltest.Reference(t, wide))
					}
				}
			}
		})
	}
}

// TestRowSchedule checks that a device takes the subgroup reduction where
// it has subgroup arithmetic, and that forcing it elsewhere fails, and the
// workgroup widths of the subgroup reduction.
func TestRowSchedule(t *testing.T) {
	for size, want := range map[uint32]int64{0: 256, 1: 8, 4: 32, 8: 64, 16: 128, 32: 256, 64: 256, 128: 256} {
		if got := rowWorkgroup(size); got != want {
			t.Errorf("subgroups of %d: row workgroups of %d, want %d", size, got, want)
		}
	}
	base := openTest(t)
	if want := rowWorkgroup(base.Info().SubgroupSize); base.subgroupRows && base.caps().rowWorkgroup != want {
		t.Errorf("row workgroups of %d, want %d", base.caps().rowWorkgroup, want)
	}
	if base.subgroupRows != base.Info().SubgroupArithmetic {
		t.Errorf("subgroup rows %t on a device with subgroup arithmetic %t", base.subgroupRows, base.Info().SubgroupArithmetic)
	}
	without := &Device{info: base.info}
	without.info.SubgroupArithmetic = false
	if err := (Schedule{Rows: "subgroup"}).apply(without); err == nil {
		t.Error("subgroup rows forced on a device without subgroup arithmetic")
	}
	if err := (Schedule{Rows: "tree"}).apply(without); err != nil || without.subgroupRows {
		t.Errorf("tree rows: %v, subgroup %t", err, without.subgroupRows)
	}
	if err := (Schedule{Rows: "warp"}).apply(without); err == nil {
		t.Error("an unknown row schedule is accepted")
	}
}

// TestRowTiming times Softmax and LayerNormalization over [512, 4096]
// (ONNXVK_ROW_TIMING=1 runs it) under each reduction of Schedule.Rows,
// the two alternating run by run: the median device time of a Run
// (timestamp queries; wall time on a device without them) of each, and
// their ratio.
func TestRowTiming(t *testing.T) {
	testenv.SkipUnlessEnv(t, "ONNXVK_ROW_TIMING", "times the row kernels")
	base := openTest(t)
	if !base.Info().SubgroupArithmetic {
		testenv.Skip(t, base.Info().Name+" has no subgroup arithmetic in compute shaders")
	}
	const runs = 31
	shape := []int64{512, 4096}
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []*graph.Node{
		kerneltest.Node("Softmax", []string{"x"}, kerneltest.IntAttr("axis", -1)),
		kerneltest.Node("LayerNormalization", []string{"x", "scale", "b"}, kerneltest.IntAttr("axis", -1)),
	} {
		g := graph.NewGraph(n.OpType)
		g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(shape...))}}
		g.Initializers["scale"] = kerneltest.RandFloats(r, shape[1:], -2, 2)
		g.Initializers["b"] = kerneltest.RandFloats(r, shape[1:], -2, 2)
		n.Outputs = []string{"y"}
		g.Nodes = []*graph.Node{n}
		g.Outputs = []*graph.ValueInfo{{Name: "y"}}
		m := &graph.Model{Name: n.OpType, IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g}
		x := kerneltest.RandFloats(r, shape, -8, 8)
		var run []func() time.Duration
		for _, rows := range RowSchedules() {
			d, err := Open("vulkan", WithSchedule(Schedule{Rows: rows}))
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			run = append(run, timedRun(t, d, m, x))
		}
		med := medianTimes(run, 2, runs)
		line := fmt.Sprintf("%s %v:", n.OpType, shape)
		for k, rows := range RowSchedules() {
			line += fmt.Sprintf("  %s %.2f ms", rows, float64(med[k])/1e6)
		}
		t.Logf("%s; tree/subgroup %.2f", line, float64(med[1])/float64(med[0]))
	}
}

// timedRun compiles m on d and returns a function that runs it on inputs
// in (the graph's inputs in order) and returns the Run's device time from
// timestamp queries, or its wall time where the device has none.
func timedRun(t *testing.T, d *Device, m *graph.Model, in ...*graph.Tensor) func() time.Duration {
	prog, steps, f := CompileOn(t, d, m)
	return func() time.Duration {
		// A Run releases its inputs from the frame.
		for i, x := range in {
			f.Values[d.Name()][steps[0].In[i]] = x
		}
		start := time.Now()
		if err := prog.Run(context.Background(), f); err != nil {
			t.Fatal(err)
		}
		if dt := prog.(interface{ DeviceTime() time.Duration }).DeviceTime(); dt > 0 {
			return dt
		}
		return time.Since(start)
	}
}

// medianTimes calls each of run warm + runs times, alternating between
// them, and returns the median of each one's last runs times.
func medianTimes(run []func() time.Duration, warm, runs int) []time.Duration {
	times := make([][]time.Duration, len(run))
	for i := range warm + runs {
		for k, f := range run {
			if dt := f(); i >= warm {
				times[k] = append(times[k], dt)
			}
		}
	}
	med := make([]time.Duration, len(run))
	for k := range run {
		slices.Sort(times[k])
		med[k] = times[k][runs/2]
	}
	return med
}
