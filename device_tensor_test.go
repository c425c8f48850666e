package onnxvk_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/testenv"
)

// cacheModel is the shape of a decoder step with a KV cache: the token's
// features x [1, 1, 4] are appended to past [1, P, 4] as present
// [1, P+1, 4], and y [1, 4] is the sum over the sequence of present
// scaled by a weight.
func cacheModel() *graph.Model {
	g := graph.NewGraph("cache")
	g.Inputs = []*graph.ValueInfo{
		{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(1, 1, 4))},
		{Name: "past", Type: graph.TensorType(graph.Float, graph.Shape{graph.DimOf(1), graph.SymDim("P"), graph.DimOf(4)})},
	}
	g.Initializers["w"], _ = graph.FromSlice(graph.Float, []int64{4}, []float32{1, -2, 0.5, 3})
	g.Initializers["axes"], _ = graph.FromSlice(graph.Int64, []int64{1}, []int64{1})
	g.Nodes = []*graph.Node{
		{Index: 0, OpType: "Concat", Inputs: []string{"past", "x"}, Outputs: []string{"present"}, Attrs: map[string]*graph.Attribute{"axis": {Name: "axis", Type: graph.AttrInt, I: 1}}},
		{Index: 1, OpType: "Mul", Inputs: []string{"present", "w"}, Outputs: []string{"scaled"}},
		{Index: 2, OpType: "ReduceSum", Inputs: []string{"scaled", "axes"}, Outputs: []string{"y"}, Attrs: map[string]*graph.Attribute{"keepdims": {Name: "keepdims", Type: graph.AttrInt, I: 0}}},
	}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}, {Name: "present"}}
	return &graph.Model{Name: "cache", IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g}
}

// TestDeviceTensorsKVCache runs 12 decode steps of cacheModel with present
// kept on the GPU and fed back as past: after the first step, a step moves
// only x and y between host and device (no cache bytes), and every y and
// the final cache equal the CPU's. The session plans each past length on
// its own (WithoutShapeClasses): a class plan, with the past length
// symbolic, runs the Concat on the CPU.
func TestDeviceTensorsKVCache(t *testing.T) {
	gpu, err := onnxvk.NewSession(cacheModel(), onnxvk.WithDevice("vulkan"), onnxvk.WithoutShapeClasses())
	if errors.Is(err, onnxvk.ErrDeviceUnavailable) {
		testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", err))
	}
	require.NoError(t, err)
	defer gpu.Close()
	cpu, err := onnxvk.NewSession(cacheModel(), onnxvk.WithDevice("cpu"))
	require.NoError(t, err)
	defer cpu.Close()

	first, err := onnxvk.NewTensor([]int64{1, 1, 4}, []float32{0.5, 0.25, -1, 2})
	require.NoError(t, err)
	gpuPast, cpuPast := first, first
	ctx := context.Background()
	for step := range 12 {
		xs := []float32{float32(step), 1, -float32(step) / 2, 0.125}
		x, err := onnxvk.NewTensor([]int64{1, 1, 4}, xs)
		require.NoError(t, err)
		before := gpu.Counters()
		got, err := gpu.RunWith(ctx, map[string]*onnxvk.Tensor{"x": x, "past": gpuPast}, onnxvk.RunOptions{KeepOnDevice: []string{"present"}})
		require.NoError(t, err)
		moved := gpu.Counters().Sub(before).HostDeviceBytes
		want, err := cpu.RunWith(ctx, map[string]*onnxvk.Tensor{"x": x, "past": cpuPast}, onnxvk.RunOptions{KeepOnDevice: []string{"present"}})
		require.NoError(t, err)
		require.Equal(t, "", want["present"].OnDevice(), "a CPU output stays a host tensor")
		present := got["present"]
		require.Equal(t, gpu.Device(), present.OnDevice(), "step %d: present is not on the GPU", step)
		require.Equal(t, []int64{1, int64(step + 2), 4}, present.Shape())
		if step > 0 {
			require.Equal(t, int64(4*4+4*4), moved, "step %d: bytes between host and device, want x and y only", step)
			gpuPast.Release()
		}
		gy, err := got["y"].Float32s()
		require.NoError(t, err)
		wy, err := want["y"].Float32s()
		require.NoError(t, err)
		require.InDeltaSlice(t, wy, gy, 1e-4, "step %d: y", step)
		gpuPast, cpuPast = present, want["present"]
	}
	g, err := gpuPast.Float32s()
	require.NoError(t, err)
	w, err := cpuPast.Float32s()
	require.NoError(t, err)
	require.Equal(t, w, g, "the cache after the last step")
}

