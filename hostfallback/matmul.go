package hostfallback

import (
	"github.com/onnxvk/onnxvk/graph"
)

func init() {
	RegisterChecked("MatMul", matmulKernel, Support{In: []Types{productTypes}})
	Register("MatMulInteger", matmulIntegerKernel)
}

// matmulNum are the element types of the plain (unpacked) product loop.
type matmulNum interface {
	~float64 | ~int32 | ~int64 | ~uint32 | ~uint64
}

// matmulLoop sets C (m×n, row stride ldc) to op(A)·op(B) in T's own
// arithmetic, with the same conventions as sgemm.
func matmulLoop[T matmulNum](transA, transB bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int) {
	for i := range m {
		crow := c[i*ldc : i*ldc+n]
		clear(crow)
		for p := range k {
			ai := i*lda + p
			if transA {
				ai = p*lda + i
			}
			av := a[ai]
			if transB {
				for j := range crow {
					crow[j] += av * b[j*ldb+p]
				}
				continue
			}
			for j, bv := range b[p*ldb : p*ldb+n] {
				crow[j] += av * bv
			}
		}
	}
}

// matmulShape is the layout of a numpy-style batched matrix product.
type matmulShape struct {
	m, n, k int
	// out is the output shape.
	out []int64
	// offA and offB are, for each output matrix, the element offsets of
	// its A and B operands.
	offA, offB []int
	// foldA is set when B is a single matrix, so that A's matrices can be
	// stacked into one (batch·m)×k operand.
	foldA bool
	// packedB, when set, is a constant float32 B already in the packed
	// layout of gemmPacked (see gemmPackWhole), shared with every plan
	// that packs that weight (see sharedPack).
	packedB *packedWeight
	// intB, when set, is MatMulInteger's constant B, its constant zero
	// point subtracted, each matrix packed as qgemm's B (matmulIntegerB).
	intB []int32
}

// matmulPlan checks and lays out numpy.matmul of shapes sa and sb: 1-D
// operands are promoted to matrices (and the added dimension dropped from
// the result) and the batch dimensions broadcast.
func matmulPlan(c *Call, sa, sb []int64) (*matmulShape, error) {
	if len(sa) == 0 || len(sb) == 0 {
		return nil, c.Errorf("operands must have rank ≥ 1, got %v and %v", sa, sb)
	}
	ea, eb := sa, sb
	if len(sa) == 1 {
		ea = []int64{1, sa[0]}
	}
	if len(sb) == 1 {
		eb = []int64{sb[0], 1}
	}
	ra, rb := len(ea), len(eb)
	p := &matmulShape{m: int(ea[ra-2]), k: int(ea[ra-1]), n: int(eb[rb-1])}
	if eb[rb-2] != int64(p.k) {
		return nil, c.Errorf("shapes %v and %v do not multiply", sa, sb)
	}
	ba, bb := ea[:ra-2], eb[:rb-2]
	rank := max(len(ba), len(bb))
	batch := make([]int64, rank)
	for i := range rank {
		da, db := int64(1), int64(1)
		if j := i - rank + len(ba); j >= 0 {
			da = ba[j]
		}
		if j := i - rank + len(bb); j >= 0 {
			db = bb[j]
		}
		switch {
		case da == db || db == 1:
			batch[i] = da
		case da == 1:
			batch[i] = db
		default:
			return nil, c.Errorf("batch dimensions of %v and %v do not broadcast", sa, sb)
		}
	}
	p.out = append([]int64{}, batch...)
	if len(sa) > 1 {
		p.out = append(p.out, int64(p.m))
	}
	if len(sb) > 1 {
		p.out = append(p.out, int64(p.n))
	}
	count := int(graph.NumElements(batch))
	p.foldA = graph.NumElements(bb) == 1
	p.offA, p.offB = make([]int, count), make([]int, count)
	idx := make([]int64, rank)
	for o := range count {
		ia, ib := 0, 0
		for i := range rank {
			if j := i - rank + len(ba); j >= 0 {
				ia = ia*int(ba[j]) + int(min(idx[i], ba[j]-1))
			}
			if j := i - rank + len(bb); j >= 0 {
				ib = ib*int(bb[j]) + int(min(idx[i], bb[j]-1))
			}
		}
		p.offA[o], p.offB[o] = ia*p.m*p.k, ib*p.k*p.n
		for i := rank - 1; i >= 0; i-- {
			if idx[i]++; idx[i] < batch[i] {
				break
			}
			idx[i] = 0
		}
	}
	return p, nil
}

