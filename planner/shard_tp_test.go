package planner_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/planner"
)

// mlp builds x[4, 8] -> MatMul w1[8, hidden] -> Add b1 -> Relu -> MatMul
// w2[hidden, 8] -> Add b2 -> y on an IR 8 model: one Megatron pair, mm1
// and mm2.
func mlp(hidden int64) *graph.Model {
	g := graph.NewGraph("mlp")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(4, 8))}}
	g.Initializers["w1"] = graph.NewTensor(graph.Float, []int64{8, hidden})
	g.Initializers["b1"] = graph.NewTensor(graph.Float, []int64{hidden})
	g.Initializers["w2"] = graph.NewTensor(graph.Float, []int64{hidden, 8})
	g.Initializers["b2"] = graph.NewTensor(graph.Float, []int64{8})
	g.Nodes = []*graph.Node{
		{Name: "mm1", OpType: "MatMul", Inputs: []string{"x", "w1"}, Outputs: []string{"h"}},
		{Name: "add1", OpType: "Add", Inputs: []string{"h", "b1"}, Outputs: []string{"a"}},
		{Name: "relu", OpType: "Relu", Inputs: []string{"a"}, Outputs: []string{"r"}},
		{Name: "mm2", OpType: "MatMul", Inputs: []string{"r", "w2"}, Outputs: []string{"z"}},
		{Name: "add2", OpType: "Add", Inputs: []string{"z", "b2"}, Outputs: []string{"y"}},
	}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	return &graph.Model{Name: "mlp", IRVersion: 8, Opsets: map[string]int64{"": 14}, Graph: reindex(g)}
}

// reindex sets the Index of g's nodes to their positions.
func reindex(g *graph.Graph) *graph.Graph {
	for i, n := range g.Nodes {
		n.Index = i
	}
	return g
}

// annotations returns the device annotations of m's main-graph nodes that
// have any, by node name.
func annotations(m *graph.Model) map[string][]graph.NodeDeviceConfiguration {
	out := map[string][]graph.NodeDeviceConfiguration{}
	for _, n := range m.Graph.Nodes {
		if n.DeviceConfigs != nil {
			out[n.Name] = n.DeviceConfigs
		}
	}
	return out
}

// tpSplit is the annotation of configuration config splitting axis (of
// size size) of tensor into ways shards on devices 0..ways-1.
func tpSplit(config, tensor string, axis, size int64, ways int) []graph.NodeDeviceConfiguration {
	var devices []int64
	for d := range int64(ways) {
		devices = append(devices, d)
	}
	return []graph.NodeDeviceConfiguration{{ConfigurationID: config, Sharding: []graph.ShardingSpec{{
		TensorName: tensor, Devices: devices,
		ShardedDims: []graph.ShardedDim{{Axis: axis, SimpleSharding: []graph.SimpleSharding{{Dim: graph.DimOf(size), NumShards: int64(ways)}}}},
	}}}}
}

