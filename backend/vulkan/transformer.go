package vulkan

import (
	"math"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

func init() {
	register("Attention", lowerAttention)
	register("RotaryEmbedding", lowerRotary)
	register("TensorScatter", lowerTensorScatter)
}

// lowerAttention lowers Attention (opsets 23 and 24) to flashattn.comp
// (see flashGeom) or, where that cannot be exact or does not fit,
// attention.comp: one workgroup per query row, its scores in the launch's
// scratch. Either is followed by one dispatch of attention.comp per
// present cache the node outputs. Float16 tensors take the HALF variant
// (see toHalf). Where the softmax_precision is float16 (the default for
// float16 tensors) the softmax's input and output are rounded to it, as
// the CPU rounds them; one of bfloat16 stays on the CPU.
func lowerAttention(q *query) (*launch, bool) {
	n, shapes := q.n, q.shapes
	if q.opset < 23 || len(shapes) < 3 || shapes[1] == nil || shapes[2] == nil {
		return nil, false
	}
	at := func(k int) []int64 {
		if k < len(shapes) {
			return shapes[k]
		}
		return nil
	}
	g, err := ops.AttentionOf(n, q.opset, shapes[0], shapes[1], shapes[2], at(4), at(5), at(3))
	if err != nil || g.PastLen > 0 && at(6) != nil {
		return nil, false
	}
	flags := uint32(g.Mode) << 8
	prec := g.SoftmaxPrecision
	if prec == graph.Undefined {
		prec = q.elems[0]
	}
	switch prec {
	case graph.Float16:
		flags |= 64
	case graph.BFloat16:
		return nil, false
	}
	if g.ThreeD {
		flags |= 1
	}
	if g.Causal {
		flags |= 8
	}
	var mb, mh, mi, keys int64
	bindings := []slot{{false, 0}, {false, 1}, {false, 2}, {false, 0}, {false, 0}, {false, 0}, {false, 0},
		{true, 0}, {true, scratchSlot}, {true, scratchSlot}}
	raw := []int{}
	if m := at(3); m != nil {
		switch q.elems[3] {
		case graph.Bool:
			flags |= 4
		case q.elems[0]:
			// A float mask of Q's type: float32, or float16 that the
			// HALF variant reads.
			flags |= 2
		default:
			return nil, false
		}
		full := append(make([]int64, 4-len(m)), m...)
		for i := range 4 - len(m) {
			full[i] = 1
		}
		st := graph.Strides(full)
		pick := func(i int) int64 {
			if full[i] == 1 {
				return 0
			}
			return st[i]
		}
		mb, mh, mi, keys = pick(0), pick(1), pick(2), full[3]
		bindings[3] = slot{false, 3}
		raw = append(raw, 3)
	}
	if g.PastLen > 0 {
		bindings[4], bindings[5] = slot{false, 4}, slot{false, 5}
	}
	if at(6) != nil {
		if q.elems[6] != graph.Int64 {
			return nil, false
		}
		flags |= 16
		bindings[6] = slot{false, 6}
		raw = append(raw, 6)
	}
	wanted := func(k int) bool { return k < len(n.Outputs) && n.Outputs[k] != "" }
	if wanted(3) {
		flags |= 32
		bindings[8] = slot{true, 3}
	}
	push := func(dim, vdim int, flags uint32) []byte {
		return words(uint32(g.Batch), uint32(g.QHeads), uint32(g.KVHeads), uint32(g.QLen), uint32(g.KVLen), uint32(g.PastLen),
			uint32(dim), uint32(vdim), math.Float32bits(g.ScaleValue), math.Float32bits(g.Softcap), flags,
			uint32(mb), uint32(mh), uint32(mi), uint32(keys))
	}
	rows := int64(g.Batch * g.QHeads * g.QLen)
	total := int64(g.TotalLen)
	ys := []int64{int64(g.Batch), int64(g.QHeads), int64(g.QLen), int64(g.VHeadSize)}
	if g.ThreeD {
		ys = []int64{int64(g.Batch), int64(g.QLen), int64(g.QHeads * g.VHeadSize)}
	}
	main := &launch{shader: "attention", bindings: bindings, push: push(g.HeadSize, g.VHeadSize, flags),
		elems: graph.NumElements(ys), groups: rows, scratch: uint64(4 * rows * total), rawInputs: raw,
		outShapes: [][]int64{ys,
			{int64(g.Batch), int64(g.KVHeads), total, int64(g.HeadSize)},
			{int64(g.Batch), int64(g.KVHeads), total, int64(g.VHeadSize)},
			{int64(g.Batch), int64(g.QHeads), int64(g.QLen), total}}}
	// attention.comp stays where the scores themselves are an output
	// (qk_matmul_output: flashattn.comp never holds a whole row of them),
	// where a head is wider than flashattn.comp's arrays or the device's
	// shared memory is smaller than they are, where a Schedule forces it,
	// and for one query row (a decode step) unless flashattn.comp splits
	// its keys (flash-decoding, on GPUs: see flashGeom.params). Unsplit,
	// the row kernel's 256 invocations a row beat flashattn.comp's 64
	// (lavapipe, 1 query against 2048 keys in 8 heads of 64: 34.5
	// against 49.1 ms; see GPU.md), and both make batch·heads
	// workgroups; split, flashattn.comp makes up to flashWanted, which a
	// GPU needs to stream a long cache through all its compute units. On
	// lavapipe the split is slower than either (TestAttentionTiming), so
	// CPU implementations do not split and keep the row kernel here.
	if !wanted(3) && !q.rowAttention {
		// Q, K, V and Y: [batch, heads, seq, size], or [batch, seq,
		// heads·size] in 3-D.
		layout := func(heads, seq, size int) [4]int64 {
			if g.ThreeD {
				return [4]int64{0, int64(seq * heads * size), int64(size), int64(heads * size)}
			}
			return [4]int64{0, int64(heads * seq * size), int64(seq * size), int64(size)}
		}
		f := &flashGeom{batch: g.Batch, hq: g.QHeads, hkv: g.KVHeads, sq: g.QLen, skv: g.KVLen, past: g.PastLen,
			dim: g.HeadSize, vdim: g.VHeadSize, scale: g.ScaleValue, softcap: g.Softcap, flags: flags &^ 1,
			mb: mb, mh: mh, mi: mi, keys: keys,
			q: layout(g.QHeads, g.QLen, g.HeadSize), v: layout(g.KVHeads, g.KVLen, g.VHeadSize)}
		k, y := layout(g.KVHeads, g.KVLen, g.HeadSize), layout(g.QHeads, g.QLen, g.VHeadSize)
		f.k = [5]int64{k[0], k[1], k[2], k[3], 1}
		f.y = [3]int64{y[1], y[2], y[3]}
		if _, _, _, chunks, ok := f.params(q.caps); ok && (g.QLen > 1 || chunks > 1) {
			f.lower(q.caps, main, bindings[:7])
		}
	}
	// The present caches: OP 1 copies past (binding 4) and the new keys or
	// values (binding 1) into binding 7. It touches neither the scores
	// output nor the scratch: after flashattn.comp, which has no scratch,
	// they are bound to the cache itself.
	for _, c := range []struct{ k, dim int }{{1, g.HeadSize}, {2, g.VHeadSize}} {
		if !wanted(c.k) {
			continue
		}
		unused := slot{true, scratchSlot}
		if main.scratch == 0 {
			unused = slot{true, c.k}
		}
		b := []slot{{false, 0}, {false, c.k}, {false, 0}, {false, 0}, {false, 0}, {false, 0}, {false, 0},
			{true, c.k}, unused, unused}
		if g.PastLen > 0 {
			b[4] = slot{false, c.k + 3}
		}
		main.then = append(main.then, &launch{shader: "attention", op: 1, bindings: b, push: push(c.dim, c.dim, flags&1),
			elems: int64(g.Batch*g.KVHeads) * total * int64(c.dim)})
	}
	return main, true
}

// lowerRotary lowers RotaryEmbedding (opset 23) to rotary.comp.
func lowerRotary(q *query) (*launch, bool) {
	shapes := q.shapes
	if q.opset < 23 || len(shapes) < 3 || shapes[1] == nil || shapes[2] == nil {
		return nil, false
	}
	var pos []int64
	bindings := []slot{{false, 0}, {false, 1}, {false, 2}, {false, 0}, {true, 0}}
	var raw []int
	var flags uint32
	if len(shapes) > 3 && shapes[3] != nil {
		if q.elems[3] != graph.Int64 {
			return nil, false
		}
		pos, flags, bindings[3], raw = shapes[3], 4, slot{false, 3}, []int{3}
	}
	g, err := ops.RotaryOf(q.n, q.opset, shapes[0], shapes[1], shapes[2], pos)
	if err != nil {
		return nil, false
	}
	if g.Interleaved {
		flags |= 1
	}
	if g.ThreeD {
		flags |= 2
	}
	elems := graph.NumElements(shapes[0])
	return &launch{shader: "rotary", bindings: bindings, rawInputs: raw, elems: elems, outShapes: [][]int64{shapes[0]},
		push: words(uint32(elems), uint32(g.Heads), uint32(g.Seq), uint32(g.HeadDim), uint32(g.Rot), flags)}, true
}

// lowerTensorScatter lowers TensorScatter (opset 24) of 32-bit or
// float16 elements to tensorscatter.comp (float16: its HALF variant).
func lowerTensorScatter(q *query) (*launch, bool) {
	shapes, elems := q.shapes, q.elems
	if q.opset < 24 || len(shapes) < 2 || shapes[1] == nil || elems[0] != elems[1] ||
		elems[0].Bits() != 32 && elems[0] != graph.Float16 || len(shapes[0]) != len(shapes[1]) {
		return nil, false
	}
	past, upd := shapes[0], shapes[1]
	axis, circular, err := ops.TensorScatterAxis(q.n, q.opset, len(past))
	if err != nil {
		return nil, false
	}
	for i := range past {
		if i != axis && upd[i] != past[i] || upd[i] > past[i] {
			return nil, false
		}
	}
	bindings := []slot{{false, 0}, {false, 1}, {false, 0}, {true, 0}}
	raw := []int{0, 1}
	var flags uint32
	if circular {
		flags = 1
	}
	if len(shapes) > 2 && shapes[2] != nil {
		if elems[2] != graph.Int64 || graph.NumElements(shapes[2]) != past[0] {
			return nil, false
		}
		flags |= 2
		bindings[2] = slot{false, 2}
		raw = append(raw, 2)
	}
	n := graph.NumElements(past)
	perBatch := graph.NumElements(past[1:axis])
	return &launch{shader: "tensorscatter", bindings: bindings, rawInputs: raw, outTypes: []graph.DType{elems[0]},
		elems: n, outShapes: [][]int64{past},
		push: words(uint32(n), uint32(past[axis]), uint32(upd[axis]), uint32(graph.NumElements(past[axis+1:])), uint32(perBatch), flags)}, true
}