// productTypes are the element types MatMul and Gemm multiply.
var productTypes = append(Types{graph.Int32, graph.Int64, graph.Uint32, graph.Uint64}, floats...)

// matmulKernel is ONNX MatMul, numpy.matmul semantics.
func matmulKernel(c *Call) error { return matmulBias(c, nil) }

// matmulBias is MatMul plus bias, when not nil, on every row of the
// product: a float32 vector as long as the product's rows, which must be
// float32 too.
func matmulBias(c *Call, bias *graph.Tensor) error {
	a, b := c.Tensor(0), c.Tensor(1)
	if a == nil || b == nil {
		return c.Errorf("inputs A and B are required")
	}
	if a.DType != b.DType {
		return c.Errorf("A is %s but B is %s", a.DType, b.DType)
	}
	p, err := Memo(c, c.ShapeKey(), func() (*matmulShape, error) {
		p, err := matmulPlan(c, a.Shape, b.Shape)
		if err == nil && p.foldA && c.Const(1) && b.DType == graph.Float && matmulPrepacks(len(p.offA)*p.m, p.n, p.k) {
			p.packedB = sharedPack(b, false, p.k, p.n)
		}
		return p, err
	})
	if err != nil {
		return err
	}
	if bias != nil {
		if a.DType != graph.Float || bias.NumElements() != int64(p.n) || len(p.out) == 0 {
			return c.Errorf("bias %s%v does not match the product %s%v", bias.DType, bias.Shape, a.DType, p.out)
		}
		y := c.OutputUninit(0, a.DType, p.out)
		out, bv := graph.View[float32](y), graph.View[float32](bias)
		// The product is added to the bias already in place.
		for r := 0; r < len(out); r += p.n {
			copy(out[r:r+p.n], bv)
		}
		matmulF32(c.Threads, p, false, graph.View[float32](a), graph.View[float32](b), out, 1)
		return nil
	}
	var y *graph.Tensor
	if f32Family(a.DType) {
		y = c.OutputUninit(0, a.DType, p.out) // sgemm with beta 0 overwrites
	} else {
		y = c.Output(0, a.DType, p.out)
	}
	switch a.DType {
	case graph.Double:
		matmulBatched(c.Threads, p, graph.View[float64](a), graph.View[float64](b), graph.View[float64](y))
	case graph.Int32:
		matmulBatched(c.Threads, p, graph.View[int32](a), graph.View[int32](b), graph.View[int32](y))
	case graph.Int64:
		matmulBatched(c.Threads, p, graph.View[int64](a), graph.View[int64](b), graph.View[int64](y))
	case graph.Uint32:
		matmulBatched(c.Threads, p, graph.View[uint32](a), graph.View[uint32](b), graph.View[uint32](y))
	case graph.Uint64:
		matmulBatched(c.Threads, p, graph.View[uint64](a), graph.View[uint64](b), graph.View[uint64](y))
	case graph.Float, graph.Float16, graph.BFloat16:
		out := f32Target(y)
		matmulF32(c.Threads, p, false, f32Data(a), f32Data(b), out, 0)
		f32Commit(y, out)
	default:
		return c.Unsupported("MatMul of %s", a.DType)
	}
	return nil
}

