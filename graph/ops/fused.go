package ops

import (
	"fmt"

	"github.com/onnxvk/onnxvk/graph"
)

// FusedDomain is the operator domain of the nodes that the planner's
// fusion passes create. Models never import it and the loader never sees
// its ops; the planner imports it at version 1 in the graphs it rewrites.
const FusedDomain = "onnxvk"

// Fused activations: the values of a fused node's "activation" attribute,
// each the ONNX op of that name applied to the node's output. Clip's
// bounds are the "alpha" (min) and "beta" (max) attributes, LeakyRelu's
// slope is "alpha", HardSigmoid's slope and offset are "alpha" and "beta"
// (HardSwish's are fixed, 1/6 and 0.5, and not read). Swish is
// x·Sigmoid(x) (SiLU), which models spell as Sigmoid and Mul: the Swish op
// with alpha 1 (the fused node's alpha is not read).
const (
	ActRelu        = "Relu"
	ActClip        = "Clip"
	ActLeakyRelu   = "LeakyRelu"
	ActSigmoid     = "Sigmoid"
	ActSwish       = "Swish"
	ActHardSigmoid = "HardSigmoid"
	ActHardSwish   = "HardSwish"
)

func init() {
	// FusedConv is Conv (opset 11 semantics), plus the optional input 3
	// (Sum, of the output's type and shape), followed by an activation
	// ("" for none).
	Register(&Schema{Domain: FusedDomain, Name: "FusedConv", Since: 1, MinInputs: 2, MaxInputs: 4, MinOutputs: 1, MaxOutputs: 1,
		Attrs: []AttrSpec{defString("auto_pad", "NOTSET"), opt("dilations", graph.AttrInts), defInt("group", 1),
			opt("kernel_shape", graph.AttrInts), opt("pads", graph.AttrInts), opt("strides", graph.AttrInts),
			defString("activation", ""), defFloat("alpha", 0), defFloat("beta", 0)},
		Infer: inferConv, Tol: accumulating})
	// NormConv is FusedConv (without Sum) of the normalized input: X
	// through BatchNormalization in inference mode (inputs 3–6: scale, B,
	// input_mean and input_var of X's channels, and epsilon) and the
	// activation norm_activation (norm_alpha, norm_beta, as activation's),
	// then Conv by W plus the optional B and the activation: a
	// pre-activation block's BatchNormalization, Relu and 1×1 convolution
	// (DenseNet's), with X normalized a tile at a time as the convolution
	// reads it rather than written out whole.
	Register(&Schema{Domain: FusedDomain, Name: "NormConv", Since: 1, MinInputs: 7, MaxInputs: 7, MinOutputs: 1, MaxOutputs: 1,
		Attrs: []AttrSpec{defString("auto_pad", "NOTSET"), opt("dilations", graph.AttrInts), defInt("group", 1),
			opt("kernel_shape", graph.AttrInts), opt("pads", graph.AttrInts), opt("strides", graph.AttrInts),
			defString("activation", ""), defFloat("alpha", 0), defFloat("beta", 0),
			defFloat("epsilon", 1e-05), defString("norm_activation", ""), defFloat("norm_alpha", 0), defFloat("norm_beta", 0)},
		Infer: inferConv, Tol: accumulating})
	// FusedBatchNorm is BatchNormalization in inference mode (X, scale, B,
	// input_mean, input_var) followed by an activation, as FusedConv's.
	Register(&Schema{Domain: FusedDomain, Name: "FusedBatchNorm", Since: 1, MinInputs: 5, MaxInputs: 5, MinOutputs: 1, MaxOutputs: 1,
		Attrs: []AttrSpec{defFloat("epsilon", 1e-05), defString("activation", ""), defFloat("alpha", 0), defFloat("beta", 0)},
		Infer: inferBatchNorm, Tol: accumulating})
	// FusedMatMul is MatMul(A, B) + Bias, Bias a vector along the last
	// dimension of the product.
	Register(&Schema{Domain: FusedDomain, Name: "FusedMatMul", Since: 1, MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
		Infer: inferMatMul, Tol: accumulating})
	// MatMulTransB is MatMul(A, Bᵀ), Bᵀ being B (at least 2-D) with its
	// last two axes swapped: a product that reads B transposed in place of
	// a Transpose that only it reads (attention's Q·Kᵀ).
	Register(&Schema{Domain: FusedDomain, Name: "MatMulTransB", Since: 1, MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Infer: inferMatMulTransB, Tol: accumulating})
	// ScaledDotProductAttention is attention over operands read through
	// permutations: with q = Transpose(Q, perm_q) of shape [..., M, D],
	// kᵀ = Transpose(K, perm_k) of [..., D, N] and v = Transpose(V, perm_v)
	// of [..., N, Dv], all of one rank and batch dimensions (no
	// broadcasting), Y = Transpose(Softmax(scale·q·kᵀ, axis −1)·v, perm_y).
	// An absent perm is the identity. It stands for the MatMul, Softmax,
	// MatMul chain of a multi-head attention with the Transposes that
	// split and merge its heads, which the kernel reads through strides.
	// Where view_q, view_k or view_v is set, that operand is not its input
	// itself but a strided view of it (see AttentionView): the heads that
	// a Slice and a Reshape cut out of a packed QKV projection, read where
	// they lie. The optional fourth input, mask, broadcasts (numpy-style,
	// without widening them) to the scores' shape [..., M, N] (see
	// AttentionScores): a float one, of the operands' type, is added to
	// scale·q·kᵀ before the softmax; a bool one hides the keys where it is
	// false (ONNX Attention's attn_mask), or where it is true when
	// mask_hides is 1 (the condition of a Where that writes −inf where it
	// holds), a hidden score being −inf. A row whose every score is −inf
	// gives zeros, as ONNX Attention's does (the unfused Softmax gives
	// NaN there). With kv_repeat r above 1 (grouped-query attention) k
	// and v have 1/r of q's entries along the last batch axis (the heads),
	// and q's head h reads their head h/r, as if each of their heads were
	// repeated r times in a row (Hugging Face's repeat_kv).
	Register(&Schema{Domain: FusedDomain, Name: "ScaledDotProductAttention", Since: 1, MinInputs: 3, MaxInputs: 4, MinOutputs: 1, MaxOutputs: 1,
		Attrs: []AttrSpec{opt("perm_q", graph.AttrInts), opt("perm_k", graph.AttrInts), opt("perm_v", graph.AttrInts),
			opt("perm_y", graph.AttrInts), opt("view_q", graph.AttrInts), opt("view_k", graph.AttrInts), opt("view_v", graph.AttrInts), defFloat("scale", 1),
			defInt("mask_hides", 0), defInt("kv_repeat", 1)},
		Infer: inferScaledDotProductAttention, Tol: accumulating})
	// Gelu is ONNX Gelu-20 with approximate "none", x·(1 + erf(x/√2))·½,
	// for models that import an older opset and spell it out in
	// elementwise ops.
	Register(&Schema{Domain: FusedDomain, Name: "Gelu", Since: 1, MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Infer: passThrough, Tol: transcendental, Props: Elementwise})
	// LayerNormalization is ONNX LayerNormalization-17, for models that
	// import an older opset and spell it out in elementwise ops.
	Register(&Schema{Domain: FusedDomain, Name: "LayerNormalization", Since: 1, MinInputs: 2, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
		Attrs: []AttrSpec{defInt("axis", -1), defFloat("epsilon", 1e-05), defInt("stash_type", 1)},
		Infer: inferLayerNorm, Tol: accumulating})
	// SkipLayerNormalization is that LayerNormalization (inputs X, Skip,
	// Scale and the optional B) of X + Skip, Skip of X's shape: a residual
	// connection's Add and the normalization that alone reads its sum.
	Register(&Schema{Domain: FusedDomain, Name: "SkipLayerNormalization", Since: 1, MinInputs: 3, MaxInputs: 4, MinOutputs: 1, MaxOutputs: 1,
		Attrs: []AttrSpec{defInt("axis", -1), defFloat("epsilon", 1e-05), defInt("stash_type", 1)},
		Infer: passThrough, Tol: accumulating})
}

