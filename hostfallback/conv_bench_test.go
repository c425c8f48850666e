package hostfallback

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkConv3x3 times the 3×3, stride-1, padded convolutions of
// ResNet-18's four stages (batch 1).
func BenchmarkConv3x3(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, s := range [][2]int64{{64, 56}, {128, 28}, {256, 14}, {512, 7}} {
		ch, hw := s[0], s[1]
		x, w, bias := nnRand(r, 1, ch, hw, hw), nnRand(r, ch, ch, 3, 3), nnRand(r, ch)
		attrs := nnAttrs{"kernel_shape": []int64{3, 3}, "pads": []int64{1, 1, 1, 1}}
		b.Run(fmt.Sprintf("%dx%dx%d", ch, hw, hw), func(b *testing.B) {
			for b.Loop() {
				if _, err := nnRun("Conv", 13, attrs, x, w, bias); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
