package graph

import (
	"maps"
	"slices"
)

// Subgraphs returns the non-nil graphs attribute a holds (a graph or a
// list of graphs); nil for other attributes.
func Subgraphs(a *Attribute) []*Graph {
	if a == nil {
		return nil
	}
	var gs []*Graph
	switch a.Type {
	case AttrGraph:
		gs = []*Graph{a.G}
	case AttrGraphs:
		gs = a.Graphs
	}
	return slices.DeleteFunc(slices.Clone(gs), func(g *Graph) bool { return g == nil })
}

// NodeSubgraphs returns the graphs among n's attributes, in the order of
// the attributes' names.
func NodeSubgraphs(n *Node) []*Graph {
	var out []*Graph
	for _, name := range slices.Sorted(maps.Keys(n.Attrs)) {
		out = append(out, Subgraphs(n.Attrs[name])...)
	}
	return out
}

// Captured lists the outer-scope values that n's subgraphs read (at any
// depth), in a stable order.
func Captured(n *Node) []string {
	seen := map[string]bool{}
	var out []string
	for _, sg := range NodeSubgraphs(n) {
		walkCaptured(sg, map[string]bool{}, seen, &out)
	}
	return out
}

// walkCaptured collects the names a nested subgraph reads from outside
// itself and outside the enclosing subgraphs' locals.
func walkCaptured(g *Graph, enclosing, seen map[string]bool, out *[]string) {
	local := maps.Clone(enclosing)
	for _, in := range g.Inputs {
		local[in.Name] = true
	}
	for name := range g.Initializers {
		local[name] = true
	}
	for _, sn := range g.Nodes {
		for _, name := range sn.Inputs {
			if name != "" && !local[name] && !seen[name] {
				seen[name] = true
				*out = append(*out, name)
			}
		}
		for _, sg := range NodeSubgraphs(sn) {
			walkCaptured(sg, local, seen, out)
		}
		for _, name := range sn.Outputs {
			local[name] = true
		}
	}
	for _, o := range g.Outputs {
		if !local[o.Name] && !seen[o.Name] {
			seen[o.Name] = true
			*out = append(*out, o.Name)
		}
	}
}
