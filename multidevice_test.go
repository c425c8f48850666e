package onnxvk_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/sessionvalues"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/planner"
)

// pipelineModel builds y = relu(...relu(x @ w0)... @ w(2·stages-1)) on
// [4, 16] floats, annotated for configuration "pp" with stages pipeline
// stages of two MatMul/Relu pairs each; only the MatMuls carry a stage,
// the Relus follow their producer. A second configuration, "one", puts
// everything on one device. annotate false leaves the annotations out.
func pipelineModel(stages int, annotate bool) *graph.Model {
	rng := rand.New(rand.NewPCG(3, uint64(stages)))
	g := graph.NewGraph("pipeline")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(4, 16))}}
	g.Outputs = []*graph.ValueInfo{{Name: "y", Type: graph.TensorType(graph.Float, graph.ShapeOf(4, 16))}}
	prev := "x"
	for i := range 2 * stages {
		w := graph.NewTensor(graph.Float, []int64{16, 16})
		for k, v := 0, graph.View[float32](w); k < len(v); k++ {
			v[k] = rng.Float32() - 0.4
		}
		wn, mm, out := fmt.Sprintf("w%d", i), fmt.Sprintf("mm%d", i), fmt.Sprintf("r%d", i)
		if i == 2*stages-1 {
			out = "y"
		}
		g.Initializers[wn] = w
		matmul := &graph.Node{Name: mm, OpType: "MatMul", Inputs: []string{prev, wn}, Outputs: []string{mm}, Index: len(g.Nodes)}
		if annotate {
			matmul.DeviceConfigs = []graph.NodeDeviceConfiguration{{ConfigurationID: "pp", PipelineStage: int32(i / 2), HasStage: true}}
		}
		g.Nodes = append(g.Nodes, matmul,
			&graph.Node{Name: "relu" + fmt.Sprint(i), OpType: "Relu", Inputs: []string{mm}, Outputs: []string{out}, Index: len(g.Nodes) + 1})
		prev = out
	}
	m := &graph.Model{Name: fmt.Sprintf("pipeline%d", stages), IRVersion: 11, Opsets: map[string]int64{"": 14}, Graph: g}
	if annotate {
		m.Configurations = []graph.DeviceConfiguration{{Name: "pp", NumDevices: int32(stages)}, {Name: "one", NumDevices: 1}}
	}
	return m
}

func pipelineInput(t testing.TB, seed uint64) *onnxvk.Tensor {
	rng := rand.New(rand.NewPCG(seed, 9))
	data := make([]float32, 4*16)
	for i := range data {
		data[i] = rng.Float32()*2 - 1
	}
	x, err := onnxvk.NewTensor([]int64{4, 16}, data)
	require.NoError(t, err)
	return x
}

func runY(t testing.TB, sess *onnxvk.Session, x *onnxvk.Tensor) []byte {
	t.Helper()
	out, err := sess.Run(context.Background(), map[string]*onnxvk.Tensor{"x": x})
	require.NoError(t, err)
	return out["y"].Bytes()
}

// vulkanSession opens m on Vulkan with opts, skipping when there is no
// Vulkan device.
func vulkanSession(t *testing.T, m *graph.Model, opts ...onnxvk.Option) *onnxvk.Session {
	t.Helper()
	sess, err := onnxvk.NewSession(m, append([]onnxvk.Option{onnxvk.WithDevice("vulkan")}, opts...)...)
	if errors.Is(err, onnxvk.ErrDeviceUnavailable) {
		testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", err))
	}
	require.NoError(t, err)
	t.Cleanup(func() { sess.Close() })
	return sess
}

// TestPipelineStagesVulkan runs 2- and 4-stage pipelines with their logical
// devices on Vulkan (sharing vulkan:0 on a one-GPU machine, such as
// lavapipe in CI): every MatMul/Relu pair runs on its stage's device, the
// activations cross stages through the host, and the outputs equal the
// single-device run's bit for bit, also from concurrent Runs.
func TestPipelineStagesVulkan(t *testing.T) {
	for _, stages := range []int{2, 4} {
		t.Run(fmt.Sprint(stages), func(t *testing.T) {
			single := vulkanSession(t, pipelineModel(stages, false))
			inputs := []*onnxvk.Tensor{pipelineInput(t, 1), pipelineInput(t, 2), pipelineInput(t, 3)}
			var want [][]byte
			for _, x := range inputs {
				want = append(want, bytes.Clone(runY(t, single, x)))
			}
			mapping := make([]string, stages)
			for k := range mapping {
				mapping[k] = "vulkan:0"
			}
			for name, opts := range map[string][]onnxvk.Option{
				"default":  nil,
				"explicit": {onnxvk.WithDeviceMapping(mapping)},
			} {
				t.Run(name, func(t *testing.T) {
					sess := vulkanSession(t, pipelineModel(stages, true), opts...)
					md := sess.MultiDevice()
					require.Equal(t, "pp", md.Configuration)
					require.Equal(t, []string{"one"}, md.Others)
					require.Len(t, md.Physical, stages)
					if name == "default" && md.Physical[0] == md.Physical[stages-1] {
						require.Len(t, md.Notes, 1)
						require.Contains(t, md.Notes[0], fmt.Sprintf(`configuration "pp" names %d devices`, stages))
						require.Contains(t, md.Notes[0], "its logical devices share "+md.Physical[0])
					}
					checkStagePlan(t, sess, stages)
					for k, x := range inputs {
						require.Equal(t, want[k], runY(t, sess, x), "input %d", k)
					}
					compareConcurrently(t, sess, "x", "y", inputs, want, 6, 15)
				})
			}
		})
	}
}

