package vulkan

import (
	"math"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

func init() { register("BatchNormalization", lowerBatchNorm) }

// lowerBatchNorm lowers BatchNormalization in inference form, every opset:
// Y only (a node that names the statistics outputs trains, or asks for
// them, and goes to the CPU), training_mode 0, X of rank ≥ 2 and the four
// parameters of one value per channel, or, in the non-spatial mode of
// opsets before 9, one per activation (C·D1·…·Dn). consumed_inputs and
// is_test (opsets before 7) change nothing for Y alone.
func lowerBatchNorm(q *query) (*launch, bool) {
	n, shapes := q.n, q.shapes
	p := ops.Params[ops.BatchNormalizationParams](n, q.opset)
	if len(shapes) != 5 || len(shapes[0]) < 2 || p.TrainingMode != 0 {
		return nil, false
	}
	x := shapes[0]
	features, inner := x[1], graph.NumElements(x[2:])
	if q.opset < 9 && p.Spatial == 0 {
		features, inner = features*inner, 1
	}
	for _, s := range shapes[1:] {
		if s == nil || graph.NumElements(s) != features {
			return nil, false
		}
	}
	elems := graph.NumElements(x)
	return &launch{shader: "batchnorm", bindings: []slot{{false, 0}, {false, 1}, {false, 2}, {false, 3}, {false, 4}, {true, 0}},
		push:  words(uint32(elems), uint32(features), uint32(inner), math.Float32bits(p.Epsilon)),
		elems: elems, outShapes: [][]int64{x}}, true
}
