package vulkan

import (
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

func init() {
	register("Trilu", lowerTrilu)
}

// lowerTrilu lowers Trilu on elements of 4 or 8 bytes with k absent or an
// int64 scalar (runtime or constant).
func lowerTrilu(q *query) (*launch, bool) {
	shapes := q.shapes
	x := shapes[0]
	ew, ok := q.elemWords(0)
	if !ok || len(shapes) > 2 || len(x) < 2 {
		return nil, false
	}
	bindings := []slot{{false, 0}, {false, 0}, {true, 0}}
	var hasK, upper uint32
	if len(shapes) == 2 && shapes[1] != nil {
		if q.elems[1] != graph.Int64 || graph.NumElements(shapes[1]) != 1 {
			return nil, false
		}
		hasK, bindings[1] = 1, slot{false, 1}
	}
	if ops.Params[ops.TriluParams](q.n, q.opset).Upper != 0 {
		upper = 1
	}
	elems := graph.NumElements(x)
	return &launch{shader: "trilu", bindings: bindings,
		push:  words(uint32(elems), uint32(x[len(x)-2]), uint32(x[len(x)-1]), uint32(ew), upper, hasK),
		elems: elems, outShapes: [][]int64{x}, rawInputs: []int{0, 1}, outTypes: []graph.DType{q.elems[0]}}, true
}