// FusedActivation reads the activation of a FusedConv or FusedBatchNorm
// node: its name ("" for none) and its parameters, LeakyRelu's slope in
// alpha, Clip's bounds or HardSigmoid's slope and offset in alpha and beta.
// Clip's bounds have no default (the planner writes both), so a fused Clip
// that lacks one is refused rather than clipped to [0, 0].
func FusedActivation(n *graph.Node, opset int64) (name string, alpha, beta float32, err error) {
	switch n.OpType {
	case "FusedBatchNorm":
		p := Params[FusedBatchNormParams](n, opset)
		name, alpha, beta = p.Activation, p.Alpha, p.Beta
	case "NormConv":
		p := Params[NormConvParams](n, opset)
		name, alpha, beta = p.Activation, p.Alpha, p.Beta
	default:
		p := Params[FusedConvParams](n, opset)
		name, alpha, beta = p.Activation, p.Alpha, p.Beta
	}
	return name, alpha, beta, clipBounds(n, name, "alpha", "beta")
}

// NormActivation reads the activation of a NormConv's normalization
// (norm_activation, norm_alpha and norm_beta).
func NormActivation(n *graph.Node, opset int64) (name string, alpha, beta float32, err error) {
	p := Params[NormConvParams](n, opset)
	return p.NormActivation, p.NormAlpha, p.NormBeta, clipBounds(n, p.NormActivation, "norm_alpha", "norm_beta")
}

