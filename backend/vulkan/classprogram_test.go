package vulkan

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/hostfallback"
	"github.com/onnxvk/onnxvk/planner"
)

// attentionModel is one head group of a decoder's attention over a KV
// cache whose past length P is symbolic: present = Concat(past, k) along
// the sequence, o = softmax(q · presentᵀ) · present.
func attentionModel() *graph.Model {
	g := graph.NewGraph("attention")
	row := graph.TensorType(graph.Float, graph.ShapeOf(1, 2, 1, 4))
	g.Inputs = []*graph.ValueInfo{
		{Name: "past", Type: graph.TensorType(graph.Float, graph.Shape{graph.DimOf(1), graph.DimOf(2), graph.SymDim("P"), graph.DimOf(4)})},
		{Name: "k", Type: row},
		{Name: "q", Type: row},
	}
	g.Outputs = []*graph.ValueInfo{{Name: "present"}, {Name: "o"}}
	g.Nodes = []*graph.Node{
		{Name: "concat", OpType: "Concat", Inputs: []string{"past", "k"}, Outputs: []string{"present"},
			Attrs: map[string]*graph.Attribute{"axis": {Name: "axis", Type: graph.AttrInt, I: 2}}},
		{Name: "kt", OpType: "Transpose", Inputs: []string{"present"}, Outputs: []string{"kt"},
			Attrs: map[string]*graph.Attribute{"perm": {Name: "perm", Type: graph.AttrInts, Ints: []int64{0, 1, 3, 2}}}},
		{Name: "scores", OpType: "MatMul", Inputs: []string{"q", "kt"}, Outputs: []string{"s"}},
		{Name: "softmax", OpType: "Softmax", Inputs: []string{"s"}, Outputs: []string{"a"},
			Attrs: map[string]*graph.Attribute{"axis": {Name: "axis", Type: graph.AttrInt, I: -1}}},
		{Name: "mix", OpType: "MatMul", Inputs: []string{"a", "present"}, Outputs: []string{"o"}},
	}
	for i, n := range g.Nodes {
		n.Index = i
	}
	return &graph.Model{Name: "attention", IRVersion: 8, Opsets: map[string]int64{"": 14}, Graph: g}
}

// attentionInputs returns inputs of attentionModel with past length p.
func attentionInputs(p int) map[string]graph.Value {
	fill := func(shape []int64, seed int) *graph.Tensor {
		t := graph.NewTensor(graph.Float, shape)
		for i := range graph.View[float32](t) {
			graph.View[float32](t)[i] = float32((i*7+seed*3+p)%13)/6 - 1
		}
		return t
	}
	return map[string]graph.Value{"past": fill([]int64{1, 2, int64(p), 4}, 1), "k": fill([]int64{1, 2, 1, 4}, 2), "q": fill([]int64{1, 2, 1, 4}, 3)}
}

// attentionSetup plans attentionModel with P symbolic on d and on the CPU
// and returns both executors; every node runs on d.
func attentionSetup(t *testing.T, d *Device) (gpu, cpu *backend.Executor) {
	host := hostfallback.NewDevice(nil)
	ref, err := planner.New(attentionModel(), planner.Options{Devices: []planner.Device{host}})
	require.NoError(t, err)
	cpu, err = backend.NewExecutor(ref, []backend.Device{host})
	require.NoError(t, err)
	p, err := planner.New(attentionModel(), planner.Options{Devices: []planner.Device{d, host}})
	require.NoError(t, err)
	for _, st := range p.Steps {
		if st.Kind == planner.Compute {
			require.Equal(t, d.Name(), st.Device, "%s placed", st.Node)
		}
	}
	gpu, err = backend.NewExecutor(p, []backend.Device{d, host})
	require.NoError(t, err)
	return gpu, cpu
}

