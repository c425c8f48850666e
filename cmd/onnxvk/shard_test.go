package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/loader"
	"github.com/onnxvk/onnxvk/planner"
)

// stagesOf returns the pipeline stage of each main-graph node of the model
// at path for configuration config, -1 where a node has none.
func stagesOf(t *testing.T, path, config string) (*graph.Model, []int32) {
	t.Helper()
	m, err := loader.Load(path)
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	stages := make([]int32, len(m.Graph.Nodes))
	for i, n := range m.Graph.Nodes {
		stages[i] = -1
		for _, dc := range n.DeviceConfigs {
			if dc.ConfigurationID == config && dc.HasStage {
				stages[i] = dc.PipelineStage
			}
		}
	}
	return m, stages
}

func TestShard(t *testing.T) {
	in := exampleFile(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "edges2.onnx")
	code, stdout, errOut := cli(t, "shard", in, out, "--stages", "2")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, `in 2 pipeline stages, device configuration "pipeline"`)
	require.Contains(t, stdout, "stage 0:")
	require.Contains(t, stdout, "stage 1:")
	require.Contains(t, stdout, "% of the estimated cost")
	require.Contains(t, stdout, "wrote "+out+": ONNX protobuf")
	require.False(t, isArchivePath(t, out))

	m, stages := stagesOf(t, out, "pipeline")
	require.GreaterOrEqual(t, m.IRVersion, int64(11))
	require.Equal(t, []graph.DeviceConfiguration{{Name: "pipeline", NumDevices: 2}}, m.Configurations)
	require.NoError(t, planner.CheckDeviceConfigurations(m))
	require.Equal(t, int32(0), stages[0])
	require.Equal(t, int32(1), stages[len(stages)-1])
	for i := 1; i < len(stages); i++ {
		require.Contains(t, []int32{stages[i-1], stages[i-1] + 1}, stages[i], "stages %v are not contiguous", stages)
	}

	code, stdout, errOut = cli(t, "run", out, "--device", "cpu")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, `device configuration "pipeline": d0=cpu,d1=cpu`)

	// An annotated model is refused unless --replace; an archive stays one.
	code, _, errOut = cli(t, "shard", out, out, "--stages", "3")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, `configuration "pipeline" (replace them to shard anew)`)
	archive := filepath.Join(dir, "edges3.onnx")
	code, stdout, errOut = cli(t, "shard", out, archive, "--stages", "3", "--replace", "--config", "pp", "--to", "archive")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, "ONNX archive")
	require.True(t, isArchivePath(t, archive))
	m, stages = stagesOf(t, archive, "pp")
	require.Equal(t, []graph.DeviceConfiguration{{Name: "pp", NumDevices: 3}}, m.Configurations)
	require.Equal(t, int32(2), stages[len(stages)-1])
	again := filepath.Join(dir, "edges4.onnx")
	code, stdout, errOut = cli(t, "shard", archive, again, "--stages", "1", "--replace")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, "ONNX archive")

	code, _, errOut = cli(t, "shard", in, out)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "give exactly one of --stages N (pipeline parallelism) and --tensor-parallel N")
	code, _, errOut = cli(t, "shard", in, out, "--stages", "0")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "0 stages: want at least 1")
	code, _, errOut = cli(t, "shard", in, out, "--stages", "1000")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "1000 stages: the main graph has only")
	code, _, errOut = cli(t, "shard", in, "--stages", "2")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "want MODEL and OUT")
	code, _, errOut = cli(t, "shard", in, out, "--stages", "2", "--to", "zip")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `--to "zip": want archive or protobuf`)
	code, help, _ := cli(t, "shard", "--help")
	require.Equal(t, 0, code)
	require.Contains(t, help, "split into N contiguous stages balanced by")
}

// mlpFile writes x[4, 8] -> MatMul [8, 16] -> Add bias -> Relu -> MatMul
// [16, 8] -> y to a file and returns its path: one tensor-parallel pair.
func mlpFile(t *testing.T) string {
	g := graph.NewGraph("mlp")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(4, 8))}}
	g.Initializers["w1"] = graph.NewTensor(graph.Float, []int64{8, 16})
	g.Initializers["b1"] = graph.NewTensor(graph.Float, []int64{16})
	g.Initializers["w2"] = graph.NewTensor(graph.Float, []int64{16, 8})
	g.Nodes = []*graph.Node{
		{Name: "mm1", OpType: "MatMul", Inputs: []string{"x", "w1"}, Outputs: []string{"h"}},
		{Name: "add", OpType: "Add", Inputs: []string{"h", "b1"}, Outputs: []string{"a"}, Index: 1},
		{Name: "relu", OpType: "Relu", Inputs: []string{"a"}, Outputs: []string{"r"}, Index: 2},
		{Name: "mm2", OpType: "MatMul", Inputs: []string{"r", "w2"}, Outputs: []string{"y"}, Index: 3},
	}
	g.Outputs = []*graph.ValueInfo{{Name: "y", Type: graph.TensorType(graph.Float, graph.ShapeOf(4, 8))}}
	path := filepath.Join(t.TempDir(), "mlp.onnx")
	require.NoError(t, loader.Save(&graph.Model{Name: "mlp", IRVersion: 8, Opsets: map[string]int64{"": 14}, Graph: g}, path))
	return path
}

