package vulkan

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/planner"
)

// maxBatchRank is the highest batch rank matmul.comp broadcasts over.
const maxBatchRank = 4

func init() {
	register("MatMul", lowerMatMul)
	register("Gemm", lowerGemm)
	registerFused("FusedMatMul", lowerFusedMatMul)
}

// matmulGeom is a batched matrix product as matmul.comp reads it: y is
// [batch..., m, n], contiguous; the other strides are in elements.
type matmulGeom struct {
	m, n, k int64
	// sam, sak: strides of a along m and k; sbk, sbn: of b along k and n.
	sam, sak, sbk, sbn int64
	// batch is the broadcast batch shape; bsa and bsb are the strides of
	// a's and b's matrices along it (0 where broadcast).
	batch, bsa, bsb []int64
	alpha, beta     float32
	// bias tells that beta * c is added; scm and scn are c's strides
	// along m and n (0 where broadcast).
	bias     bool
	scm, scn int64
	outShape []int64
	// rowsOfBatch tells that foldBatch made the batch rows of a.
	rowsOfBatch bool
}

// foldBatch makes the product one matrix product where b is the same
// matrix for every batch and a holds a matrix of its own for each, one
// after the other: a's batch then stacks into m rows, as y's does, so
// that [70000, 1, 1] × [1, 1] is one 70000-row product instead of 70000
// one-row ones, and a Linear layer over [B, T, D] tiles B·T rows.
func (g *matmulGeom) foldBatch(a, b []int64) {
	batches := graph.NumElements(g.batch)
	if batches == 1 || len(a) < 3 || graph.NumElements(a[:len(a)-2]) != batches || len(b) > 2 && graph.NumElements(b[:len(b)-2]) != 1 {
		return
	}
	g.m *= batches
	g.batch, g.bsa, g.bsb, g.rowsOfBatch = nil, nil, nil, true
}

// lowerMatMul lowers MatMul with numpy semantics: 1-D operands are
// promoted to matrices and the promoted dimension dropped from the result;
// batch dimensions broadcast, up to maxBatchRank of them.
func lowerMatMul(q *query) (*launch, bool) {
	if len(q.shapes) != 2 {
		return nil, false
	}
	g, ok := newMatMulGeom(q.shapes[0], q.shapes[1])
	if !ok {
		return nil, false
	}
	g.foldBatch(q.shapes[0], q.shapes[1])
	return g.launch(q.caps, []slot{{false, 0}, {false, 1}, {false, 0}, {true, 0}, {false, 0}}), true
}

// lowerFusedMatMul lowers the planner's FusedMatMul: MatMul of inputs 0
// and 1 (B at least 2-D) plus the vector input 2 along the product's last
// dimension.
func lowerFusedMatMul(q *query) (*launch, bool) {
	shapes := q.shapes
	if len(shapes) != 3 || shapes[1] == nil || len(shapes[1]) < 2 || shapes[2] == nil || len(shapes[2]) != 1 {
		return nil, false
	}
	g, ok := newMatMulGeom(shapes[0], shapes[1])
	if !ok || shapes[2][0] != g.n {
		return nil, false
	}
	g.foldBatch(shapes[0], shapes[1])
	g.bias, g.beta, g.scm, g.scn = true, 1, 0, 1
	return g.launch(q.caps, []slot{{false, 0}, {false, 1}, {false, 2}, {true, 0}, {false, 0}}), true
}

// newMatMulGeom returns the geometry of MatMul on operands of shapes a and
// b; ok is false when they do not multiply.
func newMatMulGeom(a, b []int64) (*matmulGeom, bool) {
	if len(a) == 0 || len(b) == 0 {
		return nil, false
	}
	ra, rb := len(a), len(b)
	if len(a) == 1 {
		a = []int64{1, a[0]}
	}
	if len(b) == 1 {
		b = []int64{b[0], 1}
	}
	g := &matmulGeom{m: a[len(a)-2], k: a[len(a)-1], n: b[len(b)-1], alpha: 1}
	if b[len(b)-2] != g.k {
		return nil, false
	}
	ab, bb := a[:len(a)-2], b[:len(b)-2]
	batch, ok := broadcast(ab, bb)
	if !ok || len(batch) > maxBatchRank {
		return nil, false
	}
	g.batch, g.bsa, g.bsb = batch, strides(ab, batch), strides(bb, batch)
	for i := range batch {
		g.bsa[i] *= g.m * g.k
		g.bsb[i] *= g.k * g.n
	}
	g.sam, g.sak, g.sbk, g.sbn = g.k, 1, g.n, 1
	g.outShape = append([]int64{}, batch...)
	if ra > 1 {
		g.outShape = append(g.outShape, g.m)
	}
	if rb > 1 {
		g.outShape = append(g.outShape, g.n)
	}
	return g, true
}

