package vulkan

import (
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// argOps maps ArgMax and ArgMin to the OP specialization constant of
// argmax.comp.
var argOps = map[string]int32{"ArgMax": 0, "ArgMin": 1}

func init() {
	for op, code := range argOps {
		register(op, func(q *query) (*launch, bool) { return lowerArg(q, code) })
	}
}

// lowerArg lowers ArgMax or ArgMin of a float32 tensor along axis, with
// keepdims and select_last_index, to int64 indices.
func lowerArg(q *query, code int32) (*launch, bool) {
	n, shapes := q.n, q.shapes
	if len(shapes) != 1 || len(shapes[0]) == 0 {
		return nil, false
	}
	x := shapes[0]
	p := ops.ArgReduceOf(n, q.opset)
	axis, ok := normAxis(p.Axis, len(x))
	if !ok {
		return nil, false
	}
	out := append([]int64{}, x...)
	if p.Keepdims != 0 {
		out[axis] = 1
	} else {
		out = append(out[:axis], out[axis+1:]...)
	}
	var last uint32
	if p.SelectLastIndex != 0 {
		last = 1
	}
	rows := graph.NumElements(out)
	groups, serial := q.rowGroups(rows, x[axis])
	return &launch{shader: "argmax", op: code, bindings: []slot{{false, 0}, {true, 0}},
		push:  words(uint32(rows), uint32(x[axis]), uint32(graph.NumElements(x[axis+1:])), last, serial),
		elems: rows, outShapes: [][]int64{out}, groups: groups, outTypes: []graph.DType{graph.Int64}}, true
}