func TestShardTensorParallelMLP(t *testing.T) {
	m := mlp(16)
	pairs, err := planner.ShardTensorParallel(m, 2, planner.ShardOptions{})
	require.NoError(t, err)
	require.Equal(t, int64(11), m.IRVersion)
	require.Equal(t, []graph.DeviceConfiguration{{Name: planner.DefaultTensorParallelConfiguration, NumDevices: 2}}, m.Configurations)
	require.NoError(t, planner.CheckDeviceConfigurations(m))
	// Costs: each MatMul 2·4·16·8 = 1024; Add and Relu read and write
	// 4·16 elements (the bias is a constant); the last Add 2·4·8.
	require.Equal(t, []planner.TensorParallelPair{{
		First: "mm1", Second: "mm2", FirstWeight: "w1", SecondWeight: "w2", FirstAxis: 1, SecondAxis: 0,
		Between: 2, Hidden: 16, Shards: []int64{8, 8}, Cost: 2304, Share: 2304.0 / 2368,
	}}, pairs)
	require.Equal(t, map[string][]graph.NodeDeviceConfiguration{
		"mm1": {{ConfigurationID: "tensor-parallel", Sharding: []graph.ShardingSpec{{TensorName: "w1", Devices: []int64{0, 1},
			ShardedDims: []graph.ShardedDim{{Axis: 1, SimpleSharding: []graph.SimpleSharding{{Dim: graph.DimOf(16), NumShards: 2}}}}}}}},
		"mm2": {{ConfigurationID: "tensor-parallel", Sharding: []graph.ShardingSpec{{TensorName: "w2", Devices: []int64{0, 1},
			ShardedDims: []graph.ShardedDim{{Axis: 0, SimpleSharding: []graph.SimpleSharding{{Dim: graph.DimOf(16), NumShards: 2}}}}}}}},
	}, annotations(m))

	// Uneven splits are allowed; one device too.
	for ways, shards := range map[int][]int64{3: {6, 5, 5}, 1: {16}, 16: slicesOf(16, 1)} {
		m := mlp(16)
		pairs, err := planner.ShardTensorParallel(m, ways, planner.ShardOptions{Configuration: "tp"})
		require.NoError(t, err)
		require.Len(t, pairs, 1)
		require.Equal(t, shards, pairs[0].Shards)
		require.Equal(t, []graph.DeviceConfiguration{{Name: "tp", NumDevices: int32(ways)}}, m.Configurations)
		require.Equal(t, map[string][]graph.NodeDeviceConfiguration{
			"mm1": tpSplit("tp", "w1", 1, 16, ways), "mm2": tpSplit("tp", "w2", 0, 16, ways),
		}, annotations(m))
		require.NoError(t, planner.CheckDeviceConfigurations(m))
	}
}

// slicesOf returns n copies of v.
func slicesOf(n int, v int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// gemmPair builds x[4, 8] -> Gemm (transB, w1[16, 8], c1[16]) -> Tanh ->
// Gemm (transB, w2[8, 16], c2[8]) -> y.
func gemmPair() *graph.Model {
	g := graph.NewGraph("gemms")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(4, 8))}}
	g.Initializers["w1"] = graph.NewTensor(graph.Float, []int64{16, 8})
	g.Initializers["c1"] = graph.NewTensor(graph.Float, []int64{16})
	g.Initializers["w2"] = graph.NewTensor(graph.Float, []int64{8, 16})
	g.Initializers["c2"] = graph.NewTensor(graph.Float, []int64{8})
	transB := map[string]*graph.Attribute{"transB": {Name: "transB", Type: graph.AttrInt, I: 1}}
	g.Nodes = []*graph.Node{
		{Name: "g1", OpType: "Gemm", Inputs: []string{"x", "w1", "c1"}, Outputs: []string{"h"}, Attrs: transB},
		{Name: "tanh", OpType: "Tanh", Inputs: []string{"h"}, Outputs: []string{"t"}},
		{Name: "g2", OpType: "Gemm", Inputs: []string{"t", "w2", "c2"}, Outputs: []string{"y"}, Attrs: transB},
	}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	return &graph.Model{Name: "gemms", IRVersion: 8, Opsets: map[string]int64{"": 14}, Graph: reindex(g)}
}