// matmulF32 runs a planned product on float32 data with sgemm, adding it
// to y when beta is 1 (overwriting y when 0). With transB, each matrix of
// b is stored transposed (n×k) and p.packedB is nil.
func matmulF32(threads *Threads, p *matmulShape, transB bool, a, b, y []float32, beta float32) {
	m, n, k := p.m, p.n, p.k
	count := len(p.offA)
	ldb := n
	if transB {
		ldb = k
	}
	if p.packedB != nil {
		gemmPrepacked(threads, false, count*m, n, k, 1, a, k, p.packedB.data, beta, y, n)
		return
	}
	if p.foldA {
		sgemm(threads, false, transB, count*m, n, k, 1, a, k, b, ldb, beta, y, n)
		return
	}
	// Small products go one per goroutine, and all on this one when the
	// whole batch is too little work to share.
	if count >= 2 && m*n*k < 4*gemmParallelWork {
		grain := max(1, gemmParallelWork/max(m*n*k, 1))
		threads.For(count, grain, func(lo, hi int) {
			for o := lo; o < hi; o++ {
				sgemmSerial(false, transB, m, n, k, 1, a[p.offA[o]:], k, b[p.offB[o]:], ldb, beta, y[o*m*n:], n)
			}
		})
		return
	}
	for o := range count {
		sgemm(threads, false, transB, m, n, k, 1, a[p.offA[o]:], k, b[p.offB[o]:], ldb, beta, y[o*m*n:], n)
	}
}

// gemmPrepacked sets C (m×n, row stride ldc) to alpha·op(A)·B + beta·C
// for a k×n B packed whole (gemmPackWhole): a few rows of A, unscaled and
// untransposed, with gemvPacked, the rest with gemmPacked. When beta is 0,
// C is overwritten and need not hold numbers.
func gemmPrepacked(threads *Threads, transA bool, m, n, k int, alpha float32, a []float32, lda int, bPre []float32, beta float32, c []float32, ldc int) {
	if m <= gemvMaxRows && !transA && alpha == 1 && (beta == 0 || beta == 1) {
		gemvPacked(threads, m, n, k, a, lda, bPre, gemmBest.nr, beta == 1, c, ldc)
		return
	}
	workers := threads.Workers()
	if m*n*k < gemmParallelWork {
		workers = 1
	}
	gemmPacked(threads, gemmBest, transA, false, m, n, k, alpha, a, lda, nil, n, bPre, beta, nil, c, ldc, workers)
}

// matmulPrepacks reports whether an m×k by k×n product takes gemmPacked
// (see gemmRun) with a kernel that can read a B packed whole, or
// gemvPacked: a B at least one strip wide, so that the padding of its
// last strip to the kernel's width does not outweigh it.
func matmulPrepacks(m, n, k int) bool {
	return convPackedUsable() && k > 0 && (m <= gemvMaxRows && n >= gemmBest.nr || gemmTakesPacked(m, n, k))
}

// matmulBatched runs a planned product with matmulLoop, one output matrix
// per goroutine.
func matmulBatched[T matmulNum](threads *Threads, p *matmulShape, a, b, y []T) {
	m, n, k := p.m, p.n, p.k
	threads.For(len(p.offA), 1, func(lo, hi int) {
		for o := lo; o < hi; o++ {
			matmulLoop(false, false, m, n, k, a[p.offA[o]:], k, b[p.offB[o]:], n, y[o*m*n:], n)
		}
	})
}

// matmulIntegerKernel is ONNX MatMulInteger: (A − a_zero_point)·(B −
// b_zero_point) in int32 for 8-bit A and B, with per-tensor zero points or
// per-row (A) and per-column (B) ones, as integer products (qgemm).
func matmulIntegerKernel(c *Call) error {
	a, b := c.Tensor(0), c.Tensor(1)
	if a == nil || b == nil {
		return c.Errorf("inputs A and B are required")
	}
	p, err := Memo(c, c.ShapeKey(), func() (*matmulShape, error) {
		p, err := matmulPlan(c, a.Shape, b.Shape)
		if err == nil && c.Const(1) && (c.Tensor(3) == nil || c.Const(3)) {
			p.intB, err = matmulIntegerB(c, p, b)
		}
		return p, err
	})
	if err != nil {
		return err
	}
	av, err := int8Operand(c, a, c.Tensor(2), "a_zero_point", p.k, p.n, false)
	if err != nil {
		return err
	}
	bp := p.intB
	if bp == nil {
		if bp, err = matmulIntegerB(c, p, b); err != nil {
			return err
		}
	}
	y := c.Output(0, graph.Int32, p.out)
	matmulIntegerRun(c.Threads, qgemmBest, p, av, bp, graph.View[int32](y))
	return nil
}

