package hostfallback

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

// BenchmarkConvInteger times 3×3, stride-1, padded uint8×int8
// convolutions (batch 1) with weights packed beforehand, as a plan holds
// them: the sizes of testdata/quant's CNN block and of ResNet-18's first
// stage.
func BenchmarkConvInteger(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, s := range [][2]int64{{16, 16}, {64, 56}} {
		ch, hw := s[0], s[1]
		x, _ := int8Tensor(rng, graph.Uint8, []int64{1, ch, hw, hw})
		w, _ := int8Tensor(rng, graph.Int8, []int64{ch, ch, 3, 3})
		attrs := nnAttrs{"kernel_shape": []int64{3, 3}, "pads": []int64{1, 1, 1, 1}}
		c := &Call{Node: attrs.node("ConvInteger", 2, []string{"y"}), Opset: 10, In: []graph.Value{x, w}, Out: make([]graph.Value, 1)}
		l, err := convPlan(c, x.Shape, w.Shape)
		if err != nil {
			b.Fatal(err)
		}
		wp, err := convIntegerWeights(c, l, w)
		if err != nil {
			b.Fatal(err)
		}
		y := make([]int32, l.m*l.outSize)
		b.Run(fmt.Sprintf("%dx%dx%d", ch, hw, hw), func(b *testing.B) {
			for b.Loop() {
				xv, err := int8Values(c, x)
				if err != nil {
					b.Fatal(err)
				}
				convIntegerRun(nil, qgemmBest, l, xv, wp, y)
			}
		})
	}
}

// BenchmarkDynamicQuantizeLinear times DynamicQuantizeLinear of the
// activations of testdata/quant's CNN block and of ResNet-18's first stage.
func BenchmarkDynamicQuantizeLinear(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int64{16 * 16 * 16, 64 * 56 * 56} {
		x := nnRand(rng, n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := nnRunOuts("DynamicQuantizeLinear", 11, nil, []string{"y", "s", "z"}, x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
