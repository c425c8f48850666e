package vulkan

import (
	"math"
	"math/bits"
	"slices"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

func init() {
	registerFused("ScaledDotProductAttention", lowerSDPA)
}

// flashattn.comp's limits: the widest head it takes, the most query rows
// of a workgroup (of 64 invocations), and the floats of its shared arrays
// (the query tile, the key or value tile, the scores), which the device's
// shared memory must hold.
const (
	flashMaxHead  = 128
	flashMaxRows  = 16
	flashKVFloats = 4096
	flashScores   = 1024
	flashShared   = 4 * (flashMaxRows*(flashMaxHead+1) + flashKVFloats + flashScores)
	// flashDirectKeys is the key tile of a workgroup of one query row.
	flashDirectKeys = 256
	// flashWG is the shader's workgroup size; flashWideWG that of its GPU
	// configuration (the SUBGROUP variant's specialization constant 1),
	// whose dot groups have at most flashMaxGroup lanes (the shader keeps
	// their log2 in two bits).
	flashWG       = 64
	flashWideWG   = 256
	flashMaxGroup = 8
)

// flashattn.comp's OP bits: the split pass of flash-decoding and the
// dispatch that combines its chunks.
const (
	flashSplit   = 1
	flashCombine = 2
)

// Flash-decoding (see flashChunks): flashWanted is the workgroups a split
// attention aims at (about two per compute unit of a large GPU, as
// convWanted: Vulkan has no core count to read), flashChunkKeys the
// fewest keys of a chunk, so that each workgroup's walk outweighs its
// share of the combining pass.
const (
	flashWanted    = 256
	flashChunkKeys = 256
)

// flashChunks returns the key tiles per chunk of flash-decoding for items
// workgroups of one query tile per (batch, head) with tiles of tk keys
// over total keys, and the number of chunks; 0 and 1 where the keys stay
// whole (also for no items, an empty batch). It splits when the
// workgroups are too few to fill a GPU (flashWanted) and the keys make at
// least two chunks of flashChunkKeys (rounded up to whole tiles): into
// about flashWanted/items chunks, fewer where they would be shorter.
func flashChunks(items, total, tk int) (per, chunks int) {
	if items < 1 || items >= flashWanted {
		return 0, 1
	}
	want := (flashWanted + items - 1) / items
	tiles := max((flashChunkKeys+tk-1)/tk, ((total+want-1)/want+tk-1)/tk)
	chunks = (total + tiles*tk - 1) / (tiles * tk)
	if chunks < 2 || tiles > 0xffff {
		return 0, 1
	}
	return tiles, chunks
}

// flashTile is a configuration of flashattn.comp: the invocations of a
// workgroup (flashWG, or flashWideWG on the SUBGROUP variant), its query
// rows, the keys of a tile and the lanes of a dot group.
type flashTile struct {
	wg, tq, tk, group int
}

// flashTiles returns flashattn.comp's configuration for heads (batch
// entries times query heads) of sq query rows of dim (queries and keys)
// and vdim (values) elements; ok is false when the kernel cannot take
// them on a device with caps c.
//
// The query rows of a workgroup are the power of 2 at or above sq, at
// most flashMaxRows (a decode step's one row gets all 64 invocations),
// the keys of a tile as many as the shared arrays hold, at most 64
// (flashDirectKeys for one row, which reads K and V where they lie), a
// dot group one lane: lavapipe's timings chose these. With
// caps.wideAttention (GPUs), more than one row takes the SUBGROUP
// variant, for a GPU's thousands of resident invocations: flashWideWG
// invocations, and where sq makes more than one tile, the rows halved
// while the workgroups (heads times tiles) are fewer than flashWanted,
// but not below 2 rows nor to more lanes a row than the power of 2 at or
// above vdim (beyond which lanes idle as values are added); then the dot
// group doubled, up to flashMaxGroup and the subgroup, while a row's
// lanes still score a whole tile at once. BERT-base (12 heads of 64, 128
// rows) so gets 384 workgroups of 4 rows of 64 lanes (against 96 of 64
// invocations), each lane scoring one key a tile.
func flashTiles(c caps, heads, sq, dim, vdim int) (t flashTile, ok bool) {
	if dim > flashMaxHead || vdim > flashMaxHead || c.sharedMem < flashShared {
		return flashTile{}, false
	}
	t = flashTile{wg: flashWG, tq: 1, group: 1}
	for t.tq < sq && t.tq < flashMaxRows {
		t.tq *= 2
	}
	if t.tq == 1 {
		t.tk = flashDirectKeys
		return t, true
	}
	if c.wideAttention {
		t.wg = flashWideWG
		columns := 1
		for columns < vdim {
			columns *= 2
		}
		least := max(2, t.wg/columns)
		for sq > t.tq && t.tq/2 >= least && heads*((sq+t.tq-1)/t.tq) < flashWanted {
			t.tq /= 2
		}
	}
	t.tk = min(64, flashKVFloats/max(dim+1, vdim), flashScores/t.tq)
	for t.wg == flashWideWG && t.group < flashMaxGroup && int64(2*t.group) <= c.subgroupSize && t.wg/t.tq >= 2*t.group*t.tk {
		t.group *= 2
	}
	return t, true
}

// flashGeom is what flashattn.comp reads of one attention: the sizes
// (batch entries, query and key/value heads, query, key and past lengths,
// head sizes), the scale and softcap, the flags and the mask's strides
// (see the shader), and where the rows of Q, K and V lie (an element
// offset and the strides along batch, head and position, and for K along
// its depth; the other operands' heads are contiguous) and those of Y
// (the same, without offset).
type flashGeom struct {
	batch, hq, hkv, sq, skv, past, dim, vdim int
	scale, softcap                           float32
	flags                                    uint32
	mb, mh, mi, keys                         int64
	q, v                                     [4]int64
	k                                        [5]int64
	y                                        [3]int64
}

// params returns the push constants and the workgroups of flashattn.comp
// for f, its configuration (flashTiles), and the chunks of its keys: 1
// without flash-decoding, which takes devices with caps.splitAttention,
// one query tile per (batch, head) and the fp32 softmax (the float16 one
// needs the row's final sum before any probability), and splits as
// flashChunks says. ok is false where the tiles do not fit the device.
func (f *flashGeom) params(c caps) (push []byte, groups int64, t flashTile, chunks int, ok bool) {
	t, ok = flashTiles(c, f.batch*f.hq, f.sq, f.dim, f.vdim)
	if !ok {
		return nil, 0, t, 0, false
	}
	tq, tk := t.tq, t.tk
	per, chunks := 0, 1
	if rows := int64(f.batch * f.hq * f.sq); c.splitAttention && f.sq <= tq && f.flags&64 == 0 {
		per, chunks = flashChunks(f.batch*f.hq, f.past+f.skv, tk)
		if rows*int64(chunks)*int64(f.vdim+2) > c.maxElems {
			per, chunks = 0, 1
		}
	}
	w := []uint32{uint32(f.batch), uint32(f.hq), uint32(f.hkv), uint32(f.sq), uint32(f.skv), uint32(f.past),
		uint32(f.dim), uint32(f.vdim), math.Float32bits(f.scale), math.Float32bits(f.softcap), f.flags,
		uint32(f.mb), uint32(f.mh), uint32(f.mi), uint32(f.keys), uint32(tq) | uint32(tk)<<5 | uint32(bits.TrailingZeros(uint(t.group)))<<14 | uint32(per)<<16}
	for _, s := range [][]int64{f.q[:], f.k[:], f.v[:], f.y[:]} {
		for _, x := range s {
			if x < 0 || x > math.MaxUint32 {
				return nil, 0, t, 0, false
			}
			w = append(w, uint32(x))
		}
	}
	return words(w...), int64(f.batch*f.hq) * int64((f.sq+tq-1)/tq) * int64(chunks), t, chunks, true
}

// lower makes l flashattn.comp's dispatches for f, reading the inputs
// that in binds (Q, K, V, the mask, the past keys and values,
// nonpad_kv_seqlen) and writing output 0: one dispatch, or with
// flash-decoding the split pass, which writes the chunks' partial results
// to the launch's scratch, and the dispatch that combines them (then, in
// the same command buffer after a barrier: the scratch orders them). ok
// is false where the tiles do not fit the device (flashTiles).
func (f *flashGeom) lower(c caps, l *launch, in []slot) bool {
	push, groups, t, chunks, ok := f.params(c)
	if !ok {
		return false
	}
	// Binding 8 holds the chunks' partial results; a single pass never
	// touches it and binds Y there.
	y := slot{true, 0}
	l.shader, l.op, l.push, l.groups, l.scratch = "flashattn", 0, push, groups, 0
	if t.wg != flashWG {
		// The GPU configuration: the SUBGROUP variant, as wide as its
		// specialization constant 1 says. The combining dispatch below
		// is the plain one's.
		l.subgroup, l.workgroup = true, int64(t.wg)
	}
	l.bindings = append(slices.Clone(in[:7]), y, y)
	if chunks == 1 {
		return true
	}
	rows := int64(f.batch * f.hq * f.sq)
	l.op, l.bindings[8], l.scratch = flashSplit, slot{true, scratchSlot}, uint64(4*rows*int64(chunks)*int64(f.vdim+2))
	none := slot{false, 0}
	l.then = append([]*launch{{shader: "flashattn", op: flashCombine, push: push, elems: l.elems,
		groups:   (rows*int64(f.vdim) + flashWG - 1) / flashWG,
		bindings: []slot{none, none, none, none, none, none, none, y, {false, scratchSlot}}}}, l.then...)
	return true
}

// batchAxis is an axis of batch entries common to the five operands of a
// ScaledDotProductAttention (Q, K, V, Y and the mask, whose stride is 0
// where it is broadcast or absent): its size and its stride in each.
type batchAxis struct {
	size   int64
	stride [5]int64
}

// commonBatch returns the batch axes of five operands whose batch entries
// walk the factors lists[i] ((size, stride) pairs, row-major): the
// coarsest factors that each operand walks with one stride, adjacent ones
// merged where every operand's strides allow; ok is false when the lists
// split the entries incompatibly.
func commonBatch(lists [5][][2]int64) (axes []batchAxis, ok bool) {
	var at [5]int
	var rem [5]int64
	for i := range lists {
		var fs [][2]int64
		for _, f := range lists[i] {
			if f[0] != 1 {
				fs = append(fs, f)
			}
		}
		if lists[i] = fs; len(fs) > 0 {
			rem[i] = fs[0][0]
		}
	}
	for at[0] < len(lists[0]) {
		m := rem[0]
		for i := range lists {
			if at[i] == len(lists[i]) {
				return nil, false
			}
			m = min(m, rem[i])
		}
		if m <= 0 {
			return nil, false
		}
		ax := batchAxis{size: m}
		for i := range lists {
			if rem[i]%m != 0 {
				return nil, false
			}
			rem[i] /= m
			ax.stride[i] = lists[i][at[i]][1] * rem[i]
			if rem[i] == 1 {
				if at[i]++; at[i] < len(lists[i]) {
					rem[i] = lists[i][at[i]][0]
				}
			}
		}
		if n := len(axes); n > 0 && mergeable(axes[n-1], ax) {
			axes[n-1] = batchAxis{size: axes[n-1].size * ax.size, stride: ax.stride}
		} else {
			axes = append(axes, ax)
		}
	}
	for i := range lists {
		if at[i] != len(lists[i]) {
			return nil, false
		}
	}
	return axes, true
}

// kvGroups returns flashattn.comp's two batch axes, the batch and the
// query heads, for the common batch axes bs, and the number of key and
// value heads. Where the innermost axis is read by K and V with stride 0
// (grouped-query attention's repeated heads) and the one outside it
// merges with it in Q, Y and the mask, the two become the heads, which
// the shader maps onto the key and value heads of the outer one (head h
// reads head h/rep of them, rep the inner size). ok is false for more
// than two axes.
func kvGroups(bs []batchAxis) (axes []batchAxis, hkv int64, ok bool) {
	if n := len(bs); n >= 2 && bs[n-1].stride[1] == 0 && bs[n-1].stride[2] == 0 {
		outer, inner := bs[n-2], bs[n-1]
		merged := inner
		merged.size = outer.size * inner.size
		merged.stride[1], merged.stride[2] = outer.stride[1], outer.stride[2]
		joins := true
		for _, i := range []int{0, 3, 4} {
			joins = joins && outer.stride[i] == inner.size*inner.stride[i]
		}
		if joins {
			axes, hkv = append(slices.Clone(bs[:n-2]), merged), outer.size
		}
	}
	if axes == nil {
		axes = bs
	}
	if len(axes) > 2 {
		return nil, 0, false
	}
	for len(axes) < 2 {
		axes = append([]batchAxis{{size: 1}}, axes...)
	}
	if hkv == 0 {
		hkv = axes[1].size
	}
	return axes, hkv, true
}

// mergeable reports whether batch axis b, inside a, makes one axis with
// it in every operand.
func mergeable(a, b batchAxis) bool {
	for i := range a.stride {
		if a.stride[i] != b.size*b.stride[i] {
			return false
		}
	}
	return true
}

// lowerSDPA lowers ScaledDotProductAttention (see graph/ops/fused.go) to
// flashattn.comp: each operand read where it lies, through its
// permutation and view as an offset and strides, Y written through
// perm_y, no copies. The batch axes of the four operands must reduce to
// two (flashattn.comp's batch and head) and the elements of each head of
// Q, V and Y (Q's depth, V's and Y's columns) be contiguous; elsewhere the
// node stays on another device, and so the planner does not fuse the
// pattern for this one. Float16 operands are computed on in fp32 from the
// scores to the output, rounded once as stored, as the fused float16
// chains and LayerNormalization are. The mask is read where it lies,
// through its strides along the batch axes, the queries (0 where it is
// broadcast) and the keys, which must be contiguous: a float mask of the
// operands' type added to the scores, a bool one read as bytes (flags bit 7
// for mask_hides).
func lowerSDPA(q *query) (*launch, bool) {
	n, shapes := q.n, q.shapes
	if len(shapes) < 3 || shapes[0] == nil || shapes[1] == nil || shapes[2] == nil {
		return nil, false
	}
	views, err := ops.AttentionViews(n, q.opset)
	if err != nil {
		return nil, false
	}
	var ls [3]*ops.AttentionView
	for i, shape := range shapes[:3] {
		if ls[i] = views[i]; ls[i] == nil {
			ls[i] = ops.RowMajorView(shape)
			continue
		}
		if graph.NumElements(ls[i].Shape) == 0 || ls[i].Last() >= graph.NumElements(shape) {
			return nil, false
		}
	}
	out, err := ops.AttentionShape(n, q.opset, graph.ShapeOf(ls[0].Shape...), graph.ShapeOf(ls[1].Shape...), graph.ShapeOf(ls[2].Shape...))
	if err != nil || out == nil || !out.Known() {
		return nil, false
	}
	r := len(ls[0].Shape)
	perms, err := ops.AttentionPerms(n, q.opset, r)
	if err != nil {
		return nil, false
	}
	ys := out.Ints()
	inv := make([]int, r)
	for i, d := range perms[3] {
		inv[d] = i
	}
	layouts := [4]*ops.AttentionView{ls[0], ls[1], ls[2], ops.RowMajorView(ys)}
	axes := [4][]int{perms[0], perms[1], perms[2], inv}
	// Each operand's matrix: rows and columns, their strides, and the
	// factors its batch entries walk.
	var rows, cols, rs, cs [4]int64
	var batch [5][][2]int64
	for i, l := range layouts {
		perm := axes[i]
		rows[i], cols[i] = l.Shape[perm[r-2]], l.Shape[perm[r-1]]
		var ok1, ok2 bool
		rs[i], ok1 = l.Stride(perm[r-2])
		cs[i], ok2 = l.Stride(perm[r-1])
		if !ok1 || !ok2 {
			return nil, false
		}
		for d := range r - 2 {
			batch[i] = append(batch[i], l.Factors[perm[d]]...)
		}
	}
	// q is [M, D], kᵀ [D, N], v [N, Dv], y [M, Dv]: the depth of q and
	// the columns of v and y must be contiguous.
	m, d, nk, dv := rows[0], cols[0], cols[1], cols[2]
	if m == 0 || nk == 0 || (d > 1 && cs[0] != 1) || (dv > 1 && (cs[2] != 1 || cs[3] != 1)) {
		return nil, false
	}
	// The mask's batch factors, one a logical batch axis (stride 0 where
	// it is broadcast or absent), its strides along queries and keys.
	scores := make([]int64, r)
	for a := range r - 2 {
		scores[a] = ls[0].Shape[perms[0][a]]
	}
	scores[r-2], scores[r-1] = m, nk
	mst := make([]int64, r)
	var flags uint32
	bindings := []slot{{false, 0}, {false, 1}, {false, 2}, {false, 0}, {false, 0}, {false, 0}, {false, 0}}
	var raw []int
	if len(shapes) > 3 && shapes[3] != nil {
		switch q.elems[3] {
		case graph.Bool:
			flags = 4
			if ops.Params[ops.ScaledDotProductAttentionParams](n, q.opset).MaskHides != 0 {
				flags |= 128
			}
		case q.elems[0]:
			flags = 2
		default:
			return nil, false
		}
		if mst, err = ops.AttentionMaskStrides(scores, shapes[3]); err != nil || nk > 1 && mst[r-1] != 1 {
			return nil, false
		}
		bindings[3], raw = slot{false, 3}, []int{3}
	}
	for a := range r - 2 {
		batch[4] = append(batch[4], [2]int64{scores[a], mst[a]})
	}
	// Grouped-query attention: K's and V's heads each serve rep of Q's in
	// a row, an innermost batch factor of stride 0 (see kvGroups).
	rep := ops.Params[ops.ScaledDotProductAttentionParams](n, q.opset).KvRepeat
	if rep > 1 {
		for _, i := range []int{1, 2} {
			batch[i] = append(batch[i], [2]int64{rep, 0})
		}
	}
	bs, ok := commonBatch(batch)
	if !ok {
		return nil, false
	}
	bs, hkv, ok := kvGroups(bs)
	if !ok {
		return nil, false
	}
	offset := func(i int) int64 { return layouts[i].Offset }
	f := &flashGeom{batch: int(bs[0].size), hq: int(bs[1].size), hkv: int(hkv), sq: int(m), skv: int(nk),
		dim: int(d), vdim: int(dv), scale: ops.Params[ops.ScaledDotProductAttentionParams](n, q.opset).Scale,
		flags: flags, mb: bs[0].stride[4], mh: bs[1].stride[4], mi: mst[r-2], keys: nk,
		q: [4]int64{offset(0), bs[0].stride[0], bs[1].stride[0], rs[0]},
		k: [5]int64{offset(1), bs[0].stride[1], bs[1].stride[1], cs[1], rs[1]},
		v: [4]int64{offset(2), bs[0].stride[2], bs[1].stride[2], rs[2]},
		y: [3]int64{bs[0].stride[3], bs[1].stride[3], rs[3]}}
	l := &launch{elems: graph.NumElements(ys), outShapes: [][]int64{ys}, rawInputs: raw}
	if !f.lower(q.caps, l, bindings) {
		return nil, false
	}
	return l, true
}
