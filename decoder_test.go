package onnxvk_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/internal/npy"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/internal/torchmodels"
)

// decoding is greedy decoding of the exported decoder on a session: the
// prompt first (with empty caches), then one token per step with the
// present keys and values fed back as the past ones, kept on the device
// when keep is set.
type decoding struct {
	sess  *onnxvk.Session
	opts  onnxvk.RunOptions
	cache []string
	past  map[string]*onnxvk.Tensor
	ids   *onnxvk.Tensor
	// logits are the latest step's.
	logits *onnxvk.Tensor
}

// newDecoding starts decoding prompt on sess.
func newDecoding(t *testing.T, sess *onnxvk.Session, prompt []int64, keep bool) *decoding {
	t.Helper()
	d := &decoding{sess: sess, past: map[string]*onnxvk.Tensor{}}
	for _, in := range sess.Inputs() {
		if name, ok := strings.CutPrefix(in.Name, "past."); ok {
			d.cache = append(d.cache, name)
		}
	}
	if keep {
		for _, name := range d.cache {
			d.opts.KeepOnDevice = append(d.opts.KeepOnDevice, "present."+name)
		}
	}
	for _, name := range d.cache {
		empty, err := onnxvk.NewTensor([]int64{1, 8, 0, 64}, []float32{})
		require.NoError(t, err)
		d.past[name] = empty
	}
	var err error
	d.ids, err = onnxvk.NewTensor([]int64{1, int64(len(prompt))}, prompt)
	require.NoError(t, err)
	return d
}

// step runs one step and returns its token and what the session's
// devices did for it.
func (d *decoding) step(t *testing.T) (token int64, did onnxvk.Counters) {
	t.Helper()
	before := d.sess.Counters()
	out, err := d.sess.RunWith(context.Background(), d.inputs(), d.opts)
	require.NoError(t, err)
	did = d.sess.Counters().Sub(before)
	d.logits = out["logits"]
	logits, err := onnxvk.Data[float32](out["logits"])
	require.NoError(t, err)
	last := logits[len(logits)-1024:]
	token = int64(slices.Index(last, slices.Max(last)))
	for _, name := range d.cache {
		d.past[name].Release()
		d.past[name] = out["present."+name]
	}
	d.ids, err = onnxvk.NewTensor([]int64{1, 1}, []int64{token})
	require.NoError(t, err)
	return token, did
}

// inputs are the next step's inputs.
func (d *decoding) inputs() map[string]*onnxvk.Tensor {
	in := map[string]*onnxvk.Tensor{"ids": d.ids}
	for name, v := range d.past {
		in["past."+name] = v
	}
	return in
}

// release gives back the caches.
func (d *decoding) release() {
	for _, v := range d.past {
		v.Release()
	}
}

// generate runs steps steps of decoding prompt on sess (see decoding);
// each, when not nil, is called after every step with its index. It
// returns the tokens and, for each step after the first two, the bytes the
// session moved between host and device.
func generate(t *testing.T, sess *onnxvk.Session, prompt []int64, steps int, keep bool, each func(step int)) (tokens []int64, moved []int64) {
	t.Helper()
	d := newDecoding(t, sess, prompt, keep)
	defer d.release()
	for step := range steps {
		token, did := d.step(t)
		tokens = append(tokens, token)
		if step >= 2 {
			moved = append(moved, did.HostDeviceBytes)
		}
		if each != nil {
			each(step)
		}
	}
	return tokens, moved
}

// decoderModel exports the GPT-2-style decoder (see generate) if needed and
// returns its file, its prompt and PyTorch's first steps tokens after it.
func decoderModel(t *testing.T, steps int) (model string, prompt, want []int64) {
	t.Helper()
	testenv.SkipShort(t, "exports and runs a PyTorch model")
	cache := torchmodels.Cache(t, ".")
	torchmodels.Export(t, ".", cache, []string{"decoder"})
	dir := filepath.Join(cache, "decoder")
	p, err := npy.ReadFile(filepath.Join(dir, "prompt.npy"))
	require.NoError(t, err)
	ref, err := npy.ReadFile(filepath.Join(dir, "tokens.npy"))
	require.NoError(t, err)
	prompt, err = p.Int64s()
	require.NoError(t, err)
	want, err = ref.Int64s()
	require.NoError(t, err)
	return filepath.Join(dir, "model.onnx"), prompt, want[:steps]
}

// loadDecoder loads the decoder on dev ("cpu" or "vulkan") with opts,
// skipping the test where there is no Vulkan device.
func loadDecoder(t *testing.T, model, dev string, opts ...onnxvk.Option) *onnxvk.Session {
	t.Helper()
	sess, err := onnxvk.Load(model, append([]onnxvk.Option{onnxvk.WithDevice(dev)}, opts...)...)
	if errors.Is(err, onnxvk.ErrDeviceUnavailable) {
		testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", err))
	}
	require.NoError(t, err)
	t.Cleanup(func() { sess.Close() })
	return sess
}

// TestDecoderGeneration runs greedy generation with the GPT-2-style decoder
// exported from PyTorch (6 layers, d_model 512, 8 heads, a KV cache of
// past and present inputs and outputs) on the CPU and on Vulkan with the
// cache kept on the GPU, a concrete plan per step there (WithoutShapeClasses;
// TestDecoderShapeClasses runs the class plans):
// both give PyTorch's tokens, and a decode step
// moves only the token id and the logits between host and device (64 KiB
// of slack for the constants a new plan uploads). 200 tokens in the long
// suites, 6 otherwise.
func TestDecoderGeneration(t *testing.T) {
	steps := 6
	if testenv.Long() {
		steps = 200
	}
	model, p, want := decoderModel(t, steps)
	got, _ := generate(t, loadDecoder(t, model, "cpu"), p, steps, false, nil)
	require.Equal(t, want, got, "CPU tokens against PyTorch's")

	gpu := loadDecoder(t, model, "vulkan", onnxvk.WithoutShapeClasses())
	got, moved := generate(t, gpu, p, steps, true, nil)
	require.Equal(t, want, got, "Vulkan tokens against PyTorch's")
	const idsAndLogits = 8 + 1024*4
	for i, n := range moved {
		require.LessOrEqual(t, n, int64(idsAndLogits+64<<10), "step %d moved %d bytes between host and device", i+2, n)
	}
	t.Logf("%d tokens; bytes between host and device per decode step: %d..%d (ids and logits: %d)", steps, slices.Min(moved), slices.Max(moved), idsAndLogits)
}
