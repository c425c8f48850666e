package planner

import (
	"errors"
	"fmt"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/internal/partition"
)

// ErrAnnotated is wrapped by the error of ShardStages and
// ShardTensorParallel for a model that already has IR 11 multi-device
// annotations and no ShardOptions.Replace.
var ErrAnnotated = errors.New("the model already has device annotations")

// DefaultShardConfiguration is the name ShardStages gives the configuration
// it adds when ShardOptions.Configuration is "".
const DefaultShardConfiguration = "pipeline"

// ShardOptions tune ShardStages and ShardTensorParallel.
type ShardOptions struct {
	// Configuration names the device configuration to add; when "",
	// DefaultShardConfiguration for ShardStages and
	// DefaultTensorParallelConfiguration for ShardTensorParallel.
	Configuration string
	// Replace removes the model's device configurations and the device
	// annotations of all its nodes (subgraphs included) first; without it
	// a model that has any is refused.
	Replace bool
}

// StageCost describes one pipeline stage made by ShardStages.
type StageCost struct {
	// Nodes is the number of main-graph nodes in the stage.
	Nodes int
	// First and Last name the stage's first and last node (their op type
	// and position when unnamed).
	First, Last string
	// Cost is the stage's estimated cost: see NodeCosts.
	Cost int64
	// Share is Cost as a fraction of the whole model's cost.
	Share float64
}

// ShardStages annotates m for pipeline parallelism over stages devices: it
// adds an IR 11 device configuration with stages devices and gives every
// node of the main graph a pipeline stage, splitting the nodes, in their
// topological order, into stages contiguous runs balanced by estimated cost
// (NodeCosts): the costliest stage is as cheap as any contiguous split
// allows, and within that each stage, from the first, takes as near an
// equal share of the cost left as it can. Nodes of subgraphs follow the
// node that holds them. It raises m's IR version to 11 when it is lower.
//
// ShardStages refuses fewer than 1 stage, more stages than main-graph
// nodes, and a model with annotations unless opts.Replace is set; it
// changes m only on success (besides recording the inferred types of
// subgraph values, as planning does). It returns the stages it made.
func ShardStages(m *graph.Model, stages int, opts ShardOptions) ([]StageCost, error) {
	if m.Graph == nil {
		return nil, fmt.Errorf("planner: shard model %q: the model has no graph", m.Name)
	}
	if stages < 1 {
		return nil, fmt.Errorf("planner: shard model %q: %d stages: want at least 1", m.Name, stages)
	}
	if len(m.Graph.Nodes) < stages {
		return nil, fmt.Errorf("planner: shard model %q: %d stages: the main graph has only %d nodes", m.Name, stages, len(m.Graph.Nodes))
	}
	costs, err := shardCosts(m, opts)
	if err != nil {
		return nil, err
	}
	name := addConfiguration(m, opts, DefaultShardConfiguration, stages)
	var total int64
	for _, c := range costs {
		total += c
	}
	report := make([]StageCost, stages)
	start := 0
	for k, end := range partition.Contiguous(costs, stages) {
		st := &report[k]
		st.Nodes = end - start
		st.First, st.Last = nodeLabel(m.Graph.Nodes[start]), nodeLabel(m.Graph.Nodes[end-1])
		for i := start; i < end; i++ {
			n := m.Graph.Nodes[i]
			n.DeviceConfigs = append(n.DeviceConfigs, graph.NodeDeviceConfiguration{ConfigurationID: name, PipelineStage: int32(k), HasStage: true})
			st.Cost += costs[i]
		}
		st.Share = float64(st.Cost) / float64(total)
		start = end
	}
	return report, nil
}

// shardCosts checks that m may be annotated under opts (see
// ShardOptions.Replace) and returns the estimated cost of each node of its
// main graph (see NodeCosts).
func shardCosts(m *graph.Model, opts ShardOptions) ([]int64, error) {
	if !opts.Replace {
		if err := checkUnannotated(m); err != nil {
			return nil, fmt.Errorf("planner: shard model %q: %w", m.Name, err)
		}
	}
	costs, err := NodeCosts(m)
	if err != nil {
		return nil, fmt.Errorf("planner: shard model %q: %w", m.Name, err)
	}
	return costs, nil
}

// addConfiguration adds to m a device configuration of devices devices,
// named opts.Configuration or else def, first removing the model's
// annotations under opts.Replace, raises m's IR version to 11 when it is
// lower, and returns the configuration's name.
func addConfiguration(m *graph.Model, opts ShardOptions, def string, devices int) string {
	name := opts.Configuration
	if name == "" {
		name = def
	}
	if opts.Replace {
		m.Configurations = nil
		clearAnnotations(m.Graph)
	}
	m.Configurations = append(m.Configurations, graph.DeviceConfiguration{Name: name, NumDevices: int32(devices)})
	m.IRVersion = max(m.IRVersion, 11)
	return name
}

