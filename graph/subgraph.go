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
func Captured(n *Node) []string { return new(Captures).Of(n) }

// Captures answers Captured for the nodes of one graph tree, computing
// what each subgraph reads from outside it once, so that asking about
// every node of a deep nesting costs time and memory linear in its size.
// Subgraphs must not change between calls. The zero value is ready to use.
type Captures struct {
	free map[*Graph][]string
}

// Of lists the outer-scope values that n's subgraphs read (at any depth),
// in a stable order: Captured(n).
func (c *Captures) Of(n *Node) []string {
	var out []string
	seen := map[string]bool{}
	for _, sg := range NodeSubgraphs(n) {
		for _, name := range c.freeIn(sg) {
			if !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	return out
}

// freeIn returns the names g reads from outside itself, in the order it
// first reads them: node inputs and what nested subgraphs read that are
// not g's inputs, initializers or outputs of its nodes before that point,
// then graph outputs g does not define.
func (c *Captures) freeIn(g *Graph) []string {
	if free, ok := c.free[g]; ok {
		return free
	}
	local := map[string]bool{}
	for _, in := range g.Inputs {
		local[in.Name] = true
	}
	for name := range g.Initializers {
		local[name] = true
	}
	free := []string{}
	read := func(name string) {
		if name != "" && !local[name] {
			// A name read once is free from then on: marking it local
			// keeps the list free of repeats.
			local[name] = true
			free = append(free, name)
		}
	}
	for _, sn := range g.Nodes {
		for _, name := range sn.Inputs {
			read(name)
		}
		for _, sg := range NodeSubgraphs(sn) {
			for _, name := range c.freeIn(sg) {
				read(name)
			}
		}
		for _, name := range sn.Outputs {
			local[name] = true
		}
	}
	for _, o := range g.Outputs {
		read(o.Name)
	}
	if c.free == nil {
		c.free = map[*Graph][]string{}
	}
	c.free[g] = free
	return free
}
