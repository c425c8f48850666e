package vulkan

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/hostfallback"
	"github.com/onnxvk/onnxvk/planner"
)

// arg is one input of a node run by runTyped: a runtime value, or a
// constant (an initializer the planner sees) when konst is set.
type arg struct {
	t     *graph.Tensor
	konst bool
}

// runTyped runs node n on the given inputs of any element type through a
// Vulkan-first plan and through the CPU kernel, and returns every named
// output of both. ok is false when the Vulkan device does not support the
// node.
func runTyped(t *testing.T, d *Device, n *graph.Node, opset int64, args []arg) (gpu, cpu []*graph.Tensor, ok bool) {
	t.Helper()
	g := graph.NewGraph("test")
	vals := make([]graph.Value, len(n.Inputs))
	feeds := map[string]graph.Value{}
	types := make([]*graph.Type, len(n.Inputs))
	consts := make([]*graph.Tensor, len(n.Inputs))
	for i, a := range args {
		name := n.Inputs[i]
		if name == "" {
			continue
		}
		vals[i] = a.t
		types[i] = graph.TensorType(a.t.DType, graph.ShapeOf(a.t.Shape...))
		if a.konst {
			consts[i], g.Initializers[name] = a.t, a.t
			continue
		}
		g.Inputs = append(g.Inputs, &graph.ValueInfo{Name: name, Type: types[i]})
		feeds[name] = a.t
	}
	if !d.Supports(planner.Query{Node: n, Opset: opset, Inputs: types, Consts: consts}) {
		return nil, nil, false
	}
	for _, o := range n.Outputs {
		if o != "" {
			g.Outputs = append(g.Outputs, &graph.ValueInfo{Name: o})
		}
	}
	out := runPlanned(t, d, g, n, opset, feeds)
	c := &hostfallback.Call{Node: n, Opset: opset, In: vals, Out: make([]graph.Value, len(n.Outputs))}
	if err := hostfallback.Lookup(n.Domain, n.OpType)(c); err != nil {
		t.Fatal(err)
	}
	for k, o := range n.Outputs {
		if o != "" {
			gpu = append(gpu, out[o].(*graph.Tensor))
			cpu = append(cpu, c.Out[k].(*graph.Tensor))
		}
	}
	return gpu, cpu, true
}

// runPlanned runs graph g, whose only node is n, through a plan that must
// place n on d (not fold it away nor leave it to the CPU), and returns the
// graph's outputs. The model imports n's domain (and the default one) at
// opset.
func runPlanned(t *testing.T, d *Device, g *graph.Graph, n *graph.Node, opset int64, feeds map[string]graph.Value) map[string]graph.Value {
	t.Helper()
	g.Nodes = []*graph.Node{n}
	m := &graph.Model{Name: n.OpType, IRVersion: 8, Opsets: map[string]int64{"": opset, n.Domain: opset}, Graph: g}
	cpuDev := hostfallback.NewDevice()
	p, err := planner.New(m, planner.Options{Devices: []planner.Device{d, cpuDev}})
	if err != nil {
		t.Fatal(err)
	}
	placed := false
	for _, st := range p.Steps {
		if st.Node == n {
			if st.Device != d.Name() {
				t.Fatalf("%s planned on %s", n, st.Device)
			}
			placed = true
		}
	}
	if !placed {
		t.Fatalf("%s left out of the plan", n)
	}
	ex, err := backend.NewExecutor(p, []backend.Device{d, cpuDev})
	if err != nil {
		t.Fatal(err)
	}
	out, err := ex.Run(context.Background(), feeds)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkTyped runs n with runTyped and compares the outputs with
// compareTyped. The node must be supported.
func checkTyped(t *testing.T, d *Device, what string, n *graph.Node, opset int64, args ...arg) {
	t.Helper()
	gpu, cpu, ok := runTyped(t, d, n, opset, args)
	if !ok {
		t.Fatalf("%s unsupported", what)
	}
	compareTyped(t, what, n, opset, gpu, cpu)
}

// compareTyped compares the outputs of n that runTyped returns: float32
// within the op's tolerance, other types exactly.
func compareTyped(t *testing.T, what string, n *graph.Node, opset int64, gpu, cpu []*graph.Tensor) {
	t.Helper()
	for k := range gpu {
		w := fmt.Sprintf("%s output %d", what, k)
		if gpu[k].DType != cpu[k].DType {
			t.Fatalf("%s: type %s, want %s", w, gpu[k].DType, cpu[k].DType)
		}
		if gpu[k].DType == graph.Float {
			compare(t, w, gpu[k], cpu[k], ops.Lookup(n.Domain, n.OpType, opset).Tolerance())
			continue
		}
		if fmt.Sprint(gpu[k].Shape) != fmt.Sprint(cpu[k].Shape) || !bytes.Equal(gpu[k].Data, cpu[k].Data) {
			t.Errorf("%s: got %v %v, want %v %v", w, gpu[k].Shape, gpu[k].Data, cpu[k].Shape, cpu[k].Data)
		}
	}
}

// randFloats returns a float32 tensor of the shape with values uniform in
// [lo, hi).
func randFloats(r *rand.Rand, shape []int64, lo, hi float32) *graph.Tensor {
	x := graph.NewTensor(graph.Float, shape)
	for i, xs := 0, graph.View[float32](x); i < len(xs); i++ {
		xs[i] = lo + (hi-lo)*r.Float32()
	}
	return x
}

// randInts returns an int32 or int64 tensor of the shape with values
// uniform in [lo, hi).
func randInts(r *rand.Rand, dt graph.DType, shape []int64, lo, hi int64) *graph.Tensor {
	x := graph.NewTensor(dt, shape)
	switch dt {
	case graph.Int32:
		for i, xs := 0, graph.View[int32](x); i < len(xs); i++ {
			xs[i] = int32(lo + r.Int64N(hi-lo))
		}
	case graph.Int64:
		for i, xs := 0, graph.View[int64](x); i < len(xs); i++ {
			xs[i] = lo + r.Int64N(hi-lo)
		}
	default:
		panic("randInts: " + dt.String())
	}
	return x
}
