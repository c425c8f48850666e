package ops

import (
	"maps"

	"github.com/onnxvk/onnxvk/graph"
)

// FoldConstants replaces every node whose outputs were all computed at plan
// time by InferModel (known values) with initializers, removing shape-only
// subgraphs (Shape→Gather→Concat→Reshape...). It never folds a node with
// side effects or random output and never folds large tensors (> 4096
// elements). It returns the number of nodes removed.
//
// Only the folded values that remaining nodes, subgraphs or graph outputs
// still use become initializers. FoldConstants changes the main graph's
// Nodes slice and Initializers map; it never changes a Node or a subgraph,
// which copies of a model may share: a node whose subgraphs fold is replaced
// by a copy holding folded copies of them. Remaining nodes keep their Index.
func FoldConstants(m *graph.Model, known map[string]*graph.Tensor) int {
	if m == nil || m.Graph == nil || len(known) == 0 {
		return 0
	}
	_, removed := foldGraph(m.Graph, known, true, new(graph.Captures))
	return removed
}

// foldGraph folds g's nodes and those of its subgraphs. With inPlace g
// itself changes; otherwise g stays as it is and a folded copy is returned
// when anything folded. caps, shared by the whole tree, answers what the
// remaining nodes' subgraphs read once per subgraph, so that a deep
// nesting folds in time linear in its size.
func foldGraph(g *graph.Graph, known map[string]*graph.Tensor, inPlace bool, caps *graph.Captures) (*graph.Graph, int) {
	removed := 0
	nodes := g.Nodes
	for i, n := range g.Nodes {
		folded, r := foldSubgraphs(n, known, caps)
		if r == 0 {
			continue
		}
		if removed == 0 {
			nodes = append([]*graph.Node{}, g.Nodes...)
		}
		nodes[i] = folded
		removed += r
	}
	keep := make([]*graph.Node, 0, len(nodes))
	var gone []*graph.Node
	for _, n := range nodes {
		if foldable(n, known) {
			gone = append(gone, n)
		} else {
			keep = append(keep, n)
		}
	}
	if removed == 0 && len(gone) == 0 {
		return g, 0
	}
	out := g
	if !inPlace {
		c := *g
		c.Initializers = maps.Clone(g.Initializers)
		c.ValueInfo = maps.Clone(g.ValueInfo)
		out = &c
	}
	if out.Initializers == nil {
		out.Initializers = map[string]*graph.Tensor{}
	}
	used := map[string]bool{}
	for _, vi := range g.Outputs {
		used[vi.Name] = true
	}
	for _, n := range keep {
		for _, name := range n.Inputs {
			used[name] = true
		}
		for _, name := range caps.Of(n) {
			used[name] = true
		}
	}
	for _, n := range gone {
		for _, name := range n.Outputs {
			if name != "" && used[name] {
				out.Initializers[name] = known[name]
			}
		}
	}
	out.Nodes = keep
	return out, removed + len(gone)
}

// foldSubgraphs folds the subgraphs of n; when any folds, it returns a copy
// of n holding the folded copies, and the number of nodes removed.
func foldSubgraphs(n *graph.Node, known map[string]*graph.Tensor, caps *graph.Captures) (*graph.Node, int) {
	var attrs map[string]*graph.Attribute
	removed := 0
	for name, a := range n.Attrs {
		if a == nil || (a.G == nil && len(a.Graphs) == 0) {
			continue
		}
		ac := *a
		r := 0
		if a.G != nil {
			var k int
			ac.G, k = foldGraph(a.G, known, false, caps)
			r += k
		}
		if len(a.Graphs) > 0 {
			ac.Graphs = make([]*graph.Graph, len(a.Graphs))
			for i, sub := range a.Graphs {
				ac.Graphs[i] = sub
				if sub != nil {
					var k int
					ac.Graphs[i], k = foldGraph(sub, known, false, caps)
					r += k
				}
			}
		}
		if r == 0 {
			continue
		}
		if attrs == nil {
			attrs = maps.Clone(n.Attrs)
		}
		attrs[name] = &ac
		removed += r
	}
	if attrs == nil {
		return n, 0
	}
	c := *n
	c.Attrs = attrs
	return &c, removed
}

// foldable reports whether all of n's outputs are known, small values.
func foldable(n *graph.Node, known map[string]*graph.Tensor) bool {
	if Has(n.Domain, n.OpType, Nondeterministic) {
		return false
	}
	outputs := 0
	for _, name := range n.Outputs {
		if name == "" {
			continue
		}
		v := known[name]
		if v == nil || v.NumElements() > maxValueElems {
			return false
		}
		outputs++
	}
	return outputs > 0
}
