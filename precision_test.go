package onnxvk_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/sessionvalues"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/planner"
)

// TestPrecision checks what Precision reports without a float16 mode,
// with WithFP16 and with WithFP16Weights, on the CPU and on the Vulkan
// device, and that each mode's results stay close to fp32: in the
// float16 mode the MLP's MatMuls, biases and Relu run on float16 tensors
// and the Softmax writing the graph output stays float32.
func TestPrecision(t *testing.T) {
	plain, err := onnxvk.NewSession(mlpModel(), onnxvk.WithDevice("cpu"))
	require.NoError(t, err)
	defer plain.Close()
	require.Equal(t, "fp32", plain.Precision().String())
	require.Equal(t, onnxvk.Precision{Requested: onnxvk.PrecisionFP32, Mode: onnxvk.PrecisionFP32}, plain.Precision())

	x := map[string]*onnxvk.Tensor{"x": randomInput(t, 3, 5)}
	want, err := plain.Run(context.Background(), x)
	require.NoError(t, err)
	w, err := want["probs"].Float32s()
	require.NoError(t, err)

	for _, mode := range []struct {
		name string
		opt  onnxvk.Option
	}{{onnxvk.PrecisionFP16, onnxvk.WithFP16()}, {onnxvk.PrecisionFP16Weights, onnxvk.WithFP16Weights()}} {
		t.Run(mode.name, func(t *testing.T) {
			cpu, err := onnxvk.NewSession(mlpModel(), onnxvk.WithDevice("cpu"), mode.opt)
			require.NoError(t, err)
			defer cpu.Close()
			p := cpu.Precision()
			require.Equal(t, mode.name, p.Requested)
			require.Equal(t, onnxvk.PrecisionFP32, p.Mode)
			require.True(t, strings.HasPrefix(p.String(), "fp32 ("+mode.name+" requested: no GPU"), p.String())

			gpu, err := onnxvk.NewSession(mlpModel(), onnxvk.WithDevice("vulkan"), mode.opt)
			if errors.Is(err, onnxvk.ErrDeviceUnavailable) {
				testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", err))
			}
			require.NoError(t, err)
			defer gpu.Close()
			p = gpu.Precision()
			if p.Mode != mode.name {
				require.NotEmpty(t, p.Reason)
				testenv.Skip(t, "device without the mode: "+p.String())
			}
			require.Equal(t, "vulkan:0", p.Device)
			require.True(t, p.Storage16)
			if mode.name == onnxvk.PrecisionFP16 {
				require.Equal(t, []onnxvk.OpPrecision{{Op: "Softmax", Why: "writes a graph output, which keeps its float32 type"}}, p.Float32)
				require.True(t, strings.HasPrefix(p.String(), "fp16 on vulkan:0 ("), p.String())
				plan, err := sessionvalues.Of(gpu).Plan(map[string]*graph.Type{"x": graph.TensorType(graph.Float, graph.ShapeOf(3, 4, 8))})
				require.NoError(t, err)
				halves := 0
				for _, st := range plan.Steps {
					if st.Kind != planner.Compute || st.Node.OpType == "Cast" {
						continue
					}
					if plan.Types[st.Out[0]].Elem == graph.Float16 {
						halves++
					}
				}
				// Reshape, the two products with their biases, and Relu.
				require.Equal(t, 4, halves, "nodes on float16 tensors")
				// Runs of four batch sizes at once plan at once, sharing the
				// float16 copies of the weights.
				var wg sync.WaitGroup
				errs := make([]error, 4)
				for i := range errs {
					in := map[string]*onnxvk.Tensor{"x": randomInput(t, 9, int64(i+1))}
					wg.Go(func() { _, errs[i] = gpu.Run(context.Background(), in) })
				}
				wg.Wait()
				require.NoError(t, errors.Join(errs...))
			}
			got, err := gpu.Run(context.Background(), x)
			require.NoError(t, err)
			require.Positive(t, gpu.DeviceMemoryInUse())
			g, err := got["probs"].Float32s()
			require.NoError(t, err)
			for i := range w {
				// Softmax of logits whose fp16 error is about 2^-11·Σ|x|·|w|
				// per rounding, here well under 1e-2.
				require.LessOrEqual(t, math.Abs(float64(g[i]-w[i])), 1e-2, "probs[%d] = %v, want %v", i, g[i], w[i])
			}
		})
	}
}
