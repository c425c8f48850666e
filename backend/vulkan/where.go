package vulkan

import "github.com/onnxvk/onnxvk/graph"

// maxWhereRank is the highest rank where.comp walks after dimensions of
// size 1 are dropped and contiguous runs merged.
const maxWhereRank = 6

func init() {
	register("Where", lowerWhere)
}

// lowerWhere lowers Where (opset 9 on) with a bool condition and X and Y
// of one type of 4 or 8 bytes, the three broadcast together.
func lowerWhere(q *query) (*launch, bool) {
	if q.opset < 9 || len(q.shapes) != 3 || q.shapes[1] == nil || q.shapes[2] == nil ||
		q.elems[0] != graph.Bool || q.elems[1] != q.elems[2] {
		return nil, false
	}
	ew, ok := q.elemWords(1)
	if _, fits := q.elemWords(2); !ok || !fits {
		return nil, false
	}
	cx, ok := broadcast(q.shapes[0], q.shapes[1])
	if !ok {
		return nil, false
	}
	out, ok := broadcast(cx, q.shapes[2])
	elems := graph.NumElements(out)
	if !ok || int64(ew)*elems > q.maxElems {
		return nil, false
	}
	push, ok := broadcastPush(out, maxWhereRank, q.shapes[0], q.shapes[1], q.shapes[2])
	if !ok {
		return nil, false
	}
	return &launch{shader: "where", op: ew, bindings: []slot{{false, 0}, {false, 1}, {false, 2}, {true, 0}}, push: words(push...),
		elems: elems, outShapes: [][]int64{out}, rawInputs: []int{0, 1, 2}, outTypes: []graph.DType{q.elems[1]}}, true
}
