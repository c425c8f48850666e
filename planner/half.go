package planner

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/x448/float16"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// HalfConstants holds the float16 copies of float32 constants that the
// float16 mode (Options.Float16) made, one per constant, shared by every
// plan of a session: a device keeps one resident copy of each weight,
// whatever the number of plans.
type HalfConstants struct {
	mu     sync.Mutex
	copies map[*graph.Tensor]*graph.Tensor
}

// of returns the float16 copy of the float32 tensor t: each value rounded
// to the nearest float16, ties to even, finite values beyond float16's
// range saturated at ±65504, infinities and NaNs kept.
func (c *HalfConstants) of(t *graph.Tensor) *graph.Tensor {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h, ok := c.copies[t]; ok {
		return h
	}
	h := graph.NewTensor(graph.Float16, t.Shape)
	out := graph.View[uint16](h)
	for i, f := range graph.View[float32](t) {
		if !math.IsInf(float64(f), 0) {
			f = min(max(f, -65504), 65504)
		}
		out[i] = float16.Fromfloat32(f).Bits()
	}
	if c.copies == nil {
		c.copies = map[*graph.Tensor]*graph.Tensor{}
	}
	c.copies[t] = h
	return h
}

// toHalf applies the float16 mode to the fused graph g of a float32 model:
// each node whose op's rule (ops.HalfRuleOf) runs in float16 and whose
// float tensors are all float32 computes on float16 tensors instead. Its
// float32 constants are replaced by float16 copies (consts), a float32
// value computed in float32 is cast to float16 before it (one Cast per
// value), and a float16 value read by a float32 node is cast back. Graph
// inputs and outputs keep their types: a node writing a graph output, or
// a value a subgraph reads, stays float32. It returns the number of nodes
// made float16.
func toHalf(pm *graph.Model, g *graph.Graph, consts *HalfConstants) int {
	fixed := graphInputs(g)
	keep32 := map[string]bool{}
	for _, o := range g.Outputs {
		keep32[o.Name] = true
	}
	for _, n := range g.Nodes {
		for _, name := range graph.Captured(n) {
			keep32[name] = true
		}
	}
	isFloat := func(name string, dt graph.DType) bool {
		t := g.TypeOf(name)
		return t != nil && t.Kind == graph.TensorKind && t.Elem == dt
	}
	halfNode := func(n *graph.Node) bool {
		if !ops.HalfRuleOf(n.Domain, n.OpType).Half || len(graph.Captured(n)) > 0 || len(n.Outputs) == 0 || !isFloat(n.Outputs[0], graph.Float) {
			return false
		}
		for i, name := range n.Outputs {
			if name == "" {
				continue
			}
			t := g.TypeOf(name)
			if t == nil || t.Kind != graph.TensorKind || keep32[name] || t.Elem.IsFloat() && (t.Elem != graph.Float || i > 0 && n.OpType != "Split") {
				return false
			}
		}
		for _, name := range n.Inputs {
			if name == "" {
				continue
			}
			t := g.TypeOf(name)
			if t == nil || t.Kind != graph.TensorKind || t.Elem.IsFloat() && t.Elem != graph.Float {
				return false
			}
		}
		return true
	}
	half := map[string]bool{}
	halves := map[*graph.Node]bool{}
	for _, n := range g.Nodes {
		if halfNode(n) {
			halves[n] = true
			for _, name := range n.Outputs {
				if name != "" && isFloat(name, graph.Float) {
					half[name] = true
				}
			}
		}
	}
	if len(halves) == 0 {
		return 0
	}
	names := newNamer(g)
	opset := pm.Opset("")
	casts := map[string]string{}
	nodes := make([]*graph.Node, 0, len(g.Nodes))
	// cast returns the name of value name cast to dt by a node placed
	// before the current one, made on first use.
	cast := func(name string, dt graph.DType) string {
		key := name + "\x00" + dt.String()
		if c, ok := casts[key]; ok {
			return c
		}
		c := names.fresh(name + "_" + map[graph.DType]string{graph.Float16: "fp16", graph.Float: "fp32"}[dt])
		n := &graph.Node{Name: c, OpType: "Cast", Inputs: []string{name}, Outputs: []string{c},
			Attrs: map[string]*graph.Attribute{"to": {Name: "to", Type: graph.AttrInt, I: int64(dt)}}}
		if err := ops.SetParams(n, opset); err != nil {
			panic(fmt.Sprintf("planner: a Cast to %s: %v", dt, err))
		}
		g.SetType(c, graph.TensorType(dt, g.TypeOf(name).Shape))
		nodes = append(nodes, n)
		casts[key] = c
		return c
	}
	// constant returns the name of the float16 copy of constant name.
	constant := func(name string) string {
		key := name + "\x00const"
		if c, ok := casts[key]; ok {
			return c
		}
		c := names.fresh(name + "_fp16")
		g.Initializers[c] = consts.of(g.Initializers[name])
		casts[key] = c
		return c
	}
	for _, n := range g.Nodes {
		isHalf := halves[n]
		keepInputs := ops.HalfRuleOf(n.Domain, n.OpType).Float32Inputs
		var in []string
		for k, name := range n.Inputs {
			to := name
			switch {
			case name == "":
			case !isHalf && half[name]:
				to = cast(name, graph.Float)
			case !isHalf || half[name] || !isFloat(name, graph.Float) || slices.Contains(keepInputs, k):
			case g.Initializers[name] != nil && !fixed[name]:
				to = constant(name)
			default:
				to = cast(name, graph.Float16)
			}
			if to != name && in == nil {
				in = slices.Clone(n.Inputs)
			}
			if in != nil {
				in[k] = to
			}
		}
		if isHalf {
			for _, name := range n.Outputs {
				if half[name] {
					g.SetType(name, graph.TensorType(graph.Float16, g.TypeOf(name).Shape))
				}
			}
		}
		if in != nil {
			c := *n
			c.Inputs = in
			n = &c
		}
		nodes = append(nodes, n)
	}
	g.Nodes = nodes
	return len(halves)
}

// namer makes value names unused in a graph.
type namer map[string]bool

// newNamer returns a namer of g's names: inputs, initializers and every
// node's inputs and outputs.
func newNamer(g *graph.Graph) namer {
	taken := namer{}
	for name := range g.Initializers {
		taken[name] = true
	}
	for _, v := range g.Inputs {
		taken[v.Name] = true
	}
	for _, n := range g.Nodes {
		for _, name := range append(append([]string{}, n.Inputs...), n.Outputs...) {
			taken[name] = true
		}
	}
	return taken
}

// fresh returns base, or base_N with the first N that makes it unused,
// and marks it used.
func (t namer) fresh(base string) string {
	name := base
	for i := 1; t[name]; i++ {
		name = fmt.Sprintf("%s_%d", base, i)
	}
	t[name] = true
	return name
}
