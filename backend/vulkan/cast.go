package vulkan

import (
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// castCodes numbers the types cast.comp converts between.
var castCodes = map[graph.DType]int32{graph.Float: 0, graph.Int32: 1, graph.Int64: 2, graph.Bool: 3, graph.Uint8: 4, graph.Int8: 5,
	graph.Float16: 6, graph.BFloat16: 7}

func init() {
	register("Cast", func(q *query) (*launch, bool) {
		if q.opset < 6 || len(q.shapes) != 1 {
			return nil, false
		}
		return lowerCast(q, graph.DType(ops.Params[ops.CastParams](q.n, q.opset).To))
	})
	register("CastLike", func(q *query) (*launch, bool) {
		if len(q.shapes) != 2 || q.shapes[1] == nil {
			return nil, false
		}
		return lowerCast(q, q.elems[1])
	})
}

// lowerCast lowers a cast of input 0 to type to: a copy when the types
// are equal and of 2, 4 or 8 bytes, else cast.comp between float32,
// int32, int64, bool, uint8, int8, float16 and bfloat16.
func lowerCast(q *query, to graph.DType) (*launch, bool) {
	if to == q.elems[0] && to.Size() >= 2 {
		return plainCopy(q, q.shapes[0])
	}
	from, okFrom := castCodes[q.elems[0]]
	code, okTo := castCodes[to]
	elems := graph.NumElements(q.shapes[0])
	if !okFrom || !okTo || !wordsFit(q, 0) || to.ByteSize(elems) > 4*q.maxElems {
		return nil, false
	}
	units := elems
	switch to.Size() {
	case 1:
		units = (elems + 3) / 4
	case 2:
		units = (elems + 1) / 2
	}
	return &launch{shader: "cast", op: 8*from + code, bindings: []slot{{false, 0}, {true, 0}}, push: words(uint32(elems)),
		elems: elems, outShapes: [][]int64{q.shapes[0]}, groups: (units + workgroupSize - 1) / workgroupSize,
		rawInputs: []int{0}, outTypes: []graph.DType{to}}, true
}
