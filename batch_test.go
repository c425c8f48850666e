package onnxvk_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/sessionvalues"
)

// widePipeline builds a 2-stage pipeline of layers MatMul/Relu pairs per
// stage on [n, n] floats, annotated for configuration "pp", large enough
// that a stage takes a while on a software GPU.
func widePipeline(n int64, layers int) *graph.Model {
	rng := rand.New(rand.NewPCG(5, uint64(n)))
	g := graph.NewGraph("wide")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(n, n))}}
	g.Outputs = []*graph.ValueInfo{{Name: "y", Type: graph.TensorType(graph.Float, graph.ShapeOf(n, n))}}
	prev := "x"
	for i := range 2 * layers {
		w := graph.NewTensor(graph.Float, []int64{n, n})
		for k, v := 0, graph.View[float32](w); k < len(v); k++ {
			v[k] = (rng.Float32() - 0.45) / float32(n)
		}
		wn, mm, out := fmt.Sprintf("w%d", i), fmt.Sprintf("mm%d", i), fmt.Sprintf("r%d", i)
		if i == 2*layers-1 {
			out = "y"
		}
		g.Initializers[wn] = w
		g.Nodes = append(g.Nodes,
			&graph.Node{Name: mm, OpType: "MatMul", Inputs: []string{prev, wn}, Outputs: []string{mm}, Index: len(g.Nodes),
				DeviceConfigs: []graph.NodeDeviceConfiguration{{ConfigurationID: "pp", PipelineStage: int32(i / layers), HasStage: true}}},
			&graph.Node{Name: "relu" + fmt.Sprint(i), OpType: "Relu", Inputs: []string{mm}, Outputs: []string{out}, Index: len(g.Nodes) + 1})
		prev = out
	}
	return &graph.Model{Name: "wide", IRVersion: 11, Opsets: map[string]int64{"": 14}, Graph: g,
		Configurations: []graph.DeviceConfiguration{{Name: "pp", NumDevices: 2}}}
}

// checkBatch requires RunBatch over inputs to return what separate Runs
// return, bit for bit.
func checkBatch(t *testing.T, sess *onnxvk.Session, ctx context.Context, inputs []*onnxvk.Tensor) {
	t.Helper()
	batch := make([]map[string]*onnxvk.Tensor, len(inputs))
	for i, x := range inputs {
		batch[i] = map[string]*onnxvk.Tensor{"x": x}
	}
	outs, err := sess.RunBatch(ctx, batch)
	require.NoError(t, err)
	require.Len(t, outs, len(inputs))
	for i, x := range inputs {
		require.Equal(t, runY(t, sess, x), outs[i]["y"].Bytes(), "request %d", i)
	}
}

// TestRunBatchPipelineCPU pipelines 8 requests through two logical devices
// on the CPU and checks the errors about the batch's inputs.
func TestRunBatchPipelineCPU(t *testing.T) {
	sess, err := onnxvk.NewSession(pipelineModel(2, true), onnxvk.WithDevice("cpu"))
	require.NoError(t, err)
	defer sess.Close()
	var inputs []*onnxvk.Tensor
	for i := range 8 {
		inputs = append(inputs, pipelineInput(t, uint64(10+i)))
	}
	checkBatch(t, sess, context.Background(), inputs)

	outs, err := sess.RunBatch(context.Background(), nil)
	require.NoError(t, err)
	require.Empty(t, outs)
	small, err := onnxvk.NewTensor([]int64{2, 16}, make([]float32, 32))
	require.NoError(t, err)
	_, err = sess.RunBatch(context.Background(), []map[string]*onnxvk.Tensor{{"x": inputs[0]}, {"x": small}})
	require.ErrorIs(t, err, onnxvk.ErrInputMismatch)
	require.ErrorContains(t, err, "request 1")
	_, err = sess.RunBatch(context.Background(), []map[string]*onnxvk.Tensor{{"x": inputs[0]}, {}})
	require.ErrorIs(t, err, onnxvk.ErrMissingInput)
	require.ErrorContains(t, err, "request 1")
}

// TestPipelineOverlapVulkan pipelines 4 requests through 2 stages on 2
// logical devices sharing vulkan:0 (lavapipe in CI) under a trace: the
// results equal separate Runs, every request has events on both logical
// devices' tracks, and the stages overlap. Lavapipe runs both VkDevices
// on one CPU thread pool, so only a positive overlap is required.
func TestPipelineOverlapVulkan(t *testing.T) {
	const n = 128
	sess := vulkanSession(t, widePipeline(n, 3), onnxvk.WithDeviceMapping([]string{"vulkan:0", "vulkan:0"}))
	var inputs []*onnxvk.Tensor
	for i := range 4 {
		data := make([]float32, n*n)
		rng := rand.New(rand.NewPCG(uint64(i), 1))
		for k := range data {
			data[k] = rng.Float32()
		}
		x, err := onnxvk.NewTensor([]int64{n, n}, data)
		require.NoError(t, err)
		inputs = append(inputs, x)
	}
	checkBatch(t, sess, context.Background(), inputs)
	tr := backend.NewTrace()
	checkBatch(t, sess, backend.WithTrace(context.Background(), tr), inputs)
	tracks := map[string]map[int]bool{"d0": {}, "d1": {}}
	for _, ev := range tr.Events() {
		if ev.Request < len(inputs) && ev.Op != "transfer" {
			require.Contains(t, tracks, ev.Track(), "%s on %s", ev.Name, ev.Device)
			tracks[ev.Track()][ev.Request] = true
		}
	}
	require.Len(t, tracks["d0"], len(inputs))
	require.Len(t, tracks["d1"], len(inputs))
	var batch []backend.TraceEvent
	for _, ev := range tr.Events() {
		if ev.Request < len(inputs) {
			batch = append(batch, ev)
		}
	}
	overlap := backend.Overlap(batch)
	t.Logf("overlap of d0 and d1 over %d pipelined requests: %.3f", len(inputs), overlap)
	require.Greater(t, overlap, 0.0)
}

// TestPipelineTransferBytes checks that the bytes the trace of one Run
// shows moved between devices equal the transfer bytes of the plan's
// report (what `onnxvk plan` prints).
func TestPipelineTransferBytes(t *testing.T) {
	sess := vulkanSession(t, pipelineModel(2, true), onnxvk.WithDeviceMapping([]string{"vulkan:0", "vulkan:0"}))
	p, err := sessionvalues.Of(sess).Plan(nil)
	require.NoError(t, err)
	want := p.Report().TransferBytes
	require.Positive(t, want)
	tr := backend.NewTrace()
	_, err = sess.Run(backend.WithTrace(context.Background(), tr), map[string]*onnxvk.Tensor{"x": pipelineInput(t, 1)})
	require.NoError(t, err)
	var moved int64
	transfers := 0
	for _, ev := range tr.Events() {
		if ev.Op == "transfer" {
			require.Equal(t, 0, ev.Request)
			require.Contains(t, []string{"d0", "d1"}, ev.Logical, ev.Name)
			moved += ev.Bytes
			transfers++
		}
	}
	require.Equal(t, p.Report().TransferSteps, transfers)
	require.Equal(t, want, moved)
	t.Logf("one Run moved %d bytes in %d transfers; the plan reports %d", moved, transfers, want)
}