// lowerGemm lowers Gemm from opset 7: optional transposes of the 2-D
// operands, alpha and beta, and an optional C that broadcasts to the
// result.
func lowerGemm(q *query) (*launch, bool) {
	n, opset, shapes, c := q.n, q.opset, q.shapes, q.caps
	if opset < 7 || len(shapes) < 2 || len(shapes) > 3 || shapes[1] == nil || len(shapes[0]) != 2 || len(shapes[1]) != 2 {
		return nil, false
	}
	a, b := shapes[0], shapes[1]
	p := ops.Params[ops.GemmParams](n, opset)
	g := matmulGeom{m: a[0], k: a[1], sam: a[1], sak: 1, n: b[1], sbk: b[1], sbn: 1, alpha: p.Alpha, beta: p.Beta}
	if p.TransA != 0 {
		g.m, g.k, g.sam, g.sak = a[1], a[0], 1, a[1]
	}
	kb := b[0]
	if p.TransB != 0 {
		g.n, kb, g.sbk, g.sbn = b[0], b[1], 1, b[1]
	}
	if kb != g.k {
		return nil, false
	}
	g.outShape = []int64{g.m, g.n}
	bindings := []slot{{false, 0}, {false, 1}, {false, 0}, {true, 0}, {false, 0}}
	if len(shapes) == 3 && shapes[2] != nil {
		cs := shapes[2]
		if out, ok := broadcast(cs, g.outShape); !ok || len(out) != 2 || out[0] != g.m || out[1] != g.n {
			return nil, false
		}
		st := strides(cs, g.outShape)
		g.scm, g.scn, g.bias = st[0], st[1], true
		bindings[2] = slot{false, 2}
	}
	return g.launch(c, bindings), true
}

// launch returns the dispatch of matmul.comp for g with these bindings
// (a, b, c, y, s) and an unsplit depth (see splitProducts): the shader's
// part, which only split-K uses, is bound to y. A writable binding never
// binds an input, which the validation layer would see written (it reads
// the shader, not which branches the specialization takes).
func (g *matmulGeom) launch(c caps, bindings []slot) *launch {
	batches := graph.NumElements(g.batch)
	var flags uint32
	if g.bias {
		flags = 1
	}
	// The word indexes of matmulStrides below follow this layout.
	vals := []uint32{uint32(g.m), uint32(g.n), uint32(g.k), uint32(batches), uint32(len(g.batch)), flags,
		math.Float32bits(g.alpha), math.Float32bits(g.beta), uint32(g.sam), uint32(g.sak), uint32(g.sbk), uint32(g.sbn),
		uint32(g.scm), uint32(g.scn)}
	dims, sa, sb := make([]uint32, maxBatchRank), make([]uint32, maxBatchRank), make([]uint32, maxBatchRank)
	for i, d := range g.batch {
		dims[i], sa[i], sb[i] = uint32(d), uint32(g.bsa[i]), uint32(g.bsb[i])
	}
	vals = append(append(append(vals, dims...), sa...), sb...)
	vals = append(vals, 1, 0)
	bindings = append(slices.Clone(bindings), slot{true, 0})
	l := &launch{shader: "matmul", bindings: bindings, push: words(vals...), elems: batches * g.m * g.n, outShapes: [][]int64{g.outShape},
		rowsOfBatch: g.rowsOfBatch}
	switch c.matmulSchedule(g.m) {
	case scheduleGEMV:
		cols := gemvColumns(batches*((g.m+3)/4), g.n, g.k)
		if c.gemvColumns > 0 {
			cols = c.gemvColumns
		}
		l.op = 2 + int32(bits.TrailingZeros64(uint64(cols)))
		l.subgroup = c.shuffledGEMV
		l.groups = batches * ((g.m + 3) / 4) * ((g.n + cols - 1) / cols)
	case scheduleTiled:
		l.op = 1
		l.groups = batches * ((g.m + 63) / 64) * ((g.n + 63) / 64)
	default:
		l.groups = batches * ((g.m + 31) / 32) * ((g.n + 255) / 256)
	}
	return l
}

