package vulkan

import "github.com/onnxvk/onnxvk/graph"

// softmaxOps maps ONNX ops to the OP specialization constant of
// softmax.comp.
var softmaxOps = map[string]int32{"Softmax": 0, "LogSoftmax": 1}

func init() {
	for op, code := range softmaxOps {
		register(op, func(q *query) (*launch, bool) {
			return lowerSoftmax(q.n, q.opset, q.shapes, code)
		})
	}
}

// lowerSoftmax lowers Softmax or LogSoftmax: along the single axis from
// opset 13 (default -1), over the input coerced to 2-D at axis before
// (default 1).
func lowerSoftmax(n *graph.Node, opset int64, shapes [][]int64, code int32) (*launch, bool) {
	if len(shapes) != 1 || len(shapes[0]) == 0 {
		return nil, false
	}
	x := shapes[0]
	def := int64(-1)
	if opset < 13 {
		def = 1
	}
	axis, ok := normAxis(n.AttrInt("axis", def), len(x))
	if !ok {
		return nil, false
	}
	outer, length, inner := graph.NumElements(x[:axis]), x[axis], graph.NumElements(x[axis+1:])
	if opset < 13 {
		length, inner = length*inner, 1
	}
	rows := outer * inner
	return &launch{shader: "softmax", op: code, bindings: []slot{{false, 0}, {true, 0}},
		push: words(uint32(rows), uint32(length), uint32(inner)), elems: graph.NumElements(x), outShapes: [][]int64{x}, groups: rows}, true
}

// normAxis returns axis in [0, rank) for an ONNX axis in [-rank, rank).
func normAxis(axis int64, rank int) (int, bool) {
	if axis < 0 {
		axis += int64(rank)
	}
	if axis < 0 || axis >= int64(rank) {
		return 0, false
	}
	return int(axis), true
}
