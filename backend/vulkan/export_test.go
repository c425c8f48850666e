package vulkan

import (
	"maps"
	"slices"
)

// ElementwiseOps returns the ONNX ops that unary.comp and binary.comp run,
// each sorted: those chain.comp fuses.
func ElementwiseOps() (unary, binary []string) {
	return slices.Sorted(maps.Keys(unaryOps)), slices.Sorted(maps.Keys(binaryOps))
}
