package ops

import (
	"fmt"
	"math"

	"github.com/onnxvk/onnxvk/graph"
)

// The transformer ops of opsets 23 and 24: Attention, RMSNormalization,
// RotaryEmbedding and TensorScatter. Their attribute and shape rules are
// here once, for inference and for every kernel (AttentionOf, RotaryOf,
// TensorScatterAxis).

func init() {
	setRule(inferAttention, "Attention")
	setRule(inferRMSNorm, "RMSNormalization")
	setRule(inferRotary, "RotaryEmbedding")
	setRule(inferTensorScatter, "TensorScatter")
}

// Attention's qk_matmul_output_mode values: which intermediate the
// optional fourth output holds.
const (
	// QKRaw is the scaled product Q·Kᵀ.
	QKRaw = 0
	// QKSoftcapped is the product after softcap, before the mask.
	QKSoftcapped = 1
	// QKMasked is the product after softcap with the mask's bias added.
	QKMasked = 2
	// QKSoftmax is the softmax of the masked product.
	QKSoftmax = 3
)

// AttentionAttrs are an Attention node's attributes, checked.
type AttentionAttrs struct {
	// QHeads and KVHeads are q_num_heads and kv_num_heads, 0 when absent.
	QHeads, KVHeads int64
	Causal          bool
	// Scale is the scale attribute, NaN when absent (1/sqrt(head size)).
	Scale   float32
	Softcap float32
	// Mode is qk_matmul_output_mode, one of QKRaw to QKSoftmax.
	Mode int64
	// SoftmaxPrecision is the element type of the softmax: Undefined
	// (Q's), Float, Double, Float16 or BFloat16.
	SoftmaxPrecision graph.DType
}

// AttentionAttrsOf reads and checks the attributes of Attention node n
// of a model importing opset.
func AttentionAttrsOf(n *graph.Node, opset int64) (*AttentionAttrs, error) {
	p := Params[AttentionParams](n, opset)
	a := &AttentionAttrs{Causal: p.IsCausal != 0, Scale: float32(math.NaN()), Softcap: p.Softcap, Mode: p.QkMatmulOutputMode}
	if p.QNumHeads != nil {
		a.QHeads = *p.QNumHeads
	}
	if p.KvNumHeads != nil {
		a.KVHeads = *p.KvNumHeads
	}
	if p.SoftmaxPrecision != nil {
		a.SoftmaxPrecision = graph.DType(*p.SoftmaxPrecision)
	}
	if p.Scale != nil {
		a.Scale = *p.Scale
		if !(a.Scale > 0) || math.IsInf(float64(a.Scale), 0) {
			return nil, fmt.Errorf("scale %g must be positive and finite", a.Scale)
		}
	}
	if a.QHeads < 0 || a.KVHeads < 0 {
		return nil, fmt.Errorf("q_num_heads %d and kv_num_heads %d must be positive", a.QHeads, a.KVHeads)
	}
	if a.Softcap < 0 || math.IsNaN(float64(a.Softcap)) {
		return nil, fmt.Errorf("softcap %g must not be negative", a.Softcap)
	}
	if a.Mode < QKRaw || a.Mode > QKSoftmax {
		return nil, fmt.Errorf("qk_matmul_output_mode %d is not 0, 1, 2 or 3", a.Mode)
	}
	switch a.SoftmaxPrecision {
	case graph.Undefined, graph.Float, graph.Double, graph.Float16, graph.BFloat16:
	default:
		return nil, fmt.Errorf("softmax_precision %d is not a float type", int(a.SoftmaxPrecision))
	}
	return a, nil
}

// AttentionGeom is the geometry of one Attention node at concrete shapes.
type AttentionGeom struct {
	*AttentionAttrs
	// ThreeD tells Q, K and V are [batch, seq, heads·size]; else they are
	// [batch, heads, seq, size].
	ThreeD                         bool
	Batch, QHeads, KVHeads         int
	QLen, KVLen, PastLen, TotalLen int
	HeadSize, VHeadSize            int
	// ScaleValue is the scale of Q·Kᵀ, the attribute or 1/sqrt(HeadSize).
	ScaleValue float32
}