// checkUnannotated fails when m has a device configuration or a node with
// a device annotation.
func checkUnannotated(m *graph.Model) error {
	if len(m.Configurations) > 0 {
		return fmt.Errorf("%w: configuration %q (replace them to shard anew)", ErrAnnotated, m.Configurations[0].Name)
	}
	if n := annotatedNode(m.Graph); n != nil {
		return fmt.Errorf("%s: %w (replace them to shard anew)", n, ErrAnnotated)
	}
	return nil
}

// annotatedNode returns the first node of g or its subgraphs that has a
// device annotation, or nil.
func annotatedNode(g *graph.Graph) *graph.Node {
	for _, n := range g.Nodes {
		if len(n.DeviceConfigs) > 0 {
			return n
		}
		for _, a := range n.Attrs {
			for _, sg := range graph.Subgraphs(a) {
				if inner := annotatedNode(sg); inner != nil {
					return inner
				}
			}
		}
	}
	return nil
}

// clearAnnotations removes the device annotations of g's nodes and of
// their subgraphs' nodes.
func clearAnnotations(g *graph.Graph) {
	for _, n := range g.Nodes {
		n.DeviceConfigs = nil
		for _, a := range n.Attrs {
			for _, sg := range graph.Subgraphs(a) {
				clearAnnotations(sg)
			}
		}
	}
}

// nodeLabel names a node for StageCost: its name, else its op type and
// position.
func nodeLabel(n *graph.Node) string {
	if n.Name != "" {
		return n.Name
	}
	return fmt.Sprintf("%s #%d", n.OpType, n.Index)
}

// NodeCosts estimates the cost of each node of m's main graph, by index,
// from the shapes that type and shape inference gives the declared inputs:
// 2·multiply-adds for MatMul, Gemm, Conv and ConvTranspose; for other
// nodes the elements they read (constants aside) and write. A node's
// subgraphs add their nodes' costs; a Constant costs nothing; symbolic
// and unknown dimensions count as 1; every node costs at least 1. m is
// not changed, besides the inferred types of subgraph values.
func NodeCosts(m *graph.Model) ([]int64, error) {
	pm, g := cloneModel(m)
	if _, err := ops.InferModel(pm, nil, nil); err != nil {
		return nil, fmt.Errorf("estimating node costs: %w", err)
	}
	costs := make([]int64, len(g.Nodes))
	for i, n := range g.Nodes {
		costs[i] = max(nodeCost(pm, g, n), 1)
	}
	return costs, nil
}

// nodeCost estimates the cost of n, a node of g, and of its subgraphs.
func nodeCost(m *graph.Model, g *graph.Graph, n *graph.Node) int64 {
	var cost int64
	for _, a := range n.Attrs {
		for _, sg := range graph.Subgraphs(a) {
			for _, inner := range sg.Nodes {
				cost += nodeCost(m, sg, inner)
			}
		}
	}
	dims := func(name string) []int64 { return knownDims(g.TypeOf(name)) }
	out := int64(1)
	if len(n.Outputs) > 0 {
		out = graph.NumElements(dims(n.Outputs[0]))
	}
	if n.Domain == graph.DefaultDomain {
		switch n.OpType {
		case "Constant":
			return cost
		case "MatMul":
			if a := dims(n.Input(0)); len(a) > 0 {
				return cost + 2*out*a[len(a)-1]
			}
		case "Gemm":
			if a := dims(n.Input(0)); len(a) == 2 {
				k := a[1]
				if ops.Params[ops.GemmParams](n, m.OpsetOf(n)).TransA != 0 {
					k = a[0]
				}
				return cost + 2*out*k
			}
		case "Conv":
			if w := dims(n.Input(1)); len(w) > 1 {
				return cost + 2*out*graph.NumElements(w[1:])
			}
		case "ConvTranspose":
			if w := dims(n.Input(1)); len(w) > 1 {
				return cost + 2*graph.NumElements(dims(n.Input(0)))*graph.NumElements(w[1:])
			}
		}
	}
	for _, in := range n.Inputs {
		if in != "" && g.Initializers[in] == nil {
			cost += graph.NumElements(dims(in))
		}
	}
	for _, o := range n.Outputs {
		if o != "" {
			cost += graph.NumElements(dims(o))
		}
	}
	return cost
}

// knownDims returns the sizes of a tensor type's shape, 1 for a symbolic
// or unknown dimension; nil for a value of unknown type or rank, or not a
// tensor.
func knownDims(t *graph.Type) []int64 {
	if t == nil || t.Kind != graph.TensorKind || t.Shape == nil {
		return nil
	}
	out := make([]int64, len(t.Shape))
	for i, d := range t.Shape {
		out[i] = 1
		if d.Known() {
			out[i] = d.Value
		}
	}
	return out
}
