package onnxvk_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/internal/npy"
	"github.com/onnxvk/onnxvk/internal/opcases"
	"github.com/onnxvk/onnxvk/internal/sessionvalues"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/planner"
)

// decoderTolerance bounds the difference between a decoder block's outputs
// and the numpy reference (float64) over its chain of products.
var decoderTolerance = ops.Tolerance{Abs: 1e-4, Rel: 1e-3}

// TestDecoderBlockOpsets23And24 runs the Llama-style decoder blocks of
// testdata/opset24 (RMSNormalization, RotaryEmbedding with position_ids,
// Attention with grouped-query heads, is_causal and a KV cache; 3-D forms
// at opset 23, 4-D at 24) for a prompt after a short cache and one token
// after it, on the CPU and on Vulkan, where every compute node must be
// placed on the GPU, and compares them with gen.py's numpy reference.
func TestDecoderBlockOpsets23And24(t *testing.T) {
	for _, opset := range []int{23, 24} {
		for _, device := range []string{"cpu", "vulkan"} {
			t.Run(fmt.Sprintf("opset%d/%s", opset, device), func(t *testing.T) {
				model := filepath.Join(opcases.Dir, fmt.Sprintf("decoder%d.onnx", opset))
				sess, err := onnxvk.Load(model, onnxvk.WithDevice(device))
				if errors.Is(err, backend.ErrDeviceUnavailable) {
					testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", err))
				}
				if err != nil {
					t.Fatal(err)
				}
				defer sess.Close()
				for step := range 2 {
					dir := filepath.Join(opcases.Dir, fmt.Sprintf("decoder%d", opset))
					read := func(name string) *graph.Tensor {
						v, err := npy.ReadFile(filepath.Join(dir, fmt.Sprintf("step%d_%s.npy", step, name)))
						if err != nil {
							t.Fatal(err)
						}
						return v
					}
					in := map[string]*onnxvk.Tensor{}
					types := map[string]*graph.Type{}
					for _, name := range []string{"x", "past_key", "past_value", "position_ids"} {
						v := read(name)
						in[name] = onnxvk.TensorFrom(v)
						types[name] = graph.TensorType(v.DType, graph.ShapeOf(v.Shape...))
					}
					if device == "vulkan" {
						p, err := sessionvalues.Of(sess).Plan(types)
						if err != nil {
							t.Fatal(err)
						}
						for _, st := range p.Steps {
							if st.Kind == planner.Compute && st.Device != sess.Device() {
								t.Errorf("step %d: %s (%s) is placed on %s", step, st.Node.Name, st.Node.OpType, st.Device)
							}
						}
					}
					out, err := sess.Run(context.Background(), in)
					if err != nil {
						t.Fatal(err)
					}
					for _, name := range []string{"y", "present_key", "present_value"} {
						if msg := opcases.Compare(out[name].Graph(), read(name), decoderTolerance); msg != "" {
							t.Errorf("step %d: %s: %s", step, name, msg)
						}
					}
				}
			})
		}
	}
}