// AttentionOf checks the attributes of Attention node n of a model
// importing opset against the
// shapes of Q, K and V and of past_key and past_value (nil when absent)
// and returns the geometry. maskShape, when not nil, is attn_mask's
// shape, which must broadcast to [batch, q heads, q length, ≤ total
// length] (a shorter last axis masks the keys past it).
func AttentionOf(n *graph.Node, opset int64, q, k, v, pastK, pastV, maskShape []int64) (*AttentionGeom, error) {
	a, err := AttentionAttrsOf(n, opset)
	if err != nil {
		return nil, err
	}
	g := &AttentionGeom{AttentionAttrs: a}
	if len(q) != len(k) || len(q) != len(v) || len(q) != 3 && len(q) != 4 {
		return nil, fmt.Errorf("Q%v, K%v and V%v must all be 3-D or all 4-D", q, k, v)
	}
	if (pastK == nil) != (pastV == nil) {
		return nil, fmt.Errorf("past_key and past_value must be given together")
	}
	g.Batch = int(q[0])
	if k[0] != q[0] || v[0] != q[0] {
		return nil, fmt.Errorf("batch sizes of Q%v, K%v and V%v differ", q, k, v)
	}
	if len(q) == 3 {
		g.ThreeD = true
		if a.QHeads == 0 || a.KVHeads == 0 {
			return nil, fmt.Errorf("3-D Q, K and V need q_num_heads and kv_num_heads")
		}
		g.QHeads, g.KVHeads = int(a.QHeads), int(a.KVHeads)
		if q[2]%a.QHeads != 0 || k[2]%a.KVHeads != 0 || v[2]%a.KVHeads != 0 {
			return nil, fmt.Errorf("hidden sizes of Q%v, K%v, V%v are not multiples of q_num_heads %d and kv_num_heads %d",
				q, k, v, a.QHeads, a.KVHeads)
		}
		g.QLen, g.KVLen = int(q[1]), int(k[1])
		g.HeadSize, g.VHeadSize = int(q[2]/a.QHeads), int(v[2]/a.KVHeads)
		if k[2]/a.KVHeads != q[2]/a.QHeads {
			return nil, fmt.Errorf("head sizes of Q%v and K%v differ", q, k)
		}
		if v[1] != k[1] {
			return nil, fmt.Errorf("sequence lengths of K%v and V%v differ", k, v)
		}
	} else {
		g.QHeads, g.KVHeads = int(q[1]), int(k[1])
		if a.QHeads != 0 && a.QHeads != q[1] || a.KVHeads != 0 && a.KVHeads != k[1] {
			return nil, fmt.Errorf("q_num_heads %d and kv_num_heads %d do not match Q%v and K%v", a.QHeads, a.KVHeads, q, k)
		}
		g.QLen, g.KVLen, g.HeadSize, g.VHeadSize = int(q[2]), int(k[2]), int(q[3]), int(v[3])
		if k[3] != q[3] || v[1] != k[1] || v[2] != k[2] {
			return nil, fmt.Errorf("Q%v, K%v and V%v do not agree on heads, lengths and head size", q, k, v)
		}
	}
	if g.KVHeads == 0 || g.QHeads%g.KVHeads != 0 {
		return nil, fmt.Errorf("%d query heads are not a multiple of %d key/value heads", g.QHeads, g.KVHeads)
	}
	if pastK != nil {
		if len(pastK) != 4 || len(pastV) != 4 || pastK[0] != int64(g.Batch) || pastK[1] != int64(g.KVHeads) ||
			pastK[3] != int64(g.HeadSize) || pastV[0] != int64(g.Batch) || pastV[1] != int64(g.KVHeads) ||
			pastV[2] != pastK[2] || pastV[3] != int64(g.VHeadSize) {
			return nil, fmt.Errorf("past_key%v and past_value%v do not match [%d %d past %d] and [%d %d past %d]",
				pastK, pastV, g.Batch, g.KVHeads, g.HeadSize, g.Batch, g.KVHeads, g.VHeadSize)
		}
		g.PastLen = int(pastK[2])
	}
	g.TotalLen = g.PastLen + g.KVLen
	if g.HeadSize == 0 || g.QLen == 0 || g.TotalLen == 0 {
		return nil, fmt.Errorf("empty head size, query or key length in Q%v, K%v", q, k)
	}
	g.ScaleValue = a.Scale
	if math.IsNaN(float64(a.Scale)) {
		g.ScaleValue = float32(1 / math.Sqrt(float64(g.HeadSize)))
	}
	if maskShape != nil {
		if len(maskShape) == 0 || len(maskShape) > 4 {
			return nil, fmt.Errorf("attn_mask%v must have rank 1 to 4", maskShape)
		}
		want := []int64{int64(g.Batch), int64(g.QHeads), int64(g.QLen)}
		r := len(maskShape)
		for i := 0; i < r-1; i++ {
			if d, w := maskShape[i], want[4-r+i]; d != 1 && d != w {
				return nil, fmt.Errorf("attn_mask%v does not broadcast to [%d %d %d %d]", maskShape, g.Batch, g.QHeads, g.QLen, g.TotalLen)
			}
		}
		if last := maskShape[r-1]; last < 1 || last > int64(g.TotalLen) {
			return nil, fmt.Errorf("attn_mask%v: last axis must hold 1 to %d keys", maskShape, g.TotalLen)
		}
	}
	return g, nil
}