func TestShardTensorParallelGemm(t *testing.T) {
	m := gemmPair()
	pairs, err := planner.ShardTensorParallel(m, 4, planner.ShardOptions{})
	require.NoError(t, err)
	require.Len(t, pairs, 1)
	require.Equal(t, planner.TensorParallelPair{First: "g1", Second: "g2", FirstWeight: "w1", SecondWeight: "w2",
		FirstAxis: 0, SecondAxis: 1, Between: 1, Hidden: 16, Shards: []int64{4, 4, 4, 4}}, withoutCost(pairs[0]))
	require.Equal(t, map[string][]graph.NodeDeviceConfiguration{
		"g1": tpSplit("tensor-parallel", "w1", 0, 16, 4), "g2": tpSplit("tensor-parallel", "w2", 1, 16, 4),
	}, annotations(m))
	require.InDelta(t, 1, pairs[0].Share, 1e-12)

	// Without transB the axes swap.
	m = gemmPair()
	for _, n := range m.Graph.Nodes {
		n.Attrs = nil
	}
	m.Graph.Initializers["w1"] = graph.NewTensor(graph.Float, []int64{8, 16})
	m.Graph.Initializers["w2"] = graph.NewTensor(graph.Float, []int64{16, 8})
	_, err = planner.ShardTensorParallel(m, 2, planner.ShardOptions{})
	require.NoError(t, err)
	require.Equal(t, map[string][]graph.NodeDeviceConfiguration{
		"g1": tpSplit("tensor-parallel", "w1", 1, 16, 2), "g2": tpSplit("tensor-parallel", "w2", 0, 16, 2),
	}, annotations(m))

	// A Gemm first with transA pairs (its output is still [M, N]); a Gemm
	// second with transA does not.
	m = gemmPair()
	m.Graph.Inputs[0].Type = graph.TensorType(graph.Float, graph.ShapeOf(8, 4))
	m.Graph.Nodes[0].Attrs = map[string]*graph.Attribute{"transA": {Name: "transA", Type: graph.AttrInt, I: 1}, "transB": m.Graph.Nodes[0].Attrs["transB"]}
	_, err = planner.ShardTensorParallel(m, 2, planner.ShardOptions{})
	require.NoError(t, err)
	require.Len(t, annotations(m), 2)
	// (x[16, 8] makes K = 16 match the hidden size).
	m = gemmPair()
	m.Graph.Inputs[0].Type = graph.TensorType(graph.Float, graph.ShapeOf(16, 8))
	m.Graph.Nodes[2].Attrs = map[string]*graph.Attribute{"transA": {Name: "transA", Type: graph.AttrInt, I: 1}}
	m.Graph.Initializers["w2"] = graph.NewTensor(graph.Float, []int64{16, 8})
	requireNoPair(t, m, 2)

	// The first Gemm's bias is split with its output: it must be constant.
	m = gemmPair()
	m.Graph.Inputs = append(m.Graph.Inputs, &graph.ValueInfo{Name: "c1", Type: graph.TensorType(graph.Float, graph.ShapeOf(16))})
	requireNoPair(t, m, 2)
	// The second's bias is added after the partial sums: any value will do.
	m = gemmPair()
	m.Graph.Inputs = append(m.Graph.Inputs, &graph.ValueInfo{Name: "c2", Type: graph.TensorType(graph.Float, graph.ShapeOf(8))})
	_, err = planner.ShardTensorParallel(m, 2, planner.ShardOptions{})
	require.NoError(t, err)
	require.Len(t, annotations(m), 2)
}

func withoutCost(p planner.TensorParallelPair) planner.TensorParallelPair {
	p.Cost, p.Share = 0, 0
	return p
}

// requireNoPair checks that ShardTensorParallel finds no pair in m for
// ways devices and leaves m as it was.
func requireNoPair(t *testing.T, m *graph.Model, ways int) {
	t.Helper()
	before := annotations(m)
	ir := m.IRVersion
	_, err := planner.ShardTensorParallel(m, ways, planner.ShardOptions{})
	require.ErrorContains(t, err, fmt.Sprintf(`shard model %q: no MatMul/Gemm pair with constant weights to shard %d ways`, m.Name, ways))
	require.Empty(t, m.Configurations)
	require.Equal(t, ir, m.IRVersion)
	require.Equal(t, before, annotations(m))
}

