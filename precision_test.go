package onnxvk_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/internal/testenv"
)

// TestPrecision checks what Precision reports with and without WithFP16,
// on the CPU and on the Vulkan device, and that the fp16 mode's results
// stay close to fp32.
func TestPrecision(t *testing.T) {
	plain, err := onnxvk.NewSession(mlpModel(), onnxvk.WithDevice("cpu"))
	require.NoError(t, err)
	defer plain.Close()
	require.Equal(t, "fp32", plain.Precision())

	cpu, err := onnxvk.NewSession(mlpModel(), onnxvk.WithDevice("cpu"), onnxvk.WithFP16())
	require.NoError(t, err)
	defer cpu.Close()
	require.True(t, strings.HasPrefix(cpu.Precision(), "fp32 (fp16 requested: no GPU"), cpu.Precision())

	gpu, err := onnxvk.NewSession(mlpModel(), onnxvk.WithDevice("vulkan"), onnxvk.WithFP16())
	if errors.Is(err, onnxvk.ErrDeviceUnavailable) {
		testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", err))
	}
	require.NoError(t, err)
	defer gpu.Close()
	if !strings.HasPrefix(gpu.Precision(), "fp16 weights on vulkan:") {
		require.True(t, strings.HasPrefix(gpu.Precision(), "fp32 (fp16 requested: "), gpu.Precision())
		testenv.Skip(t, "device without the fp16 mode: "+gpu.Precision())
	}
	x := map[string]*onnxvk.Tensor{"x": randomInput(t, 3, 5)}
	want, err := cpu.Run(context.Background(), x)
	require.NoError(t, err)
	got, err := gpu.Run(context.Background(), x)
	require.NoError(t, err)
	require.Positive(t, gpu.DeviceMemoryInUse())
	w, err := want["probs"].Float32s()
	require.NoError(t, err)
	g, err := got["probs"].Float32s()
	require.NoError(t, err)
	for i := range w {
		// Softmax of logits whose fp16 error is about 2^-11·Σ|x|·|w|,
		// here well under 1e-2.
		require.LessOrEqual(t, math.Abs(float64(g[i]-w[i])), 1e-2, "probs[%d] = %v, want %v", i, g[i], w[i])
	}
}
