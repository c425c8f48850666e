package hostfallback

import (
	"math"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// attentionKernel is Attention (opsets 23 and 24), as ONNX 1.19's
// reference implements it with the errata of the ONNX main branch, which
// ONNX Runtime follows: for each query head h (sharing key/value head
// h/(q heads/kv heads)), scores S = scale·Q·Kᵀ over the past and new keys,
// softcap c·tanh(S/c) when softcap > 0, then the bias: attn_mask (bool:
// false masks; float: added; a last axis shorter than the keys masks the
// rest), is_causal (query i sees key j ≤ i + offset, offset the past
// length, or nonpad_kv_seqlen − q length without a past) and
// nonpad_kv_seqlen (keys from it on masked); softmax, a row whose bias is
// −inf everywhere giving zeros; Y = P·V. qk_matmul_output holds S (mode
// 0), the softcapped S (1), plus the bias (2) or P (3).
func attentionKernel(c *Call) error {
	qt, qv, err := floatIn(c, 0, "Q")
	if err != nil {
		return err
	}
	kt, kv, err := floatIn(c, 1, "K")
	if err != nil {
		return err
	}
	vt, vv, err := floatIn(c, 2, "V")
	if err != nil {
		return err
	}
	mask := c.Tensor(3)
	var maskShape []int64
	if mask != nil {
		if mask.DType != graph.Bool && !f32Family(mask.DType) {
			return c.Unsupported("attn_mask of %s", mask.DType)
		}
		maskShape = mask.Shape
	}
	var pastK, pastV []float32
	if c.Tensor(4) != nil || c.Tensor(5) != nil {
		if _, pastK, err = floatIn(c, 4, "past_key"); err != nil {
			return err
		}
		if _, pastV, err = floatIn(c, 5, "past_value"); err != nil {
			return err
		}
	}
	g, err := ops.AttentionOf(c.Node, c.Opset, qt.Shape, kt.Shape, vt.Shape, shapeOf(c, 4), shapeOf(c, 5), maskShape)
	if err != nil {
		return c.Errorf("%w", err)
	}
	var nonpad []int64
	if nt := c.Tensor(6); nt != nil {
		if pastK != nil {
			return c.Errorf("nonpad_kv_seqlen cannot be used with past_key and past_value")
		}
		if nonpad, err = nt.Int64s(); err != nil || len(nonpad) != g.Batch {
			return c.Errorf("nonpad_kv_seqlen%v must hold %d lengths", nt.Shape, g.Batch)
		}
		for b, n := range nonpad {
			if n < 0 || n > int64(g.TotalLen) {
				return c.Errorf("nonpad_kv_seqlen[%d] = %d outside [0, %d]", b, n, g.TotalLen)
			}
		}
	}
	B, Hq, Hkv, Sq, T, D, Dv := g.Batch, g.QHeads, g.KVHeads, g.QLen, g.TotalLen, g.HeadSize, g.VHeadSize

	// The present key and value caches, [B, Hkv, T, D|Dv]: the past, then
	// K and V (from [B, S, Hkv·D] when 3-D).
	presentK := attentionCache(c, 1, kt.DType, []int64{int64(B), int64(Hkv), int64(T), int64(D)})
	presentV := attentionCache(c, 2, vt.DType, []int64{int64(B), int64(Hkv), int64(T), int64(Dv)})
	fillCache(c.Threads, presentK.v, pastK, kv, B, Hkv, g.PastLen, g.KVLen, D, g.ThreeD)
	fillCache(c.Threads, presentV.v, pastV, vv, B, Hkv, g.PastLen, g.KVLen, Dv, g.ThreeD)

	y := c.OutputUninit(0, qt.DType, attentionYShape(g))
	yv := f32Target(y)
	var qk *graph.Tensor
	var qkv []float32
	if outputWanted(c, 3) {
		qk = c.OutputUninit(3, qt.DType, []int64{int64(B), int64(Hq), int64(Sq), int64(T)})
		qkv = f32Target(qk)
	}
	bias := attentionBias(c, g, mask, nonpad)

	// Q head (b, h) row i starts at qOff + i·qRow; Y likewise.
	qRow, yRow := D, Dv
	if g.ThreeD {
		qRow, yRow = Hq*D, Hq*Dv
	}
	group := Hq / Hkv
	// The softmax runs at softmax_precision, by default Q's type.
	prec := g.SoftmaxPrecision
	if prec == graph.Undefined {
		prec = qt.DType
	}
	c.Threads.For(B*Hq, 1, func(lo, hi int) {
		scores := make([]float32, Sq*T)
		for bh := lo; bh < hi; bh++ {
			b, h := bh/Hq, bh%Hq
			kvh := b*Hkv + h/group
			qOff, yOff := bh*Sq*D, bh*Sq*Dv
			if g.ThreeD {
				qOff, yOff = b*Sq*Hq*D+h*D, b*Sq*Hq*Dv+h*Dv
			}
			sgemmSerial(false, true, Sq, T, D, g.ScaleValue, qv[qOff:], qRow, presentK.v[kvh*T*D:], D, 0, scores, T)
			record := func(mode int64) {
				if qkv != nil && g.Mode == mode {
					copy(qkv[bh*Sq*T:(bh+1)*Sq*T], scores)
				}
			}
			record(ops.QKRaw)
			if sc := g.Softcap; sc > 0 {
				for i, s := range scores {
					scores[i] = sc * float32(math.Tanh(float64(s/sc)))
				}
			}
			record(ops.QKSoftcapped)
			masked := bias.apply(scores, b, h)
			record(ops.QKMasked)
			for i := range Sq {
				row := scores[i*T : (i+1)*T]
				if masked[i] {
					clear(row)
					continue
				}
				roundTo(row, prec)
				softmaxRow(smSoft, row, row)
				roundTo(row, prec)
			}
			record(ops.QKSoftmax)
			sgemmSerial(false, false, Sq, Dv, T, 1, scores, T, presentV.v[kvh*T*Dv:], Dv, 0, yv[yOff:], yRow)
		}
	})
	f32Commit(y, yv)
	if qk != nil {
		f32Commit(qk, qkv)
	}
	presentK.commit()
	presentV.commit()
	return nil
}

// attentionYShape is the shape of Attention's Y.
func attentionYShape(g *ops.AttentionGeom) []int64 {
	if g.ThreeD {
		return []int64{int64(g.Batch), int64(g.QLen), int64(g.QHeads * g.VHeadSize)}
	}
	return []int64{int64(g.Batch), int64(g.QHeads), int64(g.QLen), int64(g.VHeadSize)}
}

// cache is a present key or value cache as float32s: output k's storage
// when the node has that output, else scratch.
type cache struct {
	t *graph.Tensor
	v []float32
}

func attentionCache(c *Call, k int, dt graph.DType, shape []int64) cache {
	if outputWanted(c, k) {
		t := c.OutputUninit(k, dt, shape)
		return cache{t, f32Target(t)}
	}
	return cache{v: make([]float32, graph.NumElements(shape))}
}

// commit stores the values of an output cache into its tensor.
func (c cache) commit() {
	if c.t != nil {
		f32Commit(c.t, c.v)
	}
}

// fillCache writes dst, [B, H, past+n, d], from past ([B, H, past, d],
// may be nil when past is 0) and x ([B, H, n, d], or [B, n, H·d] when
// threeD).
func fillCache(threads *Threads, dst, past, x []float32, B, H, pastLen, n, d int, threeD bool) {
	T := pastLen + n
	threads.For(B*H, max(1, 4096/max(T*d, 1)), func(lo, hi int) {
		for bh := lo; bh < hi; bh++ {
			out := dst[bh*T*d : (bh+1)*T*d]
			copy(out, past[bh*pastLen*d:(bh+1)*pastLen*d])
			out = out[pastLen*d:]
			if !threeD {
				copy(out, x[bh*n*d:(bh+1)*n*d])
				continue
			}
			b, h := bh/H, bh%H
			for s := range n {
				copy(out[s*d:(s+1)*d], x[(b*n+s)*H*d+h*d:])
			}
		}
	})
}

// attnBias is the additive bias of one Attention call: attn_mask,
// is_causal and nonpad_kv_seqlen combined.
type attnBias struct {
	g *ops.AttentionGeom
	// mask holds a float mask's values, or the bool mask as 0 and −inf;
	// nil without a mask. Element (b, h, i, j) is at
	// b·sb + h·sh + i·si + j, for j < keys.
	mask       []float32
	sb, sh, si int
	keys       int
	nonpad     []int64
}

func attentionBias(c *Call, g *ops.AttentionGeom, mask *graph.Tensor, nonpad []int64) *attnBias {
	a := &attnBias{g: g, nonpad: nonpad}
	if mask == nil {
		return a
	}
	if mask.DType == graph.Bool {
		a.mask = make([]float32, len(mask.Data))
		for i, v := range mask.Data {
			if v == 0 {
				a.mask[i] = float32(math.Inf(-1))
			}
		}
	} else {
		a.mask = f32Data(mask)
	}
	// Right-align the mask's shape on [B, Hq, Sq, keys].
	full := make([]int64, 4)
	copy(full[4-len(mask.Shape):], mask.Shape)
	for i := range 4 - len(mask.Shape) {
		full[i] = 1
	}
	st := graph.Strides(full)
	pick := func(i int) int {
		if full[i] == 1 {
			return 0
		}
		return int(st[i])
	}
	a.sb, a.sh, a.si, a.keys = pick(0), pick(1), pick(2), int(full[3])
	return a
}

// apply adds the bias of query head h of batch entry b to its scores
// [Sq, T] and reports, per row, whether every key is masked (−inf).
func (a *attnBias) apply(scores []float32, b, h int) []bool {
	g := a.g
	T := g.TotalLen
	masked := make([]bool, g.QLen)
	inf := float32(math.Inf(-1))
	valid := T
	offset := g.PastLen
	if a.nonpad != nil {
		valid = int(a.nonpad[b])
		offset = valid - g.QLen
	}
	for i := range g.QLen {
		row := scores[i*T : (i+1)*T]
		all := true
		for j := range row {
			var v float32
			switch {
			case a.mask != nil && j >= a.keys, j >= valid, g.Causal && j > i+offset:
				v = inf
			case a.mask != nil:
				v = a.mask[b*a.sb+h*a.sh+i*a.si+j]
			}
			all = all && math.IsInf(float64(v), -1)
			row[j] += v
		}
		masked[i] = all
	}
	return masked
}

// roundTo rounds v to the precision of dt when it is float16 or bfloat16.
func roundTo(v []float32, dt graph.DType) {
	if dt != graph.Float16 && dt != graph.BFloat16 {
		return
	}
	for i, x := range v {
		v[i] = roundFloat(x, dt)
	}
}

// roundFloat rounds x to float16 or bfloat16 when dt is one of them.
func roundFloat(x float32, dt graph.DType) float32 {
	switch dt {
	case graph.Float16:
		return f16ToF32(f32ToF16(x))
	case graph.BFloat16:
		return graph.BFloat16ToFloat32(graph.Float32ToBFloat16(x))
	}
	return x
}
