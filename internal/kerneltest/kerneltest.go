// Package kerneltest is the kernel-test suite every device runs: a table
// of single-node cases (each op a device may lower, over odd shapes,
// broadcasting, edge values and attributes), each run on the device under
// test through a plan and an executor and compared with the CPU reference
// kernels of package hostfallback, in the precision mode the device runs.
// Float results must agree within the op's tolerance from graph/ops
// (widened by ops.HalfWeightError where a device reads fp16 weights),
// every other type exactly. A case the device declines is checked against
// a committed list of expected declines (see Suite).
//
// Only tests import it: backend/vulkan runs the suite in fp32 and fp16 and
// under every schedule it can force, this package's own tests run it on
// the CPU device (with the assembly kernels, and without them under the
// noasm build tag).
package kerneltest

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/hostfallback"
	"github.com/onnxvk/onnxvk/planner"
)

// Arg is one input of a case: a runtime value, or a constant (an
// initializer the planner and the device see at plan time) when Const is
// set. T is nil for an absent optional input.
type Arg struct {
	T     *graph.Tensor
	Const bool
}

// Case is one node with its inputs, run in a model importing the node's
// domain (and the default one) at Opset.
type Case struct {
	Node  *graph.Node
	Opset int64
	Args  []Arg
}

// Query returns what a device is asked about c at planning: the node, the
// types of its inputs and the constant ones.
func (c Case) Query() planner.Query {
	q := planner.Query{Node: c.Node, Opset: c.Opset, Inputs: make([]*graph.Type, len(c.Node.Inputs)), Consts: make([]*graph.Tensor, len(c.Node.Inputs))}
	for i, a := range c.Args {
		if c.Node.Inputs[i] == "" || a.T == nil {
			continue
		}
		q.Inputs[i] = graph.TensorType(a.T.DType, graph.ShapeOf(a.T.Shape...))
		if a.Const {
			q.Consts[i] = a.T
		}
	}
	return q
}

// Mode is the arithmetic a device runs its kernels in.
type Mode int

const (
	// FP32: every float computed and stored in fp32.
	FP32 Mode = iota
	// HalfWeights: the constant weights of matrix products and
	// convolutions stored as fp16 and widened to fp32 as the kernels read
	// them (the Vulkan device's WithFP16); results within the op's
	// tolerance widened by ops.HalfWeightError (see Tolerance.HalfWeights).
	HalfWeights
	// Float16: the float32 tensors of each case made float16 (see
	// Float16Case), the device's float16 results compared with the CPU's
	// fp32 ones on the same values within the op's tolerance widened to
	// float16 (Tolerance.Float16).
	Float16
)

// String names the mode: "fp32", "fp16-weights" or "float16".
func (m Mode) String() string {
	switch m {
	case HalfWeights:
		return "fp16-weights"
	case Float16:
		return "float16"
	}
	return "fp32"
}

// Run runs c on dev with RunOn and on the CPU reference kernel with
// Reference and returns both outputs. ok is false when dev declines the
// node.
func Run(t testing.TB, dev backend.Device, c Case) (got, want []*graph.Tensor, ok bool) {
	t.Helper()
	if got, ok = RunOn(t, dev, c); !ok {
		return nil, nil, false
	}
	return got, Reference(t, c), true
}

// RunOn runs c on dev, through a plan that must place the node on dev
// (the CPU device takes the transfers), and returns its named outputs in
// order. ok is false when dev declines the node.
func RunOn(t testing.TB, dev backend.Device, c Case) (got []*graph.Tensor, ok bool) {
	t.Helper()
	c = Canonical(t, c)
	n := c.Node
	q := c.Query()
	if !dev.Supports(q) {
		return nil, false
	}
	g := graph.NewGraph("kerneltest")
	feeds := map[string]graph.Value{}
	for i, a := range c.Args {
		name := n.Inputs[i]
		if name == "" || a.T == nil {
			continue
		}
		if a.Const {
			g.Initializers[name] = a.T
			continue
		}
		g.Inputs = append(g.Inputs, &graph.ValueInfo{Name: name, Type: q.Inputs[i]})
		feeds[name] = a.T
	}
	for _, o := range n.Outputs {
		if o != "" {
			g.Outputs = append(g.Outputs, &graph.ValueInfo{Name: o})
		}
	}
	out := runPlanned(t, dev, g, n, c.Opset, feeds)
	for _, o := range n.Outputs {
		if o == "" {
			continue
		}
		x, ok := out[o].(*graph.Tensor)
		if !ok {
			t.Fatalf("%s: output %s is a %T, not a tensor", n, o, out[o])
		}
		got = append(got, x)
	}
	return got, true
}

