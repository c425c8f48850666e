package vulkan

import (
	"encoding/binary"
	"math"
	"slices"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// softmaxOps maps ONNX ops to the OP specialization constant of
// softmax.comp.
var softmaxOps = map[string]int32{"Softmax": 0, "LogSoftmax": 1}

func init() {
	for op, code := range softmaxOps {
		register(op, func(q *query) (*launch, bool) {
			return lowerSoftmax(q, code)
		})
	}
}

// lowerSoftmax lowers Softmax or LogSoftmax: along the single axis from
// opset 13 (default -1), over the input coerced to 2-D at axis before
// (default 1).
func lowerSoftmax(q *query, code int32) (*launch, bool) {
	n, opset, shapes := q.n, q.opset, q.shapes
	if len(shapes) != 1 || len(shapes[0]) == 0 {
		return nil, false
	}
	x := shapes[0]
	axis, ok := normAxis(ops.AxisParamOf(n, opset).Axis, len(x))
	if !ok {
		return nil, false
	}
	outer, length, inner := graph.NumElements(x[:axis]), x[axis], graph.NumElements(x[axis+1:])
	if opset < 13 {
		length, inner = length*inner, 1
	}
	rows := outer * inner
	groups, serial := q.rowGroups(rows, length)
	return &launch{shader: "softmax", op: code, bindings: []slot{{false, 0}, {true, 0}, {false, 0}},
		push: words(uint32(rows), uint32(length), uint32(inner), 0, serial), elems: graph.NumElements(x), outShapes: [][]int64{x}, groups: groups}, true
}

// softmaxMaskHeader is the number of words before cond's elements in
// softmax.comp's mask params: rank, dims and strides (maxRank each), the
// fill and which value of cond selects it.
const softmaxMaskHeader = 1 + 2*maxRank + 2

// masked makes softmax launch l read Where(cond, fill, x) (fillWhen true)
// or Where(cond, x, fill) (false) of its input x, of shape shape: cond is a
// bool constant that broadcasts to it.
func (l *launch) masked(shape []int64, cond *graph.Tensor, fill float32, fillWhen bool) {
	params := make([]uint32, softmaxMaskHeader, softmaxMaskHeader+len(cond.Data))
	params[0] = uint32(len(shape))
	for d, size := range shape {
		params[1+d] = uint32(size)
	}
	for d, st := range strides(cond.Shape, shape) {
		params[1+maxRank+d] = uint32(st)
	}
	params[1+2*maxRank] = math.Float32bits(fill)
	if fillWhen {
		params[2+2*maxRank] = 1
	}
	for _, b := range cond.Data {
		params = append(params, uint32(b))
	}
	t := graph.NewTensor(graph.Uint32, []int64{int64(len(params))})
	copy(graph.View[uint32](t), params)
	l.params = t
	l.bindings = slices.Clone(l.bindings)
	l.bindings[2] = slot{k: paramsSlot}
	l.push = slices.Clone(l.push)
	binary.LittleEndian.PutUint32(l.push[12:], 1)
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
