package hostfallback

import (
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

func init() {
	RegisterDomainChecked(ops.FusedDomain, "ScaledDotProductAttention", sdpaKernel, Support{In: []Types{{graph.Float}}})
}

// sdpaMatrix is how one matrix of a ScaledDotProductAttention operand lies
// in its tensor: the element (i, j) of batch entry b is at
// off(b) + i·rs + j·cs, with off(b) the sum of b's indices times batch.
type sdpaMatrix struct {
	batch      []int
	rows, cols int
	rs, cs     int
}

// offset is the start of the matrix of batch entry b (row-major over the
// batch dimensions dims).
func (m *sdpaMatrix) offset(b int, dims []int) int {
	off := 0
	for d := len(dims) - 1; d >= 0; d-- {
		off += b % dims[d] * m.batch[d]
		b /= dims[d]
	}
	return off
}

// operand returns the matrix of batch entry b as sgemm reads it: in place
// when one of its axes is contiguous (trans telling that it is stored
// transposed, ld its stride), else copied into buf.
func (m *sdpaMatrix) operand(x []float32, b int, dims []int, buf []float32) (trans bool, a []float32, ld int) {
	off := m.offset(b, dims)
	switch {
	case m.cs == 1 || m.cols == 1:
		return false, x[off:], m.rs
	case m.rs == 1 || m.rows == 1:
		return true, x[off:], m.cs
	}
	for i := range m.rows {
		row := buf[i*m.cols : (i+1)*m.cols]
		for j := range row {
			row[j] = x[off+i*m.rs+j*m.cs]
		}
	}
	return false, buf, m.cols
}

// gathered reports whether operand copies the matrix.
func (m *sdpaMatrix) gathered() bool {
	return !(m.cs == 1 || m.cols == 1 || m.rs == 1 || m.rows == 1)
}

// sdpaPlan is the geometry of a ScaledDotProductAttention call: the batch
// dimensions, the output's shape and each operand's matrices (kᵀ as k).
type sdpaPlan struct {
	dims       []int
	entries    int
	out        []int64
	q, k, v, y sdpaMatrix
}

// newSDPAPlan lays out operands of shapes q, k and v and the output.
func newSDPAPlan(c *Call, q, k, v []int64) (*sdpaPlan, error) {
	out, err := ops.AttentionShape(c.Node, c.Opset, graph.ShapeOf(q...), graph.ShapeOf(k...), graph.ShapeOf(v...))
	if err != nil {
		return nil, c.Errorf("%w", err)
	}
	r := len(q)
	perms, err := ops.AttentionPerms(c.Node, c.Opset, r)
	if err != nil {
		return nil, c.Errorf("%w", err)
	}
	p := &sdpaPlan{dims: make([]int, r-2), entries: 1, out: out.Ints()}
	// matrix lays out the operand of shape s and strides st read through
	// perm (logical axis d is axis perm[d]).
	matrix := func(s, st []int64, perm []int) sdpaMatrix {
		m := sdpaMatrix{batch: make([]int, r-2),
			rows: int(s[perm[r-2]]), cols: int(s[perm[r-1]]), rs: int(st[perm[r-2]]), cs: int(st[perm[r-1]])}
		for d := range r - 2 {
			m.batch[d] = int(st[perm[d]])
		}
		return m
	}
	p.q = matrix(q, graph.Strides(q), perms[0])
	p.k = matrix(k, graph.Strides(k), perms[1])
	p.v = matrix(v, graph.Strides(v), perms[2])
	// Output axis i holds the logical axis perm_y[i]: invert it.
	inv := make([]int, r)
	for i, d := range perms[3] {
		inv[d] = i
	}
	p.y = matrix(p.out, graph.Strides(p.out), inv)
	for d := range r - 2 {
		p.dims[d] = int(q[perms[0][d]])
		p.entries *= p.dims[d]
	}
	return p, nil
}

// sdpaKernel is ScaledDotProductAttention: for each batch entry, the
// scores scale·q·kᵀ, each row's softmax (float32, the vectorised exp, as
// Softmax's kernel) times v, the division by each row's sum applied to
// the product, each operand read through its permutation where it lies
// and the result written where the output's permutation puts it. With
// enough queries (sdpaBlocked) the products run on the GEMM's
// micro-kernels over kᵀ and v packed once an entry (see sdpaJob); a few
// queries take sgemm's unpacked products, which read the keys in place.
func sdpaKernel(c *Call) error {
	qt, kt, vt := c.Tensor(0), c.Tensor(1), c.Tensor(2)
	if qt == nil || kt == nil || vt == nil {
		return c.Errorf("inputs Q, K and V are required")
	}
	p, err := Memo(c, c.ShapeKey(), func() (*sdpaPlan, error) { return newSDPAPlan(c, qt.Shape, kt.Shape, vt.Shape) })
	if err != nil {
		return err
	}
	scale := ops.Params[ops.ScaledDotProductAttentionParams](c.Node, c.Opset).Scale
	y := c.OutputUninit(0, graph.Float, p.out)
	q, k, v, out := graph.View[float32](qt), graph.View[float32](kt), graph.View[float32](vt), graph.View[float32](y)
	M, N, Dv := p.q.rows, p.k.cols, p.v.cols
	if M == 0 || Dv == 0 || p.entries == 0 {
		return nil
	}
	if N == 0 {
		// No keys: the softmax is empty and the product by v zero, as the
		// unfused chain gives.
		clear(out)
		return nil
	}
	if sdpaBlocked(gemmBest, M) {
		newSDPAJob(p, gemmBest, c.Threads.Workers(), q, k, v, out, scale).start(c.Threads)
		return nil
	}
	sdpaSmall(c.Threads, p, q, k, v, out, scale)
	return nil
}

// sdpaSmall is ScaledDotProductAttention of a few queries: one entry at a
// time, through sgemm.
func sdpaSmall(threads *Threads, p *sdpaPlan, q, k, v, out []float32, scale float32) {
	M, D, N, Dv := p.q.rows, p.q.cols, p.k.cols, p.v.cols
	threads.For(p.entries, 1, func(lo, hi int) {
		// The chunk's scratch, from the pool the GEMMs use: the scores,
		// the rows' inverse sums and the copies of operands that lie
		// with neither axis contiguous.
		direct := p.y.cs == 1 || Dv == 1
		sizes := []int{M * N, M, 0, 0, 0, 0}
		if p.q.gathered() {
			sizes[2] = M * D
		}
		if p.k.gathered() {
			sizes[3] = D * N
		}
		if p.v.gathered() {
			sizes[4] = N * Dv
		}
		if !direct {
			sizes[5] = M * Dv
		}
		buf, parts := sdpaScratch(sizes)
		defer gemmBufs.Put(buf)
		scores, inv, qb, kb, vb, yb := parts[0], parts[1], parts[2], parts[3], parts[4], parts[5]
		for b := lo; b < hi; b++ {
			ta, a, lda := p.q.operand(q, b, p.dims, qb)
			tb, bm, ldb := p.k.operand(k, b, p.dims, kb)
			sgemmSerial(ta, tb, M, N, D, scale, a, lda, bm, ldb, 0, scores, N)
			// The exponentials, each row's sum kept to divide the
			// row of the product (Dv elements rather than N).
			for i := range M {
				row := scores[i*N : (i+1)*N]
				inv[i] = 1 / expShiftF32(row, row, rowMaxF32(row))
			}
			tv, vm, ldv := p.v.operand(v, b, p.dims, vb)
			yOff := p.y.offset(b, p.dims)
			if direct {
				sgemmSerial(false, tv, M, Dv, N, 1, scores, N, vm, ldv, 0, out[yOff:], p.y.rs)
				for i, f := range inv {
					row := out[yOff+i*p.y.rs : yOff+i*p.y.rs+Dv]
					for j := range row {
						row[j] *= f
					}
				}
				continue
			}
			sgemmSerial(false, tv, M, Dv, N, 1, scores, N, vm, ldv, 0, yb, Dv)
			for i, f := range inv {
				for j, x := range yb[i*Dv : (i+1)*Dv] {
					out[yOff+i*p.y.rs+j*p.y.cs] = x * f
				}
			}
		}
	})
}

// sdpaScratch takes a buffer from the pool the GEMMs use (put it back with
// gemmBufs.Put) and cuts it into parts of the given sizes.
func sdpaScratch(sizes []int) (*[]float32, [][]float32) {
	total := 0
	for _, n := range sizes {
		total += n
	}
	buf := gemmBuf(total)
	parts := make([][]float32, len(sizes))
	rest := *buf
	for i, n := range sizes {
		parts[i], rest = rest[:n:n], rest[n:]
	}
	return buf, parts
}
