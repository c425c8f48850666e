//go:build unix

package onnxvk_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/loader"
)

// TestTruncatedWeights truncates the mapped weight file of a loaded model:
// a Run on the CPU (with its plan made before, or after: shape inference
// reads a shape from the file), and the first Run on Vulkan (which uploads
// the weights), fail with ErrMappedFileChanged
// naming a tensor and the file instead of the process dying of SIGBUS;
// with WithoutMmap the Runs do not notice.
func TestTruncatedWeights(t *testing.T) {
	in := map[string]*onnxvk.Tensor{"x": randomInput(t, 3, 4)}
	in2 := map[string]*onnxvk.Tensor{"x": randomInput(t, 2, 4)}
	// save writes the tensors of at least threshold bytes to weights.bin.
	save := func(t *testing.T, threshold int64) (model, weights string) {
		dir := t.TempDir()
		model, weights = filepath.Join(dir, "m.onnx"), filepath.Join(dir, "weights.bin")
		require.NoError(t, loader.Save(mlpModel(), model, loader.WithExternalData("weights.bin", threshold, 0)))
		return model, weights
	}
	ctx := context.Background()
	wantFault := func(t *testing.T, err error) {
		t.Helper()
		require.ErrorIs(t, err, graph.ErrMappedFileChanged)
		require.ErrorContains(t, err, `tensor "`)
		require.ErrorContains(t, err, "weights.bin")
	}
	t.Run("cpu", func(t *testing.T) {
		model, weights := save(t, 0)
		sess, err := onnxvk.Load(model, onnxvk.WithDevice("cpu"))
		require.NoError(t, err)
		defer sess.Close()
		_, err = sess.Run(ctx, in)
		require.NoError(t, err)
		require.NoError(t, os.Truncate(weights, 0))
		_, err = sess.Run(ctx, in)
		wantFault(t, err)
		_, err = sess.Run(ctx, in2)
		wantFault(t, err)
		// RunBatch runs each request on a goroutine of its own.
		_, err = sess.RunBatch(ctx, []map[string]*onnxvk.Tensor{in, in})
		wantFault(t, err)
	})
	// Preparing a session reads weights too (a shape for inference):
	// a file truncated between loader.Load and NewSession fails it.
	t.Run("NewSession", func(t *testing.T) {
		model, weights := save(t, 0)
		m, err := loader.Load(model)
		require.NoError(t, err)
		require.NoError(t, os.Truncate(weights, 0))
		sess, err := onnxvk.NewSession(m, onnxvk.WithDevice("cpu"))
		if err == nil {
			sess.Close()
		}
		wantFault(t, err)
	})
	t.Run("vulkan", func(t *testing.T) {
		// The small tensors stay in the model file: the weights are first
		// read when the first Run uploads them.
		model, weights := save(t, 1024)
		sess, err := onnxvk.Load(model, onnxvk.WithDevice("vulkan"))
		if errors.Is(err, onnxvk.ErrDeviceUnavailable) {
			testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", err))
		}
		require.NoError(t, err)
		defer sess.Close()
		require.NoError(t, os.Truncate(weights, 0))
		_, err = sess.Run(ctx, in)
		wantFault(t, err)
	})
	t.Run("WithoutMmap", func(t *testing.T) {
		model, weights := save(t, 0)
		sess, err := onnxvk.Load(model, onnxvk.WithDevice("cpu"), onnxvk.WithoutMmap())
		require.NoError(t, err)
		defer sess.Close()
		want, err := sess.Run(ctx, in)
		require.NoError(t, err)
		require.NoError(t, os.Truncate(weights, 0))
		got, err := sess.Run(ctx, in)
		require.NoError(t, err)
		require.Equal(t, want["probs"].Bytes(), got["probs"].Bytes())
		_, err = sess.Run(ctx, in2)
		require.NoError(t, err)
	})
}
