package vulkan

import (
	"slices"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

func init() {
	register("GatherElements", lowerGatherElements)
}

// lowerGatherElements lowers GatherElements on elements of 4 or 8 bytes
// with int32 or int64 indices of the data's rank, up to rank 8.
func lowerGatherElements(q *query) (*launch, bool) {
	shapes := q.shapes
	if len(shapes) != 2 || shapes[1] == nil {
		return nil, false
	}
	x, ind := shapes[0], shapes[1]
	ew, ok := q.elemWords(0)
	if !ok || len(x) != len(ind) || len(x) == 0 || len(x) > maxRank {
		return nil, false
	}
	var iw uint32
	switch q.elems[1] {
	case graph.Int32:
		iw = 1
	case graph.Int64:
		iw = 2
	default:
		return nil, false
	}
	axis, ok := normAxis(ops.Params[ops.GatherElementsParams](q.n, q.opset).Axis, len(x))
	if !ok {
		return nil, false
	}
	dims, xs := make([]uint32, maxRank), make([]uint32, maxRank)
	for i, s := range graph.Strides(x) {
		dims[i], xs[i] = uint32(ind[i]), uint32(s)
	}
	elems := graph.NumElements(ind)
	vals := append([]uint32{uint32(elems), uint32(len(x)), uint32(axis), uint32(x[axis]), uint32(ew), iw}, dims...)
	return &launch{shader: "gatherelements", bindings: []slot{{false, 0}, {false, 1}, {true, 0}},
		push: words(append(vals, xs...)...), elems: elems, outShapes: [][]int64{slices.Clone(ind)},
		rawInputs: []int{0, 1}, outTypes: []graph.DType{q.elems[0]}}, true
}
