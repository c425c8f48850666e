package planner_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/planner"
)

// stagedChain builds x -> Relu -> ... (n nodes) on [1, 8] floats, annotated
// for configuration "pp" of devices logical devices: node i carries the
// pipeline stage stage[i], or none where stage[i] is -1.
func stagedChain(devices int32, stage ...int) *graph.Model {
	g := graph.NewGraph("staged")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(1, 8))}}
	prev := "x"
	for i, s := range stage {
		out := fmt.Sprintf("v%d", i)
		n := &graph.Node{Name: out, OpType: "Relu", Inputs: []string{prev}, Outputs: []string{out}, Index: i}
		if s >= 0 {
			n.DeviceConfigs = []graph.NodeDeviceConfiguration{{ConfigurationID: "pp", PipelineStage: int32(s), HasStage: true}}
		}
		g.Nodes = append(g.Nodes, n)
		prev = out
	}
	g.Outputs = []*graph.ValueInfo{{Name: prev}}
	return &graph.Model{Name: "staged", IRVersion: 11, Opsets: map[string]int64{"": 14}, Graph: g,
		Configurations: []graph.DeviceConfiguration{{Name: "pp", NumDevices: devices}, {Name: "flat", NumDevices: 1}}}
}

func stagesOn(devs ...planner.Device) *planner.Stages {
	st := &planner.Stages{Configuration: "pp", Devices: devs}
	for range devs {
		st.Physical = append(st.Physical, "gpu:0")
	}
	return st
}

func TestPipelineStagePlacement(t *testing.T) {
	d0 := fakeDevice{"d0", map[string]bool{"Relu": true}}
	d1 := fakeDevice{"d1", map[string]bool{"Relu": true}}
	// Nodes 1 and 3 carry no stage: they follow their producer.
	m := stagedChain(2, 0, -1, 1, -1)
	p, err := planner.New(m, planner.Options{Devices: []planner.Device{d0, d1, cpu}, Stages: stagesOn(d0, d1)})
	require.NoError(t, err)
	type step struct{ dev, logical, from, to string }
	var got []step
	for _, st := range p.Steps {
		got = append(got, step{st.Device, st.Logical, st.From, st.To})
	}
	require.Equal(t, []step{
		{"", "", "cpu", "d0"}, {"d0", "d0", "", ""}, {"d0", "d0", "", ""},
		{"", "", "d0", "cpu"}, {"", "", "cpu", "d1"}, {"d1", "d1", "", ""}, {"d1", "d1", "", ""},
		{"", "", "d1", "cpu"},
	}, got)
	require.Empty(t, p.Notes)
	require.Contains(t, p.ArenaBytes, "d0")
	require.Contains(t, p.ArenaBytes, "d1")

	// Unannotated nodes at the start take stage 0; a stage whose device
	// lacks the op falls back to the CPU, which the report says.
	d1.ops = map[string]bool{}
	p, err = planner.New(stagedChain(2, -1, 1), planner.Options{Devices: []planner.Device{d0, d1, cpu}, Stages: stagesOn(d0, d1)})
	require.NoError(t, err)
	r := p.Report()
	var devs [][2]string
	for _, s := range r.Steps {
		if s.Op != "" {
			devs = append(devs, [2]string{s.Device, s.Physical})
		}
	}
	require.Equal(t, [][2]string{{"d0", "gpu:0"}, {"d1", "cpu"}}, devs)
	require.Equal(t, "pp", r.Configuration)
	require.Equal(t, []string{"flat"}, r.OtherConfigurations)
}

