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
	"github.com/onnxvk/onnxvk/internal/decoding"
	"github.com/onnxvk/onnxvk/internal/npy"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/internal/torchmodels"
)

// greedy is greedy decoding (decoding.Greedy) that fails the test on an
// error.
type greedy struct{ *decoding.Greedy }

// newDecoding starts decoding prompt on sess, the caches kept on the
// device when keep is set.
func newDecoding(t *testing.T, sess *onnxvk.Session, prompt []int64, keep bool) greedy {
	t.Helper()
	g, err := decoding.New(sess, prompt, keep)
	require.NoError(t, err)
	return greedy{g}
}

// step runs one step and returns its token and what the session's
// devices did for it.
func (d greedy) step(t *testing.T) (token int64, did onnxvk.Counters) {
	t.Helper()
	token, did, _, err := d.Step(context.Background())
	require.NoError(t, err)
	return token, did
}

// generate runs steps steps of decoding prompt on sess (see
// decoding.Greedy); each, when not nil, is called after every step with
// its index. It returns the tokens and, for each step after the first
// two, the bytes the session moved between host and device.
func generate(t *testing.T, sess *onnxvk.Session, prompt []int64, steps int, keep bool, each func(step int)) (tokens []int64, moved []int64) {
	t.Helper()
	d := newDecoding(t, sess, prompt, keep)
	defer d.Release()
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

// decoderName is the decoder the tests run: decoder (6 layers of width
// 512, 8 heads, an 81 MB model) in the long suites, decoder_small (2
// layers of width 256, 4 heads, 9 MB) otherwise; both have a vocabulary
// of 1024 and heads 64 wide.
func decoderName() string {
	if testenv.Long() {
		return "decoder"
	}
	return "decoder_small"
}

// decoderGeometry is the shape of a decoder's KV cache.
type decoderGeometry struct {
	// layers is the number of blocks, each with a key and a value cache of
	// heads heads of headDim floats per position.
	layers, heads, headDim int64
}

// geometryOf reads the geometry of the decoder sess runs from its past
// inputs ([1, heads, P, headDim], a key and a value per layer).
func geometryOf(t *testing.T, sess *onnxvk.Session) decoderGeometry {
	t.Helper()
	var g decoderGeometry
	for _, in := range sess.Inputs() {
		if strings.HasPrefix(in.Name, "past.") {
			require.Len(t, in.Shape, 4, in.Name)
			g.layers++
			g.heads, g.headDim = in.Shape[1], in.Shape[3]
		}
	}
	require.True(t, g.layers > 0 && g.layers%2 == 0 && g.heads > 0 && g.headDim > 0, "decoder cache inputs: %+v", g)
	g.layers /= 2
	return g
}

// decoderModel exports the named GPT-2-style decoder (see generate) if
// needed and returns its file, its prompt and PyTorch's first steps tokens
// after it.
func decoderModel(t testing.TB, name string, steps int) (model string, prompt, want []int64) {
	t.Helper()
	testenv.SkipShort(t, "exports and runs a PyTorch model")
	cache := torchmodels.Cache(t, ".")
	torchmodels.Export(t, ".", cache, []string{name})
	dir := filepath.Join(cache, name)
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
func loadDecoder(t testing.TB, model, dev string, opts ...onnxvk.Option) *onnxvk.Session {
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
// exported from PyTorch (see decoderName; a KV cache of past and present
// inputs and outputs) on the CPU and on Vulkan with the
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
	model, p, want := decoderModel(t, decoderName(), steps)
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
