package onnxvk_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/internal/sessionvalues"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/loader"
)

// TestCloseDuringRuns closes a session while 16 goroutines run it, over
// and over, on the CPU and on Vulkan: the model is loaded from an archive,
// so its weights are mapped from the file and Close unmaps them. Every Run
// either returns the right output or fails with ErrClosed; every call
// after Close fails with ErrClosed. 1000 rounds per device in the long
// suites, 24 and 2 in the default run; meant for -race. The sessions plan
// each batch size on its own (WithoutShapeClasses), so that an input gets
// the same plan, and bytes, whatever Run came before it (on Vulkan a class
// plan runs the nodes of symbolic size on the CPU).
func TestCloseDuringRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mlp.onnx")
	require.NoError(t, loader.SaveArchive(mlpModel(), path))
	inputs := []*onnxvk.Tensor{randomInput(t, 1, 1), randomInput(t, 2, 3), randomInput(t, 3, 7)}
	for _, dev := range []struct {
		name   string
		rounds int
	}{{"cpu", 24}, {"vulkan", 2}} {
		t.Run(dev.name, func(t *testing.T) {
			ref, err := onnxvk.Load(path, onnxvk.WithDevice(dev.name), onnxvk.WithoutShapeClasses())
			if errors.Is(err, onnxvk.ErrDeviceUnavailable) {
				testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", err))
			}
			require.NoError(t, err)
			var want [][]byte
			for _, x := range inputs {
				out, err := ref.Run(context.Background(), map[string]*onnxvk.Tensor{"x": x})
				require.NoError(t, err)
				want = append(want, bytes.Clone(out["probs"].Bytes()))
			}
			require.NoError(t, ref.Close())
			rounds := dev.rounds
			if testenv.Long() {
				rounds = 1000
			}
			for round := range rounds {
				sess, err := onnxvk.Load(path, onnxvk.WithDevice(dev.name), onnxvk.WithoutShapeClasses())
				require.NoError(t, err)
				closeDuringRuns(t, sess, inputs, want, 16)
				if t.Failed() {
					t.Fatalf("round %d", round)
				}
			}
		})
	}
}

// closeDuringRuns runs sess from goroutines goroutines, each until a Run
// fails, and closes it once they have finished some Runs; it requires
// every output to be want's for its input, every failure to be ErrClosed,
// and every call after Close to fail with ErrClosed.
func closeDuringRuns(t *testing.T, sess *onnxvk.Session, inputs []*onnxvk.Tensor, want [][]byte, goroutines int) {
	t.Helper()
	ctx := context.Background()
	var (
		wg   sync.WaitGroup
		runs atomic.Int64
		// started is closed once the goroutines have finished as many
		// Runs as there are goroutines.
		started = make(chan struct{})
		once    sync.Once
	)
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			for r := 0; ; r++ {
				k := (g + r) % len(inputs)
				out, err := sess.Run(ctx, map[string]*onnxvk.Tensor{"x": inputs[k]})
				if err != nil {
					if !errors.Is(err, onnxvk.ErrClosed) {
						errs <- fmt.Errorf("goroutine %d, run %d: %w", g, r, err)
					}
					return
				}
				if !bytes.Equal(out["probs"].Bytes(), want[k]) {
					errs <- fmt.Errorf("goroutine %d, run %d: wrong output", g, r)
					return
				}
				if runs.Add(1) == int64(goroutines) {
					once.Do(func() { close(started) })
				}
			}
		})
	}
	stopped := make(chan struct{})
	go func() {
		wg.Wait()
		close(stopped)
	}()
	select {
	case <-started:
	case <-stopped: // every goroutine failed
	}
	require.NoError(t, sess.Close())
	<-stopped
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	x := map[string]*onnxvk.Tensor{"x": inputs[0]}
	_, err := sess.Run(ctx, x)
	require.ErrorIs(t, err, onnxvk.ErrClosed)
	_, err = sess.RunBatch(ctx, []map[string]*onnxvk.Tensor{x})
	require.ErrorIs(t, err, onnxvk.ErrClosed)
	_, err = sess.Verify(ctx, map[string]*onnxvk.Tensor{"x": inputs[0]})
	require.ErrorIs(t, err, onnxvk.ErrClosed)
	_, err = sessionvalues.Of(sess).Plan(nil)
	require.ErrorIs(t, err, onnxvk.ErrClosed)
	require.NoError(t, sess.Close(), "a second Close")
}
