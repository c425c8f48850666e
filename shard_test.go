package onnxvk_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/npy"
	"github.com/onnxvk/onnxvk/internal/sessionvalues"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/internal/torchmodels"
	"github.com/onnxvk/onnxvk/loader"
	"github.com/onnxvk/onnxvk/planner"
)

// torchRunner exports the PyTorch model name when it is not in the cache
// and returns its path, its input and a function that runs a session of it
// on that input and returns the output.
func torchRunner(t *testing.T, name string) (string, *graph.Tensor, func(*onnxvk.Session) []float32) {
	cache := torchmodels.Cache(t, ".")
	torchmodels.Export(t, ".", cache, []string{name})
	in, err := npy.ReadFile(filepath.Join(cache, name, "input.npy"))
	require.NoError(t, err)
	return filepath.Join(cache, name, "model.onnx"), in, func(sess *onnxvk.Session) []float32 {
		outs, err := sess.Run(context.Background(), map[string]*onnxvk.Tensor{"input": onnxvk.TensorFrom(in)})
		require.NoError(t, err)
		out, err := onnxvk.Data[float32](outs["output"])
		require.NoError(t, err)
		return out
	}
}

// TestShardStagesTorchVulkan shards a model exported from PyTorch
// (squeezenet1_1; resnet18 and also 4 stages in the long suites) into 2
// pipeline stages, saves it and loads it back with the same stages, and
// runs it on Vulkan with the default mapping (the logical devices share
// vulkan:0 on a one-GPU machine): the plan runs the stages in order and
// the output is within 1e-4 of the single-device run's.
func TestShardStagesTorchVulkan(t *testing.T) {
	testenv.SkipShort(t, "exports and runs a whole PyTorch model")
	name := "squeezenet1_1"
	if testenv.Long() {
		name = "resnet18"
	}
	path, in, run := torchRunner(t, name)
	single, err := onnxvk.Load(path, onnxvk.WithDevice("vulkan"))
	if errors.Is(err, onnxvk.ErrDeviceUnavailable) {
		testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", err))
	}
	require.NoError(t, err)
	want := run(single)
	require.NoError(t, single.Close())

	for _, stages := range []int{2, 4} {
		t.Run(fmt.Sprint(stages), func(t *testing.T) {
			if stages == 4 {
				testenv.SkipLong(t)
			}
			m, err := loader.Load(path)
			require.NoError(t, err)
			defer m.Close()
			report, err := onnxvk.ShardStages(m, stages, onnxvk.ShardOptions{})
			require.NoError(t, err)
			require.Len(t, report, stages)
			for k, st := range report {
				t.Logf("stage %d: %d nodes, %.1f%% of the cost (%s .. %s)", k, st.Nodes, 100*st.Share, st.First, st.Last)
			}
			saved := filepath.Join(t.TempDir(), name+".onnx")
			require.NoError(t, loader.Save(m, saved))
			back, err := loader.Load(saved)
			require.NoError(t, err)
			defer back.Close()
			require.Equal(t, m.Configurations, back.Configurations)
			require.Equal(t, int64(11), back.IRVersion)
			require.Len(t, back.Graph.Nodes, len(m.Graph.Nodes))
			for i, n := range back.Graph.Nodes {
				require.Equal(t, m.Graph.Nodes[i].DeviceConfigs, n.DeviceConfigs, n.String())
			}

			sess, err := onnxvk.Load(saved, onnxvk.WithDevice("vulkan"))
			require.NoError(t, err)
			defer sess.Close()
			md := sess.MultiDevice()
			require.Equal(t, planner.DefaultShardConfiguration, md.Configuration)
			require.Len(t, md.Physical, stages)
			p, err := sessionvalues.Of(sess).Plan(map[string]*graph.Type{"input": graph.TensorType(in.DType, graph.ShapeOf(in.Shape...))})
			require.NoError(t, err)
			stage := 0
			for _, st := range p.Steps {
				if st.Kind != planner.Compute {
					continue
				}
				if st.Logical != planner.LogicalName(stage) {
					stage++
					require.Equal(t, planner.LogicalName(stage), st.Logical, "%s follows stage %d", st.Node, stage-1)
				}
				require.NotEqual(t, planner.HostDevice, st.Device, "%s runs on the CPU", st.Node)
			}
			require.Equal(t, stages-1, stage)

			got := run(sess)
			require.Len(t, got, len(want))
			var maxDiff float64
			for i := range got {
				maxDiff = max(maxDiff, math.Abs(float64(got[i])-float64(want[i])))
			}
			t.Logf("%d stages on %v: max abs difference from the single-device run %.3g", stages, md.Physical, maxDiff)
			require.LessOrEqual(t, maxDiff, 1e-4)
		})
	}
}