// clipBounds reports a fused Clip whose bound attributes lo and hi are
// not both set.
func clipBounds(n *graph.Node, name, lo, hi string) error {
	if name == ActClip && (n.Attr(lo) == nil || n.Attr(hi) == nil) {
		return fmt.Errorf("%s: fused Clip without both bounds (%s and %s)", n, lo, hi)
	}
	return nil
}

// StridedProduct reports whether n is a matrix product whose operands a
// device may read through strides, so that a Transpose before it folds
// into it: MatMul and FusedMatMul (MatMul plus a bias). The planner keeps
// a Transpose's input alive for such a fold; the Vulkan device folds.
func StridedProduct(n *graph.Node) bool {
	return n.Domain == graph.DefaultDomain && n.OpType == "MatMul" || n.Domain == FusedDomain && n.OpType == "FusedMatMul"
}

// AttentionPerms returns the permutations perm_q, perm_k, perm_v and
// perm_y of a ScaledDotProductAttention node whose operands have rank r,
// each normalised and the identity where absent.
func AttentionPerms(n *graph.Node, opset int64, r int) ([4][]int, error) {
	p := Params[ScaledDotProductAttentionParams](n, opset)
	var perms [4][]int
	for i, perm := range [4][]int64{p.PermQ, p.PermK, p.PermV, p.PermY} {
		if perm == nil {
			perms[i] = make([]int, r)
			for d := range r {
				perms[i][d] = d
			}
			continue
		}
		if len(perm) != r {
			return perms, fmt.Errorf("%s %v for operands of rank %d", [4]string{"perm_q", "perm_k", "perm_v", "perm_y"}[i], perm, r)
		}
		norm, err := normAxes(perm, r)
		if err != nil {
			return perms, fmt.Errorf("%s: %w", [4]string{"perm_q", "perm_k", "perm_v", "perm_y"}[i], err)
		}
		perms[i] = norm
	}
	return perms, nil
}

