package hostfallback

import (
	"context"
	"fmt"
	"slices"

	"github.com/onnxvk/onnxvk/graph"
)

// valueBytes is the memory a value holds: a tensor's (see tensorBytes),
// the sum of a sequence's or an optional's elements'.
func valueBytes(v graph.Value) int64 {
	switch v := v.(type) {
	case *graph.Tensor:
		return tensorBytes(v)
	case *graph.Sequence:
		var n int64
		for _, x := range v.Items {
			n += valueBytes(x)
		}
		return n
	case *graph.Optional:
		return valueBytes(v.V)
	}
	return 0
}

// RunGraph interprets a subgraph (an If branch, a Loop or Scan body) on the
// CPU: inputs are bound to g's inputs in order, names g does not define are
// looked up with outer, and g's outputs are returned in order. Values are
// allocated on their own, without an arena, and without a host memory
// limit; its kernels' parallel loops run within threads (nil: the whole
// pool).
func RunGraph(ctx context.Context, threads *Threads, g *graph.Graph, opsets map[string]int64, inputs []graph.Value, outer func(string) (graph.Value, bool)) ([]graph.Value, error) {
	return runGraph(ctx, threads, g, opsets, inputs, outer, 0, 0)
}

// runGraph is RunGraph whose kernels check what they allocate against a
// host memory limit beside the plan's memory (see Call.Check).
func runGraph(ctx context.Context, threads *Threads, g *graph.Graph, opsets map[string]int64, inputs []graph.Value, outer func(string) (graph.Value, bool), limit, planned int64) ([]graph.Value, error) {
	if len(inputs) > len(g.Inputs) {
		return nil, fmt.Errorf("hostfallback: subgraph %q takes %d inputs, got %d", g.Name, len(g.Inputs), len(inputs))
	}
	// A Loop whose body has no nodes checks for cancellation here.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	env := make(map[string]graph.Value, len(g.Nodes)+len(g.Inputs)+len(g.Initializers))
	for name, t := range g.Initializers {
		env[name] = t
	}
	// held counts the bytes of the values this run holds beside the
	// plan: a nested run counts them as planned.
	var held int64
	for i, v := range inputs {
		env[g.Inputs[i].Name] = v
		held += valueBytes(v)
	}
	lookup := func(name string) (graph.Value, bool) {
		if v, ok := env[name]; ok {
			return v, true
		}
		return outer(name)
	}
	for _, n := range g.Nodes {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		k := Lookup(n.Domain, n.OpType)
		if k == nil {
			return nil, fmt.Errorf("hostfallback: subgraph %q: %s: no CPU kernel", g.Name, n)
		}
		c := &Call{Node: n, Opset: n.OpsetIn(opsets), In: make([]graph.Value, len(n.Inputs)), Out: make([]graph.Value, len(n.Outputs)),
			Threads: threads, limit: limit, planned: planned, sub: true, held: held}
		for i, name := range n.Inputs {
			if name == "" {
				continue
			}
			v, ok := lookup(name)
			if !ok {
				return nil, fmt.Errorf("hostfallback: subgraph %q: %s: input %q is not defined", g.Name, n, name)
			}
			c.In[i] = v
		}
		c.RunGraph = func(sg *graph.Graph, in []graph.Value) ([]graph.Value, error) {
			return runGraph(ctx, threads, sg, opsets, in, lookup, limit, planned+held)
		}
		if err := k(c); err != nil {
			return nil, fmt.Errorf("hostfallback: subgraph %q: %w", g.Name, err)
		}
		for i, name := range n.Outputs {
			if name != "" {
				env[name] = c.Out[i]
				if !slices.Contains(c.In, c.Out[i]) {
					held += valueBytes(c.Out[i])
				}
			}
		}
	}
	out := make([]graph.Value, len(g.Outputs))
	for i, o := range g.Outputs {
		v, ok := lookup(o.Name)
		if !ok {
			return nil, fmt.Errorf("hostfallback: subgraph %q: output %q is not computed", g.Name, o.Name)
		}
		out[i] = v
	}
	return out, nil
}