// TestShardTensorParallelTorch shards the transformer encoder exported
// from PyTorch 2 and 4 ways in the Megatron style (each layer's feed-
// forward MatMuls by columns, then by rows), saves it, loads it back and
// runs it with its logical devices on Vulkan (sharing vulkan:0 on a
// one-GPU machine) and on the CPU: every pair runs once per logical
// device, the row-split MatMul's partial products meet in an all-reduce,
// and the output is within 1e-5 of the single-device run's.
func TestShardTensorParallelTorch(t *testing.T) {
	testenv.SkipShort(t, "exports and runs a whole PyTorch model")
	path, in, run := torchRunner(t, "transformer")
	for _, device := range []string{"vulkan", "cpu"} {
		t.Run(device, func(t *testing.T) {
			single, err := onnxvk.Load(path, onnxvk.WithDevice(device))
			if errors.Is(err, onnxvk.ErrDeviceUnavailable) {
				testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", err))
			}
			require.NoError(t, err)
			want := run(single)
			require.NoError(t, single.Close())
			for _, ways := range []int{2, 4} {
				t.Run(fmt.Sprint(ways), func(t *testing.T) {
					m, err := loader.Load(path)
					require.NoError(t, err)
					defer m.Close()
					pairs, err := onnxvk.ShardTensorParallel(m, ways, onnxvk.ShardOptions{})
					require.NoError(t, err)
					require.Len(t, pairs, 4, "linear1/linear2 of each of the 4 layers")
					saved := filepath.Join(t.TempDir(), "transformer.onnx")
					require.NoError(t, loader.Save(m, saved))
					back, err := loader.Load(saved)
					require.NoError(t, err)
					defer back.Close()
					require.Equal(t, m.Configurations, back.Configurations)
					for i, n := range back.Graph.Nodes {
						require.Equal(t, m.Graph.Nodes[i].DeviceConfigs, n.DeviceConfigs, n.String())
					}

					sess, err := onnxvk.Load(saved, onnxvk.WithDevice(device))
					require.NoError(t, err)
					defer sess.Close()
					require.Equal(t, planner.DefaultTensorParallelConfiguration, sess.MultiDevice().Configuration)
					p, err := sessionvalues.Of(sess).Plan(map[string]*graph.Type{"input": graph.TensorType(in.DType, graph.ShapeOf(in.Shape...))})
					require.NoError(t, err)
					perDevice := map[string]int{}
					allReduces := 0
					for _, st := range p.Steps {
						if st.Kind != planner.Compute {
							continue
						}
						if _, ok := p.Shards[st.Node.Name]; ok {
							perDevice[st.Logical]++
						}
						if p.Comms[st.Node.Name].Kind == planner.CommAllReduce {
							allReduces++
						}
					}
					require.Len(t, perDevice, ways)
					for dev, n := range perDevice {
						// Per layer: the column MatMul with its bias,
						// the Relu and the row MatMul.
						require.Equal(t, 4*3, n, dev)
					}
					require.Equal(t, 4, allReduces)

					got := run(sess)
					require.Len(t, got, len(want))
					var maxDiff float64
					for i := range got {
						maxDiff = max(maxDiff, math.Abs(float64(got[i])-float64(want[i])))
					}
					t.Logf("%d-way tensor parallel on %v: max abs difference from the single-device run %.3g", ways, sess.MultiDevice().Physical, maxDiff)
					require.LessOrEqual(t, maxDiff, 1e-5)
				})
			}
		})
	}
}
