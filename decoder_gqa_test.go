package onnxvk_test

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/npy"
	"github.com/onnxvk/onnxvk/internal/sessionvalues"
	"github.com/onnxvk/onnxvk/internal/testenv"
)

// TestDecoderGroupedQuery runs greedy generation with decoder_gqa
// (decoder_small's layers with 4 query heads over 2 key and value heads,
// repeated by Hugging Face's repeat_kv: Unsqueeze, Expand, Reshape) on
// its class plans on the CPU and on Vulkan, the caches kept on the GPU
// there: both give PyTorch's logits for the prompt (within 1e-4) and its
// tokens, and every layer's attention is one
// ScaledDotProductAttention reading the cache's heads unrepeated
// (kv_repeat 2), no Expand or Softmax left, in the decode steps' plan
// (the past length symbolic) and in the plan with every length symbolic.
func TestDecoderGroupedQuery(t *testing.T) {
	steps := 6
	if testenv.Long() {
		steps = 50
	}
	model, prompt, want := decoderModel(t, "decoder_gqa", steps)
	ref, err := npy.ReadFile(filepath.Join(filepath.Dir(model), "logits.npy"))
	require.NoError(t, err)
	wantLogits := graph.View[float32](ref)
	for _, dev := range []string{"cpu", "vulkan"} {
		t.Run(dev, func(t *testing.T) {
			sess := loadDecoder(t, model, dev, onnxvk.WithDimMax("P", int64(len(prompt)+steps)))
			layers := int(geometryOf(t, sess).layers)
			info, err := sess.PlanInfo(map[string][]int64{"ids": {1, 1}})
			require.NoError(t, err)
			count := map[string]int{}
			for _, n := range info.Nodes {
				count[n.Op]++
			}
			require.Equal(t, layers, count["ScaledDotProductAttention"], "fused attentions of the decode steps' plan")
			require.Zero(t, count["Expand"]+count["Softmax"], "Expand and Softmax nodes in the decode steps' plan")
			p, err := sessionvalues.Of(sess).Plan(nil)
			require.NoError(t, err)
			fused := 0
			for _, st := range p.Steps {
				if st.Node == nil {
					continue
				}
				require.NotContains(t, []string{"Expand", "Softmax"}, st.Node.OpType, "with every length symbolic")
				if st.Node.OpType == "ScaledDotProductAttention" {
					a := st.Node.Attr("kv_repeat")
					require.True(t, a != nil && a.I == 2, "%s: kv_repeat %v, want 2", st.Node.Name, a)
					fused++
				}
			}
			require.Equal(t, layers, fused, "attentions fused with every length symbolic")
			d := newDecoding(t, sess, prompt, dev == "vulkan")
			defer d.Release()
			var got []int64
			for step := range steps {
				token, _ := d.step(t)
				got = append(got, token)
				if step == 0 {
					logits, err := onnxvk.Data[float32](d.Logits)
					require.NoError(t, err)
					require.Len(t, logits, len(wantLogits))
					worst := 0.0
					for i, w := range wantLogits {
						worst = max(worst, math.Abs(float64(logits[i]-w)))
					}
					t.Logf("prompt's logits: max |difference| from PyTorch's %.2g", worst)
					require.Less(t, worst, 1e-4, "prompt's logits against PyTorch's")
				}
			}
			require.Equal(t, want, got, "tokens against PyTorch's")
		})
	}
}
