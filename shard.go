package onnxvk

import (
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/planner"
)

// ErrAnnotated: ShardStages was asked to annotate a model that already has
// IR 11 multi-device annotations, without ShardOptions.Replace.
var ErrAnnotated = planner.ErrAnnotated

// ShardOptions tune ShardStages: the name of the configuration to add
// ("pipeline" by default) and whether to replace existing annotations.
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
