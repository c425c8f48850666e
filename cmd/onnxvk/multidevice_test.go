package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/loader"
)

// stagedModelFile writes x -> Relu (stage 0) -> Sigmoid (stage 1) -> y with
// configurations "pp" (2 devices) and "solo" (1), and returns its path.
func stagedModelFile(t *testing.T) string {
	g := graph.NewGraph("staged")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(2, 3))}}
	g.Outputs = []*graph.ValueInfo{{Name: "y", Type: graph.TensorType(graph.Float, graph.ShapeOf(2, 3))}}
	stage := func(s int32) []graph.NodeDeviceConfiguration {
		return []graph.NodeDeviceConfiguration{{ConfigurationID: "pp", PipelineStage: s, HasStage: true}}
	}
	g.Nodes = []*graph.Node{
		{Name: "relu", OpType: "Relu", Inputs: []string{"x"}, Outputs: []string{"h"}, DeviceConfigs: stage(0)},
		{Name: "sigmoid", OpType: "Sigmoid", Inputs: []string{"h"}, Outputs: []string{"y"}, Index: 1, DeviceConfigs: stage(1)},
	}
	m := &graph.Model{Name: "staged", IRVersion: 11, Opsets: map[string]int64{"": 14}, Graph: g,
		Configurations: []graph.DeviceConfiguration{{Name: "pp", NumDevices: 2}, {Name: "solo", NumDevices: 1}}}
	path := filepath.Join(t.TempDir(), "staged.onnx")
	require.NoError(t, loader.Save(m, path))
	return path
}

func TestPlanConfigurationJSON(t *testing.T) {
	model := stagedModelFile(t)
	code, out, errOut := cli(t, "plan", model, "--json", "--devices", "cpu,cpu")
	require.Equal(t, 0, code, errOut)
	var r struct {
		Configuration string   `json:"configuration"`
		Others        []string `json:"other_configurations"`
		Steps         []struct {
			Op, Device, Physical string
		} `json:"steps"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Equal(t, "pp", r.Configuration)
	require.Equal(t, []string{"solo"}, r.Others)
	var devs []string
	for _, s := range r.Steps {
		if s.Op != "" {
			devs = append(devs, s.Device+"="+s.Physical)
		}
	}
	require.Equal(t, []string{"d0=cpu", "d1=cpu"}, devs)

	code, out, errOut = cli(t, "plan", model, "--device", "cpu", "--config", "solo")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `device configuration "solo" (not applied: pp)`)
	require.Contains(t, out, "d0 (cpu)")

	code, out, errOut = cli(t, "plan", model, "--device", "cpu")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `note: configuration "pp" names 2 devices, the session runs on the CPU: its logical devices share cpu`)

	code, _, errOut = cli(t, "plan", model, "--config", "nope")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, `device configuration "nope": invalid device configuration: the model has "pp", "solo"`)

	code, _, errOut = cli(t, "plan", model, "--devices", "cpu")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, `configuration "pp" has 2 logical devices, the device mapping names 1`)
}

func TestRunConfiguration(t *testing.T) {
	model := stagedModelFile(t)
	code, out, errOut := cli(t, "run", model, "--devices", "cpu,cpu")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `device configuration "pp": d0=cpu,d1=cpu (not applied: solo)`)
	require.Contains(t, out, "ran staged.onnx on d0=cpu,d1=cpu")
	require.Contains(t, out, "output y: float32[2 3]")
}

// TestInspectInvalidAnnotations: inspect still describes a model whose
// pipeline stage points past its configuration's devices, and says what
// is wrong, naming the node and the field.
func TestInspectInvalidAnnotations(t *testing.T) {
	m, err := loader.Load(stagedModelFile(t))
	require.NoError(t, err)
	m.Graph.Nodes[1].DeviceConfigs[0].PipelineStage = 5
	path := filepath.Join(t.TempDir(), "bad.onnx")
	require.NoError(t, loader.Save(m, path))
	require.NoError(t, m.Close())

	code, out, errOut := cli(t, "inspect", path)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "multi-device annotations are invalid")
	require.Contains(t, out, `"sigmoid"`)
	require.Contains(t, out, "pipeline_stage")

	code, out, errOut = cli(t, "inspect", "--json", path)
	require.Equal(t, 0, code, errOut)
	var r inspectReport
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Contains(t, r.AnnotationError, "pipeline_stage")

	code, out, _ = cli(t, "inspect", stagedModelFile(t))
	require.Equal(t, 0, code)
	require.NotContains(t, out, "invalid")
}
