package vulkan

import (
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// Ops of predicate.comp: OP is 16 * type + op.
const (
	predEqual int32 = iota
	predLess
	predLessOrEqual
	predGreater
	predGreaterOrEqual
	predAnd
	predOr
	predXor
	predNot
	predIsNaN
	// predIsInf + 1 detects +inf, + 2 -inf, + 3 both.
	predIsInf
)

// predicateTypes numbers the element types predicate.comp compares.
var predicateTypes = map[graph.DType]int32{graph.Float: 0, graph.Int32: 1, graph.Int64: 2, graph.Bool: 3, graph.Uint8: 3, graph.Int8: 4,
	graph.Float16: 5}

// compareOps maps the comparisons to their predicate.comp op.
var compareOps = map[string]int32{"Equal": predEqual, "Less": predLess, "LessOrEqual": predLessOrEqual,
	"Greater": predGreater, "GreaterOrEqual": predGreaterOrEqual}

func init() {
	for name, op := range compareOps {
		register(name, func(q *query) (*launch, bool) { return lowerCompare(q, op) })
	}
	register("IsNaN", func(q *query) (*launch, bool) {
		if q.opset < 9 || len(q.shapes) != 1 || q.elems[0] != graph.Float && q.elems[0] != graph.Float16 {
			return nil, false
		}
		return predicateLaunch(q, 16*predicateTypes[q.elems[0]]+predIsNaN, 0, 0)
	})
	register("IsInf", func(q *query) (*launch, bool) {
		if q.opset < 10 || len(q.shapes) != 1 || q.elems[0] != graph.Float && q.elems[0] != graph.Float16 {
			return nil, false
		}
		op := 16*predicateTypes[q.elems[0]] + predIsInf
		p := ops.Params[ops.IsInfParams](q.n, q.opset)
		if p.DetectPositive != 0 {
			op++
		}
		if p.DetectNegative != 0 {
			op += 2
		}
		return predicateLaunch(q, op, 0, 0)
	})
}

// lowerCompare lowers a comparison (opset 7 on, with broadcasting) of
// float32, int32, int64, uint8 or int8 tensors, and Equal of bools.
func lowerCompare(q *query, op int32) (*launch, bool) {
	if q.opset < 7 || len(q.shapes) != 2 || q.shapes[1] == nil || q.elems[0] != q.elems[1] ||
		q.elems[0] == graph.Bool && op != predEqual {
		return nil, false
	}
	ty, ok := predicateTypes[q.elems[0]]
	if !ok {
		return nil, false
	}
	return predicateLaunch(q, 16*ty+op, 0, 1)
}

// predicateLaunch returns the dispatch of predicate.comp for op on inputs
// a and b (the same input for the unary ops) broadcast together, with a
// bool output; ok is false when the shapes do not broadcast or do not fit.
func predicateLaunch(q *query, op int32, a, b int) (*launch, bool) {
	l, ok := broadcastLaunch(q, "predicate", op, a, b, graph.Bool)
	if ok {
		l.groups = ((l.elems+3)/4 + workgroupSize - 1) / workgroupSize
	}
	return l, ok
}

// broadcastLaunch returns the dispatch of shader for op on inputs a and b
// broadcast together, with an output of element type outType; ok is false
// when the shapes do not broadcast or an operand does not fit a binding.
func broadcastLaunch(q *query, shader string, op int32, a, b int, outType graph.DType) (*launch, bool) {
	out, ok := broadcast(q.shapes[a], q.shapes[b])
	elems := graph.NumElements(out)
	if !ok || !wordsFit(q, a) || !wordsFit(q, b) || (outType.ByteSize(elems)+3)/4 > q.maxElems {
		return nil, false
	}
	push, ok := broadcastPush(out, maxRank, q.shapes[a], q.shapes[b])
	if !ok {
		return nil, false
	}
	return &launch{shader: shader, op: op, bindings: []slot{{false, a}, {false, b}, {true, 0}}, push: words(push...),
		elems: elems, outShapes: [][]int64{out}, rawInputs: []int{a, b}, outTypes: []graph.DType{outType}}, true
}

// wordsFit reports whether the 32-bit words of input k fit a binding.
func wordsFit(q *query, k int) bool {
	return (q.elems[k].ByteSize(graph.NumElements(q.shapes[k]))+3)/4 <= q.maxElems
}

// mergeDims drops the dimensions of size 1 of a walk over dims with the
// element strides st (one list per operand) and merges neighbours that
// every operand walks contiguously, returning the remaining dims and each
// operand's strides along them.
func mergeDims(dims []int64, st ...[]int64) ([]int64, [][]int64) {
	var md []int64
	ms := make([][]int64, len(st))
	for i, d := range dims {
		if d == 1 {
			continue
		}
		merge := len(md) > 0
		for k := range st {
			merge = merge && ms[k][len(md)-1] == d*st[k][i]
		}
		if merge {
			md[len(md)-1] *= d
			for k := range st {
				ms[k][len(md)-1] = st[k][i]
			}
			continue
		}
		md = append(md, d)
		for k := range st {
			ms[k] = append(ms[k], st[k][i])
		}
	}
	return md, ms
}

// broadcastPush returns the push constants of a shader that walks the
// output shape out and reads inputs of the shapes ins broadcast to it: the
// output's element count and rank, its dims, then the element strides of
// each input (0 along broadcast dims), maxR words each. Dimensions of size
// 1 are dropped and neighbours that every input walks contiguously are
// merged first; ok is false when more than maxR dimensions remain.
func broadcastPush(out []int64, maxR int, ins ...[]int64) ([]uint32, bool) {
	full := make([][]int64, len(ins))
	for k, s := range ins {
		full[k] = strides(s, out)
	}
	dims, st := mergeDims(out, full...)
	if len(dims) > maxR {
		return nil, false
	}
	vals := make([]uint32, 2+(1+len(ins))*maxR)
	vals[0], vals[1] = uint32(graph.NumElements(out)), uint32(len(dims))
	for i, d := range dims {
		vals[2+i] = uint32(d)
		for k := range ins {
			vals[2+(1+k)*maxR+i] = uint32(st[k][i])
		}
	}
	return vals, true
}