// inferAttention is Attention: Y [batch, q heads, q length, v head size]
// (3-D: [batch, q length, q heads·v head size]), present_key and
// present_value [batch, kv heads, past + kv length, head size], and
// qk_matmul_output [batch, q heads, q length, past + kv length].
func inferAttention(c *InferContext) error {
	a, err := AttentionAttrsOf(c.Node, c.Opset)
	if err != nil {
		return err
	}
	if c.has(4) != c.has(5) {
		return fmt.Errorf("past_key and past_value must be given together")
	}
	if c.has(6) && c.has(4) {
		return fmt.Errorf("nonpad_kv_seqlen cannot be used with past_key and past_value")
	}
	dt, vt := c.inElem(0), c.inElem(2)
	qs, ks, vs := c.inShape(0), c.inShape(1), c.inShape(2)
	rank := 0
	for _, s := range []graph.Shape{qs, ks, vs} {
		if s == nil {
			continue
		}
		if rank != 0 && len(s) != rank || len(s) != 3 && len(s) != 4 {
			return fmt.Errorf("Q, K and V must all be 3-D or all 4-D, not %v, %v, %v", qs, ks, vs)
		}
		rank = len(s)
	}
	if rank == 3 && (a.QHeads == 0 || a.KVHeads == 0) {
		return fmt.Errorf("3-D Q, K and V need q_num_heads and kv_num_heads")
	}
	dim := func(s graph.Shape, i int) graph.Dim {
		if s == nil {
			return graph.UnknownDim()
		}
		return s[i]
	}
	batch := dim(qs, 0)
	var qHeads, kvHeads, qLen, kvLen, vHead graph.Dim
	if rank == 3 {
		qHeads, kvHeads = graph.DimOf(a.QHeads), graph.DimOf(a.KVHeads)
		qLen, kvLen = dim(qs, 1), dim(ks, 1)
		vHead = dimDiv(dim(vs, 2), a.KVHeads)
	} else {
		qHeads, kvHeads, qLen, kvLen, vHead = dim(qs, 1), dim(ks, 1), dim(qs, 2), dim(ks, 2), dim(vs, 3)
	}
	head := graph.UnknownDim()
	switch {
	case rank == 4:
		head = dim(qs, 3)
	case rank == 3:
		head = dimDiv(dim(qs, 2), a.QHeads)
	}
	if qHeads.Known() && kvHeads.Known() && (kvHeads.Value == 0 || qHeads.Value%kvHeads.Value != 0) {
		return fmt.Errorf("%d query heads are not a multiple of %d key/value heads", qHeads.Value, kvHeads.Value)
	}
	past := graph.DimOf(0)
	if c.has(4) {
		past = graph.UnknownDim()
		if ps := c.inShape(4); ps != nil {
			if len(ps) != 4 {
				return fmt.Errorf("past_key%v must be 4-D", ps)
			}
			past = ps[2]
		}
	}
	total := dimAdd(past, kvLen)
	if rank == 0 {
		c.setTensor(0, dt, nil)
	} else if rank == 3 {
		c.setTensor(0, dt, graph.Shape{batch, qLen, dimMul(qHeads, vHead)})
	} else {
		c.setTensor(0, dt, graph.Shape{batch, qHeads, qLen, vHead})
	}
	c.setTensor(1, dt, graph.Shape{batch, kvHeads, total, head})
	c.setTensor(2, vt, graph.Shape{batch, kvHeads, total, vHead})
	c.setTensor(3, dt, graph.Shape{batch, qHeads, qLen, total})
	return nil
}

// dimDiv divides a dimension by a positive constant: known if d is.
func dimDiv(d graph.Dim, k int64) graph.Dim {
	if d.Known() && k > 0 {
		return graph.DimOf(d.Value / k)
	}
	return graph.UnknownDim()
}

