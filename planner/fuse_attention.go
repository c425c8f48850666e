package planner

import (
	"math"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// maskFill is the highest value a masking Where may write for the fused
// attention to take it as −inf: the lowest float16, which Hugging Face's
// exports write (the type's lowest value, float32's too) where older
// ones write −inf. The two agree wherever a row's largest score is more
// than 104 above the fill (the fill's exponential is then 0 in float32,
// as the fused kernels compute); a row whose every key the Where masks
// gives zeros fused, where the unfused chain averages the values.
const maskFill = -65504

// fuseAttentions replaces each attention written out as MatMul, Softmax
// over the last axis and MatMul (see fuse) by one ScaledDotProductAttention
// of ops.FusedDomain, named after the first product, at the place of its
// last node, marks the others gone and returns how many nodes it removed.
// The chain may scale by a constant scalar (Div or Mul) the queries before
// the first product or the scores after it; Transposes that alone feed the
// queries, the keys (as the first product's B) or the values, and one that
// alone reads the result, go into the fused node's permutations, so that
// its kernel reads the heads where they lie instead of copying them; so do
// the Slice and Reshape that alone cut a head out of a packed projection
// (see headView), the projection then read through a view, and the
// Unsqueeze, Expand and Reshape that repeat the heads of the keys and
// values for a grouped-query attention (kv_repeat, see repeatedHeads),
// the shape arithmetic of the Expand's target going with them (see
// dropUnread). A mask may
// come between the scale and the Softmax (see masking), and where it is
// a Where's, a positive scale after it that keeps its fill at or below
// maskFill, or an added float mask, which a Where in the Add's place
// joins to the first into one float mask (the only node of the chain
// that stays, rewritten). Every value fused away must have no reader
// outside the chain, and the three operands one rank and the same batch
// dimensions (no broadcasting).
//
// The chain's operands, scores, probabilities, result and scale are all
// float32 or all float16; a chain mixing the two stays apart. It is fused
// where the device that runs its first product takes the fused node in
// that type (sameDevice): the devices' kernel registries alone say which
// types they run it in. A float16 attention is then computed as ONNX
// Runtime's fused attention computes it: scores, softmax and product by V
// in fp32 from the float16 operands, the output rounded once to float16.
// The unfused chain rounds the scores, the scaled scores and the
// probabilities to float16 on the way, each rounding of a score s moving
// its probability by up to |s|·2^-11 relative, so the two forms differ by
// more than the fused one differs from an fp32 reference on the same
// float16 operands: it is checked against that reference within its
// tolerance widened by two float16 roundings (ops.Tolerance.Float16).
func fuseAttentions(pm *graph.Model, g *graph.Graph, devices []Device, uses map[string]int, consumers map[string][]int, overridable map[string]bool, gone map[int]bool) int {
	producer := producers(g)
	// sole returns the node that alone reads value name, and its index.
	sole := func(name string) (*graph.Node, int) {
		if uses[name] != 1 {
			return nil, -1
		}
		j := consumers[name][0]
		if n := g.Nodes[j]; !gone[j] && n.Domain == "" && len(n.Outputs) == 1 {
			return n, j
		}
		return nil, -1
	}
	// made returns the node that makes value name when nothing else reads
	// it, and its index.
	made := func(name string) (*graph.Node, int) {
		j, ok := producer[name]
		if !ok || uses[name] != 1 || gone[j] || g.Nodes[j].Domain != "" || len(g.Nodes[j].Outputs) != 1 {
			return nil, -1
		}
		return g.Nodes[j], j
	}
	// elem is the element type of the attention at hand: float32 or
	// float16, which its values and its scale share.
	var elem graph.DType
	typed := func(name string) bool {
		t := g.TypeOf(name)
		return t != nil && t.Kind == graph.TensorKind && t.Elem == elem
	}
	// scaling returns the operand x of n (Div or Mul) that n scales by a
	// constant scalar of the attention's type and of rank at most r, and
	// the factor.
	scaling := func(n *graph.Node, r int) (x string, factor float32, ok bool) {
		if len(n.Inputs) != 2 || (n.OpType != "Div" && n.OpType != "Mul") {
			return "", 0, false
		}
		x, c := n.Inputs[0], n.Inputs[1]
		if n.OpType == "Mul" && g.Initializers[x] != nil {
			x, c = c, x
		}
		t := g.Initializers[c]
		if t == nil || overridable[c] || c == x || t.DType != elem || t.NumElements() != 1 || t.Rank() > r {
			return "", 0, false
		}
		factor = float32(t.Float64At(0))
		if n.OpType == "Div" {
			factor = 1 / factor
		}
		// A zero or infinite scale would turn the scores' zeros into NaNs
		// where the unfused chain gives infinities or zeros.
		if factor == 0 || math.IsInf(float64(factor), 0) || factor != factor {
			return "", 0, false
		}
		return x, factor, true
	}
	// transposed returns the input of the Transpose that alone makes x,
	// with its permutation, or x itself and nil.
	transposed := func(x string, chain *[]int) (string, []int64) {
		if n, j := made(x); n != nil && n.OpType == "Transpose" && len(n.Inputs) == 1 {
			perm := ops.Params[ops.TransposeParams](n, pm.OpsetOf(n)).Perm
			if t := g.TypeOf(n.Inputs[0]); perm != nil && t != nil && t.Shape != nil && len(perm) == len(t.Shape) {
				*chain = append(*chain, j)
				return n.Inputs[0], perm
			}
		}
		return x, nil
	}
	// masking returns the mask that n (an Add or a Where) applies to the
	// scores of shape st, and whether it is a Where's condition that hides
	// where it holds (mask_hides), when n is scores plus a mask of the
	// attention's type or a Where that writes a constant scalar of that
	// type at or below maskFill (fill) where its bool condition holds, or
	// where it does not. The mask must broadcast to st without widening
	// it. Its keys may be of any size, known or not (a decoder's mask,
	// cut to the keys by shape arithmetic, is of unknown size in a class
	// plan): one that is neither 1 nor the keys' would fail the chain's
	// second product too, and fails the fused node (a device refusing it
	// for a class plan's binding, which then takes a concrete plan).
	masking := func(n *graph.Node, scores string, st graph.Shape) (mask string, hides bool, fill float64, ok bool) {
		fits := func(m string) bool {
			t := g.TypeOf(m)
			if t == nil || t.Kind != graph.TensorKind || t.Shape == nil || len(t.Shape) > len(st) {
				return false
			}
			for i, d := range t.Shape {
				s := st[len(st)-len(t.Shape)+i]
				switch {
				case d.Known() && d.Value == 1, ops.SameDim(d, s):
				case i == len(t.Shape)-1 && !(d.Known() && s.Known()):
				default:
					return false
				}
			}
			return true
		}
		// low reports whether c is a constant scalar of the attention's
		// type at or below maskFill, and its value.
		low := func(c string) bool {
			t := g.Initializers[c]
			if t == nil || overridable[c] || t.DType != elem || t.NumElements() != 1 || t.Rank() > len(st) {
				return false
			}
			fill = t.Float64At(0)
			return fill <= maskFill
		}
		switch {
		case n.OpType == "Add" && len(n.Inputs) == 2:
			mask = n.Inputs[1]
			if mask == scores {
				mask = n.Inputs[0]
			}
			ok = mask != scores && (n.Inputs[0] == scores || n.Inputs[1] == scores) && typed(mask) && fits(mask)
		case n.OpType == "Where" && len(n.Inputs) == 3:
			mask = n.Inputs[0]
			if t := g.TypeOf(mask); mask == scores || t == nil || t.Kind != graph.TensorKind || t.Elem != graph.Bool || !fits(mask) {
				return "", false, 0, false
			}
			switch {
			case n.Inputs[1] == scores && low(n.Inputs[2]):
				ok = true
			case n.Inputs[2] == scores && low(n.Inputs[1]):
				hides, ok = true, true
			}
		}
		return mask, hides, fill, ok && typed(n.Outputs[0])
	}
	removed := 0
	for i, n := range g.Nodes {
		if gone[i] || n.Domain != "" || n.OpType != "MatMul" || len(n.Inputs) != 2 || len(n.Outputs) != 1 {
			continue
		}
		st := g.TypeOf(n.Outputs[0])
		if st == nil || st.Kind != graph.TensorKind || !fusable(st.Elem) || len(st.Shape) < 2 {
			continue
		}
		elem = st.Elem
		r := len(st.Shape)
		chain := []int{i}
		scale := float32(1)
		scores := n.Outputs[0]
		sm, j := sole(scores)
		// advance moves past node sm, fused away into the chain unless it
		// stays (rewritten), to the node that alone reads its output.
		advance := func(stays bool) {
			if !stays {
				chain = append(chain, j)
			}
			scores = sm.Outputs[0]
			sm, j = sole(scores)
		}
		if sm != nil && sm.OpType != "Softmax" {
			if x, f, ok := scaling(sm, r); ok && x == scores {
				scale *= f
				advance(false)
			}
		}
		var mask string
		var hides bool
		// combined, when set, is the Where that replaces node combinedAt
		// to make one float mask of a Where's and an Add's.
		var combined *graph.Node
		var combinedAt int
		var combinedType *graph.Type
		if sm != nil && sm.OpType != "Softmax" {
			m, h, fill, ok := masking(sm, scores, st.Shape)
			if !ok {
				continue
			}
			mask, hides = m, h
			where, first := sm.OpType == "Where", sm
			advance(false)
			// A float mask added after a Where's (Hugging Face's GPT-2:
			// the causal Where, then the attention mask) joins it in one
			// float mask, Where(condition, that mask, fill) in the
			// Add's place: scores plus it are the chain's scores but
			// where the Where hides, there the scores plus the fill,
			// which is as far below maskFill.
			if where && sm != nil && sm.OpType == "Add" {
				a, _, _, ok := masking(sm, scores, st.Shape)
				if !ok {
					continue
				}
				inputs := []string{first.Inputs[0], a, first.Inputs[2]}
				if hides {
					inputs = []string{first.Inputs[0], first.Inputs[1], a}
				}
				both, err := ops.Broadcast(g.TypeOf(inputs[0]).Shape, g.TypeOf(inputs[1]).Shape, g.TypeOf(inputs[2]).Shape)
				if err != nil || both == nil || len(both) > r {
					continue
				}
				combined = &graph.Node{Name: sm.Name, OpType: "Where", Inputs: inputs, Outputs: sm.Outputs, Doc: sm.Doc,
					Metadata: sm.Metadata, DeviceConfigs: sm.DeviceConfigs, Index: sm.Index}
				combinedAt, combinedType = j, graph.TensorType(elem, both)
				mask, hides, where = sm.Outputs[0], false, false
				advance(true)
			}
			// A Where's fill stays at or below maskFill under a positive
			// scale that keeps it there.
			if where && sm != nil {
				if x, f, ok := scaling(sm, r); ok && x == scores && f > 0 && fill*float64(f) <= maskFill {
					scale *= f
					advance(false)
				}
			}
		}
		if sm == nil || sm.OpType != "Softmax" || len(sm.Inputs) != 1 || !typed(scores) || !typed(sm.Outputs[0]) {
			continue
		}
		if axis := ops.Params[ops.SoftmaxParams](sm, pm.OpsetOf(sm)).Axis; axis != -1 && axis != int64(r-1) {
			continue
		}
		chain = append(chain, j)
		pv, l := sole(sm.Outputs[0])
		if pv == nil || pv.OpType != "MatMul" || len(pv.Inputs) != 2 || pv.Inputs[0] != sm.Outputs[0] || pv.Inputs[1] == sm.Outputs[0] || !typed(pv.Outputs[0]) {
			continue
		}
		chain = append(chain, l)
		q := n.Inputs[0]
		if d, k := made(q); d != nil {
			if x, f, ok := scaling(d, r); ok {
				scale *= f
				chain = append(chain, k)
				q = x
			}
		}
		q, permQ := transposed(q, &chain)
		k, permK := transposed(n.Inputs[1], &chain)
		v, permV := transposed(pv.Inputs[1], &chain)
		outputs, last := pv.Outputs, l
		var permY []int64
		if t, m := sole(pv.Outputs[0]); t != nil && t.OpType == "Transpose" {
			if perm := ops.Params[ops.TransposeParams](t, pm.OpsetOf(t)).Perm; len(perm) == r {
				permY, outputs, last = perm, t.Outputs, m
				chain = append(chain, m)
			}
		}
		operands := [3]string{q, k, v}
		var shapes [3]graph.Shape
		for o, name := range operands {
			if typed(name) {
				shapes[o] = g.TypeOf(name).Shape
			}
		}
		if !sameBatch(r, shapes, [3][]int64{permQ, permK, permV}) {
			continue
		}
		f := fusedProduct(n, "ScaledDotProductAttention", nil, outputs)
		f.Attrs = map[string]*graph.Attribute{"scale": {Name: "scale", Type: graph.AttrFloat, F: scale}}
		// Keys and values whose heads are repeated for grouped-query
		// attention are read unrepeated.
		k0, repK, nodesK := repeatedHeads(g, made, k, permK)
		v0, repV, nodesV := repeatedHeads(g, made, v, permV)
		if repK > 1 && repK == repV {
			operands[1], operands[2] = k0, v0
			shapes[1], shapes[2] = g.TypeOf(k0).Shape, g.TypeOf(v0).Shape
			f.Attrs["kv_repeat"] = &graph.Attribute{Name: "kv_repeat", Type: graph.AttrInt, I: repK}
			chain = append(append(chain, nodesK...), nodesV...)
		}
		if hides {
			f.Attrs["mask_hides"] = &graph.Attribute{Name: "mask_hides", Type: graph.AttrInt, I: 1}
		}
		for name, perm := range map[string][]int64{"perm_q": permQ, "perm_k": permK, "perm_v": permV, "perm_y": permY} {
			if perm != nil {
				f.Attrs[name] = &graph.Attribute{Name: name, Type: graph.AttrInts, Ints: perm}
			}
		}
		// Heads that a Slice and a Reshape cut out of a packed projection
		// are read from it through views.
		for o, name := range operands {
			if in, view, nodes := headView(g, made, name, [3][]int64{permQ, permK, permV}[o]); view != nil {
				operands[o] = in
				attr := [3]string{"view_q", "view_k", "view_v"}[o]
				f.Attrs[attr] = &graph.Attribute{Name: attr, Type: graph.AttrInts, Ints: view}
				chain = append(chain, nodes...)
			}
		}
		f.Inputs = operands[:]
		if mask != "" {
			f.Inputs = append(f.Inputs, mask)
		}
		if !sameDevice(pm, g, n, f, devices) || ops.SetParams(f, 1) != nil {
			continue
		}
		if _, err := ops.AttentionShape(f, 1, shapes[0], shapes[1], shapes[2]); err != nil {
			continue
		}
		g.Nodes[last] = f
		if combined != nil {
			g.Nodes[combinedAt] = combined
			g.SetType(mask, combinedType)
		}
		for _, c := range chain {
			if c != last {
				gone[c] = true
				removed++
			}
		}
	}
	return removed
}

// sameBatch reports whether the operands of shapes (nil: not tensors of
// the attention's element type), of rank r, read through perms (nil: as
// they are), have batch dimensions (all but the last two) known to be
// equal, so that fusing them cannot hide a broadcast.
func sameBatch(r int, operands [3]graph.Shape, perms [3][]int64) bool {
	var shapes [3]graph.Shape
	for i, s := range operands {
		if s == nil || len(s) != r {
			return false
		}
		shapes[i] = s
		if perm := perms[i]; perm != nil {
			shapes[i] = make(graph.Shape, r)
			for d, p := range perm {
				if p < 0 || p >= int64(r) {
					return false
				}
				shapes[i][d] = s[p]
			}
		}
	}
	for d := range r - 2 {
		for _, s := range shapes[1:] {
			if !ops.SameDim(shapes[0][d], s[d]) {
				return false
			}
		}
	}
	return true
}

// repeatedHeads returns the x0 whose heads x repeats for grouped-query
// attention, each rep times in a row (Hugging Face's repeat_kv, exported
// as Reshape(Expand(Unsqueeze(x0)))), and those three nodes, when x is
// such a Reshape (each value read only by the next node, made returning
// its maker then) whose shapes say it: the Unsqueeze adds an axis of 1
// after x0's heads (the axis perm puts third from last, the last batch
// axis), the Expand takes that axis alone to a known rep above 1, and the
// Reshape merges it into the heads. Otherwise rep is 0.
func repeatedHeads(g *graph.Graph, made func(string) (*graph.Node, int), x string, perm []int64) (x0 string, rep int64, nodes []int) {
	rs, i := made(x)
	if rs == nil || rs.OpType != "Reshape" || len(rs.Inputs) != 2 {
		return x, 0, nil
	}
	ex, j := made(rs.Inputs[0])
	if ex == nil || ex.OpType != "Expand" || len(ex.Inputs) != 2 {
		return x, 0, nil
	}
	un, k := made(ex.Inputs[0])
	if un == nil || un.OpType != "Unsqueeze" || len(un.Inputs) == 0 {
		return x, 0, nil
	}
	shape := func(name string) graph.Shape {
		if t := g.TypeOf(name); t != nil && t.Kind == graph.TensorKind {
			return t.Shape
		}
		return nil
	}
	xs, us, es, ys := shape(un.Inputs[0]), shape(un.Outputs[0]), shape(ex.Outputs[0]), shape(x)
	r := len(ys)
	if r < 3 || len(xs) != r || len(us) != r+1 || len(es) != r+1 || g.TypeOf(un.Inputs[0]).Elem != g.TypeOf(x).Elem {
		return x, 0, nil
	}
	h := r - 3
	if perm != nil {
		h = int(perm[r-3])
	}
	if h < 0 || h >= r || !us[h+1].Known() || us[h+1].Value != 1 || !es[h+1].Known() || es[h+1].Value < 2 || !xs[h].Known() {
		return x, 0, nil
	}
	rep = es[h+1].Value
	for a := range r {
		u := a
		if a > h {
			u = a + 1
		}
		want := xs[a]
		if a == h {
			want = graph.DimOf(xs[h].Value * rep)
		}
		if !ops.SameDim(us[u], xs[a]) || !ops.SameDim(es[u], xs[a]) || !ops.SameDim(ys[a], want) {
			return x, 0, nil
		}
	}
	return un.Inputs[0], rep, []int{i, j, k}
}

// headView returns the view (the view_q, view_k or view_v attribute of
// ScaledDotProductAttention, see ops.AttentionView) through which operand
// x is read from in, and the nodes that it spares, when x is the Reshape
// of a Slice of in (each value read only by the next node, made returning
// its maker then) that a strided view spells: an in of x's element type
// and known shape, one axis sliced with constant bounds and step 1, and a
// Reshape whose every axis walks whole dimensions of the slice or a part
// of one. Otherwise view is nil.
func headView(g *graph.Graph, made func(string) (*graph.Node, int), x string, perm []int64) (in string, view []int64, nodes []int) {
	rs, ri := made(x)
	if rs == nil || rs.OpType != "Reshape" {
		return "", nil, nil
	}
	sl, si := made(rs.Inputs[0])
	if sl == nil || sl.OpType != "Slice" || len(sl.Inputs) < 3 {
		return "", nil, nil
	}
	xt, pt := g.TypeOf(x), g.TypeOf(sl.Inputs[0])
	if xt == nil || pt == nil || pt.Kind != graph.TensorKind || pt.Elem != xt.Elem || pt.Shape == nil || xt.Shape == nil || !pt.Shape.Known() || !xt.Shape.Known() {
		return "", nil, nil
	}
	constant := func(i int) []int64 {
		if i >= len(sl.Inputs) || sl.Inputs[i] == "" {
			return nil
		}
		if t := g.Initializers[sl.Inputs[i]]; t != nil && (t.DType == graph.Int64 || t.DType == graph.Int32) {
			if v, err := t.Int64s(); err == nil {
				return v
			}
		}
		return []int64{}
	}
	starts, ends, axes, steps := constant(1), constant(2), constant(3), constant(4)
	shape := pt.Shape.Ints()
	if len(starts) != 1 || len(ends) != 1 || (axes != nil && len(axes) != 1) || (steps != nil && (len(steps) != 1 || steps[0] != 1)) {
		return "", nil, nil
	}
	axis := int64(0)
	if axes != nil {
		axis = axes[0]
	}
	if axis < 0 {
		axis += int64(len(shape))
	}
	if axis < 0 || axis >= int64(len(shape)) {
		return "", nil, nil
	}
	clamp := func(b int64) int64 {
		if b < 0 {
			b += shape[axis]
		}
		return min(max(b, 0), shape[axis])
	}
	start, end := clamp(starts[0]), clamp(ends[0])
	if end <= start {
		return "", nil, nil
	}
	strides := graph.Strides(shape)
	// The slice's dimensions, outer first, as (size, stride) pairs.
	var dims [][2]int64
	for a, d := range shape {
		if int64(a) == axis {
			d = end - start
		}
		if d != 1 {
			dims = append(dims, [2]int64{d, strides[a]})
		}
	}
	view = []int64{start * strides[axis], int64(len(xt.Shape))}
	for _, want := range xt.Shape.Ints() {
		var fs []int64
		for want > 1 {
			if len(dims) == 0 {
				return "", nil, nil
			}
			d := dims[0]
			switch {
			case want%d[0] == 0:
				fs, want, dims = append(fs, d[0], d[1]), want/d[0], dims[1:]
			case d[0]%want == 0:
				fs, dims[0], want = append(fs, want, d[1]*(d[0]/want)), [2]int64{d[0] / want, d[1]}, 1
			default:
				return "", nil, nil
			}
		}
		view = append(view, int64(len(fs)/2))
		view = append(view, fs...)
	}
	if len(dims) != 0 {
		return "", nil, nil
	}
	// The axes that the operand's matrices span must each have one
	// stride.
	n := &graph.Node{OpType: "ScaledDotProductAttention", Domain: ops.FusedDomain, Attrs: map[string]*graph.Attribute{"view_q": {Name: "view_q", Type: graph.AttrInts, Ints: view}}}
	v, err := ops.AttentionViews(n, 1)
	r := int64(len(xt.Shape))
	if err != nil || r < 2 {
		return "", nil, nil
	}
	rows, cols := r-2, r-1
	if perm != nil {
		rows, cols = perm[r-2], perm[r-1]
	}
	if _, ok := v[0].Stride(int(rows)); !ok {
		return "", nil, nil
	}
	if _, ok := v[0].Stride(int(cols)); !ok {
		return "", nil, nil
	}
	return sl.Inputs[0], view, []int{ri, si}
}
