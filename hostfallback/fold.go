package hostfallback

import (
	"fmt"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/planner"
)

var _ planner.Folder = (*Device)(nil)

// foldLimit bounds what a kernel may allocate when it computes a node at
// plan time: the values constant folding keeps are small.
const foldLimit = 16 << 20

// Evaluate computes node n, imported at opset, from its inputs' values
// with the node's kernel, as a Run does, for constant folding (it makes
// Device a planner.Folder). It fails where the kernel fails, and for a
// node that would run a subgraph.
func (d *Device) Evaluate(n *graph.Node, opset int64, inputs []*graph.Tensor) ([]*graph.Tensor, error) {
	k := Lookup(n.Domain, n.OpType)
	if k == nil {
		return nil, fmt.Errorf("hostfallback: %s: no CPU kernel", n)
	}
	c := &Call{Node: n, Opset: opset, In: make([]graph.Value, len(inputs)), Out: make([]graph.Value, len(n.Outputs)), Threads: d.threads, limit: foldLimit,
		RunGraph: func(*graph.Graph, []graph.Value) ([]graph.Value, error) {
			return nil, fmt.Errorf("hostfallback: %s: a subgraph does not run at plan time", n)
		}}
	for i, t := range inputs {
		if t != nil {
			c.In[i] = t
		}
	}
	if err := k(c); err != nil {
		return nil, fmt.Errorf("hostfallback: %w", err)
	}
	out := make([]*graph.Tensor, len(c.Out))
	for i, v := range c.Out {
		out[i], _ = v.(*graph.Tensor)
	}
	return out, nil
}