// matmulSchedule is a schedule of matmul.comp.
type matmulSchedule int8

const (
	// scheduleAuto picks by device and shape (see caps.matmulSchedule).
	scheduleAuto matmulSchedule = iota
	// scheduleBlocked: 32x256 tiles, 8x4 outputs per invocation in
	// registers, no shared memory (CPU implementations).
	scheduleBlocked
	// scheduleTiled: 64x64 tiles staged in shared memory (GPUs).
	scheduleTiled
	// scheduleGEMV: up to 4 rows by a few columns per workgroup, k split
	// among its invocations (GPUs, products of few rows).
	scheduleGEMV
)

// gemvRows is the most rows per batch matrix for which GPUs use the gemv
// schedule.
const gemvRows = 4

// gemvGroups is the number of workgroups the gemv schedule aims for: a few
// per compute unit of a large GPU (an H200 has 132), so that the weights
// stream through every unit at once.
const gemvGroups = 256

// matmulSchedule returns the schedule of a product with m rows per batch
// matrix: the forced one where set, else gemv for few rows and tiled for
// the rest on GPUs, blocked on CPU implementations.
func (c caps) matmulSchedule(m int64) matmulSchedule {
	switch {
	case c.schedule != scheduleAuto:
		return c.schedule
	case !c.tiledMatMul:
		return scheduleBlocked
	case m <= gemvRows:
		return scheduleGEMV
	}
	return scheduleTiled
}

// gemvColumns returns the columns of y per workgroup of the gemv schedule, a
// power of two, for tiles row blocks of n columns and depth k: 32 where
// that makes gemvGroups workgroups, fewer (down to 2) where n is short; more
// where k is shorter than the 256 / columns slices of k would need, and no
// more than n rounded up to a power of two. On an H200, fewer columns and
// more workgroups beat the coalescing that 8 or more columns give to fp32
// weights: [1,2048]x[2048,512] took 9.5 µs with 2 columns, 11 with 4 and
// 15 with 8.
func gemvColumns(tiles, n, k int64) int64 {
	cols := int64(32)
	for cols > 2 && tiles*((n+cols-1)/cols) < gemvGroups {
		cols /= 2
	}
	for cols < 256 && 256/cols > k {
		cols *= 2
	}
	for cols > 1 && cols/2 >= n {
		cols /= 2
	}
	return cols
}

// Word indexes in matmul.comp's push constants (see matmulGeom.launch):
// the batch rank, the flags, alpha and beta, a's strides along m and k,
// b's along k and n, the batch strides of a and b, and split-K's splits
// (followed by its k steps per split).
const (
	mmBatchRank = 4
	mmFlags     = 5
	mmAlpha     = 6
	mmBeta      = 7
	mmSam       = 8
	mmSbk       = 10
	mmBatchA    = 14 + maxBatchRank
	mmBatchB    = 14 + 2*maxBatchRank
	mmSplits    = 14 + 3*maxBatchRank
)

// matmul.comp's TILED bits besides the schedule: split-K's GEMM and its
// reduction (see splitProducts).
const (
	matmulSplit  = 1 << 8
	matmulReduce = 1 << 9
)