// checkAttention runs both executors on the inputs of past length p and
// compares their outputs.
func checkAttention(gpu, cpu *backend.Executor, p int) error {
	ctx := context.Background()
	want, err := cpu.Run(ctx, attentionInputs(p))
	if err != nil {
		return err
	}
	got, err := gpu.Run(ctx, attentionInputs(p))
	if err != nil {
		return err
	}
	for _, name := range []string{"present", "o"} {
		w, g := want[name].(*graph.Tensor), got[name].(*graph.Tensor)
		if fmt.Sprint(w.Shape) != fmt.Sprint(g.Shape) {
			return fmt.Errorf("P=%d: %s has shape %v, want %v", p, name, g.Shape, w.Shape)
		}
		wv, gv := graph.View[float32](w), graph.View[float32](g)
		for i := range wv {
			if math.Abs(float64(wv[i]-gv[i])) > 1e-5 {
				return fmt.Errorf("P=%d: %s[%d] is %g, the CPU's %g", p, name, i, gv[i], wv[i])
			}
		}
	}
	return nil
}

// TestClassProgramRecordsPerBinding runs attention over a symbolic past
// length on Vulkan, one class program: outputs equal the CPU's for each
// length; a binding is lowered once while it stays among the last
// maxBindings, the context's command buffer is recorded again only when
// its binding changes, no pipeline is created after the first binding,
// and going back to a shorter length allocates no memory.
func TestClassProgramRecordsPerBinding(t *testing.T) {
	d := openTest(t)
	gpu, cpu := attentionSetup(t, d)
	defer gpu.Release()
	require.Len(t, d.classes, 1)
	c := d.classes[0]
	var pipelines int
	for i, s := range []struct {
		p                 int
		lowered, recorded int
	}{{3, 1, 1}, {3, 1, 1}, {5, 2, 2}, {5, 2, 2}, {3, 2, 3}, {0, 3, 4}, {9, 4, 5}, {8, 5, 6}, {3, 5, 7}, {5, 6, 8}} {
		require.NoError(t, checkAttention(gpu, cpu, s.p))
		require.Equal(t, [2]int{s.lowered, s.recorded}, [2]int{c.lowered, c.recorded}, "run %d (P=%d): bindings lowered, contexts recorded", i, s.p)
		require.LessOrEqual(t, len(c.bound), maxBindings)
		if i == 0 {
			pipelines = len(d.pipelines)
		}
		require.Equal(t, pipelines, len(d.pipelines), "pipelines after run %d", i)
	}
	mem := d.MemoryInUse()
	require.NoError(t, checkAttention(gpu, cpu, 4))
	require.Equal(t, mem, d.MemoryInUse(), "memory in use after a shorter binding")
	gpu.Release()
	require.Empty(t, d.classes)
	require.Empty(t, d.programs)
}

// TestClassProgramConcurrentRuns runs attention from 6 goroutines at once
// on one executor, each with past lengths of its own, against the CPU's
// outputs (run it with -race).
func TestClassProgramConcurrentRuns(t *testing.T) {
	d := openTest(t)
	gpu, cpu := attentionSetup(t, d)
	defer gpu.Release()
	const workers, each = 6, 8
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for k := range each {
				if err := checkAttention(gpu, cpu, (k*workers+w)%11); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestSupportsSymbolic checks that a node with symbolic sizes is supported
// where its lowering takes the node with trialSize in their place, and
// only there.
func TestSupportsSymbolic(t *testing.T) {
	d := openTest(t)
	n := graph.TensorType(graph.Float, graph.Shape{graph.SymDim("N"), graph.DimOf(3)})
	require.True(t, d.Supports(planner.Query{Node: &graph.Node{OpType: "Relu", Outputs: []string{"y"}}, Opset: 17, Inputs: []*graph.Type{n}}))
	require.True(t, d.Supports(planner.Query{Node: &graph.Node{OpType: "Add", Outputs: []string{"y"}}, Opset: 17,
		Inputs: []*graph.Type{n, graph.TensorType(graph.Float, graph.ShapeOf(3))}}))
	require.False(t, d.Supports(planner.Query{Node: &graph.Node{OpType: "Add", Outputs: []string{"y"}}, Opset: 17,
		Inputs: []*graph.Type{n, graph.TensorType(graph.Float, graph.ShapeOf(4))}}), "Add of [N, 3] and [4]")
}
