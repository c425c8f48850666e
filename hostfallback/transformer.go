package hostfallback

import (
	"math"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// The transformer ops of opsets 23 and 24 (Attention, RMSNormalization,
// RotaryEmbedding, TensorScatter). Float types compute in float32.

func init() {
	Register("Attention", attentionKernel)
	Register("RMSNormalization", rmsNormKernel)
	Register("RotaryEmbedding", rotaryKernel)
	Register("TensorScatter", tensorScatterKernel)
}

// shapeOf returns the shape of input i, nil when it is absent.
func shapeOf(c *Call, i int) []int64 {
	if t := c.Tensor(i); t != nil {
		return t.Shape
	}
	return nil
}

// floatIn returns input i, which must be of the f32Family, as float32s.
func floatIn(c *Call, i int, name string) (*graph.Tensor, []float32, error) {
	t := c.Tensor(i)
	if t == nil {
		return nil, nil, c.Errorf("input %s is required", name)
	}
	if !f32Family(t.DType) {
		return nil, nil, c.Unsupported("%s of %s", name, t.DType)
	}
	return t, f32Data(t), nil
}

// rmsNormKernel is RMSNormalization: X divided by the root of the mean of
// its squares over the axes from axis on (plus epsilon), times scale
// (broadcast to those axes); Y has scale's type.
func rmsNormKernel(c *Call) error {
	x, xv, err := floatIn(c, 0, "X")
	if err != nil {
		return err
	}
	st, sv, err := floatIn(c, 1, "scale")
	if err != nil {
		return err
	}
	p := ops.NormalizationOf(c.Node, c.Opset)
	axis, err := resolveAxis(c, p.Axis, x.Rank())
	if err != nil {
		return err
	}
	if stash := graph.DType(p.StashType); stash != graph.Float {
		return c.Unsupported("stash_type %s", stash)
	}
	norm := x.Shape[axis:]
	scale, ok := normBroadcast(sv, st.Shape, norm)
	if !ok {
		return c.Errorf("scale%v does not broadcast to %v", st.Shape, norm)
	}
	size := int(graph.NumElements(norm))
	rows := int(graph.NumElements(x.Shape[:axis]))
	eps := float64(p.Epsilon)
	y := c.OutputUninit(0, st.DType, x.Shape)
	out := f32Target(y)
	c.Threads.For(rows, max(1, 8192/max(size, 1)), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			row := xv[r*size : (r+1)*size]
			var sq float64
			for _, v := range row {
				sq += float64(v) * float64(v)
			}
			inv := float32(1 / math.Sqrt(sq/float64(size)+eps))
			dst := out[r*size : (r+1)*size]
			for i, v := range row {
				dst[i] = v * inv * scale[i]
			}
		}
	})
	f32Commit(y, out)
	return nil
}

// rotaryKernel is RotaryEmbedding: the first rotary_embedding_dim elements
// of each head rotated pairwise by the angles of the cos and sin caches
// (indexed by position_ids, or given per batch and position), the pairs
// being the two halves of them or, interleaved, neighbours.
func rotaryKernel(c *Call) error {
	x, xv, err := floatIn(c, 0, "X")
	if err != nil {
		return err
	}
	_, cos, err := floatIn(c, 1, "cos_cache")
	if err != nil {
		return err
	}
	_, sin, err := floatIn(c, 2, "sin_cache")
	if err != nil {
		return err
	}
	g, err := ops.RotaryOf(c.Node, c.Opset, x.Shape, shapeOf(c, 1), shapeOf(c, 2), shapeOf(c, 3))
	if err != nil {
		return c.Errorf("%w", err)
	}
	half := g.Rot / 2
	var pos []int64
	if pt := c.Tensor(3); pt != nil {
		if pos, err = pt.Int64s(); err != nil {
			return c.Errorf("position_ids: %w", err)
		}
		limit := int64(len(cos) / half)
		for _, p := range pos {
			if p < 0 || p >= limit {
				return c.Errorf("position id %d outside the caches' %d positions", p, limit)
			}
		}
	}
	y := c.OutputUninit(0, x.DType, x.Shape)
	out := f32Target(y)
	copy(out, xv)
	// Head (b, h) at position s starts at base(b, h, s).
	hStride, sStride := g.Seq*g.HeadDim, g.HeadDim
	if g.ThreeD {
		hStride, sStride = g.HeadDim, g.Heads*g.HeadDim
	}
	c.Threads.For(g.Batch*g.Seq, max(1, 4096/max(g.Heads*g.Rot, 1)), func(lo, hi int) {
		for bs := lo; bs < hi; bs++ {
			b, s := bs/g.Seq, bs%g.Seq
			row := bs
			if pos != nil {
				row = int(pos[bs])
			}
			cr, sr := cos[row*half:(row+1)*half], sin[row*half:(row+1)*half]
			for h := range g.Heads {
				base := b*g.Heads*g.Seq*g.HeadDim + h*hStride + s*sStride
				src, dst := xv[base:base+g.Rot], out[base:base+g.Rot]
				for i := range half {
					i1, i2 := i, i+half
					if g.Interleaved {
						i1, i2 = 2*i, 2*i+1
					}
					x1, x2 := src[i1], src[i2]
					dst[i1] = cr[i]*x1 - sr[i]*x2
					dst[i2] = sr[i]*x1 + cr[i]*x2
				}
			}
		}
	})
	f32Commit(y, out)
	return nil
}

