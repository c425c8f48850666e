package onnxvk_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/graph"
)

// kvModel appends x [1, T, 4] to past [1, P, 4] (present) and computes
// z = softmax(reshape(present, [n, 4]) @ w + range(n)ᵀ) for n = P+T, the
// row count read back through Shape → Gather → Unsqueeze → Concat →
// Reshape and Range: a shape subgraph that depends on both variable sizes.
func kvModel() *graph.Model {
	g := graph.NewGraph("kv")
	g.Inputs = []*graph.ValueInfo{
		{Name: "x", Type: graph.TensorType(graph.Float, graph.Shape{graph.DimOf(1), graph.SymDim("T"), graph.DimOf(4)})},
		{Name: "past", Type: graph.TensorType(graph.Float, graph.Shape{graph.DimOf(1), graph.SymDim("P"), graph.DimOf(4)})},
	}
	g.Outputs = []*graph.ValueInfo{{Name: "present"}, {Name: "z"}}
	w := make([]float32, 16)
	for i := range w {
		w[i] = float32(i%5)/4 - 0.5
	}
	g.Initializers["w"], _ = graph.FromSlice(graph.Float, []int64{4, 4}, w)
	g.Initializers["one"], _ = graph.FromSlice(graph.Int64, nil, []int64{1})
	g.Initializers["zero"], _ = graph.FromSlice(graph.Int64, nil, []int64{0})
	g.Initializers["four"], _ = graph.FromSlice(graph.Int64, []int64{1}, []int64{4})
	g.Initializers["axis0"], _ = graph.FromSlice(graph.Int64, []int64{1}, []int64{0})
	g.Initializers["axis1"], _ = graph.FromSlice(graph.Int64, []int64{1}, []int64{1})
	node := func(op string, in, out []string, attrs ...*graph.Attribute) *graph.Node {
		n := &graph.Node{Name: out[0], OpType: op, Inputs: in, Outputs: out, Attrs: map[string]*graph.Attribute{}}
		for _, a := range attrs {
			n.Attrs[a.Name] = a
		}
		return n
	}
	axis := func(v int64) *graph.Attribute { return &graph.Attribute{Name: "axis", Type: graph.AttrInt, I: v} }
	g.Nodes = []*graph.Node{
		node("Concat", []string{"past", "x"}, []string{"present"}, axis(1)),
		node("Shape", []string{"present"}, []string{"shape"}),
		node("Gather", []string{"shape", "one"}, []string{"n"}, axis(0)),
		node("Range", []string{"zero", "n", "one"}, []string{"rows"}),
		node("Cast", []string{"rows"}, []string{"rowsf"}, &graph.Attribute{Name: "to", Type: graph.AttrInt, I: int64(graph.Float)}),
		node("Unsqueeze", []string{"rowsf", "axis1"}, []string{"col"}),
		node("Unsqueeze", []string{"n", "axis0"}, []string{"n1"}),
		node("Concat", []string{"n1", "four"}, []string{"flat"}, axis(0)),
		node("Reshape", []string{"present", "flat"}, []string{"m"}),
		node("MatMul", []string{"m", "w"}, []string{"mw"}),
		node("Add", []string{"mw", "col"}, []string{"y"}),
		node("Softmax", []string{"y"}, []string{"z"}, axis(-1)),
	}
	for i, n := range g.Nodes {
		n.Index = i
	}
	return &graph.Model{Name: "kv", IRVersion: 8, Opsets: map[string]int64{"": 14}, Graph: g}
}

// kvInputs returns inputs of kvModel with past length p and t new rows,
// their values made from seed.
func kvInputs(t *testing.T, p, rows, seed int) map[string]*onnxvk.Tensor {
	t.Helper()
	fill := func(n int, at int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32((i*7+at*3+seed)%13)/6 - 1
		}
		return v
	}
	x, err := onnxvk.NewTensor([]int64{1, int64(rows), 4}, fill(rows*4, 1))
	require.NoError(t, err)
	past, err := onnxvk.NewTensor([]int64{1, int64(p), 4}, fill(p*4, 2))
	require.NoError(t, err)
	return map[string]*onnxvk.Tensor{"x": x, "past": past}
}