// Canonical returns c in the form sessions bring its node to
// (ops.Canonicalize): attributes that became inputs (a Reduce's axes,
// Clip's bounds, Split's split) as constant inputs, at the op's newest
// version. The kernels read those only as inputs, so a node in its old
// form would have both sides of a comparison ignore the attribute alike.
// Nodes the rewrite adds before the node (a CastLike of a bound to the
// data's type) are run here on the CPU kernels, as constant folding
// does in a session.
func Canonical(t testing.TB, c Case) Case {
	t.Helper()
	n := *c.Node
	n.Inputs = slices.Clone(n.Inputs)
	n.Attrs = maps.Clone(n.Attrs)
	g := graph.NewGraph("canonical")
	g.Nodes = []*graph.Node{&n}
	ops.Canonicalize(&graph.Model{Opsets: map[string]int64{"": c.Opset, n.Domain: c.Opset}, Graph: g})
	if len(g.Nodes) == 1 && n.OpType == c.Node.OpType && slices.Equal(n.Inputs, c.Node.Inputs) && len(n.Attrs) == len(c.Node.Attrs) {
		return c
	}
	if g.Nodes[len(g.Nodes)-1] != &n {
		t.Fatalf("%s-%d: ops.Canonicalize adds nodes after it; test its canonical form", c.Node, c.Opset)
	}
	vals := maps.Clone(g.Initializers)
	given := map[string]Arg{}
	for i, a := range c.Args {
		if name := c.Node.Inputs[i]; name != "" && a.T != nil {
			vals[name], given[name] = a.T, a
		}
	}
	for _, m := range g.Nodes[:len(g.Nodes)-1] {
		args := make([]Arg, len(m.Inputs))
		for i, name := range m.Inputs {
			args[i] = Arg{T: vals[name], Const: true}
		}
		for i, out := range Reference(t, Case{Node: m, Opset: m.Opset, Args: args}) {
			vals[m.Outputs[i]] = out
		}
	}
	args := make([]Arg, len(n.Inputs))
	for i, name := range n.Inputs {
		switch a, ok := given[name]; {
		case name == "":
		case ok:
			args[i] = a
		default:
			args[i] = Arg{T: vals[name], Const: true}
		}
	}
	return Case{Node: &n, Opset: n.Opset, Args: args}
}

// Reference runs c's node on the CPU reference kernel, called directly,
// and returns its named outputs in order.
func Reference(t testing.TB, c Case) []*graph.Tensor {
	t.Helper()
	c = Canonical(t, c)
	n := c.Node
	vals := make([]graph.Value, len(n.Inputs))
	for i, a := range c.Args {
		if n.Inputs[i] != "" && a.T != nil {
			vals[i] = a.T
		}
	}
	call := &hostfallback.Call{Node: n, Opset: c.Opset, In: vals, Out: make([]graph.Value, len(n.Outputs))}
	kernel := hostfallback.Lookup(n.Domain, n.OpType)
	if kernel == nil {
		t.Fatalf("%s: no CPU reference kernel", n)
	}
	if err := kernel(call); err != nil {
		t.Fatalf("%s: CPU reference: %v", n, err)
	}
	var want []*graph.Tensor
	for k, o := range n.Outputs {
		if o != "" {
			want = append(want, call.Out[k].(*graph.Tensor))
		}
	}
	return want
}