// shardingOf returns the sharding specs of each main-graph node of the
// model at path for configuration config, by node name, for the nodes
// that have an annotation.
func shardingOf(t *testing.T, path, config string) (*graph.Model, map[string][]graph.ShardingSpec) {
	t.Helper()
	m, err := loader.Load(path)
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	specs := map[string][]graph.ShardingSpec{}
	for _, n := range m.Graph.Nodes {
		for _, dc := range n.DeviceConfigs {
			if dc.ConfigurationID == config {
				specs[n.Name] = dc.Sharding
			}
		}
	}
	return m, specs
}

func TestShardTensorParallel(t *testing.T) {
	in := mlpFile(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "mlp_tp.onnx")
	code, stdout, errOut := cli(t, "shard", in, out, "--tensor-parallel", "3")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, `mlp.onnx: 4 nodes, 1 tensor-parallel pairs over 3 devices (100.0% of the estimated cost; the other nodes run unsharded), device configuration "tensor-parallel"`)
	require.Contains(t, stdout, "pair 0: hidden 16 split 6+5+5, 100.0% of the estimated cost (mm1: w1 axis 1 .. mm2: w2 axis 0)")
	require.Contains(t, stdout, "wrote "+out+": ONNX protobuf")

	m, specs := shardingOf(t, out, "tensor-parallel")
	require.GreaterOrEqual(t, m.IRVersion, int64(11))
	require.Equal(t, []graph.DeviceConfiguration{{Name: "tensor-parallel", NumDevices: 3}}, m.Configurations)
	require.NoError(t, planner.CheckDeviceConfigurations(m))
	split := func(tensor string, axis int64) []graph.ShardingSpec {
		return []graph.ShardingSpec{{TensorName: tensor, Devices: []int64{0, 1, 2}, ShardedDims: []graph.ShardedDim{
			{Axis: axis, SimpleSharding: []graph.SimpleSharding{{Dim: graph.DimOf(16), NumShards: 3}}}}}}
	}
	require.Equal(t, map[string][]graph.ShardingSpec{"mm1": split("w1", 1), "mm2": split("w2", 0)}, specs)

	// The annotations are hints: the model runs as before.
	code, stdout, errOut = cli(t, "run", out, "--device", "cpu")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, `device configuration "tensor-parallel"`)

	// An annotated model is refused unless --replace; --config names the
	// configuration, --to the format; pipeline stages replace the pairs.
	code, _, errOut = cli(t, "shard", out, out, "--tensor-parallel", "2")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, `configuration "tensor-parallel" (replace them to shard anew)`)
	archive := filepath.Join(dir, "mlp_tp2.onnx")
	code, stdout, errOut = cli(t, "shard", out, archive, "--tensor-parallel", "1", "--replace", "--config", "tp", "--to", "archive")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, "pair 0: hidden 16 split 16,")
	require.Contains(t, stdout, "ONNX archive")
	m, specs = shardingOf(t, archive, "tp")
	require.Equal(t, []graph.DeviceConfiguration{{Name: "tp", NumDevices: 1}}, m.Configurations)
	require.Len(t, specs, 2)
	staged := filepath.Join(dir, "mlp_pp.onnx")
	code, stdout, errOut = cli(t, "shard", archive, staged, "--stages", "2", "--replace")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, `in 2 pipeline stages, device configuration "pipeline"`)
	m, specs = shardingOf(t, staged, "pipeline")
	require.Equal(t, []graph.DeviceConfiguration{{Name: "pipeline", NumDevices: 2}}, m.Configurations)
	require.Empty(t, specs["mm1"])

	code, _, errOut = cli(t, "shard", in, out, "--tensor-parallel", "2", "--stages", "2")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "give exactly one of --stages N (pipeline parallelism) and --tensor-parallel N")
	code, _, errOut = cli(t, "shard", in, out, "--tensor-parallel", "0")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "tensor parallelism over 0 devices: want at least 1")
	code, _, errOut = cli(t, "shard", in, out, "--tensor-parallel", "17")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "no MatMul/Gemm pair with constant weights to shard 17 ways")
	code, _, errOut = cli(t, "shard", exampleFile(t), out, "--tensor-parallel", "2")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "no MatMul/Gemm pair")
	code, out, _ = cli(t, "shard", "--help")
	require.Equal(t, 0, code)
	require.Contains(t, out, "--tensor-parallel N splits Megatron-style pairs over N devices")
}
