package planner

import (
	"math"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// fuseGelus replaces each exact GELU written out in five nodes by one Gelu
// of ops.FusedDomain at the place of its last node, marks the other four
// gone and returns how many nodes it removed. The form is PyTorch's:
// s = x/√2 (or x·(1/√2)), e = Erf(s), a = e + 1, then x·a·½ as Mul(x, a)
// and Mul by ½, or as Mul(a, ½) and Mul by x; the constants are float
// scalars (one element, of rank at most x's), the operands in either order.
func fuseGelus(pm *graph.Model, g *graph.Graph, devices []Device, uses map[string]int, consumers map[string][]int, overridable map[string]bool, gone map[int]bool) int {
	producer := producers(g)
	// only returns the binary op node that alone reads value name, and
	// its index.
	only := func(name, op string) (*graph.Node, int) {
		if n, j := soleReader(g, uses, consumers, gone, name, op); n != nil && len(n.Inputs) == 2 {
			return n, j
		}
		return nil, -1
	}
	// other returns n's input other than name ("" when n does not read
	// name, or reads it twice).
	other := func(n *graph.Node, name string) string {
		switch {
		case n.Inputs[0] == name && n.Inputs[1] != name:
			return n.Inputs[1]
		case n.Inputs[1] == name && n.Inputs[0] != name:
			return n.Inputs[0]
		}
		return ""
	}
	removed := 0
	for i, erf := range g.Nodes {
		if gone[i] || erf.Domain != "" || erf.OpType != "Erf" || len(erf.Inputs) != 1 || len(erf.Outputs) != 1 || uses[erf.Inputs[0]] != 1 {
			continue
		}
		si, ok := producer[erf.Inputs[0]]
		if !ok || gone[si] {
			continue
		}
		scale := g.Nodes[si]
		if scale.Domain != "" || len(scale.Inputs) != 2 || len(scale.Outputs) != 1 {
			continue
		}
		// The argument's scaling: x/√2, x·(1/√2) or (1/√2)·x.
		x, k, want := scale.Inputs[0], scale.Inputs[1], math.Sqrt2
		if scale.OpType == "Mul" {
			want = 1 / math.Sqrt2
			if c := g.Initializers[x]; c != nil && c.NumElements() == 1 {
				x, k = k, x
			}
		} else if scale.OpType != "Div" {
			continue
		}
		t := g.TypeOf(x)
		if t == nil || t.Kind != graph.TensorKind || !fusable(t.Elem) || t.Shape == nil {
			continue
		}
		// scalar reports whether value name is a constant scalar of x's
		// type within a rounding of want, that does not broadcast x.
		scalar := func(name string, want float64) bool {
			c := g.Initializers[name]
			return c != nil && !overridable[name] && c.DType == t.Elem && c.NumElements() == 1 && c.Rank() <= len(t.Shape) &&
				math.Abs(c.Float64At(0)-want) <= 1e-6*want
		}
		if !scalar(k, want) {
			continue
		}
		add, ai := only(erf.Outputs[0], "Add")
		if add == nil || !scalar(other(add, erf.Outputs[0]), 1) {
			continue
		}
		m1, m1i := only(add.Outputs[0], "Mul")
		if m1 == nil {
			continue
		}
		m2, m2i := only(m1.Outputs[0], "Mul")
		if m2 == nil {
			continue
		}
		if o1, o2 := other(m1, add.Outputs[0]), other(m2, m1.Outputs[0]); !(o1 == x && scalar(o2, 0.5) || scalar(o1, 0.5) && o2 == x) {
			continue
		}
		f := &graph.Node{Name: scale.Name, OpType: "Gelu", Domain: ops.FusedDomain, Inputs: []string{x}, Outputs: m2.Outputs, Index: scale.Index}
		if !sameDevice(pm, g, scale, f, devices) {
			continue
		}
		g.Nodes[m2i] = f
		for _, j := range []int{si, i, ai, m1i} {
			gone[j] = true
		}
		removed += 4
	}
	return removed
}