func TestShardTensorParallelNoPair(t *testing.T) {
	// A non-elementwise op between the MatMuls breaks the chain.
	m := mlp(16)
	m.Graph.Nodes[2].OpType = "Softmax"
	requireNoPair(t, m, 2)

	// So does a value read twice, a value that is a graph output, a
	// non-constant operand of an elementwise op, or a value a subgraph
	// reads.
	m = mlp(16)
	m.Graph.Nodes = append(m.Graph.Nodes, &graph.Node{Name: "extra", OpType: "Neg", Inputs: []string{"a"}, Outputs: []string{"n"}, Index: 5})
	m.Graph.Outputs = append(m.Graph.Outputs, &graph.ValueInfo{Name: "n"})
	requireNoPair(t, m, 2)
	m = mlp(16)
	m.Graph.Outputs = append(m.Graph.Outputs, &graph.ValueInfo{Name: "h"})
	requireNoPair(t, m, 2)
	m = mlp(16)
	m.Graph.Inputs = append(m.Graph.Inputs, &graph.ValueInfo{Name: "s", Type: graph.TensorType(graph.Float, graph.ShapeOf(16))})
	m.Graph.Nodes[1].Inputs = []string{"s", "h"}
	requireNoPair(t, m, 2)
	m = mlp(16)
	body := graph.NewGraph("body")
	body.Nodes = []*graph.Node{{Name: "inner", OpType: "Identity", Inputs: []string{"r"}, Outputs: []string{"o"}}}
	body.Outputs = []*graph.ValueInfo{{Name: "o"}}
	m.Graph.Initializers["cond"] = graph.Scalar(graph.Bool, true)
	m.Graph.Nodes = append(m.Graph.Nodes, &graph.Node{Name: "if", OpType: "If", Inputs: []string{"cond"}, Outputs: []string{"o2"}, Index: 5,
		Attrs: map[string]*graph.Attribute{"then_branch": {Name: "then_branch", Type: graph.AttrGraph, G: body}, "else_branch": {Name: "else_branch", Type: graph.AttrGraph, G: body}}})
	m.Graph.Outputs = append(m.Graph.Outputs, &graph.ValueInfo{Name: "o2"})
	requireNoPair(t, m, 2)

	// Weights must be constant 2-D tensors: not overridable by an input,
	// not computed.
	m = mlp(16)
	m.Graph.Inputs = append(m.Graph.Inputs, &graph.ValueInfo{Name: "w2", Type: graph.TensorType(graph.Float, graph.ShapeOf(16, 8))})
	requireNoPair(t, m, 2)
	m = mlp(16)
	m.Graph.Nodes[3].Inputs = []string{"r", "w2n"}
	m.Graph.Nodes = append([]*graph.Node{{Name: "neg", OpType: "Neg", Inputs: []string{"w2"}, Outputs: []string{"w2n"}}}, m.Graph.Nodes...)
	reindex(m.Graph)
	requireNoPair(t, m, 2)

	// A MatMul whose chain ends in the second MatMul's B is no pair.
	m = mlp(16)
	m.Graph.Nodes[3].Inputs = []string{"w2", "r"}
	m.Graph.Initializers["w2"] = graph.NewTensor(graph.Float, []int64{8, 4})
	m.Graph.Initializers["b2"] = graph.NewTensor(graph.Float, []int64{16})
	requireNoPair(t, m, 2)

	// A bias that broadcasts the first MatMul's single output feature to
	// 16: the two split axes differ.
	m = mlp(16)
	m.Graph.Initializers["w1"] = graph.NewTensor(graph.Float, []int64{8, 1})
	requireNoPair(t, m, 1)

	// More devices than the hidden size: the pair is skipped.
	requireNoPair(t, mlp(16), 17)
	requireNoPair(t, mlp(3), 4)
}

