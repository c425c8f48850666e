package planner

import (
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// elementwise reports whether n is an elementwise op (ops.Elementwise)
// with one output: a shard of its output needs only the matching shards of
// its inputs, so it keeps its inputs' sharding.
func elementwise(n *graph.Node) bool {
	return ops.Has(n.Domain, n.OpType, ops.Elementwise) && len(n.Outputs) == 1
}