// AttentionShape returns the shape of a ScaledDotProductAttention node's
// output for operands of shapes q, k and v (nil: an unknown rank) and the
// node's permutations (see AttentionPerms); nil when a rank is unknown.
func AttentionShape(n *graph.Node, opset int64, q, k, v graph.Shape) (graph.Shape, error) {
	if q == nil || k == nil || v == nil {
		return nil, nil
	}
	r := len(q)
	if r < 2 || len(k) != r || len(v) != r {
		return nil, fmt.Errorf("Q, K and V of ranks %d, %d and %d; want one rank of at least 2", len(q), len(k), len(v))
	}
	perms, err := AttentionPerms(n, opset, r)
	if err != nil {
		return nil, err
	}
	permute := func(s graph.Shape, perm []int) graph.Shape {
		out := make(graph.Shape, r)
		for i, p := range perm {
			out[i] = s[p]
		}
		return out
	}
	lq, lk, lv := permute(q, perms[0]), permute(k, perms[1]), permute(v, perms[2])
	rep := Params[ScaledDotProductAttentionParams](n, opset).KvRepeat
	if rep < 1 || rep > 1 && r < 3 {
		return nil, fmt.Errorf("kv_repeat %d for operands of rank %d: want at least 1, and 1 without a batch axis", rep, r)
	}
	y := make(graph.Shape, r)
	for d := range r - 2 {
		kd, vd := lk[d], lv[d]
		if d == r-3 {
			kd, vd = repeatedDim(kd, rep), repeatedDim(vd, rep)
		}
		b, err := unifyDim(lq[d], kd)
		if err == nil {
			b, err = unifyDim(b, vd)
		}
		if err != nil {
			return nil, fmt.Errorf("batch dimension %d of q%v, kᵀ%v and v%v: %w", d, lq, lk, lv, err)
		}
		y[d] = b
	}
	if _, err := unifyDim(lq[r-1], lk[r-2]); err != nil {
		return nil, fmt.Errorf("depth of q%v and kᵀ%v: %w", lq, lk, err)
	}
	if _, err := unifyDim(lk[r-1], lv[r-2]); err != nil {
		return nil, fmt.Errorf("keys of kᵀ%v and v%v: %w", lk, lv, err)
	}
	y[r-2], y[r-1] = lq[r-2], lv[r-1]
	return permute(y, perms[3]), nil
}

// repeatedDim is d·rep: unknown where d is not known, unless rep is 1.
func repeatedDim(d graph.Dim, rep int64) graph.Dim {
	switch {
	case rep == 1:
		return d
	case d.Known():
		return graph.DimOf(d.Value * rep)
	}
	return graph.UnknownDim()
}

// inferScaledDotProductAttention is the planner's ScaledDotProductAttention.
func inferScaledDotProductAttention(c *InferContext) error {
	views, err := AttentionViews(c.Node, c.Opset)
	if err != nil {
		return err
	}
	shapes := [3]graph.Shape{c.inShape(0), c.inShape(1), c.inShape(2)}
	for i, v := range views {
		if v != nil {
			shapes[i] = graph.ShapeOf(v.Shape...)
		}
	}
	s, err := AttentionShape(c.Node, c.Opset, shapes[0], shapes[1], shapes[2])
	if err != nil {
		return err
	}
	if m := c.inShape(3); m != nil && s != nil {
		scores, err := AttentionScores(c.Node, c.Opset, shapes[0], shapes[1], shapes[2])
		if err != nil {
			return err
		}
		if err := attentionMaskFits(scores, m); err != nil {
			return err
		}
	}
	c.setTensor(0, c.inElem(0), s)
	return nil
}

// AttentionScores returns the shape of the scores scale·q·kᵀ of a
// ScaledDotProductAttention node (its logical batch dimensions, M and
// N) for operands of shapes q, k and v, as AttentionShape takes them;
// nil when a rank is unknown.
func AttentionScores(n *graph.Node, opset int64, q, k, v graph.Shape) (graph.Shape, error) {
	y, err := AttentionShape(n, opset, q, k, v)
	if err != nil || y == nil {
		return nil, err
	}
	r := len(q)
	perms, err := AttentionPerms(n, opset, r)
	if err != nil {
		return nil, err
	}
	s := make(graph.Shape, r)
	for i, p := range perms[3] {
		s[p] = y[i]
	}
	s[r-1] = k[perms[1][r-1]]
	return s, nil
}

// attentionMaskFits checks that a mask of shape mask broadcasts to
// scores without widening them: of rank at most theirs, each of its
// dimensions (aligned on the last) 1 or theirs.
func attentionMaskFits(scores, mask graph.Shape) error {
	if len(mask) > len(scores) {
		return fmt.Errorf("mask %v has more axes than the scores %v", mask, scores)
	}
	for i, d := range mask {
		s := scores[len(scores)-len(mask)+i]
		if d.Known() && d.Value == 1 || SameDim(d, s) || !d.Known() || !s.Known() {
			continue
		}
		return fmt.Errorf("mask %v does not broadcast to the scores %v", mask, scores)
	}
	return nil
}