// TestShardTensorParallelGreedy checks pairing along MatMul chains: pairs
// are taken in order and a node is in one pair at most; a pair whose
// hidden size is below the device count is skipped and its nodes free.
func TestShardTensorParallelGreedy(t *testing.T) {
	// costChain: gemm (transB, [64, 32]) -> relu -> mm0 -> relu0 -> mm1 ...
	m := costChain(3)
	pairs, err := planner.ShardTensorParallel(m, 2, planner.ShardOptions{})
	require.NoError(t, err)
	var got [][2]string
	for _, p := range pairs {
		got = append(got, [2]string{p.First, p.Second})
	}
	require.Equal(t, [][2]string{{"gemm", "mm0"}, {"mm1", "mm2"}}, got)
	require.Equal(t, map[string][]graph.NodeDeviceConfiguration{
		"gemm": tpSplit("tensor-parallel", "b", 0, 64, 2), "mm0": tpSplit("tensor-parallel", "w0", 0, 64, 2),
		"mm1": tpSplit("tensor-parallel", "w1", 1, 64, 2), "mm2": tpSplit("tensor-parallel", "w2", 0, 64, 2),
	}, annotations(m))
	// Only relu0 and relu2 (1024 each) are in no pair; the whole chain
	// costs 32768 + 1024 + 3·(65536 + 1024).
	var share float64
	for _, p := range pairs {
		share += p.Share
	}
	require.InDelta(t, 1-2048.0/233472, share, 1e-12)

	m = costChain(2)
	pairs, err = planner.ShardTensorParallel(m, 2, planner.ShardOptions{})
	require.NoError(t, err)
	require.Len(t, pairs, 1)
	require.Len(t, annotations(m), 2)
	require.Less(t, pairs[0].Share, 0.75)

	// gemm narrowed to 4 outputs: with 2 devices it pairs with mm0; with
	// 8 that pair is skipped and mm0 pairs with mm1 instead.
	narrow := func() *graph.Model {
		m := costChain(2)
		m.Graph.Initializers["b"] = graph.NewTensor(graph.Float, []int64{4, 32})
		m.Graph.Initializers["w0"] = graph.NewTensor(graph.Float, []int64{4, 64})
		return m
	}
	m = narrow()
	pairs, err = planner.ShardTensorParallel(m, 2, planner.ShardOptions{})
	require.NoError(t, err)
	require.Len(t, pairs, 1)
	require.Equal(t, [2]string{"gemm", "mm0"}, [2]string{pairs[0].First, pairs[0].Second})
	require.Equal(t, []string{"gemm", "mm0"}, annotatedNames(m))
	m = narrow()
	pairs, err = planner.ShardTensorParallel(m, 8, planner.ShardOptions{})
	require.NoError(t, err)
	require.Len(t, pairs, 1)
	require.Equal(t, [2]string{"mm0", "mm1"}, [2]string{pairs[0].First, pairs[0].Second})
	require.Equal(t, []string{"mm0", "mm1"}, annotatedNames(m))
	require.Equal(t, tpSplit("tensor-parallel", "w0", 1, 64, 8), annotations(m)["mm0"])
}

// annotatedNames lists the main-graph nodes of m that have annotations,
// in order.
func annotatedNames(m *graph.Model) []string {
	var out []string
	for _, n := range m.Graph.Nodes {
		if n.DeviceConfigs != nil {
			out = append(out, n.Name)
		}
	}
	return out
}