// TestDeviceTensorLifetime checks what a device tensor can do after its
// Release and after its Session's Close, and that only outputs can be
// kept.
func TestDeviceTensorLifetime(t *testing.T) {
	s, err := onnxvk.NewSession(cacheModel(), onnxvk.WithDevice("vulkan"))
	if errors.Is(err, onnxvk.ErrDeviceUnavailable) {
		testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", err))
	}
	require.NoError(t, err)
	x, err := onnxvk.NewTensor([]int64{1, 1, 4}, []float32{1, 2, 3, 4})
	require.NoError(t, err)
	in := map[string]*onnxvk.Tensor{"x": x, "past": x}
	ctx := context.Background()
	_, err = s.RunWith(ctx, in, onnxvk.RunOptions{KeepOnDevice: []string{"scaled"}})
	require.ErrorContains(t, err, `"scaled" is not an output`)

	out, err := s.RunWith(ctx, in, onnxvk.RunOptions{KeepOnDevice: []string{"present", "y"}})
	require.NoError(t, err)
	released, kept := out["y"], out["present"]
	released.Release()
	released.Release()
	_, err = released.Float32s()
	require.ErrorContains(t, err, "after its Release")
	_, err = s.RunWith(ctx, map[string]*onnxvk.Tensor{"x": x, "past": released}, onnxvk.RunOptions{})
	require.Error(t, err, "a released tensor as an input")

	require.NoError(t, s.Close())
	require.Equal(t, []int64{1, 2, 4}, kept.Shape())
	_, err = kept.Float32s()
	require.ErrorContains(t, err, "Close")
	require.Nil(t, kept.Bytes())
	require.True(t, slices.Equal(kept.Shape(), []int64{1, 2, 4}))
}

// TestRunIntoOutputs gives a Run host tensors to write outputs into, on
// Vulkan and on the CPU: the Run returns those very tensors, filled with
// the results, and refuses a tensor of another shape.
func TestRunIntoOutputs(t *testing.T) {
	for _, device := range []string{"vulkan", "cpu"} {
		t.Run(device, func(t *testing.T) {
			s, err := onnxvk.NewSession(cacheModel(), onnxvk.WithDevice(device))
			if errors.Is(err, onnxvk.ErrDeviceUnavailable) {
				testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", err))
			}
			require.NoError(t, err)
			defer s.Close()
			x, err := onnxvk.NewTensor([]int64{1, 1, 4}, []float32{1, 2, 3, 4})
			require.NoError(t, err)
			in := map[string]*onnxvk.Tensor{"x": x, "past": x}
			want, err := s.Run(context.Background(), in)
			require.NoError(t, err)
			y, err := onnxvk.NewTensor([]int64{1, 4}, make([]float32, 4))
			require.NoError(t, err)
			present, err := onnxvk.NewTensor([]int64{1, 2, 4}, make([]float32, 8))
			require.NoError(t, err)
			data := &y.Bytes()[0]
			got, err := s.RunWith(context.Background(), in, onnxvk.RunOptions{Outputs: map[string]*onnxvk.Tensor{"y": y, "present": present}})
			require.NoError(t, err)
			require.Same(t, y, got["y"])
			require.Same(t, present, got["present"])
			require.Same(t, data, &got["y"].Bytes()[0], "y was written in place")
			require.Equal(t, want["y"].Bytes(), y.Bytes())
			require.Equal(t, want["present"].Bytes(), present.Bytes())

			wrong, err := onnxvk.NewTensor([]int64{4}, make([]float32, 4))
			require.NoError(t, err)
			_, err = s.RunWith(context.Background(), in, onnxvk.RunOptions{Outputs: map[string]*onnxvk.Tensor{"y": wrong}})
			require.ErrorContains(t, err, `output "y" is float32[1 4]`)
		})
	}
}

// TestRunOnly computes one of cacheModel's two outputs: the Run returns
// only it, equal to a full Run's, and runs only the nodes it needs.
func TestRunOnly(t *testing.T) {
	for _, device := range []string{"cpu", "vulkan"} {
		t.Run(device, func(t *testing.T) {
			sess, err := onnxvk.NewSession(cacheModel(), onnxvk.WithDevice(device))
			if errors.Is(err, onnxvk.ErrDeviceUnavailable) {
				testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", err))
			}
			require.NoError(t, err)
			defer sess.Close()
			x, err := onnxvk.NewTensor([]int64{1, 1, 4}, []float32{1, 2, 3, 4})
			require.NoError(t, err)
			past, err := onnxvk.NewTensor([]int64{1, 2, 4}, []float32{1, 1, 1, 1, 2, 2, 2, 2})
			require.NoError(t, err)
			in := map[string]*onnxvk.Tensor{"x": x, "past": past}
			ctx := context.Background()
			full, err := sess.Run(ctx, in)
			require.NoError(t, err)

			tr := backend.NewTrace()
			only, err := sess.RunWith(backend.WithTrace(ctx, tr), in, onnxvk.RunOptions{Only: []string{"present", "present"}})
			require.NoError(t, err)
			require.Len(t, only, 1)
			want, err := full["present"].Float32s()
			require.NoError(t, err)
			got, err := only["present"].Float32s()
			require.NoError(t, err)
			require.Equal(t, want, got)
			for _, ev := range tr.Events() {
				require.NotContains(t, []string{"Mul", "ReduceSum"}, ev.Op, "a node y needs ran")
			}

			_, err = sess.RunWith(ctx, in, onnxvk.RunOptions{Only: []string{"nope"}})
			require.ErrorIs(t, err, onnxvk.ErrUnknownOutput)
			require.Contains(t, err.Error(), "the model outputs y, present")
		})
	}
}
