package onnxvk

import (
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/planner"
)

// ErrAnnotated: ShardStages or ShardTensorParallel was asked to annotate a
// model that already has IR 11 multi-device annotations, without
// ShardOptions.Replace.
var ErrAnnotated = planner.ErrAnnotated

// ShardOptions tune ShardStages and ShardTensorParallel: the name of the
// configuration to add ("pipeline" or "tensor-parallel" by default) and
// whether to replace existing annotations.
type ShardOptions = planner.ShardOptions

// StageCost describes one pipeline stage made by ShardStages: its node
// count, first and last node, estimated cost and share of the total.
type StageCost = planner.StageCost

// ShardStages annotates m for pipeline parallelism over stages logical
// devices: an IR 11 device configuration, and for every main-graph node a
// pipeline stage, the nodes split in topological order into contiguous
// stages balanced by estimated cost. Save the model with loader.Save or
// loader.SaveArchive; a session of it runs stage k on logical device k (see
// WithDeviceMapping). See planner.ShardStages for the details and errors.
func ShardStages(m *graph.Model, stages int, opts ShardOptions) ([]StageCost, error) {
	return planner.ShardStages(m, stages, opts)
}

// TensorParallelPair describes one pair of nodes annotated by
// ShardTensorParallel: the two MatMul or Gemm nodes, their split weights
// and axes, the hidden size split and its shards, the elementwise nodes
// between, and the pair's estimated cost and share of the total.
type TensorParallelPair = planner.TensorParallelPair

// ShardTensorParallel annotates m for Megatron-style tensor parallelism
// over ways logical devices: an IR 11 device configuration
// ("tensor-parallel" by default), and sharding specs on each pair of a
// MatMul or Gemm with a constant weight, a chain of elementwise nodes, and
// a second MatMul or Gemm with a constant weight: the first weight split by
// output features, the second by input features, so that each device
// computes a slice of the hidden values and the partial sums are added up.
// Other nodes stay unannotated and run unsharded. Save the model with
// loader.Save or loader.SaveArchive. See planner.ShardTensorParallel for
// the details and errors.
func ShardTensorParallel(m *graph.Model, ways int, opts ShardOptions) ([]TensorParallelPair, error) {
	return planner.ShardTensorParallel(m, ways, opts)
}
