package vulkan

import (
	"slices"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
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
	integerMatMulDot
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
	register("QLinearConv", lowerQLinearConv)
	register("QLinearMatMul", lowerQLinearMatMul)
	register("QuantizeLinear", lowerQuantize)
	register("DequantizeLinear", lowerDequantize)
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

// zeroPointSlots binds the zero points that are present (input 0 stands
// in for absent ones, which the shader does not read).
func zeroPointSlots(q *query, l *launch) {
	for k := 2; k <= 3; k++ {
		if k >= len(q.shapes) || q.shapes[k] == nil {
			l.bindings[k] = slot{false, 0}
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
	if b := q.consts[1]; q.intDot && g.k%4 == 0 && b != nil {
		l.shader, l.op, l.params = "integer_dot", integerMatMulDot|sa|sb, packColumns(b, g.k, g.n)
		l.bindings[1] = slot{k: paramsSlot}
		l.rawInputs = slices.DeleteFunc(l.rawInputs, func(i int) bool { return i == 1 })
	}
	return l, true
}

// qlinearInputs are the inputs of QLinearConv and QLinearMatMul that
// ConvInteger and MatMulInteger take as their inputs 0 to 3: a, b and
// their zero points.
var qlinearInputs = []int{0, 3, 2, 5}

// The bits of requant.comp's OP.
const (
	requantSigned int32 = 1 << iota
	requantBias
	requantZero
)

// lowerQLinear lowers QLinearConv or QLinearMatMul to integer (the
// lowering of ConvInteger or MatMulInteger) of its a, b and zero points,
// writing the int32 sums to the scratch, then requant.comp. For the sums'
// shape out, geom gives the index of element i's a_scale, (i / ad) % an,
// and of its b_scale and bias, (i / bd) % bn; the scales are float32, of
// one value or an (bn) values, y_scale and y_zero_point (uint8 or int8,
// optional) single values, the bias (input 8, optional) int32 of bn
// values.
func lowerQLinear(q *query, integer lowerFunc, geom func(out []int64) (ad, an, bd, bn int64)) (*launch, bool) {
	if len(q.shapes) < 8 {
		return nil, false
	}
	sub := *q
	sub.shapes, sub.elems, sub.consts = make([][]int64, 4), make([]graph.DType, 4), make([]*graph.Tensor, 4)
	for j, k := range qlinearInputs {
		sub.shapes[j], sub.elems[j], sub.consts[j] = q.shapes[k], q.elems[k], q.consts[k]
	}
	l, ok := integer(&sub)
	if !ok {
		return nil, false
	}
	out := l.outShapes[0]
	ad, an, bd, bn := geom(out)
	scale := func(k int, n int64) (int64, bool) {
		if q.shapes[k] == nil || q.elems[k] != graph.Float {
			return 0, false
		}
		c := graph.NumElements(q.shapes[k])
		return c, c == 1 || c == n
	}
	asn, okA := scale(1, an)
	bsn, okB := scale(4, bn)
	_, okY := scale(6, 1)
	if !okA || !okB || !okY {
		return nil, false
	}
	for i, s := range l.bindings {
		if !s.out && s.k >= 0 {
			l.bindings[i].k = qlinearInputs[s.k]
		}
	}
	for i, k := range l.rawInputs {
		l.rawInputs[i] = qlinearInputs[k]
	}
	op, yt, zk, bk := int32(0), graph.Uint8, 0, 0
	if q.shapes[7] != nil {
		switch q.elems[7] {
		case graph.Int8:
			op, yt = requantSigned, graph.Int8
		case graph.Uint8:
		default:
			return nil, false
		}
		if graph.NumElements(q.shapes[7]) != 1 {
			return nil, false
		}
		op, zk, l.rawInputs = op|requantZero, 7, append(l.rawInputs, 7)
	}
	if len(q.shapes) > 8 && q.shapes[8] != nil {
		if q.elems[8] != graph.Int32 || graph.NumElements(q.shapes[8]) != bn {
			return nil, false
		}
		op, bk, l.rawInputs = op|requantBias, 8, append(l.rawInputs, 8)
	}
	total := graph.NumElements(out)
	l.bindings[4], l.scratch, l.outTypes = slot{true, scratchSlot}, uint64(4*total), []graph.DType{yt}
	l.then = []*launch{{shader: "requant", op: op, elems: total, groups: ((total+3)/4 + workgroupSize - 1) / workgroupSize,
		bindings: []slot{{false, scratchSlot}, {false, 1}, {false, 4}, {false, 6}, {false, zk}, {false, bk}, {true, 0}},
		push:     words(uint32(total), uint32(ad), uint32(asn), uint32(bd), uint32(bn), uint32(bsn))}}
	return l, true
}

// lowerQLinearConv lowers QLinearConv as ConvInteger (lowerConvInteger)
// requantized: w_scale and the bias per output channel.
func lowerQLinearConv(q *query) (*launch, bool) {
	return lowerQLinear(q, lowerConvInteger, func(out []int64) (ad, an, bd, bn int64) {
		return 1, 1, graph.NumElements(out[2:]), out[1]
	})
}

// lowerQLinearMatMul lowers QLinearMatMul as MatMulInteger
// (lowerMatMulInteger) requantized: a_scale per row of a, b_scale per
// column of b (as the CPU kernel takes them).
func lowerQLinearMatMul(q *query) (*launch, bool) {
	return lowerQLinear(q, lowerMatMulInteger, func([]int64) (ad, an, bd, bn int64) {
		a, b := q.shapes[0], q.shapes[3]
		m, n := int64(1), int64(1)
		if len(a) > 1 {
			m = a[len(a)-2]
		}
		if len(b) > 1 {
			n = b[len(b)-1]
		}
		return n, m, 1, n
	})
}

// packColumns returns the bytes of b, matrices [k, n] of 8-bit elements,
// as integer_dot.spv reads them: the columns of each matrix in turn, each
// a run of its k elements.
func packColumns(b *graph.Tensor, k, n int64) *graph.Tensor {
	total := b.NumElements()
	out := graph.NewTensor(graph.Uint8, []int64{total})
	for m := int64(0); m < total; m += k * n {
		for c := range n {
			for j := range k {
				out.Data[m+c*k+j] = b.Data[m+j*n+c]
			}
		}
	}
	return out
}

// qdqTypes numbers the quantized types of qdq.comp.
var qdqTypes = map[graph.DType]int32{graph.Uint8: 0, graph.Int8: 1, graph.Uint4: 2, graph.Int4: 3}

// The modes of qdq.comp.
const (
	qdqQuantize int32 = iota
	qdqDequantize
)

// qdqLayout returns qdq.comp's dim, inner, bs, so, sd and si for a scale
// of shape ss and x of shape xs: per tensor, per axis or per block along
// it, as the CPU kernels' quantLayout takes them, and a zero point (input
// 2, optional) of as many values as the scale; ok is false otherwise.
func qdqLayout(q *query) (v []uint32, ok bool) {
	xs, ss := q.shapes[0], q.shapes[1]
	if len(q.shapes) > 2 && q.shapes[2] != nil && graph.NumElements(q.shapes[2]) != graph.NumElements(ss) {
		return nil, false
	}
	if len(ss) == 0 || len(ss) == 1 && ss[0] == 1 {
		return []uint32{1, 1, 1, 0, 0, 0}, true
	}
	p := ops.QuantizationOf(q.n, q.opset)
	axis := p.Axis
	if axis < 0 {
		axis += int64(len(xs))
	}
	if axis < 0 || axis >= int64(len(xs)) {
		return nil, false
	}
	dim, inner := xs[axis], graph.NumElements(xs[axis+1:])
	if p.BlockSize <= 0 {
		return []uint32{uint32(dim), uint32(inner), 1, 0, 1, 0}, len(ss) == 1 && ss[0] == dim
	}
	nb := (dim + p.BlockSize - 1) / p.BlockSize
	fits := len(ss) == len(xs)
	for a := range ss {
		fits = fits && (ss[a] == xs[a] || int64(a) == axis && ss[a] == nb)
	}
	return []uint32{uint32(dim), uint32(inner), uint32(p.BlockSize), uint32(nb * inner), uint32(inner), 1}, fits
}

// qdqLaunch is the dispatch of qdq.comp for op on a non-empty x (input 0)
// with a float32 scale (input 1) and an optional zero point of the
// quantized type zt (input 2); out is y's type.
func qdqLaunch(q *query, mode int32, zt, out graph.DType) (*launch, bool) {
	code, ok := qdqTypes[zt]
	n := graph.NumElements(q.shapes[0])
	if !ok || len(q.shapes) < 2 || q.shapes[1] == nil || q.elems[1] != graph.Float || n == 0 || !wordsFit(q, 0) ||
		(out.ByteSize(n)+3)/4 > q.maxElems {
		return nil, false
	}
	layout, ok := qdqLayout(q)
	if !ok {
		return nil, false
	}
	l := &launch{shader: "qdq", op: mode + 2*code, bindings: []slot{{false, 0}, {false, 1}, {false, 0}, {true, 0}}, elems: n,
		outShapes: [][]int64{q.shapes[0]}, rawInputs: []int{0}, outTypes: []graph.DType{out}}
	zp := uint32(0)
	if len(q.shapes) > 2 && q.shapes[2] != nil {
		if q.elems[2] != zt {
			return nil, false
		}
		l.bindings[2], l.rawInputs, zp = slot{false, 2}, []int{0, 2}, 1
	}
	l.push = words(append(append([]uint32{uint32(n)}, layout...), zp)...)
	if mode == qdqQuantize {
		per := int64(4)
		if code >= qdqTypes[graph.Uint4] {
			per = 8
		}
		l.groups = ((n+per-1)/per + workgroupSize - 1) / workgroupSize
	}
	return l, true
}

// lowerQuantize lowers QuantizeLinear of float32 x with a float32 scale
// to uint8, int8, uint4 or int4 (the zero point's type, output_dtype, or
// uint8), at float32 precision.
func lowerQuantize(q *query) (*launch, bool) {
	p := ops.Params[ops.QuantizeLinearParams](q.n, q.opset)
	if len(q.shapes) < 2 || q.elems[0] != graph.Float || graph.DType(p.Precision) != graph.Undefined && graph.DType(p.Precision) != graph.Float {
		return nil, false
	}
	dt := graph.DType(p.OutputDtype)
	if len(q.shapes) > 2 && q.shapes[2] != nil {
		if dt != graph.Undefined && dt != q.elems[2] {
			return nil, false
		}
		dt = q.elems[2]
	}
	if dt == graph.Undefined {
		dt = graph.Uint8
	}
	return qdqLaunch(q, qdqQuantize, dt, dt)
}

// lowerDequantize lowers DequantizeLinear of uint8, int8, uint4 or int4 x
// with a float32 scale to float32.
func lowerDequantize(q *query) (*launch, bool) {
	if o := graph.DType(ops.QuantizationOf(q.n, q.opset).OutputDtype); o != graph.Undefined && o != graph.Float {
		return nil, false
	}
	return qdqLaunch(q, qdqDequantize, q.elems[0], graph.Float)
}
