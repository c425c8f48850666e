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
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "0 stages: want at least 1")
	code, _, errOut = cli(t, "shard", in, out, "--stages", "1000")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "1000 stages: the main graph has only")
	code, _, errOut = cli(t, "shard", in, "--stages", "2")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "want MODEL and OUT")
	code, _, errOut = cli(t, "shard", in, out, "--stages", "2", "--to", "zip")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, `--to "zip": want archive or protobuf`)
	code, _, errOut = cli(t, "shard", "--help")
	require.Equal(t, 0, code)
	require.Contains(t, errOut, "split into N contiguous stages balanced by estimated cost")
}
