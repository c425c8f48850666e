package kerneltest

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/opcases"
)

// transformerCases are the cases of testdata/opset24 (gen.py's numpy
// reference, read by internal/opcases) of op that a GPU must run; every
// other case's second input is a constant.
func transformerCases(op string, _ *rand.Rand) []Case {
	all, err := opcases.Load(casesDir())
	if err != nil {
		panic(err)
	}
	var cs []Case
	for _, c := range all {
		if c.Node.OpType != op || !c.GPU {
			continue
		}
		args := make([]Arg, len(c.Inputs))
		for i, t := range c.Inputs {
			args[i] = Arg{T: t, Const: i == 1 && len(cs)%2 == 1}
		}
		cs = append(cs, Case{Node: c.Node, Opset: c.Opset, Args: args})
	}
	return cs
}

// casesDir is the module's testdata/opset24, found from the working
// directory up (a test binary runs in its package's folder, also when it
// was built on another machine, as gpucheck's --bin ones are), else from
// this file's path when it was built.
func casesDir() string {
	if d, err := os.Getwd(); err == nil {
		for {
			if _, err := os.Stat(filepath.Join(d, opcases.Dir, "cases.json")); err == nil {
				return filepath.Join(d, opcases.Dir)
			}
			up := filepath.Dir(d)
			if up == d {
				break
			}
			d = up
		}
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", opcases.Dir)
}

// attentionCases are Attention's cases of testdata/opset24 (see
// transformerCases) and flashAttentionCases.
func attentionCases(op string, r *rand.Rand) []Case {
	return append(transformerCases(op, r), flashAttentionCases(r)...)
}

// flashKeyTile mirrors the keys per tile of the Vulkan backend's
// flashattn.comp for a head of dim elements (its flashTiles): the sizes
// flashAttentionCases crosses.
func flashKeyTile(dim int64) int64 { return min(64, 4096/(dim+1)) }

// flashDirectTile mirrors the key tile of flashattn.comp's workgroups of
// one query row (its flashDirectKeys), which read K and V unstaged.
const flashDirectTile = 256

// flashChunk mirrors the keys of a chunk of flashattn.comp's
// flash-decoding over key tiles of tk (its flashChunks) while the keys
// are at most flashWanted/(batch·heads) chunks: 256 keys rounded up to
// whole tiles.
func flashChunk(tk int64) int64 { return (256 + tk - 1) / tk * tk }

// flashAttentionCases are Attention cases at the sizes that cross every
// tile edge of a tiled kernel (query tiles of up to 16 rows, key tiles of
// flashKeyTile keys, flashDirectTile for one query row): query lengths
// 1, 15, 16, 17 and 40, key lengths 1 and a tile's −1, +0, +1 and twice
// over, with and without past keys, head sizes 8, 64, 80 and 128; then grouped-query heads, is_causal with
// more and fewer queries than keys, 3-D inputs, float and bool masks
// broadcast along each axis (and shorter than the keys), rows whose every
// key is masked, softcap, nonpad_kv_seqlen and the present caches; then
// flash-decoding's cases (see flashChunk).
func flashAttentionCases(r *rand.Rand) []Case {
	var cs []Case
	// attention returns a case of a [b, heads, s, dim] layout (3-D when
	// threeD) with past keys when past > 0, the mask (nil for none) and
	// the outputs.
	type spec struct {
		b, hq, hkv, sq, skv, past, dim, vdim int64
		threeD                               bool
		mask                                 *graph.Tensor
		nonpad                               []int64
		attrs                                []*graph.Attribute
		outputs                              []string
	}
	add := func(s spec) {
		shape := func(heads, seq, dim int64) []int64 {
			if s.threeD {
				return []int64{s.b, seq, heads * dim}
			}
			return []int64{s.b, heads, seq, dim}
		}
		inputs := []string{"q", "k", "v"}
		args := []Arg{
			{T: RandFloats(r, shape(s.hq, s.sq, s.dim), -1, 1)},
			{T: RandFloats(r, shape(s.hkv, s.skv, s.dim), -1, 1)},
			{T: RandFloats(r, shape(s.hkv, s.skv, s.vdim), -1, 1)},
		}
		opset := int64(23)
		if s.mask != nil || s.past > 0 || s.nonpad != nil {
			inputs = append(inputs, "")
			args = append(args, Arg{})
			if s.mask != nil {
				inputs[3], args[3] = "mask", Arg{T: s.mask}
			}
		}
		if s.past > 0 {
			inputs = append(inputs, "pk", "pv")
			args = append(args, Arg{T: RandFloats(r, []int64{s.b, s.hkv, s.past, s.dim}, -1, 1)},
				Arg{T: RandFloats(r, []int64{s.b, s.hkv, s.past, s.vdim}, -1, 1)})
		}
		if s.nonpad != nil {
			for len(inputs) < 6 {
				inputs = append(inputs, "")
				args = append(args, Arg{})
			}
			inputs = append(inputs, "nonpad")
			args = append(args, ConstInts(s.nonpad...))
			opset = 24
		}
		attrs := s.attrs
		if s.threeD {
			attrs = append(attrs, IntAttr("q_num_heads", s.hq), IntAttr("kv_num_heads", s.hkv))
		}
		n := Node("Attention", inputs, attrs...)
		if s.outputs != nil {
			n.Outputs = s.outputs
		}
		cs = append(cs, Case{Node: n, Opset: opset, Args: args})
	}
	for _, dim := range []int64{8, 64, 80, 128} {
		tk := flashKeyTile(dim)
		for _, sq := range []int64{1, 15, 16, 17, 40} {
			for _, skv := range []int64{1, tk - 1, tk, tk + 1, 2*tk + 5} {
				add(spec{b: 1, hq: 2, hkv: 2, sq: sq, skv: skv, dim: dim, vdim: dim})
			}
		}
		for _, past := range []int64{tk - 1, tk + 3} {
			add(spec{b: 2, hq: 2, hkv: 1, sq: 1, skv: 1, past: past, dim: dim, vdim: dim,
				attrs: []*graph.Attribute{IntAttr("is_causal", 1)}, outputs: []string{"y", "pk1", "pv1"}})
			add(spec{b: 1, hq: 2, hkv: 2, sq: 17, skv: 17, past: past, dim: dim, vdim: 80 - dim/8})
		}
	}
	// One query row: key tiles of flashDirectTile, with and without past.
	for _, dim := range []int64{64, 80} {
		for _, skv := range []int64{flashDirectTile - 1, flashDirectTile, flashDirectTile + 1} {
			add(spec{b: 1, hq: 2, hkv: 1, sq: 1, skv: skv, dim: dim, vdim: dim})
		}
		add(spec{b: 2, hq: 2, hkv: 2, sq: 1, skv: 1, past: flashDirectTile, dim: dim, vdim: 72,
			attrs: []*graph.Attribute{IntAttr("is_causal", 1)}, outputs: []string{"y", "pk1", "pv1"}})
	}
	causal := []*graph.Attribute{IntAttr("is_causal", 1)}
	// Grouped-query heads, 3-D, is_causal with more and fewer queries
	// than keys (the first rows of the latter see no key: zeros).
	add(spec{b: 2, hq: 4, hkv: 2, sq: 17, skv: 70, dim: 80, vdim: 64, threeD: true, attrs: causal})
	add(spec{b: 1, hq: 6, hkv: 2, sq: 40, skv: 9, dim: 64, vdim: 64, attrs: causal})
	add(spec{b: 1, hq: 4, hkv: 1, sq: 33, skv: 33, past: 20, dim: 8, vdim: 8, attrs: causal})
	// masks returns a float and a bool mask of shape m: every fifth row
	// wholly masked, and some keys in each row.
	masks := func(m []int64) (fm, bm *graph.Tensor) {
		fm, bm = RandFloats(r, m, -2, 2), graph.NewTensor(graph.Bool, m)
		mf, mb := graph.View[float32](fm), bm.Data
		keys := m[len(m)-1]
		for i := range mf {
			if int64(i)/keys%5 == 3 || i*7%11 == 0 {
				mf[i] = float32(math.Inf(-1))
			} else {
				mb[i] = 1
			}
		}
		return fm, bm
	}
	// Masks broadcast along each axis of [batch, heads, queries, keys],
	// shorter than the keys, with rows and keys wholly masked.
	const b, hq, sq, total = 2, 3, 18, 70
	for _, m := range [][]int64{{sq, total}, {b, 1, 1, total}, {1, hq, 1, total}, {b, hq, sq, total}, {1, 1, sq, 40}, {total}} {
		fm, bm := masks(m)
		add(spec{b: b, hq: hq, hkv: 1, sq: sq, skv: total, dim: 64, vdim: 64, mask: fm})
		add(spec{b: b, hq: hq, hkv: 3, sq: sq, skv: total - 30, past: 30, dim: 80, vdim: 80, mask: bm, attrs: causal})
	}
	add(spec{b: 1, hq: 2, hkv: 2, sq: 20, skv: 70, dim: 64, vdim: 64,
		attrs: []*graph.Attribute{FloatAttr("softcap", 1.5), FloatAttr("scale", 0.9)}})
	// nonpad_kv_seqlen: a full row, a short one and an empty one.
	add(spec{b: 3, hq: 2, hkv: 2, sq: 4, skv: 70, dim: 64, vdim: 64, nonpad: []int64{70, 20, 0}, attrs: causal})
	add(spec{b: 3, hq: 2, hkv: 1, sq: 17, skv: 70, dim: 80, vdim: 80, nonpad: []int64{3, 69, 65}})
	// Flash-decoding: one query tile per (batch, head) against keys on
	// each side of two chunks and over many, then with chunks that no
	// row sees (is_causal with fewer queries than keys, nonpad_kv_seqlen,
	// a mask shorter than the keys). softmax_precision float keeps the
	// fp32 softmax, which alone splits, in the Float16 mode.
	fp32 := IntAttr("softmax_precision", int64(graph.Float))
	fp32Causal := []*graph.Attribute{fp32, IntAttr("is_causal", 1)}
	for _, sq := range []int64{1, 3} {
		c := flashChunk(flashDirectTile)
		if sq > 1 {
			c = flashChunk(flashKeyTile(64))
		}
		for _, skv := range []int64{2*c - 1, 2 * c, 2*c + 1, 9*c + 4} {
			add(spec{b: 1, hq: 4, hkv: 2, sq: sq, skv: skv, dim: 64, vdim: 64, attrs: []*graph.Attribute{fp32}})
		}
	}
	add(spec{b: 1, hq: 2, hkv: 2, sq: 16, skv: 2*flashChunk(flashKeyTile(8)) + 1, dim: 8, vdim: 8, attrs: []*graph.Attribute{fp32}})
	add(spec{b: 1, hq: 2, hkv: 1, sq: 5, skv: 2*flashChunk(flashKeyTile(128)) + 1, dim: 128, vdim: 128, attrs: []*graph.Attribute{fp32}})
	add(spec{b: 2, hq: 4, hkv: 2, sq: 1, skv: 520, dim: 64, vdim: 48, threeD: true, attrs: []*graph.Attribute{fp32}})
	add(spec{b: 2, hq: 2, hkv: 1, sq: 1, skv: 1, past: 600, dim: 80, vdim: 72, attrs: fp32Causal, outputs: []string{"y", "pk1", "pv1"}})
	add(spec{b: 1, hq: 2, hkv: 2, sq: 4, skv: 700, dim: 64, vdim: 64, attrs: fp32Causal})
	add(spec{b: 3, hq: 2, hkv: 2, sq: 1, skv: 800, dim: 64, vdim: 64, nonpad: []int64{800, 257, 0}, attrs: []*graph.Attribute{fp32}})
	add(spec{b: 3, hq: 2, hkv: 1, sq: 4, skv: 700, dim: 64, vdim: 64, nonpad: []int64{700, 100, 0}, attrs: fp32Causal})
	fm, bm := masks([]int64{2, 1, 2, 400})
	add(spec{b: 2, hq: 2, hkv: 2, sq: 2, skv: 700, dim: 64, vdim: 64, mask: fm, attrs: []*graph.Attribute{fp32}})
	add(spec{b: 2, hq: 2, hkv: 1, sq: 2, skv: 300, past: 400, dim: 64, vdim: 64, mask: bm, attrs: fp32Causal})
	add(spec{b: 1, hq: 2, hkv: 2, sq: 1, skv: 600, dim: 64, vdim: 64,
		attrs: []*graph.Attribute{fp32, FloatAttr("softcap", 1.5), FloatAttr("scale", 0.9)}})
	return cs
}

// sdpaCases are ScaledDotProductAttention cases (of the fused domain) in
// the layouts the planner's fusion writes: PyTorch's
// nn.MultiheadAttention ([T, B·H, d] heads, Kᵀ by a three-axis
// permutation), its heads read through views of the packed projection
// [T, B, 3·H·d], the [B, S, H, d] heads of Hugging Face models, plain
// matrices with Kᵀ given as such, and a Q read with its depth strided;
// query and key counts across the tiles of a tiled kernel (see
// flashAttentionCases); masks; grouped-query attention.
func sdpaCases(_ string, r *rand.Rand) []Case {
	type spec struct {
		q, k, v []int64
		perms   [4][]int64
		views   [3][]int64
		scale   float32
		// mask is the fourth input (nil: none), hides its mask_hides.
		mask  *graph.Tensor
		hides bool
		// rep is kv_repeat (0: absent).
		rep int64
	}
	// boolMask returns a bool mask of shape m, true where set says.
	boolMask := func(m []int64, set func(i, j int64) bool) *graph.Tensor {
		t := graph.NewTensor(graph.Bool, m)
		keys := m[len(m)-1]
		for at := range t.Data {
			if set(int64(at)/keys, int64(at)%keys) {
				t.Data[at] = 1
			}
		}
		return t
	}
	// padding returns a float mask of shape m, random in [-2, 2] but −inf
	// for the last keys of each row, more in each next row.
	padding := func(m []int64) *graph.Tensor {
		t := RandFloats(r, m, -2, 2)
		keys, v := m[len(m)-1], graph.View[float32](t)
		for at := range v {
			if row, j := int64(at)/keys, int64(at)%keys; j >= keys-3*row-1 {
				v[at] = float32(math.Inf(-1))
			}
		}
		return t
	}
	mha := [4][]int64{{1, 0, 2}, {1, 2, 0}, {1, 0, 2}, {1, 0, 2}}
	hf := [4][]int64{{0, 2, 1, 3}, {0, 2, 3, 1}, {0, 2, 1, 3}, {0, 2, 1, 3}}
	// The heads of [T, B=2, 3·H·d] (H 2, d 8) for T positions: B·H walks
	// B, then H.
	packed := func(off, t int64) []int64 { return []int64{off, 3, 1, t, 96, 2, 2, 48, 2, 8, 1, 8, 1} }
	tk := flashKeyTile(64)
	specs := []spec{
		{q: []int64{17, 4, 8}, k: []int64{70, 4, 8}, v: []int64{70, 4, 24}, perms: mha, scale: 0.35},
		{q: []int64{1, 6, 80}, k: []int64{50, 6, 80}, v: []int64{50, 6, 80}, perms: mha, scale: 0.1},
		{q: []int64{20, 2, 48}, k: []int64{20, 2, 48}, v: []int64{20, 2, 48}, perms: mha, views: [3][]int64{packed(0, 20), packed(16, 20), packed(32, 20)}, scale: 0.35},
		{q: []int64{1, 2, 48}, k: []int64{20, 2, 48}, v: []int64{20, 2, 48}, perms: mha, views: [3][]int64{packed(0, 1), packed(16, 20), packed(32, 20)}, scale: 0.35},
		{q: []int64{2, 17, 3, 64}, k: []int64{2, tk + 1, 3, 64}, v: []int64{2, tk + 1, 3, 64}, perms: hf, scale: 0.125},
		{q: []int64{1, 16, 2, 64}, k: []int64{1, tk, 2, 64}, v: []int64{1, tk, 2, 64}, perms: hf, scale: 0.125},
		{q: []int64{7, 5}, k: []int64{5, 9}, v: []int64{9, 3}, scale: 1},
		{q: []int64{2, 40, 128}, k: []int64{2, 128, 2*flashKeyTile(128) + 5}, v: []int64{2, 2*flashKeyTile(128) + 5, 128}, scale: 0.09},
		{q: []int64{2, 16, 25}, k: []int64{2, 31, 16}, v: []int64{2, 31, 8}, perms: [4][]int64{{0, 2, 1}, {0, 2, 1}, nil, nil}, scale: 0.3},
		// Flash-decoding: one and three queries against three chunks.
		{q: []int64{1, 6, 80}, k: []int64{600, 6, 80}, v: []int64{600, 6, 80}, perms: mha, scale: 0.1},
		{q: []int64{2, 3, 2, 64}, k: []int64{2, 2*flashChunk(tk) + 1, 2, 64}, v: []int64{2, 2*flashChunk(tk) + 1, 2, 64}, perms: hf, scale: 0.125},
		// Masks: a decoder's causal Where (query i at position 4 + i,
		// mask_hides), BERT's padding mask [B, 1, 1, N] (which splits
		// the batch from the heads), one broadcast over the B·H heads of
		// nn.MultiheadAttention, rows hidden throughout (zeros), and a
		// keys-only bool mask under flash-decoding.
		{q: []int64{1, 5, 4, 64}, k: []int64{1, 9, 4, 64}, v: []int64{1, 9, 4, 64}, perms: hf, scale: 0.125,
			mask: boolMask([]int64{5, 9}, func(i, j int64) bool { return j > i+4 }), hides: true},
		{q: []int64{2, 17, 3, 64}, k: []int64{2, tk + 1, 3, 64}, v: []int64{2, tk + 1, 3, 64}, perms: hf, scale: 0.125,
			mask: padding([]int64{2, 1, 1, tk + 1})},
		{q: []int64{17, 4, 8}, k: []int64{70, 4, 8}, v: []int64{70, 4, 24}, perms: mha, scale: 0.35, mask: padding([]int64{1, 17, 70})},
		{q: []int64{2, 16, 25}, k: []int64{2, 25, 33}, v: []int64{2, 33, 8}, scale: 0.3,
			mask: boolMask([]int64{2, 16, 33}, func(i, j int64) bool { return i%5 == 3 || j%4 == 0 }), hides: true},
		{q: []int64{1, 6, 80}, k: []int64{600, 6, 80}, v: []int64{600, 6, 80}, perms: mha, scale: 0.1,
			mask: boolMask([]int64{600}, func(_, j int64) bool { return j%7 != 3 })},
		// Grouped-query attention (kv_repeat): Hugging Face's [B, S, H,
		// d] heads, torch's repeat_kv layout [B, H, S, d] with Kᵀ by a
		// permutation and a causal mask, and under flash-decoding; one
		// key and value head for two images' four query heads.
		{q: []int64{2, 17, 6, 64}, k: []int64{2, tk + 1, 2, 64}, v: []int64{2, tk + 1, 2, 64}, perms: hf, scale: 0.125, rep: 3},
		{q: []int64{1, 8, 5, 64}, k: []int64{1, 2, 9, 64}, v: []int64{1, 2, 9, 64}, perms: [4][]int64{nil, {0, 1, 3, 2}, nil, nil}, scale: 0.125,
			mask: boolMask([]int64{5, 9}, func(i, j int64) bool { return j > i+4 }), hides: true, rep: 4},
		{q: []int64{1, 8, 1, 64}, k: []int64{1, 2, 2*flashChunk(tk) + 1, 64}, v: []int64{1, 2, 2*flashChunk(tk) + 1, 64},
			perms: [4][]int64{nil, {0, 1, 3, 2}, nil, nil}, scale: 0.125, rep: 4},
		{q: []int64{2, 4, 3, 32}, k: []int64{2, 1, 32, 7}, v: []int64{2, 1, 7, 16}, scale: 0.2, rep: 4},
	}
	var cs []Case
	for _, s := range specs {
		attrs := []*graph.Attribute{FloatAttr("scale", s.scale)}
		for i, name := range []string{"perm_q", "perm_k", "perm_v", "perm_y"} {
			if s.perms[i] != nil {
				attrs = append(attrs, IntsAttr(name, s.perms[i]...))
			}
		}
		for i, name := range []string{"view_q", "view_k", "view_v"} {
			if s.views[i] != nil {
				attrs = append(attrs, IntsAttr(name, s.views[i]...))
			}
		}
		args := []Arg{{T: RandFloats(r, s.q, -3, 3)}, {T: RandFloats(r, s.k, -3, 3)}, {T: RandFloats(r, s.v, -1, 1)}}
		inputs := []string{"q", "k", "v"}
		if s.mask != nil {
			inputs, args = append(inputs, "mask"), append(args, Arg{T: s.mask})
		}
		if s.hides {
			attrs = append(attrs, IntAttr("mask_hides", 1))
		}
		if s.rep != 0 {
			attrs = append(attrs, IntAttr("kv_repeat", s.rep))
		}
		cs = append(cs, Case{Node: Node("ScaledDotProductAttention", inputs, attrs...), Opset: 1, Args: args})
	}
	return cs
}