// requireClose fails unless got and want have the same outputs, with
// equal shapes and values within tol.
func requireClose(t *testing.T, want, got map[string]*onnxvk.Tensor, tol float64, msg string) {
	t.Helper()
	for name, w := range want {
		require.Equal(t, w.Shape(), got[name].Shape(), "%s: output %s", msg, name)
		wv, err := onnxvk.Data[float32](w)
		require.NoError(t, err)
		gv, err := onnxvk.Data[float32](got[name])
		require.NoError(t, err)
		for i := range wv {
			if math.Abs(float64(wv[i]-gv[i])) > tol {
				t.Fatalf("%s: %s[%d] is %g, the concrete plan's %g", msg, name, i, gv[i], wv[i])
			}
		}
	}
}

// kvSessions opens two sessions of kvModel on dev ("cpu" or "vulkan"):
// one with shape classes, and one that plans each set of sizes on its
// own (WithoutShapeClasses), the reference.
func kvSessions(t *testing.T, dev string) (sess, ref *onnxvk.Session) {
	t.Helper()
	if dev == "vulkan" {
		return vulkanSession(t, kvModel()), vulkanSession(t, kvModel(), onnxvk.WithoutShapeClasses())
	}
	sess, err := onnxvk.NewSession(kvModel(), onnxvk.WithDevice("cpu"))
	require.NoError(t, err)
	t.Cleanup(func() { sess.Close() })
	ref, err = onnxvk.NewSession(kvModel(), onnxvk.WithDevice("cpu"), onnxvk.WithoutShapeClasses())
	require.NoError(t, err)
	t.Cleanup(func() { ref.Close() })
	return sess, ref
}

// TestShapeClassMatchesConcretePlans runs kvModel for past lengths 0..40
// (one new row) and then new row counts 1..12 (past 3) on one session, on
// the CPU and on Vulkan: the outputs equal those of a concrete plan made
// for each size on its own (WithoutShapeClasses), and the session compiles
// three plans in all: one for the first sizes, then one per variable size
// that changed alone (P, then T). On Vulkan every Run is one submission,
// the class plans' too: their Shape → Gather → Range chains are computed
// on the host once per binding, and feed the GPU program as constants.
func TestShapeClassMatchesConcretePlans(t *testing.T) {
	for _, dev := range []string{"cpu", "vulkan"} {
		t.Run(dev, func(t *testing.T) {
			sess, ref := kvSessions(t, dev)
			ctx := context.Background()
			check := func(p, rows int) {
				in := kvInputs(t, p, rows, p+rows)
				want, err := ref.Run(ctx, in)
				require.NoError(t, err)
				before := sess.Counters()
				got, err := sess.Run(ctx, in)
				require.NoError(t, err)
				requireClose(t, want, got, 1e-6, fmt.Sprintf("P=%d T=%d", p, rows))
				if dev == "vulkan" {
					require.Equal(t, int64(1), sess.Counters().Sub(before).Submits, "submissions of the Run at P=%d T=%d", p, rows)
				}
			}
			for p := range 41 {
				check(p, 1)
			}
			for rows := 1; rows <= 12; rows++ {
				check(3, rows)
			}
			st := sess.PlanStats()
			require.Equal(t, int64(3), st.Compiled, "plans compiled: %+v", st)
			require.Equal(t, int64(2), st.ClassPlans, "class plans compiled: %+v", st)
			require.Equal(t, int64(41+12), ref.PlanStats().Compiled, "concrete plans compiled")
		})
	}
}