// matmulIntegerB returns B − b_zero_point, each of its k×n matrices
// packed as qgemm's B, one after the other.
func matmulIntegerB(c *Call, p *matmulShape, b *graph.Tensor) ([]int32, error) {
	bv, err := int8Operand(c, b, c.Tensor(3), "b_zero_point", p.k, p.n, true)
	if err != nil || p.k*p.n == 0 {
		return nil, err
	}
	size := qgemmSizeB(p.k, p.n)
	out := make([]int32, len(bv)/(p.k*p.n)*size)
	for i := range len(bv) / (p.k * p.n) {
		qpackB(out[i*size:], bv[i*p.k*p.n:], p.k, p.n, p.n)
	}
	return out, nil
}

// matmulIntegerRun sets y to the planned product of a (its zero point
// subtracted) by the packed b: with a single B, A's matrices stacked and
// split by rows across the workers; else one output matrix at a time.
func matmulIntegerRun(threads *Threads, kern *qgemmKernel, p *matmulShape, a []int32, b, y []int32) {
	m, n, k, count := p.m, p.n, p.k, len(p.offA)
	if m*n == 0 {
		return
	}
	// rows multiplies rows [r0, r1) of the m×k matrices of A from offset
	// at by packed B matrix bi into y from row r0 of output matrix o.
	rows := func(at, bi, o, r0, r1 int) {
		pa := qgemmBuf[int16](&qgemmBufs.a, qgemmSizeA(r1-r0, k))
		defer qgemmBufs.a.Put(pa)
		qpackA(*pa, a[at+r0*k:], r1-r0, k, k)
		qgemm(kern, r1-r0, n, k, *pa, b[bi*qgemmSizeB(k, n):], y[(o*m+r0)*n:], n)
	}
	if p.foldA {
		total := count * m
		grain := max(1, gemmParallelWork/max(qgemmMR*n*k, 1))
		threads.For((total+qgemmMR-1)/qgemmMR, grain, func(lo, hi int) {
			rows(0, 0, 0, lo*qgemmMR, min(hi*qgemmMR, total))
		})
		return
	}
	threads.For(count, 1, func(lo, hi int) {
		for o := lo; o < hi; o++ {
			bi := 0
			if k > 0 {
				bi = p.offB[o] / (k * n)
			}
			rows(p.offA[o], bi, o, 0, m)
		}
	})
}

// int8Operand widens an int8 or uint8 operand of a k-deep product with n
// columns to int32, its zero point subtracted. The zero point is a scalar,
// or holds one value per row of A (M values, or M for every matrix of A) or,
// when perColumn is set, one per column of B (N values, or N for every
// matrix of B).
func int8Operand(c *Call, t, zp *graph.Tensor, name string, k, n int, perColumn bool) ([]int32, error) {
	x, err := int8Values(c, t)
	if err != nil || zp == nil || len(x) == 0 {
		return x, err
	}
	if zp.DType != t.DType {
		return nil, c.Errorf("%s is %s but its operand is %s", name, zp.DType, t.DType)
	}
	z, err := int8Values(c, zp)
	if err != nil {
		return nil, err
	}
	switch {
	case len(z) == 1:
		for i := range x {
			x[i] -= z[0]
		}
	case !perColumn && len(z) > 0 && (len(x)/k)%len(z) == 0:
		for i := range x {
			x[i] -= z[(i/k)%len(z)]
		}
	case perColumn && len(z) > 0 && len(z)%n == 0 && (len(x)/k)%len(z) == 0:
		for i := range x {
			x[i] -= z[(i/(k*n)*n+i%n)%len(z)]
		}
	default:
		return nil, c.Errorf("%s%v does not match its operand %v", name, zp.Shape, t.Shape)
	}
	return x, nil
}

// int8Values widens an int8 or uint8 tensor to int32.
func int8Values(c *Call, t *graph.Tensor) ([]int32, error) {
	out := make([]int32, t.NumElements())
	switch t.DType {
	case graph.Int8:
		for i, v := range graph.View[int8](t)[:len(out)] {
			out[i] = int32(v)
		}
	case graph.Uint8:
		for i, v := range t.Data[:len(out)] {
			out[i] = int32(v)
		}
	default:
		return nil, c.Unsupported("%s input", t.DType)
	}
	return out, nil
}