// tensorScatterKernel is TensorScatter: past_cache with, for each batch
// entry b, update's sequence written along axis from write_indices[b]
// (0 without them), wrapping around in circular mode.
func tensorScatterKernel(c *Call) error {
	past, upd := c.Tensor(0), c.Tensor(1)
	if past == nil || upd == nil {
		return c.Errorf("inputs past_cache and update are required")
	}
	axis, circular, err := ops.TensorScatterAxis(c.Node, c.Opset, past.Rank())
	if err != nil {
		return c.Errorf("%w", err)
	}
	if past.DType != graph.String && past.DType.Bits() < 8 {
		return c.Unsupported("past_cache of %s", past.DType)
	}
	if upd.DType != past.DType || upd.Rank() != past.Rank() {
		return c.Errorf("update %s%v does not fit past_cache %s%v", upd.DType, upd.Shape, past.DType, past.Shape)
	}
	for i, d := range past.Shape {
		if i != axis && upd.Shape[i] != d || i == axis && upd.Shape[i] > d {
			return c.Errorf("update%v does not fit past_cache%v along axis %d", upd.Shape, past.Shape, axis)
		}
	}
	batch := int(past.Shape[0])
	idx := make([]int64, batch)
	if wt := c.Tensor(2); wt != nil {
		if idx, err = wt.Int64s(); err != nil || len(idx) != batch {
			return c.Errorf("write_indices%v must hold %d indices", wt.Shape, batch)
		}
	}
	maxLen, seq := past.Shape[axis], upd.Shape[axis]
	for b, w := range idx {
		if w < 0 || !circular && w+seq > maxLen {
			return c.Errorf("write index %d of batch %d with %d updates overflows the %d positions of axis %d", w, b, seq, maxLen, axis)
		}
	}
	y := c.OutputUninit(0, past.DType, past.Shape)
	if past.DType == graph.String {
		copy(y.Strings, past.Strings)
	} else {
		copy(y.Data, past.Data)
	}
	// Rows of inner elements, prefix by prefix: the prefix's first index
	// is its batch entry, which perBatch prefixes share.
	inner := graph.NumElements(past.Shape[axis+1:])
	prefixes := graph.NumElements(past.Shape[:axis])
	perBatch := graph.NumElements(past.Shape[1:axis])
	es := int64(past.DType.Bits() / 8)
	for p := range prefixes {
		w := idx[p/perBatch]
		for s := range seq {
			at := (w + s) % maxLen
			src, dst := (p*seq+s)*inner, (p*maxLen+at)*inner
			if past.DType == graph.String {
				copy(y.Strings[dst:dst+inner], upd.Strings[src:src+inner])
			} else {
				copy(y.Data[dst*es:(dst+inner)*es], upd.Data[src*es:(src+inner)*es])
			}
		}
	}
	return nil
}