// splitProducts splits the depth of each product lowered to matmul.comp's
// tiled schedule whose output tiles are too few to keep a GPU busy, as
// kSplits decides (an H100 ran BERT-base's [128, 768] by [768, 768]
// projections in 24 workgroups of 64x64 on its 132 compute units): its
// GEMM writes each split's sums to the scratch, and a second dispatch,
// one invocation per output element, adds them and applies the store's
// epilogue (alpha, beta·C, the residual) once. It runs after the folds,
// which leave the products' push constants and bindings final.
func splitProducts(c caps, launches []*launch, compiled []*planner.Step) {
	for i, l := range launches {
		if compiled[i] == nil || l == nil || !l.runs("matmul") && l.shader != halfVariants["matmul"].shader && l.shader != matrixShaders["matmul"+halfSuffix] || l.op != 1 || len(l.then) > 0 {
			continue
		}
		// The tiled schedule's workgroups are its tiles (see launch).
		k := int64(binary.LittleEndian.Uint32(l.push[8:]))
		splits, per := kSplits(c.matmulSplits, c.maxElems, l.groups, k, l.elems)
		if splits == 1 {
			continue
		}
		push := slices.Clone(l.push)
		binary.LittleEndian.PutUint32(push[4*mmSplits:], uint32(splits))
		binary.LittleEndian.PutUint32(push[4*(mmSplits+1):], uint32(per))
		// The reduction reads no b: the fp16-weight variant's (fp32
		// data) is the plain shader, the matrix units' the HALF variant.
		reduce := l.shader
		switch reduce {
		case halfVariants["matmul"].shader:
			reduce = "matmul"
		case matrixShaders["matmul"+halfSuffix]:
			reduce = "matmul" + halfSuffix
		}
		b := l.bindings
		gemm := *l
		gemm.op, gemm.push, gemm.groups = matmulSplit|1, push, l.groups*splits
		// The GEMM's y, c and s are unused: the scratch it writes
		// stands in for them (see launch).
		gemm.bindings = []slot{b[0], b[1], {false, scratchSlot}, {true, scratchSlot}, {false, scratchSlot}, {true, scratchSlot}}
		gemm.scratch = uint64(4 * splits * l.elems)
		gemm.then = []*launch{{shader: reduce, op: matmulReduce, push: push, elems: l.elems,
			bindings: []slot{{false, 0}, {false, 0}, b[2], b[3], b[4], {false, scratchSlot}}}}
		launches[i] = &gemm
	}
}

// readThrough makes matmul launch l read operand k (0: a, 1: b), whose
// logical shape is shape, through the element strides st instead of
// contiguously: a Transpose folded into the product.
func (l *launch) readThrough(k int, shape, st []int64) {
	push := slices.Clone(l.push)
	put := func(word int, v int64) { binary.LittleEndian.PutUint32(push[4*word:], uint32(v)) }
	r := len(shape)
	matrix, batch := mmSam, mmBatchA
	if k == 1 {
		matrix, batch = mmSbk, mmBatchB
	}
	put(matrix, st[r-2])
	put(matrix+1, st[r-1])
	nb := int(binary.LittleEndian.Uint32(push[4*mmBatchRank:]))
	for i := range nb {
		axis := i - (nb - (r - 2))
		v := int64(0)
		if axis >= 0 && shape[axis] != 1 {
			v = st[axis]
		}
		put(batch+i, v)
	}
	l.push = push
}

// matmulSum is the binding of matmul.comp's residual s and its flag.
const (
	matmulSum     = 4
	matmulSumFlag = 2
)

// scaled makes matmul launch l multiply its result by f: alpha and beta
// times f.
func (l *launch) scaled(f float32) {
	push := slices.Clone(l.push)
	for _, w := range []int{mmAlpha, mmBeta} {
		v := math.Float32frombits(binary.LittleEndian.Uint32(push[4*w:]))
		binary.LittleEndian.PutUint32(push[4*w:], math.Float32bits(v*f))
	}
	l.push = push
}

// summing makes matmul launch l add input k of its step, of the result's
// shape, to the result.
func (l *launch) summing(k int) {
	push := slices.Clone(l.push)
	flags := binary.LittleEndian.Uint32(push[4*mmFlags:])
	binary.LittleEndian.PutUint32(push[4*mmFlags:], flags|matmulSumFlag)
	l.push = push
	l.bindings = slices.Clone(l.bindings)
	l.bindings[matmulSum] = slot{false, k}
}

// sums tells whether matmul launch l adds a residual.
func (l *launch) sums() bool {
	return binary.LittleEndian.Uint32(l.push[4*mmFlags:])&matmulSumFlag != 0
}