// runPlanned runs graph g, whose only node is n, through a plan that must
// place n on dev (not fold it away nor leave it to another device), and
// returns the graph's outputs. The CPU device joins dev unless dev is the
// CPU.
func runPlanned(t testing.TB, dev backend.Device, g *graph.Graph, n *graph.Node, opset int64, feeds map[string]graph.Value) map[string]graph.Value {
	t.Helper()
	g.Nodes = []*graph.Node{n}
	m := &graph.Model{Name: n.OpType, IRVersion: 8, Opsets: map[string]int64{"": opset, n.Domain: opset}, Graph: g}
	devices := []backend.Device{dev}
	if dev.Name() != planner.HostDevice {
		devices = append(devices, hostfallback.NewDevice(nil))
	}
	pd := make([]planner.Device, len(devices))
	for i, d := range devices {
		pd[i] = d
	}
	p, err := planner.New(m, planner.Options{Devices: pd})
	if err != nil {
		t.Fatal(err)
	}
	placed := false
	for _, st := range p.Steps {
		if st.Node == n {
			if st.Device != dev.Name() {
				t.Fatalf("%s planned on %s, not %s", n, st.Device, dev.Name())
			}
			placed = true
		}
	}
	if !placed {
		t.Fatalf("%s left out of the plan", n)
	}
	ex, err := backend.NewExecutor(p, devices)
	if err != nil {
		t.Fatal(err)
	}
	out, err := ex.Run(context.Background(), feeds)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Check runs c on dev with Run and compares the outputs in mode FP32 with
// Compare; the device must not decline c.
func Check(t testing.TB, dev backend.Device, what string, c Case) {
	t.Helper()
	got, want, ok := Run(t, dev, c)
	if !ok {
		t.Fatalf("%s: %s declines it", what, dev.Name())
	}
	Compare(t, what, c, FP32, got, want)
}

// Compare compares the outputs of c that Run returns: the types and
// shapes exactly, float32 values within the op's tolerance for mode,
// others exactly or within its Units.
func Compare(t testing.TB, what string, c Case, mode Mode, got, want []*graph.Tensor) {
	t.Helper()
	tol := ops.Lookup(c.Node.Domain, c.Node.OpType, c.Opset).Tolerance()
	var mag *graph.Tensor
	if mode == HalfWeights {
		mag = halfMagnitude(t, c)
	}
	for k := range want {
		w := fmt.Sprintf("%s output %d", what, k)
		if mode == Float16 && got[k].DType == graph.Float16 && want[k].DType == graph.Float {
			compareHalf(t, w, got[k], want[k], tol)
			continue
		}
		if got[k].DType != want[k].DType {
			t.Fatalf("%s: type %s, want %s", w, got[k].DType, want[k].DType)
		}
		if want[k].DType != graph.Float {
			if fmt.Sprint(got[k].Shape) != fmt.Sprint(want[k].Shape) || !bytes.Equal(got[k].Data, want[k].Data) && !withinUnits(got[k], want[k], tol.Units) {
				t.Errorf("%s: got %v %v, want %v %v", w, got[k].Shape, got[k].Data, want[k].Shape, want[k].Data)
			}
			continue
		}
		if k == 0 && mag != nil {
			compareFloats(t, w, got[k], want[k], func(i int) ops.Tolerance { return tol.HalfWeights(float64(graph.View[float32](mag)[i])) }, ops.Tolerance.Within)
			continue
		}
		CompareFloats(t, w, got[k], want[k], tol)
	}
}

// withinUnits tells whether the elements of integer tensors got and want,
// of one shape, differ by at most units.
func withinUnits(got, want *graph.Tensor, units float64) bool {
	for i := range want.NumElements() {
		if math.Abs(got.Float64At(i)-want.Float64At(i)) > units {
			return false
		}
	}
	return units > 0
}

// CompareFloats checks float32 tensor got against want: the same shape,
// each element within tol (see ops.Tolerance.Within), NaN where want has
// NaN.
func CompareFloats(t testing.TB, what string, got, want *graph.Tensor, tol ops.Tolerance) {
	t.Helper()
	compareFloats(t, what, got, want, func(int) ops.Tolerance { return tol }, ops.Tolerance.Within)
}

// compareFloats is CompareFloats with the tolerance of each element and
// the test of an element against it.
func compareFloats(t testing.TB, what string, got, want *graph.Tensor, tol func(i int) ops.Tolerance, within func(ops.Tolerance, float64, float64) bool) {
	t.Helper()
	if fmt.Sprint(got.Shape) != fmt.Sprint(want.Shape) {
		t.Fatalf("%s: shape %v, want %v", what, got.Shape, want.Shape)
	}
	g, w := graph.View[float32](got), graph.View[float32](want)
	bad := 0
	for i := range w {
		a, b := float64(g[i]), float64(w[i])
		if math.IsNaN(a) && math.IsNaN(b) || within(tol(i), a, b) {
			continue
		}
		if bad < 3 {
			t.Errorf("%s: element %d = %v, want %v (tolerance %+v)", what, i, a, b, tol(i))
		}
		bad++
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d elements out of tolerance", what, bad, len(w))
	}
}
