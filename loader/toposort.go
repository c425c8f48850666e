package loader

import (
	"container/heap"
	"fmt"
	"slices"

	"github.com/onnxvk/onnxvk/graph"
)

// sortGraphs puts the nodes of m's graph and of every subgraph in
// topological order where they are not, as ONNX Runtime accepts: some
// exporters append nodes after their readers (onnxconverter-common's
// float16 converter adds its Casts last). The order is stable: a node
// moves only behind what it reads. Nodes that cannot be ordered (a cycle,
// a value nothing produces) keep their relative order at the end, for
// validation to report. It returns a warning per reordered graph.
func sortGraphs(m *graph.Model) []string {
	if m.Graph == nil {
		return nil // validation reports it
	}
	var warnings []string
	captures := &graph.Captures{}
	var walk func(g *graph.Graph, where *place, outer *valueScope)
	walk = func(g *graph.Graph, where *place, outer *valueScope) {
		defined := &valueScope{names: map[string]bool{}, parent: outer}
		for _, in := range g.Inputs {
			defined.names[in.Name] = true
		}
		for name := range g.Initializers {
			defined.names[name] = true
		}
		for name := range g.SparseInitializers {
			defined.names[name] = true
		}
		// Inner graphs first: what a node's subgraphs capture is only
		// known once they are in order.
		inner := &valueScope{names: map[string]bool{}, parent: defined}
		for _, n := range g.Nodes {
			if n == nil {
				continue
			}
			for _, o := range n.Outputs {
				inner.names[o] = true
			}
		}
		for _, n := range g.Nodes {
			if n == nil {
				continue
			}
			for _, sg := range graph.NodeSubgraphs(n) {
				walk(sg, where.then(" > ", n.String()), inner)
			}
		}
		if moved := sortNodes(g, defined, captures); moved > 0 {
			warnings = append(warnings, fmt.Sprintf("%s: %d of %d nodes were not in topological order; reordered", where, moved, len(g.Nodes)))
		}
	}
	walk(m.Graph, (*place)(nil).then("", fmt.Sprintf("graph %q", m.Graph.Name)), nil)
	return warnings
}

// sortNodes orders g's nodes so that each comes after the nodes producing
// what it reads (its inputs and its subgraphs' captured values), taking
// at each step the ready node that came first; defined names need no
// producer. captures answers what the nodes' subgraphs read. It renumbers
// the nodes and returns how many changed position.
func sortNodes(g *graph.Graph, defined *valueScope, captures *graph.Captures) int {
	producer := map[string]int{}
	for i, n := range g.Nodes {
		if n == nil {
			continue
		}
		for _, o := range n.Outputs {
			if _, seen := producer[o]; !seen && o != "" && !defined.has(o) {
				producer[o] = i
			}
		}
	}
	readers := make([][]int, len(g.Nodes))
	waiting := make([]int, len(g.Nodes))
	ordered := true
	for i, n := range g.Nodes {
		if n == nil {
			continue
		}
		deps := map[int]bool{}
		for _, name := range slices.Concat(n.Inputs, captures.Of(n)) {
			if p, ok := producer[name]; ok && p != i && !deps[p] {
				deps[p] = true
				readers[p] = append(readers[p], i)
				waiting[i]++
				ordered = ordered && p < i
			}
		}
	}
	if ordered {
		return 0
	}
	ready := &indexHeap{}
	for i := range g.Nodes {
		if waiting[i] == 0 {
			heap.Push(ready, i)
		}
	}
	order := make([]int, 0, len(g.Nodes))
	placed := make([]bool, len(g.Nodes))
	for ready.Len() > 0 {
		i := heap.Pop(ready).(int)
		order = append(order, i)
		placed[i] = true
		for _, r := range readers[i] {
			if waiting[r]--; waiting[r] == 0 {
				heap.Push(ready, r)
			}
		}
	}
	for i := range g.Nodes {
		if !placed[i] {
			order = append(order, i)
		}
	}
	nodes := make([]*graph.Node, len(g.Nodes))
	moved := 0
	for pos, i := range order {
		nodes[pos] = g.Nodes[i]
		if pos != i {
			moved++
		}
		if nodes[pos] != nil {
			nodes[pos].Index = pos
		}
	}
	g.Nodes = nodes
	return moved
}

// indexHeap is a min-heap of node positions.
type indexHeap []int

func (h indexHeap) Len() int           { return len(h) }
func (h indexHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h indexHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *indexHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *indexHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
