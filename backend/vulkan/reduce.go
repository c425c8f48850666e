package vulkan

import (
	"slices"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// reduceOps maps ONNX ops to the OP specialization constant of
// reduce.comp.
var reduceOps = map[string]int32{"ReduceSum": 0, "ReduceMean": 1, "ReduceMax": 2, "ReduceMin": 3, "ReduceL1": 4,
	"ReduceL2": 5, "ReduceLogSum": 6, "ReduceLogSumExp": 7, "ReduceProd": 8, "ReduceSumSquare": 9}

func init() {
	for op, code := range reduceOps {
		register(op, func(q *query) (*launch, bool) {
			return lowerReduce(q, code)
		})
	}
}

// lowerReduce lowers a Reduce op whose axes, from a constant input or
// absent, form one run of adjacent axes (axes of size 1 inside the run may
// be left out). Absent axes reduce every axis; noop_with_empty_axes is not
// handled.
func lowerReduce(q *query, code int32) (*launch, bool) {
	n, shapes := q.n, q.shapes
	x := shapes[0]
	var axes []int64
	p := ops.ReductionOf(n, q.opset)
	if len(shapes) > 2 || p.NoopWithEmptyAxes != 0 {
		return nil, false
	}
	if len(shapes) == 2 && shapes[1] != nil {
		var ok bool
		if axes, ok = q.constInts(1); !ok {
			return nil, false
		}
	}
	reduced := make([]bool, len(x))
	for _, a := range axes {
		i, ok := normAxis(a, len(x))
		if !ok {
			return nil, false
		}
		reduced[i] = true
	}
	if len(axes) == 0 {
		for i := range reduced {
			reduced[i] = true
		}
	}
	first, last := slices.Index(reduced, true), len(x)-1
	if first < 0 {
		first = len(x)
	}
	for last >= first && !reduced[last] {
		last--
	}
	for i := first; i <= last; i++ {
		if !reduced[i] && x[i] != 1 {
			return nil, false
		}
	}
	outer, length, inner := graph.NumElements(x[:first]), graph.NumElements(x[first:last+1]), graph.NumElements(x[last+1:])
	keep := p.Keepdims != 0
	out := []int64{}
	for i, d := range x {
		switch {
		case !reduced[i]:
			out = append(out, d)
		case keep:
			out = append(out, 1)
		}
	}
	rows := outer * inner
	groups, serial := q.rowGroups(rows, length)
	return &launch{shader: "reduce", op: code, bindings: []slot{{false, 0}, {true, 0}},
		push: words(uint32(rows), uint32(length), uint32(inner), serial), elems: rows, outShapes: [][]int64{out}, groups: groups}, true
}
