package vulkan

import (
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// maxLoop is the most loop iterations one invocation of cumsum.comp may
// run: lavapipe silently stops a shader invocation after 65535.
const maxLoop = 60000

func init() {
	register("CumSum", lowerCumSum)
}

// lowerCumSum lowers CumSum on float32 along a constant axis, exclusive or
// reverse, to cumsum.comp: one invocation per line. It declines lines so
// long that an invocation would pass lavapipe's loop limit.
func lowerCumSum(q *query) (*launch, bool) {
	x := q.shapes[0]
	av, ok := q.constInts(1)
	if !ok || len(q.shapes) != 2 || len(av) != 1 || len(x) == 0 {
		return nil, false
	}
	axis := av[0]
	if axis < 0 {
		axis += int64(len(x))
	}
	if axis < 0 || axis >= int64(len(x)) {
		return nil, false
	}
	n, inner := x[axis], graph.NumElements(x[axis+1:])
	lines := graph.NumElements(x) / n
	rounds := (lines + maxGroups*workgroupSize - 1) / (maxGroups * workgroupSize)
	if n*rounds > maxLoop {
		return nil, false
	}
	var exclusive, reverse uint32
	p := ops.Params[ops.CumSumParams](q.n, q.opset)
	if p.Exclusive != 0 {
		exclusive = 1
	}
	if p.Reverse != 0 {
		reverse = 1
	}
	return &launch{shader: "cumsum", bindings: []slot{{false, 0}, {true, 0}},
		push:  words(uint32(lines), uint32(n), uint32(inner), exclusive, reverse),
		elems: graph.NumElements(x), outShapes: [][]int64{x}, groups: (lines + workgroupSize - 1) / workgroupSize}, true
}