func TestPipelineStageReportJSON(t *testing.T) {
	d0 := fakeDevice{"d0", map[string]bool{"Relu": true}}
	m := stagedChain(1, 0, 0)
	m.Graph.Nodes[1].DeviceConfigs[0].Sharding = []graph.ShardingSpec{{TensorName: "v1", Devices: []int64{0},
		ShardedDims: []graph.ShardedDim{{Axis: 1, SimpleSharding: []graph.SimpleSharding{{Dim: graph.DimOf(8), NumShards: 1}}}}}}
	st := stagesOn(d0)
	st.Notes = []string{"mapper's note"}
	p, err := planner.New(m, planner.Options{Devices: []planner.Device{d0, cpu}, Stages: st})
	require.NoError(t, err)
	raw, err := json.Marshal(p.Report())
	require.NoError(t, err)
	var doc struct {
		Configuration string   `json:"configuration"`
		Others        []string `json:"other_configurations"`
		Notes         []string `json:"notes"`
		Steps         []map[string]any
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	require.Equal(t, "pp", doc.Configuration)
	require.Equal(t, []string{"flat"}, doc.Others)
	require.Equal(t, []string{"mapper's note"}, doc.Notes)
	computed := 0
	for _, s := range doc.Steps {
		if s["op"] != nil {
			require.Equal(t, "d0", s["device"])
			require.Equal(t, "gpu:0", s["physical"])
			computed++
		}
	}
	require.Equal(t, 2, computed)

	// Without a configuration in force, steps have no "physical".
	p, err = planner.New(m, planner.Options{Devices: []planner.Device{d0, cpu}})
	require.NoError(t, err)
	raw, err = json.Marshal(p.Report())
	require.NoError(t, err)
	require.NotContains(t, string(raw), "physical")
	require.NotContains(t, string(raw), "configuration")
}

func TestCheckDeviceConfigurations(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(m *graph.Model)
		want string
	}{
		{"unknown configuration", func(m *graph.Model) { m.Graph.Nodes[1].DeviceConfigs[0].ConfigurationID = "px" },
			`model "staged": node "v1" (Relu, #1): device_configurations[0].configuration_id "px": invalid device configuration: no configuration of the model has that name`},
		{"stage out of range", func(m *graph.Model) { m.Graph.Nodes[0].DeviceConfigs[0].PipelineStage = 3 },
			`node "v0" (Relu, #0): device_configurations[0].pipeline_stage 3: invalid device configuration: configuration "pp" has devices 0..1`},
		{"negative stage", func(m *graph.Model) { m.Graph.Nodes[0].DeviceConfigs[0].PipelineStage = -1 },
			`device_configurations[0].pipeline_stage -1`},
		{"sharding device out of range", func(m *graph.Model) {
			m.Graph.Nodes[1].DeviceConfigs[0].Sharding = []graph.ShardingSpec{{TensorName: "v0", Devices: []int64{0, 2}}}
		}, `node "v1" (Relu, #1): device_configurations[0].sharding_spec[0].device[1] 2: invalid device configuration`},
		{"device group out of range", func(m *graph.Model) {
			m.Graph.Nodes[1].DeviceConfigs[0].Sharding = []graph.ShardingSpec{{TensorName: "v1", Devices: []int64{7},
				DeviceGroups: map[int64][]int64{7: {0, 5}}}}
		}, `sharding_spec[0].index_to_device_group_map[7][1] 5`},
		{"foreign tensor", func(m *graph.Model) {
			m.Graph.Nodes[1].DeviceConfigs[0].Sharding = []graph.ShardingSpec{{TensorName: "x", Devices: []int64{0}}}
		}, `sharding_spec[0].tensor_name "x": invalid device configuration: not an input or output of the node`},
		{"duplicate configuration", func(m *graph.Model) { m.Configurations[1].Name = "pp" },
			`configuration[1].name "pp"`},
		{"no devices", func(m *graph.Model) { m.Configurations[1].NumDevices = 0 },
			`configuration[1] "flat": num_devices is 0`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := stagedChain(2, 0, 1)
			tc.edit(m)
			err := planner.CheckDeviceConfigurations(m)
			require.ErrorIs(t, err, planner.ErrBadDeviceConfiguration)
			require.ErrorContains(t, err, tc.want)
			_, err = planner.New(m, planner.Options{Devices: []planner.Device{cpu}, Stages: stagesOn(cpu, cpu)})
			require.ErrorIs(t, err, planner.ErrBadDeviceConfiguration)
		})
	}
	require.NoError(t, planner.CheckDeviceConfigurations(stagedChain(2, 0, 1)))

	_, err := planner.FindConfiguration(stagedChain(2, 0), "zz")
	require.ErrorContains(t, err, `model "staged": device configuration "zz": invalid device configuration: the model has "pp", "flat"`)
	c, err := planner.FindConfiguration(stagedChain(2, 0), "")
	require.NoError(t, err)
	require.Equal(t, "pp", c.Name)
}
