package vulkan

import (
	"slices"

	"github.com/onnxvk/onnxvk/graph"
)

// The steps of dynquant.comp and the modes of integer.comp (its OP is the
// mode plus integerSignedA and integerSignedB for int8 operands).
const (
	dynMinMax int32 = iota
	dynParams
	dynQuantize
)

const (
	integerConv int32 = iota
	integerMatMul
	integerSignedA int32 = 4
	integerSignedB int32 = 8
)

// dynParts is the most workgroups of dynquant.comp's MINMAX step, whose
// partial ranges its PARAMS step folds in one workgroup.
const dynParts = 1024

func init() {
	register("DynamicQuantizeLinear", lowerDynamicQuantize)
	register("ConvInteger", lowerConvInteger)
	register("MatMulInteger", lowerMatMulInteger)
}

// lowerDynamicQuantize lowers DynamicQuantizeLinear of a non-empty float32 tensor
// to dynquant.comp's three steps: the range, the scale and zero point,
// the quantization.
func lowerDynamicQuantize(q *query) (*launch, bool) {
	outs := q.n.Outputs
	if len(q.shapes) != 1 || q.elems[0] != graph.Float || graph.NumElements(q.shapes[0]) == 0 || len(outs) != 3 || slices.Contains(outs, "") || !wordsFit(q, 0) {
		return nil, false
	}
	x := q.shapes[0]
	n := graph.NumElements(x)
	parts := min(max(1, (n+workgroupSize-1)/workgroupSize), dynParts)
	push := words(uint32(n), uint32(parts))
	step := func(op int32, part slot, groups int64) *launch {
		return &launch{shader: "dynquant", op: op, bindings: []slot{{false, 0}, {true, 0}, {true, 1}, {true, 2}, part},
			push: push, elems: n, groups: groups}
	}
	l := step(dynMinMax, slot{true, scratchSlot}, parts)
	l.outShapes, l.outTypes, l.scratch = [][]int64{x, {}, {}}, []graph.DType{graph.Uint8, graph.Float, graph.Uint8}, uint64(8*parts)
	l.then = []*launch{step(dynParams, slot{false, scratchSlot}, 1), step(dynQuantize, slot{false, scratchSlot}, ((n+3)/4+workgroupSize-1)/workgroupSize)}
	return l, true
}

// integerOperand checks that input k of q, an integer.comp operand, is
// uint8 or int8, and that its zero point (input zk, optional) has its type
// and a count of values the kernel's rule accepts; it returns the
// operand's OP bit and the zero point's count (0 when absent).
func integerOperand(q *query, k, zk int, signedBit int32, fits func(z int64) bool) (bit int32, zn int64, ok bool) {
	switch q.elems[k] {
	case graph.Int8:
		bit = signedBit
	case graph.Uint8:
	default:
		return 0, 0, false
	}
	if !wordsFit(q, k) {
		return 0, 0, false
	}
	if zk >= len(q.shapes) || q.shapes[zk] == nil {
		return bit, 0, true
	}
	zn = graph.NumElements(q.shapes[zk])
	return bit, zn, q.elems[zk] == q.elems[k] && zn > 0 && fits(zn)
}

// integerLaunch is the dispatch of integer.comp writing the int32 tensor
// out.
func integerLaunch(op int32, out []int64, zan, zbn int64, vals []uint32) *launch {
	total := graph.NumElements(out)
	push := append([]uint32{uint32(total), uint32(zan), uint32(zbn)}, vals...)
	push = append(push, make([]uint32, 27-len(push))...)
	return &launch{shader: "integer", op: op, bindings: []slot{{false, 0}, {false, 1}, {false, 2}, {false, 3}, {true, 0}},
		push: words(push...), elems: total, outShapes: [][]int64{out}, rawInputs: []int{0, 1, 2, 3}, outTypes: []graph.DType{graph.Int32}}
}

// zeroPointSlots binds the zero points that are present (the operands
// stand in for absent ones, which the shader does not read).
func zeroPointSlots(q *query, l *launch) {
	for k := 2; k <= 3; k++ {
		if k >= len(q.shapes) || q.shapes[k] == nil {
			l.bindings[k] = slot{false, k - 2}
			l.rawInputs = slices.DeleteFunc(l.rawInputs, func(i int) bool { return i == k })
		}
	}
}

// lowerConvInteger lowers ConvInteger of uint8 or int8 X [N, C, D...] and
// W [M, C/group, k...] over one to three spatial axes, with a scalar
// x_zero_point and a w_zero_point of one value or one per output channel,
// as the CPU kernel takes them.
func lowerConvInteger(q *query) (*launch, bool) {
	shapes := q.shapes
	if len(shapes) < 2 || shapes[1] == nil {
		return nil, false
	}
	w, group, ok := convWindow(q)
	if !ok {
		return nil, false
	}
	x, r, c, m := shapes[0], len(shapes[0])-2, shapes[0][1], shapes[1][0]
	sa, zan, okA := integerOperand(q, 0, 2, integerSignedA, func(z int64) bool { return z == 1 })
	sb, zbn, okB := integerOperand(q, 1, 3, integerSignedB, func(z int64) bool { return z == 1 || z == m })
	if !okA || !okB {
		return nil, false
	}
	out := w.outShape([]int64{x[0], m}, r)
	if graph.NumElements(out) == 0 || graph.NumElements(out) > q.maxElems {
		return nil, false
	}
	vals := []uint32{uint32(x[0]), uint32(m), uint32(c), uint32(m / group), uint32(c / group), uint32(graph.NumElements(out[2:]))}
	l := integerLaunch(integerConv|sa|sb, out, zan, zbn, append(vals, w.words()...))
	zeroPointSlots(q, l)
	return l, true
}

// lowerMatMulInteger lowers MatMulInteger of uint8 or int8 operands with
// numpy semantics (as lowerMatMul) and zero points of one value, one per
// row of A (over its batch) or one per column of B (over its batch), as
// the CPU kernel takes them.
func lowerMatMulInteger(q *query) (*launch, bool) {
	shapes := q.shapes
	if len(shapes) < 2 || shapes[1] == nil {
		return nil, false
	}
	g, ok := newMatMulGeom(shapes[0], shapes[1])
	if !ok || g.k == 0 {
		return nil, false
	}
	rowsA, rowsB := graph.NumElements(shapes[0])/g.k, graph.NumElements(shapes[1])/g.k
	sa, zan, okA := integerOperand(q, 0, 2, integerSignedA, func(z int64) bool { return z == 1 || rowsA%z == 0 })
	sb, zbn, okB := integerOperand(q, 1, 3, integerSignedB, func(z int64) bool { return z == 1 || z%g.n == 0 && rowsB%z == 0 })
	if !okA || !okB || graph.NumElements(g.outShape) == 0 || graph.NumElements(g.outShape) > q.maxElems {
		return nil, false
	}
	vals := []uint32{uint32(g.m), uint32(g.n), uint32(g.k), uint32(graph.NumElements(g.batch)), uint32(len(g.batch))}
	dims, bsa, bsb := make([]uint32, maxBatchRank), make([]uint32, maxBatchRank), make([]uint32, maxBatchRank)
	for i, d := range g.batch {
		dims[i], bsa[i], bsb[i] = uint32(d), uint32(g.bsa[i]), uint32(g.bsb[i])
	}
	vals = append(append(append(vals, dims...), bsa...), bsb...)
	l := integerLaunch(integerMatMul|sa|sb, g.outShape, zan, zbn, vals)
	zeroPointSlots(q, l)
	return l, true
}
