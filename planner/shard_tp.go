package planner

import (
	"fmt"
	"slices"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// DefaultTensorParallelConfiguration is the name ShardTensorParallel gives
// the configuration it adds when ShardOptions.Configuration is "".
const DefaultTensorParallelConfiguration = "tensor-parallel"

// TensorParallelPair describes one pair of nodes annotated by
// ShardTensorParallel: First's weight is split by output features
// (columns), Second's by input features (rows), so that each device
// computes its slice of the hidden values and its partial sum of Second's
// product, which the runtime adds up.
type TensorParallelPair struct {
	// First and Second name the pair's MatMul or Gemm nodes (their op type
	// and position when unnamed).
	First, Second string
	// FirstWeight and SecondWeight name the split weights, as the nodes'
	// input 1 names them.
	FirstWeight, SecondWeight string
	// FirstAxis and SecondAxis are the weight axes split: First's output
	// features, Second's input features (K).
	FirstAxis, SecondAxis int64
	// Between is the number of elementwise nodes between First and Second.
	Between int
	// Hidden is the size of the split dimension: First's output features,
	// which are Second's input features.
	Hidden int64
	// Shards are the sizes of the hidden slices of devices 0, 1, ...:
	// Hidden split as evenly as possible, the first Hidden mod ways
	// devices taking one more, as the planner splits uneven axes.
	Shards []int64
	// Cost is the estimated cost of First, the nodes between and Second:
	// see NodeCosts.
	Cost int64
	// Share is Cost as a fraction of the whole model's cost.
	Share float64
}

// ShardTensorParallel annotates m for Megatron-style tensor parallelism
// over ways devices: it adds an IR 11 device configuration with ways
// devices and annotates pairs of nodes of the main graph that can run
// split across them, leaving every other node unannotated (run unsharded).
// It raises m's IR version to 11 when it is lower.
//
// A pair is a MatMul or Gemm F, whose output goes through zero or more
// elementwise nodes (ops.Elementwise) to input A of a MatMul or Gemm S.
// Both weights (input B) must be constant 2-D tensors: initializers that
// are not graph inputs, or Identity nodes of them (as PyTorch exports
// shared weights). Every value from F to S must have exactly one consuming
// node (subgraph reads count) and not be a graph output, the other inputs
// of the elementwise nodes and F's bias C (Gemm) must be constants
// (initializers, Constant nodes, Identity nodes of them), and S may not be
// a Gemm with transA. F's output features (axis 1 of B for MatMul and Gemm,
// axis 0 for Gemm with transB) must number as many as S's input features
// (axis 0, or 1 with transB) and at least ways. F is annotated with a
// sharding spec splitting its weight's output-feature axis into ways
// shards on devices 0..ways-1, S with one splitting its weight's
// input-feature axis alike; the sizes need not divide evenly. Pairs are
// taken greedily in the nodes' topological order and a node belongs to at
// most one pair: in a chain F1 → S1 = F2 → S2, only F1 and S1 pair.
//
// ShardTensorParallel refuses fewer than 1 way, a model with annotations
// unless opts.Replace is set, and a model with no pair; it changes m only
// on success (besides recording the inferred types of subgraph values, as
// planning does). It returns the pairs it annotated, in order.
func ShardTensorParallel(m *graph.Model, ways int, opts ShardOptions) ([]TensorParallelPair, error) {
	if m.Graph == nil {
		return nil, fmt.Errorf("planner: shard model %q: the model has no graph", m.Name)
	}
	if ways < 1 {
		return nil, fmt.Errorf("planner: shard model %q: tensor parallelism over %d devices: want at least 1", m.Name, ways)
	}
	costs, err := shardCosts(m, opts)
	if err != nil {
		return nil, err
	}
	pairs := newPairFinder(m).find(ways)
	if len(pairs) == 0 {
		return nil, fmt.Errorf("planner: shard model %q: no MatMul/Gemm pair with constant weights to shard %d ways", m.Name, ways)
	}
	name := addConfiguration(m, opts, DefaultTensorParallelConfiguration, ways)
	var total int64
	for _, c := range costs {
		total += c
	}
	report := make([]TensorParallelPair, len(pairs))
	for k, p := range pairs {
		f, s := m.Graph.Nodes[p.first], m.Graph.Nodes[p.second]
		f.DeviceConfigs = append(f.DeviceConfigs, graph.NodeDeviceConfiguration{ConfigurationID: name,
			Sharding: []graph.ShardingSpec{splitSpec(f.Inputs[1], p.firstAxis, p.hidden, ways)}})
		s.DeviceConfigs = append(s.DeviceConfigs, graph.NodeDeviceConfiguration{ConfigurationID: name,
			Sharding: []graph.ShardingSpec{splitSpec(s.Inputs[1], p.secondAxis, p.hidden, ways)}})
		r := &report[k]
		*r = TensorParallelPair{First: nodeLabel(f), Second: nodeLabel(s), FirstWeight: f.Inputs[1], SecondWeight: s.Inputs[1],
			FirstAxis: p.firstAxis, SecondAxis: p.secondAxis, Between: len(p.chain), Hidden: p.hidden,
			Cost: costs[p.first] + costs[p.second]}
		for _, i := range p.chain {
			r.Cost += costs[i]
		}
		r.Share = float64(r.Cost) / float64(total)
		for d := range int64(ways) {
			lo, hi := splitRange(p.hidden, int64(ways), d)
			r.Shards = append(r.Shards, hi-lo)
		}
	}
	return report, nil
}

// splitSpec is the sharding spec that splits axis (of size size) of the
// tensor name into ways shards on devices 0..ways-1.
func splitSpec(name string, axis, size int64, ways int) graph.ShardingSpec {
	devices := make([]int64, ways)
	for d := range devices {
		devices[d] = int64(d)
	}
	return graph.ShardingSpec{TensorName: name, Devices: devices, ShardedDims: []graph.ShardedDim{
		{Axis: axis, SimpleSharding: []graph.SimpleSharding{{Dim: graph.DimOf(size), NumShards: int64(ways)}}},
	}}
}

// megatronPair is a pair found by pairFinder: node indices in the graph.
type megatronPair struct {
	first, second int
	// chain are the elementwise nodes between, in order.
	chain []int
	// firstAxis and secondAxis are the split axes of the two weights;
	// hidden is their size.
	firstAxis, secondAxis int64
	hidden                int64
}

// pairFinder finds the Megatron pairs of a graph: see ShardTensorParallel.
type pairFinder struct {
	m *graph.Model
	g *graph.Graph
	// producer is the index of the node that writes each value.
	producer map[string]int
	// consumers are the indices of the distinct nodes that read each value,
	// as an input or from a subgraph.
	consumers map[string][]int
	// inputs and outputs are the graph's input and output names.
	inputs, outputs map[string]bool
}

// newPairFinder indexes the producers, consumers, inputs and outputs of
// m's main graph.
func newPairFinder(m *graph.Model) *pairFinder {
	g := m.Graph
	pf := &pairFinder{m: m, g: g, producer: map[string]int{}, consumers: map[string][]int{}, inputs: graphInputs(g), outputs: map[string]bool{}}
	for _, o := range g.Outputs {
		pf.outputs[o.Name] = true
	}
	for i, n := range g.Nodes {
		for _, o := range n.Outputs {
			if o != "" {
				pf.producer[o] = i
			}
		}
		for _, in := range slices.Concat(n.Inputs, graph.Captured(n)) {
			if c := pf.consumers[in]; in != "" && (len(c) == 0 || c[len(c)-1] != i) {
				pf.consumers[in] = append(c, i)
			}
		}
	}
	return pf
}

// find returns the pairs whose hidden size is at least ways, taken
// greedily in node order, no node in two pairs.
func (pf *pairFinder) find(ways int) []megatronPair {
	used := map[int]bool{}
	var pairs []megatronPair
	for i := range pf.g.Nodes {
		if used[i] {
			continue
		}
		p, ok := pf.pairAt(i, used)
		if !ok || p.hidden < int64(ways) {
			continue
		}
		used[p.first], used[p.second] = true, true
		for _, j := range p.chain {
			used[j] = true
		}
		pairs = append(pairs, p)
	}
	return pairs
}

// pairAt returns the pair whose first node is node i, if there is one
// that uses no node of used.
func (pf *pairFinder) pairAt(i int, used map[int]bool) (megatronPair, bool) {
	f := pf.g.Nodes[i]
	p := megatronPair{first: i}
	w, ok := pf.weight(f, i)
	if !ok || len(f.Outputs) != 1 || f.Outputs[0] == "" {
		return p, false
	}
	p.firstAxis = 1
	if f.OpType == "Gemm" {
		if ops.Params[ops.GemmParams](f, pf.m.OpsetOf(f)).TransB != 0 {
			p.firstAxis = 0
		}
		// C is broadcast to F's output and must be split with it.
		if c := f.Input(2); c != "" && !pf.constant(c, i) {
			return p, false
		}
	}
	p.hidden = w.Shape[p.firstAxis]
	v, last := f.Outputs[0], i
	for {
		if pf.outputs[v] || len(pf.consumers[v]) != 1 {
			return p, false
		}
		j := pf.consumers[v][0]
		// j <= last only in a cyclic graph, which inference refuses first.
		if used[j] || j <= last {
			return p, false
		}
		n := pf.g.Nodes[j]
		if elementwise(n) {
			for _, in := range n.Inputs {
				if in != "" && in != v && !pf.constant(in, j) {
					return p, false
				}
			}
			p.chain = append(p.chain, j)
			v, last = n.Outputs[0], j
			continue
		}
		w, ok := pf.weight(n, j)
		if !ok || n.Inputs[0] != v || slices.Contains(n.Inputs[1:], v) || (n.OpType == "Gemm" && ops.Params[ops.GemmParams](n, pf.m.OpsetOf(n)).TransA != 0) {
			return p, false
		}
		p.second = j
		if n.OpType == "Gemm" && ops.Params[ops.GemmParams](n, pf.m.OpsetOf(n)).TransB != 0 {
			p.secondAxis = 1
		}
		return p, w.Shape[p.secondAxis] == p.hidden
	}
}

// weight returns the weight of n, node at, when n is a MatMul or Gemm
// whose input B is a constant 2-D tensor (see constantTensor).
func (pf *pairFinder) weight(n *graph.Node, at int) (*graph.Tensor, bool) {
	if n.Domain != graph.DefaultDomain || (n.OpType != "MatMul" && n.OpType != "Gemm") || len(n.Inputs) < 2 {
		return nil, false
	}
	t := pf.constantTensor(n.Inputs[1], at)
	if t == nil || len(t.Shape) != 2 {
		return nil, false
	}
	return t, true
}

// constantTensor returns the tensor of value name when it is an
// initializer that is not a graph input, a Constant node's tensor value,
// or the output of an Identity of such a value, neither value a graph
// output: the values that planning turns into initializers whatever their
// size (see foldConstantNodes). It returns nil for any other value. Only
// nodes before node before count as producers, which keeps a cyclic graph
// from looping.
func (pf *pairFinder) constantTensor(name string, before int) *graph.Tensor {
	if pf.inputs[name] {
		return nil
	}
	if t := pf.g.Initializers[name]; t != nil {
		return t
	}
	i, ok := pf.producer[name]
	if !ok || i >= before {
		return nil
	}
	n := pf.g.Nodes[i]
	if n.Domain != graph.DefaultDomain || len(n.Outputs) != 1 || pf.outputs[name] {
		return nil
	}
	switch {
	case n.OpType == "Constant":
		return n.AttrTensor("value")
	case n.OpType == "Identity" && len(n.Inputs) == 1 && !pf.outputs[n.Inputs[0]]:
		return pf.constantTensor(n.Inputs[0], i)
	}
	return nil
}

// constant reports whether value name is a constant: an initializer that
// is not a graph input, the output of a Constant node, or the output of an
// Identity of a constant; only nodes before node before count as
// producers.
func (pf *pairFinder) constant(name string, before int) bool {
	if pf.inputs[name] {
		return false
	}
	if pf.g.Initializers[name] != nil {
		return true
	}
	i, ok := pf.producer[name]
	if !ok || i >= before {
		return false
	}
	n := pf.g.Nodes[i]
	if n.Domain != graph.DefaultDomain {
		return false
	}
	switch n.OpType {
	case "Constant":
		return true
	case "Identity":
		return len(n.Inputs) == 1 && pf.constant(n.Inputs[0], i)
	}
	return false
}