// checkStagePlan requires the plan of the pipeline model to put the k-th
// MatMul/Relu pair on logical device k/2 and to move activations between
// stages through the host.
func checkStagePlan(t *testing.T, sess *onnxvk.Session, stages int) {
	t.Helper()
	p, err := sessionvalues.Of(sess).Plan(nil)
	require.NoError(t, err)
	compute, transfers := 0, 0
	for _, st := range p.Steps {
		if st.Kind == planner.Transfer {
			require.True(t, st.From == planner.HostDevice || st.To == planner.HostDevice, "transfer %s→%s bypasses the host", st.From, st.To)
			if p.Constants[st.In[0]] == nil {
				transfers++
			}
			continue
		}
		stage := compute / 4
		require.Equal(t, planner.LogicalName(stage), st.Logical, st.Node.Name)
		require.Equal(t, planner.LogicalName(stage), st.Device, st.Node.Name)
		compute++
	}
	require.Equal(t, 4*stages, compute)
	// Besides the weights, the input goes up, each activation crossing a
	// stage boundary down and up, the output down.
	require.Equal(t, 2*stages, transfers)
}

// TestPipelineStagesCPU maps every logical device onto the CPU, and one
// onto Vulkan where there is one, and compares with the CPU alone.
func TestPipelineStagesCPU(t *testing.T) {
	x := pipelineInput(t, 4)
	single, err := onnxvk.NewSession(pipelineModel(2, false), onnxvk.WithDevice("cpu"))
	require.NoError(t, err)
	defer single.Close()
	ref, err := single.Run(context.Background(), map[string]*onnxvk.Tensor{"x": x})
	require.NoError(t, err)
	want := ref["y"].Bytes()

	sess, err := onnxvk.NewSession(pipelineModel(2, true), onnxvk.WithDevice("cpu"))
	require.NoError(t, err)
	defer sess.Close()
	md := sess.MultiDevice()
	require.Equal(t, []string{"cpu", "cpu"}, md.Physical)
	require.Len(t, md.Notes, 1)
	require.Contains(t, md.Notes[0], `configuration "pp" names 2 devices, the session runs on the CPU: its logical devices share cpu`)
	require.Equal(t, "d0=cpu,d1=cpu", sess.Device())
	require.Equal(t, want, runY(t, sess, x))

	mixed, err := onnxvk.NewSession(pipelineModel(2, true), onnxvk.WithDeviceMapping([]string{"vulkan:0", "cpu"}))
	if errors.Is(err, onnxvk.ErrDeviceUnavailable) {
		testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", err))
	}
	require.NoError(t, err)
	defer mixed.Close()
	require.Equal(t, []string{"vulkan:0", "cpu"}, mixed.MultiDevice().Physical)
	out, err := mixed.Run(context.Background(), map[string]*onnxvk.Tensor{"x": x})
	require.NoError(t, err)
	got, err := onnxvk.Data[float32](out["y"])
	require.NoError(t, err)
	wantT, err := onnxvk.Data[float32](ref["y"])
	require.NoError(t, err)
	require.InDeltaSlice(t, wantT, got, 1e-4)
}

// TestConfigurationErrors checks the load errors about configurations and
// annotations: each names the model, node and field.
func TestConfigurationErrors(t *testing.T) {
	load := func(m *graph.Model, opts ...onnxvk.Option) error {
		sess, err := onnxvk.NewSession(m, append([]onnxvk.Option{onnxvk.WithDevice("cpu")}, opts...)...)
		if err == nil {
			sess.Close()
		}
		return err
	}
	err := load(pipelineModel(2, true), onnxvk.WithConfiguration("nope"))
	require.ErrorIs(t, err, onnxvk.ErrBadDeviceConfiguration)
	require.ErrorContains(t, err, `model "pipeline2": device configuration "nope"`)
	require.ErrorContains(t, err, `the model has "pp", "one"`)

	err = load(pipelineModel(2, false), onnxvk.WithDeviceMapping([]string{"cpu"}))
	require.ErrorIs(t, err, onnxvk.ErrBadDeviceConfiguration)
	require.ErrorContains(t, err, "no device configuration")

	err = load(pipelineModel(2, true), onnxvk.WithDeviceMapping([]string{"cpu"}))
	require.ErrorIs(t, err, onnxvk.ErrBadDeviceConfiguration)
	require.ErrorContains(t, err, `configuration "pp" has 2 logical devices, the device mapping names 1`)

	err = load(pipelineModel(2, true), onnxvk.WithDeviceMapping([]string{"cpu", "tpu:0"}))
	require.ErrorIs(t, err, onnxvk.ErrDeviceUnavailable)
	require.ErrorContains(t, err, `logical device d1 on "tpu:0"`)

	m := pipelineModel(2, true)
	m.Graph.Nodes[2].DeviceConfigs[0].ConfigurationID = "pq"
	err = load(m)
	require.ErrorIs(t, err, onnxvk.ErrBadDeviceConfiguration)
	require.ErrorContains(t, err, `node "mm1" (MatMul, #2): device_configurations[0].configuration_id "pq"`)

	m = pipelineModel(2, true)
	m.Graph.Nodes[4].DeviceConfigs[0].PipelineStage = 2
	err = load(m)
	require.ErrorIs(t, err, onnxvk.ErrBadDeviceConfiguration)
	require.ErrorContains(t, err, `node "mm2" (MatMul, #4): device_configurations[0].pipeline_stage 2`)
	require.ErrorContains(t, err, `configuration "pp" has devices 0..1`)
}
