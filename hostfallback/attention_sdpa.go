package hostfallback

import (
	"math"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

func init() {
	RegisterDomainChecked(ops.FusedDomain, "ScaledDotProductAttention", halfVia32(sdpaKernel), onSDPA)
}

// onSDPA is the support of ScaledDotProductAttention: onFused's types for
// Q, K and V, and a mask of those or bool.
var onSDPA = Support{In: []Types{onFused.In[0], onFused.In[0], onFused.In[0], append(Types{graph.Bool}, onFused.In[0]...)}}

// sdpaMatrix is how one matrix of a ScaledDotProductAttention operand lies
// in its tensor: the element (i, j) of batch entry b is at
// offset(b) + i·rs + j·cs, offset(b) being off plus the index of b along
// each batch factor (row-major over their sizes) times its stride.
type sdpaMatrix struct {
	off            int
	bsize, bstride []int
	rows, cols     int
	rs, cs         int
}

// offset is the start of the matrix of batch entry b.
func (m *sdpaMatrix) offset(b int) int {
	off := m.off
	for d := len(m.bsize) - 1; d >= 0; d-- {
		off += b % m.bsize[d] * m.bstride[d]
		b /= m.bsize[d]
	}
	return off
}

// operand returns the matrix of batch entry b as sgemm reads it: in place
// when one of its axes is contiguous (trans telling that it is stored
// transposed, ld its stride), else copied into buf.
func (m *sdpaMatrix) operand(x []float32, b int, buf []float32) (trans bool, a []float32, ld int) {
	off := m.offset(b)
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

// sdpaPlan is the geometry of a ScaledDotProductAttention call: the number
// of batch entries, the output's shape, each operand's matrices (kᵀ as
// k) and the mask's, broadcast to the scores (nil without a mask).
type sdpaPlan struct {
	entries    int
	out        []int64
	q, k, v, y sdpaMatrix
	mask       *sdpaMatrix
}

// sdpaMask is the data of a ScaledDotProductAttention call's mask: float
// (added to the scores) or bool bytes, which hide the keys where they are
// zero, or where they are not when hides is set (mask_hides).
type sdpaMask struct {
	add   []float32
	bools []byte
	hides bool
}

// softmax turns rows i0 to i0+rows of batch entry b's scores (scores
// holding those rows, N apart) into their exponentials (the row's
// maximum subtracted), after the mask, and sets inv[i] to the inverse of
// row i's sum: 0, the row zeroed, where every score of the row is −inf.
func (p *sdpaPlan) softmax(m *sdpaMask, scores []float32, b, i0, rows, N int, inv []float32) {
	var off int
	if p.mask != nil {
		off = p.mask.offset(b)
	}
	inf := float32(math.Inf(-1))
	for i := range rows {
		row := scores[i*N : (i+1)*N]
		if mk := p.mask; mk != nil {
			at := off + (i0+i)*mk.rs
			switch {
			case m.add != nil:
				for j := range row {
					row[j] += m.add[at+j*mk.cs]
				}
			default:
				for j := range row {
					if (m.bools[at+j*mk.cs] == 0) != m.hides {
						row[j] = inf
					}
				}
			}
		}
		top := rowMaxF32(row)
		if top == inf {
			clear(row)
			inv[i] = 0
			continue
		}
		inv[i] = 1 / expShiftF32(row, row, top)
	}
}

// sdpaLayout is an operand's view (see ops.AttentionView): its input
// tensor's own row-major layout where the node has no view for it.
func sdpaLayout(view *ops.AttentionView, shape []int64) *ops.AttentionView {
	if view != nil {
		return view
	}
	return ops.RowMajorView(shape)
}

// newSDPAPlan lays out operands q, k and v (their input tensors' shapes
// and lengths), the output and the mask of shape mask (nil: none).
func newSDPAPlan(c *Call, q, k, v, mask []int64, lens [3]int) (*sdpaPlan, error) {
	views, err := ops.AttentionViews(c.Node, c.Opset)
	if err != nil {
		return nil, c.Errorf("%w", err)
	}
	var ls [3]*ops.AttentionView
	for i, shape := range [3][]int64{q, k, v} {
		ls[i] = sdpaLayout(views[i], shape)
		if views[i] == nil || graph.NumElements(views[i].Shape) == 0 {
			continue
		}
		if last := views[i].Last(); last >= int64(lens[i]) {
			return nil, c.Errorf("%s reaches element %d of an input of %d", [3]string{"view_q", "view_k", "view_v"}[i], last, lens[i])
		}
	}
	out, err := ops.AttentionShape(c.Node, c.Opset, graph.ShapeOf(ls[0].Shape...), graph.ShapeOf(ls[1].Shape...), graph.ShapeOf(ls[2].Shape...))
	if err != nil {
		return nil, c.Errorf("%w", err)
	}
	r := len(ls[0].Shape)
	perms, err := ops.AttentionPerms(c.Node, c.Opset, r)
	if err != nil {
		return nil, c.Errorf("%w", err)
	}
	p := &sdpaPlan{entries: 1, out: out.Ints()}
	// matrix lays out the operand l read through perm (logical axis d is
	// its axis perm[d]).
	matrix := func(name string, l *ops.AttentionView, perm []int) (sdpaMatrix, error) {
		m := sdpaMatrix{off: int(l.Offset), rows: int(l.Shape[perm[r-2]]), cols: int(l.Shape[perm[r-1]])}
		rs, ok1 := l.Stride(perm[r-2])
		cs, ok2 := l.Stride(perm[r-1])
		if !ok1 || !ok2 {
			return m, c.Errorf("%s: the axes of its matrices do not each have one stride", name)
		}
		m.rs, m.cs = int(rs), int(cs)
		for d := range r - 2 {
			for _, f := range l.Factors[perm[d]] {
				m.bsize, m.bstride = append(m.bsize, int(f[0])), append(m.bstride, int(f[1]))
			}
		}
		return m, nil
	}
	for i, m := range [3]*sdpaMatrix{&p.q, &p.k, &p.v} {
		if *m, err = matrix([3]string{"Q", "K", "V"}[i], ls[i], perms[i]); err != nil {
			return nil, err
		}
	}
	// Grouped-query attention: K's and V's heads, the last batch axis,
	// each serve kv_repeat of Q's in a row, an innermost batch factor of
	// stride 0.
	if rep := int(ops.Params[ops.ScaledDotProductAttentionParams](c.Node, c.Opset).KvRepeat); rep > 1 {
		for _, m := range []*sdpaMatrix{&p.k, &p.v} {
			m.bsize, m.bstride = append(m.bsize, rep), append(m.bstride, 0)
		}
	}
	// Output axis i holds the logical axis perm_y[i]: invert it.
	inv := make([]int, r)
	for i, d := range perms[3] {
		inv[d] = i
	}
	if p.y, err = matrix("Y", sdpaLayout(nil, p.out), inv); err != nil {
		return nil, err
	}
	for d := range r - 2 {
		p.entries *= int(ls[0].Shape[perms[0][d]])
	}
	if mask == nil {
		return p, nil
	}
	scores, err := ops.AttentionScores(c.Node, c.Opset, graph.ShapeOf(ls[0].Shape...), graph.ShapeOf(ls[1].Shape...), graph.ShapeOf(ls[2].Shape...))
	if err != nil {
		return nil, c.Errorf("%w", err)
	}
	st, err := ops.AttentionMaskStrides(scores.Ints(), mask)
	if err != nil {
		return nil, c.Errorf("%w", err)
	}
	p.mask = &sdpaMatrix{rows: p.q.rows, cols: p.k.cols, rs: int(st[r-2]), cs: int(st[r-1])}
	for d := range r - 2 {
		p.mask.bsize, p.mask.bstride = append(p.mask.bsize, int(scores[d].Value)), append(p.mask.bstride, int(st[d]))
	}
	return p, nil
}

// sdpaKernel is ScaledDotProductAttention of float32 tensors (float16 ones
// are widened to float32 once and the output rounded once, see halfVia32,
// as the planner's fusion of a float16 attention computes it): for each
// batch entry, the scores scale·q·kᵀ, the mask (sdpaPlan.softmax), each
// row's softmax (float32, the vectorised exp, as Softmax's kernel) times
// v, the division by each row's sum applied to the product, each operand
// read through its permutation where it lies and the result written where
// the output's permutation puts it. With enough queries (sdpaBlocked) the
// products run on the GEMM's micro-kernels over kᵀ and v packed once an
// entry (see sdpaJob); a few queries take sgemm's unpacked products,
// which read the keys in place.
func sdpaKernel(c *Call) error {
	qt, kt, vt := c.Tensor(0), c.Tensor(1), c.Tensor(2)
	if qt == nil || kt == nil || vt == nil {
		return c.Errorf("inputs Q, K and V are required")
	}
	mt := c.Tensor(3)
	var ms []int64
	if mt != nil {
		ms = mt.Shape
	}
	p, err := Memo(c, c.ShapeKey(), func() (*sdpaPlan, error) {
		return newSDPAPlan(c, qt.Shape, kt.Shape, vt.Shape, ms, [3]int{int(qt.NumElements()), int(kt.NumElements()), int(vt.NumElements())})
	})
	if err != nil {
		return err
	}
	params := ops.Params[ops.ScaledDotProductAttentionParams](c.Node, c.Opset)
	scale := params.Scale
	mask := &sdpaMask{hides: params.MaskHides != 0}
	switch {
	case mt == nil:
	case mt.DType == graph.Bool:
		mask.bools = mt.Data
	case mt.DType == graph.Float:
		mask.add = graph.View[float32](mt)
	default:
		return c.Errorf("mask is %s; want bool or the operands' type", mt.DType)
	}
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
		newSDPAJob(p, gemmBest, c.Threads.Workers(), q, k, v, out, scale, mask).start(c.Threads)
		return nil
	}
	sdpaSmall(c.Threads, p, q, k, v, out, scale, mask)
	return nil
}

// sdpaSmall is ScaledDotProductAttention of a few queries: one entry at a
// time, through sgemm.
func sdpaSmall(threads *Threads, p *sdpaPlan, q, k, v, out []float32, scale float32, mask *sdpaMask) {
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
			ta, a, lda := p.q.operand(q, b, qb)
			tb, bm, ldb := p.k.operand(k, b, kb)
			sgemmSerial(ta, tb, M, N, D, scale, a, lda, bm, ldb, 0, scores, N)
			// The exponentials, each row's sum kept to divide the
			// row of the product (Dv elements rather than N).
			p.softmax(mask, scores, b, 0, M, N, inv)
			tv, vm, ldv := p.v.operand(v, b, vb)
			yOff := p.y.offset(b)
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
