package hostfallback

import (
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// TestPropertyOpsHaveKernels checks that every op the planner treats by a
// property (sharding an elementwise op, a view sharing its input's
// memory, an activation fused into a convolution, a random op kept out of
// constant folding) has a CPU kernel, the device every node can fall back
// to.
func TestPropertyOpsHaveKernels(t *testing.T) {
	checked := 0
	for _, op := range ops.Names(graph.DefaultDomain) {
		if ops.Versions(graph.DefaultDomain, op)[0].Props == 0 {
			continue
		}
		checked++
		if Lookup(graph.DefaultDomain, op) == nil {
			t.Errorf("%s has properties and no CPU kernel", op)
		}
	}
	if checked == 0 {
		t.Fatal("no op has properties")
	}
}