// inferRMSNorm is RMSNormalization: Y has X's shape and scale's type.
func inferRMSNorm(c *InferContext) error {
	xs := c.inShape(0)
	if xs != nil {
		if _, err := normAxis(Params[RMSNormalizationParams](c.Node, c.Opset).Axis, len(xs)); err != nil {
			return err
		}
	}
	dt := c.inElem(1)
	if dt == graph.Undefined {
		dt = c.inElem(0)
	}
	c.setTensor(0, dt, xs.Clone())
	return nil
}

// RotaryGeom is the geometry of one RotaryEmbedding node at concrete
// shapes, with X seen as [batch, heads, seq, head size] (4-D) or [batch,
// seq, heads, head size] (3-D).
type RotaryGeom struct {
	ThreeD                     bool
	Batch, Heads, Seq, HeadDim int
	// Rot is the number of rotated leading elements of each head.
	Rot         int
	Interleaved bool
}

// RotaryOf checks RotaryEmbedding node n of a model importing opset
// against the shapes of X, of the cos and sin caches and of position_ids
// (nil when absent).
func RotaryOf(n *graph.Node, opset int64, x, cos, sin, pos []int64) (*RotaryGeom, error) {
	p := Params[RotaryEmbeddingParams](n, opset)
	g := &RotaryGeom{Interleaved: p.Interleaved != 0}
	switch len(x) {
	case 4:
		g.Batch, g.Heads, g.Seq, g.HeadDim = int(x[0]), int(x[1]), int(x[2]), int(x[3])
	case 3:
		var heads int64
		if p.NumHeads != nil {
			heads = *p.NumHeads
		}
		if heads <= 0 || x[2]%heads != 0 {
			return nil, fmt.Errorf("3-D input%v needs num_heads dividing its last axis (num_heads %d)", x, heads)
		}
		g.ThreeD = true
		g.Batch, g.Seq, g.Heads, g.HeadDim = int(x[0]), int(x[1]), int(heads), int(x[2]/heads)
	default:
		return nil, fmt.Errorf("input%v must be 3-D or 4-D", x)
	}
	g.Rot = int(p.RotaryEmbeddingDim)
	if g.Rot == 0 {
		g.Rot = g.HeadDim
	}
	if g.Rot < 0 || g.Rot > g.HeadDim || g.Rot%2 != 0 {
		return nil, fmt.Errorf("rotary_embedding_dim %d must be even and at most the head size %d", g.Rot, g.HeadDim)
	}
	want := []int64{int64(g.Batch), int64(g.Seq), int64(g.Rot / 2)}
	if pos != nil {
		if len(pos) != 2 || pos[0] != want[0] || pos[1] != want[1] {
			return nil, fmt.Errorf("position_ids%v must be [%d %d]", pos, g.Batch, g.Seq)
		}
	}
	for _, cache := range [][]int64{cos, sin} {
		ok := len(cache) == 3 && cache[0] == want[0] && cache[1] == want[1] && cache[2] == want[2]
		if pos != nil {
			ok = len(cache) == 2 && cache[1] == want[2]
		}
		if !ok {
			return nil, fmt.Errorf("cos_cache%v and sin_cache%v must be [positions %d] with position_ids, [%d %d %d] without",
				cos, sin, want[2], want[0], want[1], want[2])
		}
	}
	return g, nil
}

// inferRotary is RotaryEmbedding: Y like X.
func inferRotary(c *InferContext) error {
	if h := Params[RotaryEmbeddingParams](c.Node, c.Opset).NumHeads; len(c.inShape(0)) == 3 && (h == nil || *h <= 0) {
		return fmt.Errorf("3-D input needs num_heads")
	}
	return passThrough(c)
}

// TensorScatterAxis returns the sequence axis of TensorScatter node n of
// a model importing opset for caches of the given rank and whether its
// mode is circular.
func TensorScatterAxis(n *graph.Node, opset int64, rank int) (axis int, circular bool, err error) {
	p := Params[TensorScatterParams](n, opset)
	switch m := p.Mode; m {
	case "linear":
	case "circular":
		circular = true
	default:
		return 0, false, fmt.Errorf("mode %q is not linear or circular", m)
	}
	axis, err = normAxis(p.Axis, rank)
	if err == nil && axis == 0 {
		err = fmt.Errorf("axis %d is the batch axis", p.Axis)
	}
	return axis, circular, err
}

// inferTensorScatter is TensorScatter: present_cache like past_cache.
func inferTensorScatter(c *InferContext) error {
	if ps := c.inShape(0); ps != nil {
		if _, _, err := TensorScatterAxis(c.Node, c.Opset, len(ps)); err != nil {
			return err
		}
	}
	return passThrough(c)
}
