package planner_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/planner"
)

// costChain builds x[8, 32] -> Gemm (transB, to [8, 64]) -> Relu -> then
// MatMul [64, 64] and Relu, matmuls times, on an IR 8 model.
func costChain(matmuls int) *graph.Model {
	g := graph.NewGraph("costs")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(8, 32))}}
	g.Initializers["b"] = graph.NewTensor(graph.Float, []int64{64, 32})
	g.Nodes = []*graph.Node{
		{Name: "gemm", OpType: "Gemm", Inputs: []string{"x", "b"}, Outputs: []string{"g"},
			Attrs: map[string]*graph.Attribute{"transB": {Name: "transB", Type: graph.AttrInt, I: 1}}},
		{Name: "relu", OpType: "Relu", Inputs: []string{"g"}, Outputs: []string{"r"}, Index: 1},
	}
	prev := "r"
	for i := range matmuls {
		w, mm, r := fmt.Sprintf("w%d", i), fmt.Sprintf("mm%d", i), fmt.Sprintf("r%d", i)
		g.Initializers[w] = graph.NewTensor(graph.Float, []int64{64, 64})
		g.Nodes = append(g.Nodes,
			&graph.Node{Name: mm, OpType: "MatMul", Inputs: []string{prev, w}, Outputs: []string{mm}, Index: len(g.Nodes)},
			&graph.Node{Name: "relu" + fmt.Sprint(i), OpType: "Relu", Inputs: []string{mm}, Outputs: []string{r}, Index: len(g.Nodes) + 1})
		prev = r
	}
	g.Outputs = []*graph.ValueInfo{{Name: prev}}
	return &graph.Model{Name: "costs", IRVersion: 8, Opsets: map[string]int64{"": 14}, Graph: g}
}

func TestNodeCosts(t *testing.T) {
	costs, err := planner.NodeCosts(costChain(1))
	require.NoError(t, err)
	// Gemm: 2·8·64·32; Relu: reads and writes 8·64; MatMul: 2·8·64·64.
	require.Equal(t, []int64{32768, 1024, 65536, 1024}, costs)

	g := graph.NewGraph("conv")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(1, 3, 8, 8))}}
	g.Initializers["w"] = graph.NewTensor(graph.Float, []int64{4, 3, 3, 3})
	g.Initializers["wt"] = graph.NewTensor(graph.Float, []int64{4, 2, 3, 3})
	pads := map[string]*graph.Attribute{"pads": {Name: "pads", Type: graph.AttrInts, Ints: []int64{1, 1, 1, 1}}}
	g.Nodes = []*graph.Node{
		{Name: "conv", OpType: "Conv", Inputs: []string{"x", "w"}, Outputs: []string{"c"}, Attrs: pads},
		{Name: "deconv", OpType: "ConvTranspose", Inputs: []string{"c", "wt"}, Outputs: []string{"y"}, Attrs: pads, Index: 1},
	}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	costs, err = planner.NodeCosts(&graph.Model{Name: "conv", IRVersion: 8, Opsets: map[string]int64{"": 14}, Graph: g})
	require.NoError(t, err)
	// Conv: 2·(4·8·8 outputs)·(3·3·3); ConvTranspose: 2·(4·8·8 inputs)·(2·3·3).
	require.Equal(t, []int64{13824, 9216}, costs)
}

func TestShardStages(t *testing.T) {
	m := costChain(5)
	stages, err := planner.ShardStages(m, 3, planner.ShardOptions{})
	require.NoError(t, err)
	require.Equal(t, int64(11), m.IRVersion)
	require.Equal(t, []graph.DeviceConfiguration{{Name: planner.DefaultShardConfiguration, NumDevices: 3}}, m.Configurations)
	require.NoError(t, planner.CheckDeviceConfigurations(m))
	// Costs: Gemm 32768, then five MatMuls of 65536, each Relu 1024: the
	// least bottleneck is two MatMuls and their Relus.
	require.Equal(t, []planner.StageCost{
		{Nodes: 4, First: "gemm", Last: "relu0", Cost: 32768 + 65536 + 2*1024},
		{Nodes: 4, First: "mm1", Last: "relu2", Cost: 2 * (65536 + 1024)},
		{Nodes: 4, First: "mm3", Last: "relu4", Cost: 2 * (65536 + 1024)},
	}, withoutShares(stages))
	var share float64
	for _, st := range stages {
		share += st.Share
	}
	require.InDelta(t, 1, share, 1e-12)
	for i, n := range m.Graph.Nodes {
		require.Equal(t, []graph.NodeDeviceConfiguration{{ConfigurationID: "pipeline", PipelineStage: int32(i / 4), HasStage: true}}, n.DeviceConfigs, n.String())
	}

	// An annotated model is refused unless replacing is asked.
	_, err = planner.ShardStages(m, 2, planner.ShardOptions{})
	require.ErrorIs(t, err, planner.ErrAnnotated)
	require.ErrorContains(t, err, `shard model "costs": the model already has device annotations: configuration "pipeline"`)
	m.Configurations = nil
	_, err = planner.ShardStages(m, 2, planner.ShardOptions{})
	require.ErrorIs(t, err, planner.ErrAnnotated)
	require.ErrorContains(t, err, `node "gemm" (Gemm, #0): the model already has device annotations`)
	stages, err = planner.ShardStages(m, 12, planner.ShardOptions{Configuration: "pp", Replace: true})
	require.NoError(t, err)
	require.Len(t, stages, 12)
	require.Equal(t, []graph.DeviceConfiguration{{Name: "pp", NumDevices: 12}}, m.Configurations)
	for i, n := range m.Graph.Nodes {
		require.Equal(t, []graph.NodeDeviceConfiguration{{ConfigurationID: "pp", PipelineStage: int32(i), HasStage: true}}, n.DeviceConfigs)
	}
	require.NoError(t, planner.CheckDeviceConfigurations(m))

	// Bad stage counts leave the model as it was.
	for n, msg := range map[int]string{
		0:  `shard model "costs": 0 stages: want at least 1`,
		-1: `shard model "costs": -1 stages: want at least 1`,
		13: `shard model "costs": 13 stages: the main graph has only 12 nodes`,
	} {
		m := costChain(5)
		_, err := planner.ShardStages(m, n, planner.ShardOptions{})
		require.ErrorContains(t, err, msg)
		require.Equal(t, costChain(5), m)
	}

	one := costChain(1)
	stages, err = planner.ShardStages(one, 1, planner.ShardOptions{})
	require.NoError(t, err)
	require.Equal(t, []planner.StageCost{{Nodes: 4, First: "gemm", Last: "relu0", Cost: 32768 + 65536 + 2*1024, Share: 1}}, stages)
}

func withoutShares(stages []planner.StageCost) []planner.StageCost {
	out := make([]planner.StageCost, len(stages))
	for i, st := range stages {
		st.Share = 0
		out[i] = st
	}
	return out
}
