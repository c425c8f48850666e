package vulkan

import "github.com/onnxvk/onnxvk/graph"

// castCodes numbers the types cast.comp converts between.
var castCodes = map[graph.DType]int32{graph.Float: 0, graph.Int32: 1, graph.Int64: 2}

func init() {
	register("Cast", func(q *query) (*launch, bool) {
		if q.opset < 6 || len(q.shapes) != 1 {
			return nil, false
		}
		return lowerCast(q, graph.DType(q.n.AttrInt("to", 0)))
	})
	register("CastLike", func(q *query) (*launch, bool) {
		if len(q.shapes) != 2 || q.shapes[1] == nil {
			return nil, false
		}
		return lowerCast(q, q.elems[1])
	})
}

// lowerCast lowers a cast of input 0 to type to: a copy when the types
// are equal (any type of 4 or 8 bytes), else cast.comp between float32,
// int32 and int64.
func lowerCast(q *query, to graph.DType) (*launch, bool) {
	if to == q.elems[0] {
		return plainCopy(q, q.shapes[0])
	}
	from, okFrom := castCodes[q.elems[0]]
	code, okTo := castCodes[to]
	_, fits := q.elemWords(0)
	elems := graph.NumElements(q.shapes[0])
	if !okFrom || !okTo || !fits || int64(to.Size()/4)*elems > q.maxElems {
		return nil, false
	}
	return &launch{shader: "cast", op: 3*from + code, bindings: []slot{{false, 0}, {true, 0}}, push: words(uint32(elems)),
		elems: elems, outShapes: [][]int64{q.shapes[0]}, rawInputs: []int{0}, outTypes: []graph.DType{to}}, true
}
