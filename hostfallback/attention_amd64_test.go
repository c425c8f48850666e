//go:build !noasm

package hostfallback

import (
	"testing"

	"github.com/onnxvk/onnxvk/internal/testenv"
)

// TestScaledDotProductAttentionGo runs the attention tests with the
// portable packing, row maxima and exponentials where the CPU has vector
// ones.
func TestScaledDotProductAttentionGo(t *testing.T) {
	if !hasAVX2 {
		testenv.Skip(t, "the portable loops are the only ones here")
	}
	defer func(v bool) { hasAVX2 = v }(hasAVX2)
	hasAVX2 = false
	TestScaledDotProductAttention(t)
	TestScaledDotProductAttentionBlocked(t)
}