// TestShardTensorParallelIdentityWeights checks the weights and biases
// that PyTorch exports as Identity nodes of shared initializers.
func TestShardTensorParallelIdentityWeights(t *testing.T) {
	m := mlp(16)
	g := m.Graph
	g.Nodes = append([]*graph.Node{
		{Name: "id_w1", OpType: "Identity", Inputs: []string{"w1"}, Outputs: []string{"w1i"}},
		{Name: "id_w1b", OpType: "Identity", Inputs: []string{"w1i"}, Outputs: []string{"w1ii"}},
		{Name: "id_b1", OpType: "Identity", Inputs: []string{"b1"}, Outputs: []string{"b1i"}},
		{Name: "id_w2", OpType: "Identity", Inputs: []string{"w2"}, Outputs: []string{"w2i"}},
	}, g.Nodes...)
	reindex(g)
	g.Nodes[4].Inputs = []string{"x", "w1ii"}
	g.Nodes[5].Inputs = []string{"b1i", "h"}
	g.Nodes[7].Inputs = []string{"r", "w2i"}
	pairs, err := planner.ShardTensorParallel(m, 2, planner.ShardOptions{})
	require.NoError(t, err)
	require.Equal(t, planner.TensorParallelPair{First: "mm1", Second: "mm2", FirstWeight: "w1ii", SecondWeight: "w2i",
		FirstAxis: 1, SecondAxis: 0, Between: 2, Hidden: 16, Shards: []int64{8, 8}}, withoutCost(pairs[0]))
	require.Equal(t, map[string][]graph.NodeDeviceConfiguration{
		"mm1": tpSplit("tensor-parallel", "w1ii", 1, 16, 2), "mm2": tpSplit("tensor-parallel", "w2i", 0, 16, 2),
	}, annotations(m))

	// An Identity that is also a graph output is not folded by planning.
	m.Configurations = nil
	for _, n := range g.Nodes {
		n.DeviceConfigs = nil
	}
	g.Outputs = append(g.Outputs, &graph.ValueInfo{Name: "w2i"})
	requireNoPair(t, m, 2)
}

func TestShardTensorParallelRefusals(t *testing.T) {
	for ways, msg := range map[int]string{
		0:  `planner: shard model "mlp": tensor parallelism over 0 devices: want at least 1`,
		-2: `planner: shard model "mlp": tensor parallelism over -2 devices: want at least 1`,
	} {
		m := mlp(16)
		_, err := planner.ShardTensorParallel(m, ways, planner.ShardOptions{})
		require.EqualError(t, err, msg)
		require.Equal(t, mlp(16), m)
	}
	_, err := planner.ShardTensorParallel(&graph.Model{Name: "empty"}, 2, planner.ShardOptions{})
	require.ErrorContains(t, err, `shard model "empty": the model has no graph`)

	// An annotated model is refused unless replacing is asked; replacing
	// drops the pipeline stages.
	m := mlp(16)
	_, err = planner.ShardStages(m, 2, planner.ShardOptions{})
	require.NoError(t, err)
	staged := annotations(m)
	_, err = planner.ShardTensorParallel(m, 2, planner.ShardOptions{})
	require.ErrorIs(t, err, planner.ErrAnnotated)
	require.ErrorContains(t, err, `shard model "mlp": the model already has device annotations: configuration "pipeline"`)
	require.Equal(t, staged, annotations(m))
	m.Configurations = nil
	_, err = planner.ShardTensorParallel(m, 2, planner.ShardOptions{})
	require.ErrorIs(t, err, planner.ErrAnnotated)
	require.ErrorContains(t, err, `node "mm1" (MatMul, #0): the model already has device annotations`)

	// Replace with no pair to find leaves the model as it was.
	m.Configurations = []graph.DeviceConfiguration{{Name: "pipeline", NumDevices: 2}}
	_, err = planner.ShardTensorParallel(m, 64, planner.ShardOptions{Replace: true})
	require.ErrorContains(t, err, "no MatMul/Gemm pair")
	require.Equal(t, staged, annotations(m))
	require.Equal(t, []graph.DeviceConfiguration{{Name: "pipeline", NumDevices: 2}}, m.Configurations)

	_, err = planner.ShardTensorParallel(m, 2, planner.ShardOptions{Replace: true})
	require.NoError(t, err)
	require.Equal(t, []graph.DeviceConfiguration{{Name: "tensor-parallel", NumDevices: 2}}, m.Configurations)
	require.Equal(t, map[string][]graph.NodeDeviceConfiguration{
		"mm1": tpSplit("tensor-parallel", "w1", 1, 16, 2), "mm2": tpSplit("tensor-parallel", "w2", 0, 16, 2),
	}, annotations(m))
	require.NoError(t, planner.CheckDeviceConfigurations(m))
}
