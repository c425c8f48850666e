// Package decoding runs greedy decoding of the GPT-2-style decoders that
// testdata/torch/export.py exports (ids [1, T] and, per layer, past keys
// and values [1, heads, P, headDim] in; logits [1, T, vocab] and the
// present keys and values out) on a session, for the tests and the GPU
// check.
package decoding

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/onnxvk/onnxvk"
)

// Greedy is greedy decoding on a session: the prompt first, with empty
// caches, then one token per step, the present keys and values fed back
// as the past ones.
type Greedy struct {
	sess  *onnxvk.Session
	opts  onnxvk.RunOptions
	cache []string
	past  map[string]*onnxvk.Tensor
	ids   *onnxvk.Tensor
	// Logits are the latest step's.
	Logits *onnxvk.Tensor
}

// New starts decoding prompt on sess with empty caches. With keep, the
// caches stay on the session's device between steps (RunOptions
// KeepOnDevice).
func New(sess *onnxvk.Session, prompt []int64, keep bool) (*Greedy, error) {
	g := &Greedy{sess: sess, past: map[string]*onnxvk.Tensor{}}
	for _, in := range sess.Inputs() {
		name, ok := strings.CutPrefix(in.Name, "past.")
		if !ok {
			continue
		}
		if len(in.Shape) != 4 || in.Shape[1] <= 0 || in.Shape[3] <= 0 {
			g.Release()
			return nil, fmt.Errorf("decoding: %s has shape %v, want [1, heads, P, headDim]", in.Name, in.Shape)
		}
		empty, err := onnxvk.NewTensor([]int64{1, in.Shape[1], 0, in.Shape[3]}, []float32{})
		if err != nil {
			g.Release()
			return nil, err
		}
		g.cache, g.past[name] = append(g.cache, name), empty
		if keep {
			g.opts.KeepOnDevice = append(g.opts.KeepOnDevice, "present."+name)
		}
	}
	ids, err := onnxvk.NewTensor([]int64{1, int64(len(prompt))}, prompt)
	if err != nil {
		g.Release()
		return nil, err
	}
	g.ids = ids
	return g, nil
}

// Inputs returns the next step's inputs.
func (g *Greedy) Inputs() map[string]*onnxvk.Tensor {
	in := map[string]*onnxvk.Tensor{"ids": g.ids}
	for name, v := range g.past {
		in["past."+name] = v
	}
	return in
}

// Step runs one step and returns its token (the last position's largest
// logit), what the session's devices did for it and how long the Run
// took.
func (g *Greedy) Step(ctx context.Context) (token int64, did onnxvk.Counters, took time.Duration, err error) {
	before := g.sess.Counters()
	begin := time.Now()
	out, err := g.sess.RunWith(ctx, g.Inputs(), g.opts)
	if err != nil {
		return 0, did, 0, err
	}
	took, did = time.Since(begin), g.sess.Counters().Sub(before)
	for _, name := range g.cache {
		g.past[name].Release()
		g.past[name] = out["present."+name]
	}
	g.Logits = out["logits"]
	logits, err := onnxvk.Data[float32](g.Logits)
	if err != nil {
		return 0, did, took, err
	}
	shape := g.Logits.Shape()
	if len(shape) != 3 || shape[2] < 1 || int64(len(logits)) < shape[2] {
		return 0, did, took, fmt.Errorf("decoding: logits of shape %v, want [1, T, vocab]", shape)
	}
	last := logits[len(logits)-int(shape[2]):]
	token = int64(slices.Index(last, slices.Max(last)))
	if g.ids, err = onnxvk.NewTensor([]int64{1, 1}, []int64{token}); err != nil {
		return 0, did, took, err
	}
	return token, did, took, nil
}

// Release gives back the caches.
func (g *Greedy) Release() {
	for _, v := range g.past {
		v.Release()
	}
}