// AttentionMaskStrides returns the element strides of a row-major mask
// of shape mask along each axis of scores (see AttentionScores), 0 along
// those it is broadcast on, or an error when it does not broadcast to
// them (see attentionMaskFits).
func AttentionMaskStrides(scores, mask []int64) ([]int64, error) {
	if err := attentionMaskFits(graph.ShapeOf(scores...), graph.ShapeOf(mask...)); err != nil {
		return nil, err
	}
	st := graph.Strides(mask)
	out := make([]int64, len(scores))
	for i, d := range mask {
		if d != 1 {
			out[len(scores)-len(mask)+i] = st[i]
		}
	}
	return out, nil
}

// AttentionView is how an operand of ScaledDotProductAttention lies in
// its input when the node's view attribute for it is set: the operand
// has Shape, and the index along its axis a walks, row-major, the
// factors Factors[a] (a size and a stride each; their sizes multiply to
// Shape[a]), so that element (i₀, i₁, ...) is at Offset plus each
// factor's index times its stride. The attribute spells it out as
// [Offset, rank, then for each axis the number of its factors and their
// (size, stride) pairs].
type AttentionView struct {
	Offset  int64
	Shape   []int64
	Factors [][][2]int64
}

// AttentionViews returns the views of Q, K and V (nil where the node has
// no view attribute for one).
func AttentionViews(n *graph.Node, opset int64) ([3]*AttentionView, error) {
	p := Params[ScaledDotProductAttentionParams](n, opset)
	var views [3]*AttentionView
	for i, a := range [3][]int64{p.ViewQ, p.ViewK, p.ViewV} {
		if a == nil {
			continue
		}
		v, err := parseAttentionView(a)
		if err != nil {
			return views, fmt.Errorf("%s %v: %w", [3]string{"view_q", "view_k", "view_v"}[i], a, err)
		}
		views[i] = v
	}
	return views, nil
}

// Stride returns the one stride that walks axis a of v, its factors each
// lying one inside the previous one; ok is false when they do not (an
// axis of a matrix must have one stride).
func (v *AttentionView) Stride(a int) (stride int64, ok bool) {
	size := int64(1)
	for _, f := range v.Factors[a] {
		switch {
		case f[0] == 1:
		case size == 1:
			size, stride = f[0], f[1]
		case stride == f[0]*f[1]:
			size, stride = size*f[0], f[1]
		default:
			return 0, false
		}
	}
	return stride, true
}

// RowMajorView is the view of a whole tensor of shape, row-major: one
// factor an axis, what an operand without a view attribute is read as.
func RowMajorView(shape []int64) *AttentionView {
	v := &AttentionView{Shape: shape, Factors: make([][][2]int64, len(shape))}
	for a, st := range graph.Strides(shape) {
		v.Factors[a] = [][2]int64{{shape[a], st}}
	}
	return v
}

// Last returns the offset of the last element v reads (its last index on
// every factor), for a check against its input's length.
func (v *AttentionView) Last() int64 {
	last := v.Offset
	for _, fs := range v.Factors {
		for _, f := range fs {
			last += (f[0] - 1) * f[1]
		}
	}
	return last
}

// parseAttentionView reads an AttentionView's attribute.
func parseAttentionView(a []int64) (*AttentionView, error) {
	if len(a) < 2 || a[0] < 0 || a[1] < 1 {
		return nil, fmt.Errorf("want an offset, a rank of at least 1 and the axes' factors")
	}
	v := &AttentionView{Offset: a[0], Shape: make([]int64, a[1]), Factors: make([][][2]int64, a[1])}
	rest := a[2:]
	for ax := range v.Shape {
		if len(rest) == 0 || rest[0] < 0 || int64(len(rest)-1) < 2*rest[0] {
			return nil, fmt.Errorf("axis %d: missing factors", ax)
		}
		size := int64(1)
		for f := range rest[0] {
			fs, st := rest[1+2*f], rest[2+2*f]
			if fs < 0 || st < 0 {
				return nil, fmt.Errorf("axis %d: factor (%d, %d) negative", ax, fs, st)
			}
			v.Factors[ax] = append(v.Factors[ax], [2]int64{fs, st})
			size *= fs
		}
		v.Shape[ax] = size
		rest = rest[1+2*rest[0]:]
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%d values after the last axis", len(rest))
	}
	return v, nil
}