// TestShapeClassConcurrentRuns runs kvModel from 8 goroutines at once on
// one session, each with past lengths of its own, against the outputs of
// concrete plans computed before, on the CPU and on Vulkan, where the
// class plan's programs lower each length as its Runs come (run it with
// -race).
func TestShapeClassConcurrentRuns(t *testing.T) {
	for _, dev := range []string{"cpu", "vulkan"} {
		t.Run(dev, func(t *testing.T) {
			sess, ref := kvSessions(t, dev)
			ctx := context.Background()
			const workers, each = 8, 12
			want := map[int]map[string]*onnxvk.Tensor{}
			for p := range workers * each {
				var err error
				want[p], err = ref.Run(ctx, kvInputs(t, p, 1, p))
				require.NoError(t, err)
			}
			var wg sync.WaitGroup
			errs := make(chan error, workers)
			for w := range workers {
				wg.Go(func() {
					for k := range each {
						p := k*workers + w
						got, err := sess.Run(ctx, kvInputs(t, p, 1, p))
						if err != nil {
							errs <- err
							return
						}
						wz, _ := onnxvk.Data[float32](want[p]["z"])
						gz, _ := onnxvk.Data[float32](got["z"])
						for i := range wz {
							if wz[i] != gz[i] {
								errs <- fmt.Errorf("P=%d: z[%d] is %g, the concrete plan's %g", p, i, gz[i], wz[i])
								return
							}
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			require.LessOrEqual(t, sess.PlanStats().Compiled, int64(workers+1), "plans compiled")
		})
	}
}

// TestPlanCacheByteBudget runs kvModel on Vulkan for 12 past lengths, each
// its own plan (WithoutShapeClasses), under a plan cache budget smaller
// than one plan: every new plan evicts the one before, which frees its
// device memory, so one plan stays cached and the memory in use after the
// last Run is within 10% of what it was after the first (the folded
// constants each plan uploads differ in padding), and less than a session
// without the budget holds after the same Runs.
func TestPlanCacheByteBudget(t *testing.T) {
	run := func(sess *onnxvk.Session) (first, last int64) {
		ctx := context.Background()
		for p := range 12 {
			// The same byte count for every plan: past rows p+1, new rows 12-p.
			_, err := sess.Run(ctx, kvInputs(t, p+1, 12-p, p))
			require.NoError(t, err)
			if p == 0 {
				first = sess.DeviceMemoryInUse()
			}
		}
		return first, sess.DeviceMemoryInUse()
	}
	sess := vulkanSession(t, kvModel(), onnxvk.WithoutShapeClasses(), onnxvk.WithPlanCacheBytes(1))
	first, last := run(sess)
	st := sess.PlanStats()
	require.Equal(t, 1, st.Cached, "plans cached: %+v", st)
	require.Equal(t, int64(11), st.Evicted, "plans evicted: %+v", st)
	require.Positive(t, st.CachedBytes)
	require.LessOrEqual(t, last, first+first/10, "device memory after 12 plans, one cached")
	_, unbounded := run(vulkanSession(t, kvModel(), onnxvk.WithoutShapeClasses()))
	require.Less(t, last, unbounded, "device memory with one plan cached against twelve")
	t.Logf("device memory: %d bytes after the first plan, %d after 12 with one cached, %d with all cached", first, last, unbounded)
}

// settledRSS returns the process's resident set size in bytes after a
// collection that returns the free heap to the system, 0 where
// /proc/self/statm cannot be read: the memory in use rather than what the
// heap has grown to between collections.
func settledRSS() int64 {
	debug.FreeOSMemory()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// TestWithoutShapeClassesIf loads a model whose one input has a variable
// first dimension with WithoutShapeClassesIf: the decision sees the
// model's inputs and outputs once, and where it says true every batch size
// gets a concrete plan (as WithoutShapeClasses), where false the second
// size makes a shape class that serves the third.
func TestWithoutShapeClassesIf(t *testing.T) {
	for _, concrete := range []bool{true, false} {
		t.Run(fmt.Sprint(concrete), func(t *testing.T) {
			calls := 0
			decide := func(inputs, outputs []onnxvk.ValueInfo) bool {
				calls++
				require.Len(t, inputs, 1)
				require.Equal(t, []int64{-1, 8}, inputs[0].Shape)
				require.Len(t, outputs, 1)
				return concrete
			}
			m := churnModel()
			m.Graph.Inputs[0].Type = graph.TensorType(graph.Float, graph.Shape{graph.SymDim("N"), graph.DimOf(8)})
			sess, err := onnxvk.NewSession(m, onnxvk.WithDevice("cpu"), onnxvk.WithoutShapeClassesIf(decide))
			require.NoError(t, err)
			defer sess.Close()
			require.Equal(t, 1, calls)
			for n := range 3 {
				x := make([]float32, (n+1)*8)
				for i := range x {
					x[i] = float32(i%5) - 2
				}
				in, err := onnxvk.NewTensor([]int64{int64(n + 1), 8}, x)
				require.NoError(t, err)
				_, err = sess.Run(context.Background(), map[string]*onnxvk.Tensor{"x": in})
				require.NoError(t, err)
			}
			st := sess.PlanStats()
			if concrete {
				require.Equal(t, onnxvk.PlanStats{Compiled: 3, Cached: 3, CachedBytes: st.CachedBytes}, st)
			} else {
				require.Equal(t, onnxvk.PlanStats{Compiled: 2, ClassPlans: 1, Cached: 2, CachedBytes: st.CachedBytes}, st)
			}
			require.Equal(t, 1, calls)
		})
	}
}

// TestPlanCacheSeesClassGrowth runs kvModel on Vulkan for past lengths 0
// to 100: the first length gets a concrete plan, the others the class
// plan, whose GPU program grows its buffers as the past grows. The plan
// cache counts that growth (CachedBytes after the last Run exceeds what it
// was after the class plan's first), and under a budget of what both
// plans held after that first Run, the growth evicts the concrete plan.
func TestPlanCacheSeesClassGrowth(t *testing.T) {
	run := func(sess *onnxvk.Session, from, to int) {
		for p := from; p <= to; p++ {
			_, err := sess.Run(context.Background(), kvInputs(t, p, 1, p))
			require.NoError(t, err)
		}
	}
	sess := vulkanSession(t, kvModel())
	run(sess, 0, 1)
	first := sess.PlanStats()
	require.Equal(t, int64(1), first.ClassPlans, "class plans: %+v", first)
	run(sess, 2, 100)
	last := sess.PlanStats()
	require.Greater(t, last.CachedBytes, first.CachedBytes, "cached bytes after the class plan's first Run and after its Run at past length 100")
	require.Zero(t, last.Evicted, "plans evicted without a budget")

	bounded := vulkanSession(t, kvModel(), onnxvk.WithPlanCacheBytes(first.CachedBytes))
	run(bounded, 0, 1)
	require.Equal(t, first.CachedBytes, bounded.PlanStats().CachedBytes, "cached bytes of a second session after the same Runs")
	run(bounded, 2, 100)
	st := bounded.PlanStats()
	require.Equal(t, int64(1), st.Evicted, "plans evicted under a budget of %d bytes: %+v", first.CachedBytes, st)
	require.Equal(t, 1, st.Cached, "plans cached: %+v", st)
	t.Logf("cached bytes: %d after the class plan's first Run, %d at past length 100", first.CachedBytes, last.CachedBytes)
}

// TestShapeClassRefusedSizes runs y = Relu(x)·2 on Vulkan for x of 3, 4
// and then 0 elements: the class plan that serves the sizes after the
// first lowers its nodes with a trial size, but the Vulkan kernels take
// no empty tensor, so the Run of 0 elements gets a concrete plan, which
// places the nodes on the CPU, instead of failing; the Run after it, of
// 5 elements, runs on the class plan again.
func TestShapeClassRefusedSizes(t *testing.T) {
	g := graph.NewGraph("relu2")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.Shape{graph.SymDim("N")})}}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	g.Initializers["two"], _ = graph.FromSlice(graph.Float, nil, []float32{2})
	g.Nodes = []*graph.Node{
		{Name: "relu", OpType: "Relu", Inputs: []string{"x"}, Outputs: []string{"r"}, Index: 0},
		{Name: "mul", OpType: "Mul", Inputs: []string{"r", "two"}, Outputs: []string{"y"}, Index: 1},
	}
	sess := vulkanSession(t, &graph.Model{Name: "relu2", IRVersion: 8, Opsets: map[string]int64{"": 14}, Graph: g})
	for _, n := range []int{3, 4, 0, 5} {
		data := make([]float32, n)
		want := make([]float32, n)
		for i := range data {
			data[i] = float32(i) - 1.5
			want[i] = 2 * max(data[i], 0)
		}
		x, err := onnxvk.NewTensor([]int64{int64(n)}, data)
		require.NoError(t, err)
		before := sess.PlanStats()
		out, err := sess.Run(context.Background(), map[string]*onnxvk.Tensor{"x": x})
		require.NoError(t, err, "N=%d", n)
		got, err := onnxvk.Data[float32](out["y"])
		require.NoError(t, err)
		require.True(t, slices.Equal(want, got), "N=%d: y is %v, want %v", n, got, want)
		compiled := sess.PlanStats().Compiled - before.Compiled
		switch n {
		case 0:
			require.Equal(t, int64(1), compiled, "plans compiled for N=0 (a concrete one)")
		case 5:
			require.Zero(t, compiled, "plans compiled for N=5 (the class plan serves it)")
		}
	}
	st := sess.PlanStats()
	require.Equal(t, int64(1), st.ClassPlans, "class plans: %+v", st)
}
