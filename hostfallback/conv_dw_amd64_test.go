//go:build !noasm

package hostfallback

import (
	"testing"

	"github.com/onnxvk/onnxvk/internal/testenv"
)

// TestDepthwiseEdgesGo runs TestDepthwiseEdges and TestDwRows with the
// portable row kernel where the CPU has a vector one.
func TestDepthwiseEdgesGo(t *testing.T) {
	if !hasAVX2 {
		testenv.Skip(t, "the portable row kernel is the only one here")
	}
	defer func(v bool) { hasAVX2 = v }(hasAVX2)
	hasAVX2 = false
	TestDwRows(t)
	TestDepthwiseEdges(t)
}
