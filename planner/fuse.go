package planner

import (
	"maps"
	"math"
	"slices"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// fusableActivation reports whether the planner folds a into the Conv
// before it (ops.FusableActivation); the fused node's activation
// attribute is then a's op name.
func fusableActivation(a *graph.Node) bool {
	return ops.Has(a.Domain, a.OpType, ops.FusableActivation)
}

// fuse rewrites pm's graph g (the planner's own copy: nodes are replaced,
// never modified) where the device that would run a pattern's first node
// runs the fused node too, and the values fused away have no other
// reader (another node, a subgraph, the graph's outputs):
//
//   - a float32 Conv followed by Relu, Clip (constant bounds), LeakyRelu,
//     Sigmoid, HardSigmoid or HardSwish becomes one FusedConv of
//     ops.FusedDomain;
//   - a float32 Conv followed by the Add of another value of the same
//     shape (a residual connection), and by one of those activations
//     after the Add where there is one, becomes one FusedConv with
//     that value as its Sum input;
//   - a float32 Conv whose output x is read only by Sigmoid and by the Mul
//     of x and that Sigmoid (SiLU, as PyTorch exports it) becomes one
//     FusedConv with the Swish activation;
//   - a float32 BatchNormalization in inference form followed by one of
//     those activations becomes one FusedBatchNorm, and that with the
//     pointwise Conv or FusedConv that alone reads it, one NormConv;
//   - a float32 MatMul followed by the Add of a constant vector along the
//     product's last dimension becomes one FusedMatMul;
//   - an attention written out as MatMul, Softmax over the last axis and
//     MatMul, in float32 or float16, with a constant scale of the queries
//     or the scores and the Transposes that alone feed its operands or
//     read its result, becomes one ScaledDotProductAttention that reads
//     the heads through strides where they lie (and computes a float16
//     one in fp32, see fuseAttentions);
//   - a float32 Transpose that swaps the last two axes and is read only
//     as B by a MatMul becomes, with the MatMul, one MatMulTransB reading
//     the Transpose's input (attention's Q·Kᵀ without copying K);
//   - LayerNormalization over the last axis written out in nine nodes (as
//     PyTorch exports it before opset 17: ReduceMean, Sub, Pow 2,
//     ReduceMean, Add ε, Sqrt, Div, Mul γ, Add β), in float32 or float16,
//     becomes one LayerNormalization of ops.FusedDomain (which computes a
//     float16 one in float32, as ONNX Runtime's fusion does), and with
//     the Add of two values of its input's shape whose sum it alone reads
//     (a residual connection), one SkipLayerNormalization;
//   - the exact GELU written out in five nodes (as PyTorch exports F.gelu
//     before opset 20: Div by √2, Erf, Add 1, Mul by x, Mul by ½) becomes
//     one Gelu of ops.FusedDomain (see fuseGelus).
//
// It returns the number of nodes removed. A model that imports
// ops.FusedDomain itself is left alone.
func fuse(pm *graph.Model, g *graph.Graph, devices []Device) int {
	if _, ok := pm.Opsets[ops.FusedDomain]; ok {
		return 0
	}
	uses := map[string]int{}
	consumers := map[string][]int{}
	for i, n := range g.Nodes {
		for _, name := range n.Inputs {
			uses[name]++
			consumers[name] = append(consumers[name], i)
		}
		for _, name := range graph.Captured(n) {
			uses[name] += 2 // read by a subgraph: never fused away
		}
	}
	for _, o := range g.Outputs {
		uses[o.Name] += 2
	}
	overridable := graphInputs(g)
	gone := map[int]bool{}
	fused := fuseLayerNorms(pm, g, devices, uses, consumers, overridable, gone)
	fused += fuseGelus(pm, g, devices, uses, consumers, overridable, gone)
	fused += fuseAttentions(pm, g, devices, uses, consumers, overridable, gone)
	fused += fuseMatMulBias(pm, g, devices, uses, consumers, overridable, gone)
	fused += fuseTransposedB(pm, g, devices, uses, consumers, gone)
	fused += foldBatchNorms(pm, g, uses, consumers, overridable, gone)
	fused += fuseConvAdds(pm, g, devices, uses, consumers, overridable, gone)
	fused += fuseConvSwish(pm, g, devices, uses, consumers, gone)
	fused += fuseBatchNormActivations(pm, g, devices, uses, consumers, overridable, gone)
	for i, n := range g.Nodes {
		if gone[i] || n.Domain != "" || n.OpType != "Conv" || len(n.Outputs) != 1 || uses[n.Outputs[0]] != 1 {
			continue
		}
		if t := g.TypeOf(n.Outputs[0]); t == nil || t.Kind != graph.TensorKind || !fusable(t.Elem) {
			continue
		}
		j := consumers[n.Outputs[0]][0]
		a := g.Nodes[j]
		if !fusableActivation(a) || len(a.Inputs) == 0 || a.Inputs[0] != n.Outputs[0] || len(a.Outputs) != 1 {
			continue
		}
		alpha, beta, ok := activationParams(g, a, pm.OpsetOf(a), overridable)
		if !ok {
			continue
		}
		attrs := maps.Clone(n.Attrs)
		if attrs == nil {
			attrs = map[string]*graph.Attribute{}
		}
		attrs["activation"] = &graph.Attribute{Name: "activation", Type: graph.AttrString, S: []byte(a.OpType)}
		attrs["alpha"] = &graph.Attribute{Name: "alpha", Type: graph.AttrFloat, F: alpha}
		attrs["beta"] = &graph.Attribute{Name: "beta", Type: graph.AttrFloat, F: beta}
		f := &graph.Node{Name: n.Name, OpType: "FusedConv", Domain: ops.FusedDomain, Inputs: n.Inputs,
			Outputs: a.Outputs, Attrs: attrs, Doc: n.Doc, Metadata: n.Metadata, DeviceConfigs: n.DeviceConfigs, Index: n.Index}
		if !sameDevice(pm, g, n, f, devices) {
			continue
		}
		if ops.SetParams(f, 1) != nil {
			continue
		}
		g.Nodes[i] = f
		gone[j] = true
		fused++
	}
	fused += fuseNormConvs(pm, g, devices, uses, consumers, gone)
	if fused == 0 {
		return 0
	}
	fused += dropUnread(g, uses, gone)
	nodes := g.Nodes[:0:0]
	for i, n := range g.Nodes {
		if !gone[i] {
			nodes = append(nodes, n)
		}
	}
	g.Nodes = nodes
	pm.Opsets = maps.Clone(pm.Opsets)
	if pm.Opsets == nil {
		pm.Opsets = map[string]int64{}
	}
	pm.Opsets[ops.FusedDomain] = 1
	return fused
}

// dropUnread marks gone the nodes that the fusions left without a
// reader (the shape arithmetic of a fused-away Expand): those whose
// outputs had readers (uses) and now have none among the nodes not gone,
// their captures and the graph's outputs, the nodes that then lose their
// last reader with them. It returns how many it marked.
func dropUnread(g *graph.Graph, uses map[string]int, gone map[int]bool) int {
	reads := map[string]int{}
	for i, n := range g.Nodes {
		if gone[i] {
			continue
		}
		for _, name := range n.Inputs {
			reads[name]++
		}
		for _, name := range graph.Captured(n) {
			reads[name]++
		}
	}
	for _, o := range g.Outputs {
		reads[o.Name]++
	}
	dropped := 0
	for i := len(g.Nodes) - 1; i >= 0; i-- {
		n := g.Nodes[i]
		if gone[i] {
			continue
		}
		read, had := false, false
		for _, o := range n.Outputs {
			read = read || o != "" && reads[o] > 0
			had = had || o != "" && uses[o] > 0
		}
		if read || !had {
			continue
		}
		gone[i] = true
		dropped++
		for _, name := range n.Inputs {
			reads[name]--
		}
		for _, name := range graph.Captured(n) {
			reads[name]--
		}
	}
	return dropped
}

// activationParams returns the alpha and beta attributes of the fused node
// for activation a: Clip's bounds (constant scalar inputs), LeakyRelu's
// slope and HardSigmoid's slope and offset. ok is false when a bound is
// not a constant float32 scalar.
func activationParams(g *graph.Graph, a *graph.Node, opset int64, overridable map[string]bool) (alpha, beta float32, ok bool) {
	switch a.OpType {
	case "LeakyRelu":
		return ops.Params[ops.LeakyReluParams](a, opset).Alpha, 0, true
	case "HardSigmoid":
		p := ops.Params[ops.HardSigmoidParams](a, opset)
		return p.Alpha, p.Beta, true
	case "Clip":
	default:
		return 0, 0, true
	}
	lo, hi := float32(math.Inf(-1)), float32(math.Inf(1))
	for k, bound := range []*float32{&lo, &hi} {
		if k+1 >= len(a.Inputs) || a.Inputs[k+1] == "" {
			continue
		}
		t := g.Initializers[a.Inputs[k+1]]
		if t == nil || overridable[a.Inputs[k+1]] || !fusable(t.DType) || t.NumElements() != 1 {
			return 0, 0, false
		}
		*bound = float32(t.Float64At(0))
	}
	return lo, hi, true
}

// fusable reports whether the fusions of a Conv or MatMul take tensors of
// element type e: float32 and float16 (where the device that takes the
// node takes its fused replacement too, see sameDevice).
func fusable(e graph.DType) bool { return e == graph.Float || e == graph.Float16 }

// sameDevice reports whether the first device that supports node n also
// supports its fused replacement f, so that fusion never moves work off a
// device.
func sameDevice(pm *graph.Model, g *graph.Graph, n, f *graph.Node, devices []Device) bool {
	overridable := graphInputs(g)
	q := query(g, n, pm.OpsetOf(n), overridable, nil)
	for _, d := range devices {
		if d.Supports(q) {
			return d.Supports(query(g, f, 1, overridable, nil))
		}
	}
	return false
}

// fuseLayerNorms replaces each written-out LayerNormalization (see fuse)
// by one node at the place of its last node, marks the other eight gone
// and returns how many nodes it removed.
func fuseLayerNorms(pm *graph.Model, g *graph.Graph, devices []Device, uses map[string]int, consumers map[string][]int, overridable map[string]bool, gone map[int]bool) int {
	producer := producers(g)
	only := func(name, op string) (*graph.Node, int) { return soleReader(g, uses, consumers, gone, name, op) }
	// elem is the element type of the normalization at hand: float32 or
	// float16, which its constants share.
	var elem graph.DType
	constant := func(name string) *graph.Tensor {
		if t := g.Initializers[name]; t != nil && !overridable[name] && t.DType == elem {
			return t
		}
		return nil
	}
	// operand returns n's input other than name when it is a constant of
	// the normalization's element type.
	operand := func(n *graph.Node, name string) (string, *graph.Tensor) {
		if len(n.Inputs) != 2 {
			return "", nil
		}
		other := n.Inputs[0]
		if other == name {
			other = n.Inputs[1]
		}
		if n.Inputs[0] != name && n.Inputs[1] != name {
			return "", nil
		}
		return other, constant(other)
	}
	removed := 0
	for i, sub := range g.Nodes {
		if gone[i] || sub.Domain != "" || sub.OpType != "Sub" || len(sub.Inputs) != 2 {
			continue
		}
		x, d := sub.Inputs[0], sub.Outputs[0]
		t := g.TypeOf(x)
		if t == nil || t.Kind != graph.TensorKind || !fusable(t.Elem) || t.Shape == nil || len(t.Shape) == 0 || !t.Shape[len(t.Shape)-1].Known() {
			continue
		}
		elem = t.Elem
		rank, last := len(t.Shape), t.Shape[len(t.Shape)-1].Value
		mi, ok := producer[sub.Inputs[1]]
		if !ok || uses[sub.Inputs[1]] != 1 || !lastAxisMean(g, g.Nodes[mi], pm.OpsetOf(g.Nodes[mi]), x, rank, overridable) {
			continue
		}
		if uses[d] != 2 || len(consumers[d]) != 2 {
			continue
		}
		pi, di := consumers[d][0], consumers[d][1]
		if g.Nodes[pi].OpType != "Pow" {
			pi, di = di, pi
		}
		pow, div := g.Nodes[pi], g.Nodes[di]
		if gone[pi] || gone[di] || pow.Domain != "" || pow.OpType != "Pow" || len(pow.Inputs) != 2 || pow.Inputs[0] != d ||
			div.Domain != "" || div.OpType != "Div" || len(div.Inputs) != 2 || div.Inputs[0] != d || div.Inputs[1] == d {
			continue
		}
		if e := constant(pow.Inputs[1]); e == nil || e.NumElements() != 1 || e.Float64At(0) != 2 {
			continue
		}
		mean2, m2 := only(pow.Outputs[0], "ReduceMean")
		if mean2 == nil || !lastAxisMean(g, mean2, pm.OpsetOf(mean2), pow.Outputs[0], rank, overridable) {
			continue
		}
		addEps, ae := only(mean2.Outputs[0], "Add")
		if addEps == nil {
			continue
		}
		_, eps := operand(addEps, mean2.Outputs[0])
		if eps == nil || eps.NumElements() != 1 {
			continue
		}
		sqrt, sq := only(addEps.Outputs[0], "Sqrt")
		if sqrt == nil || uses[sqrt.Outputs[0]] != 1 || consumers[sqrt.Outputs[0]][0] != di {
			continue
		}
		mul, mu := only(div.Outputs[0], "Mul")
		if mul == nil {
			continue
		}
		gamma, gt := operand(mul, div.Outputs[0])
		addB, ab := only(mul.Outputs[0], "Add")
		if gt == nil || addB == nil || gt.Rank() != 1 || gt.Shape[0] != last {
			continue
		}
		beta, bt := operand(addB, mul.Outputs[0])
		if bt == nil || bt.Rank() != 1 || bt.Shape[0] != last {
			continue
		}
		f := &graph.Node{Name: sub.Name, OpType: "LayerNormalization", Domain: ops.FusedDomain,
			Inputs: []string{x, gamma, beta}, Outputs: addB.Outputs, Index: sub.Index,
			Attrs: map[string]*graph.Attribute{
				"axis":    {Name: "axis", Type: graph.AttrInt, I: -1},
				"epsilon": {Name: "epsilon", Type: graph.AttrFloat, F: float32(eps.Float64At(0))},
			}}
		chain := []int{mi, i, pi, m2, ae, sq, di, mu}
		// A residual Add whose sum only the normalization reads (its mean
		// and its Sub) goes into it where the device takes the fused form.
		if ai, ok := producer[x]; ok && !gone[ai] && uses[x] == 2 {
			if a, b, ok := residualAdd(g, g.Nodes[ai], t); ok {
				s := *f
				s.OpType, s.Inputs = "SkipLayerNormalization", []string{a, b, gamma, beta}
				if sameDevice(pm, g, sub, &s, devices) && ops.SetParams(&s, 1) == nil {
					f, chain = &s, append(chain, ai)
				}
			}
		}
		if !sameDevice(pm, g, sub, f, devices) {
			continue
		}
		if ops.SetParams(f, 1) != nil {
			continue
		}
		g.Nodes[ab] = f
		for _, j := range chain {
			gone[j] = true
		}
		removed += len(chain)
	}
	return removed
}

// residualAdd returns the operands of n when it is an Add of two values
// of sum's type and shape (no broadcasting).
func residualAdd(g *graph.Graph, n *graph.Node, sum *graph.Type) (a, b string, ok bool) {
	if n.Domain != "" || n.OpType != "Add" || len(n.Inputs) != 2 || len(n.Outputs) != 1 {
		return "", "", false
	}
	for _, name := range n.Inputs {
		t := g.TypeOf(name)
		if t == nil || t.Kind != graph.TensorKind || t.Elem != sum.Elem || len(t.Shape) != len(sum.Shape) {
			return "", "", false
		}
		for d, dim := range t.Shape {
			if !ops.SameDim(dim, sum.Shape[d]) {
				return "", "", false
			}
		}
	}
	return n.Inputs[0], n.Inputs[1], true
}

// producers maps each value that a node of g makes to that node's index.
func producers(g *graph.Graph) map[string]int {
	producer := map[string]int{}
	for i, n := range g.Nodes {
		for _, name := range n.Outputs {
			producer[name] = i
		}
	}
	return producer
}

// soleReader returns the node, of op in the default domain with one output
// and not gone, that alone reads value name, and its index; nil and -1
// when there is none.
func soleReader(g *graph.Graph, uses map[string]int, consumers map[string][]int, gone map[int]bool, name, op string) (*graph.Node, int) {
	if uses[name] != 1 {
		return nil, -1
	}
	j := consumers[name][0]
	if n := g.Nodes[j]; !gone[j] && n.Domain == "" && n.OpType == op && len(n.Outputs) == 1 {
		return n, j
	}
	return nil, -1
}

// lastAxisMean reports whether n is a ReduceMean of x over its last axis
// only (of rank), keeping dimensions, the axes a constant input.
func lastAxisMean(g *graph.Graph, n *graph.Node, opset int64, x string, rank int, overridable map[string]bool) bool {
	if n.Domain != "" || n.OpType != "ReduceMean" || len(n.Inputs) < 2 || n.Inputs[0] != x || ops.ReductionOf(n, opset).Keepdims != 1 ||
		overridable[n.Inputs[1]] {
		return false
	}
	t := g.Initializers[n.Inputs[1]]
	if t == nil || t.DType != graph.Int64 {
		return false
	}
	axes, err := t.Int64s()
	return err == nil && len(axes) == 1 && (axes[0] == -1 || axes[0] == int64(rank-1))
}

// fuseMatMulBias replaces each float32 MatMul whose only reader adds a
// constant vector along the product's last dimension by one FusedMatMul
// at the place of the MatMul, marks the Add gone and returns how many
// nodes it removed.
func fuseMatMulBias(pm *graph.Model, g *graph.Graph, devices []Device, uses map[string]int, consumers map[string][]int, overridable map[string]bool, gone map[int]bool) int {
	removed := 0
	for i, n := range g.Nodes {
		if gone[i] || n.Domain != "" || n.OpType != "MatMul" || len(n.Inputs) != 2 || len(n.Outputs) != 1 || uses[n.Outputs[0]] != 1 {
			continue
		}
		out := n.Outputs[0]
		t := g.TypeOf(out)
		if t == nil || t.Kind != graph.TensorKind || !fusable(t.Elem) || len(t.Shape) == 0 || !t.Shape[len(t.Shape)-1].Known() {
			continue
		}
		j := consumers[out][0]
		add := g.Nodes[j]
		if gone[j] || add.Domain != "" || add.OpType != "Add" || len(add.Inputs) != 2 || len(add.Outputs) != 1 {
			continue
		}
		bias := add.Inputs[1]
		if bias == out {
			bias = add.Inputs[0]
		}
		b := g.Initializers[bias]
		if b == nil || overridable[bias] || b.DType != t.Elem || b.Rank() != 1 || b.Shape[0] != t.Shape[len(t.Shape)-1].Value {
			continue
		}
		f := fusedProduct(n, "FusedMatMul", []string{n.Inputs[0], n.Inputs[1], bias}, add.Outputs)
		if !sameDevice(pm, g, n, f, devices) {
			continue
		}
		if ops.SetParams(f, 1) != nil {
			continue
		}
		g.Nodes[i] = f
		gone[j] = true
		removed++
	}
	return removed
}

// fusedProduct is the node of ops.FusedDomain op that replaces product n,
// with n's name, documentation, metadata, device configurations and index.
func fusedProduct(n *graph.Node, op string, inputs, outputs []string) *graph.Node {
	return &graph.Node{Name: n.Name, OpType: op, Domain: ops.FusedDomain, Inputs: inputs,
		Outputs: outputs, Doc: n.Doc, Metadata: n.Metadata, DeviceConfigs: n.DeviceConfigs, Index: n.Index}
}

// fuseTransposedB replaces each MatMul whose B is the float32 output of a
// Transpose that swaps the last two axes, and that nothing else reads, by
// one MatMulTransB of the Transpose's input at the place of the MatMul,
// marks the Transpose gone and returns how many nodes it removed.
func fuseTransposedB(pm *graph.Model, g *graph.Graph, devices []Device, uses map[string]int, consumers map[string][]int, gone map[int]bool) int {
	removed := 0
	for i, n := range g.Nodes {
		if gone[i] || n.Domain != "" || n.OpType != "Transpose" || len(n.Inputs) != 1 || len(n.Outputs) != 1 || uses[n.Outputs[0]] != 1 {
			continue
		}
		out := n.Outputs[0]
		t := g.TypeOf(out)
		if t == nil || t.Kind != graph.TensorKind || t.Elem != graph.Float || t.Shape == nil || !swapsLastTwo(ops.Params[ops.TransposeParams](n, pm.OpsetOf(n)).Perm, len(t.Shape)) {
			continue
		}
		j := consumers[out][0]
		mm := g.Nodes[j]
		if gone[j] || mm.Domain != "" || mm.OpType != "MatMul" || len(mm.Inputs) != 2 || mm.Inputs[1] != out || mm.Inputs[0] == out || len(mm.Outputs) != 1 {
			continue
		}
		f := fusedProduct(mm, "MatMulTransB", []string{mm.Inputs[0], n.Inputs[0]}, mm.Outputs)
		if sameDevice(pm, g, mm, f, devices) {
			g.Nodes[j] = f
			gone[i] = true
			removed++
		}
	}
	return removed
}

// swapsLastTwo reports whether Transpose's perm (nil: reverse all axes) of
// a rank-r tensor, r ≥ 2, swaps the last two axes and keeps the others.
func swapsLastTwo(perm []int64, r int) bool {
	if r < 2 {
		return false
	}
	if perm == nil {
		return r == 2
	}
	if len(perm) != r {
		return false
	}
	for d, p := range perm[:r-2] {
		if p != int64(d) {
			return false
		}
	}
	return perm[r-2] == int64(r-1) && perm[r-1] == int64(r-2)
}

// fuseConvAdds replaces each float32 Conv whose only reader is an Add of
// another value of the conv's shape (see fuse), with the activation that
// alone reads the sum where there is one, by one FusedConv at the place of
// the last node it replaces (where the other value has been computed),
// marks the others gone and returns how many nodes it removed.
func fuseConvAdds(pm *graph.Model, g *graph.Graph, devices []Device, uses map[string]int, consumers map[string][]int, overridable map[string]bool, gone map[int]bool) int {
	removed := 0
	for i, n := range g.Nodes {
		if gone[i] || n.Domain != "" || n.OpType != "Conv" || len(n.Inputs) < 2 || len(n.Outputs) != 1 || uses[n.Outputs[0]] != 1 {
			continue
		}
		out := n.Outputs[0]
		t := g.TypeOf(out)
		if t == nil || t.Kind != graph.TensorKind || !fusable(t.Elem) || !t.Shape.Known() {
			continue
		}
		j := consumers[out][0]
		add := g.Nodes[j]
		if gone[j] || add.Domain != "" || add.OpType != "Add" || len(add.Inputs) != 2 || len(add.Outputs) != 1 {
			continue
		}
		other := add.Inputs[0]
		if other == out {
			other = add.Inputs[1]
		}
		if ot := g.TypeOf(other); other == out || ot == nil || ot.Kind != graph.TensorKind || ot.Elem != t.Elem || !ot.Shape.Known() || !slices.Equal(ot.Shape.Ints(), t.Shape.Ints()) {
			continue
		}
		attrs := maps.Clone(n.Attrs)
		if attrs == nil {
			attrs = map[string]*graph.Attribute{}
		}
		last := j
		if sum := add.Outputs[0]; uses[sum] == 1 {
			k := consumers[sum][0]
			a := g.Nodes[k]
			if fusableActivation(a) && !gone[k] && len(a.Inputs) > 0 && a.Inputs[0] == sum && len(a.Outputs) == 1 {
				if alpha, beta, ok := activationParams(g, a, pm.OpsetOf(a), overridable); ok {
					last = k
					attrs["activation"] = &graph.Attribute{Name: "activation", Type: graph.AttrString, S: []byte(a.OpType)}
					attrs["alpha"] = &graph.Attribute{Name: "alpha", Type: graph.AttrFloat, F: alpha}
					attrs["beta"] = &graph.Attribute{Name: "beta", Type: graph.AttrFloat, F: beta}
				}
			}
		}
		bias := ""
		if len(n.Inputs) > 2 {
			bias = n.Inputs[2]
		}
		f := &graph.Node{Name: n.Name, OpType: "FusedConv", Domain: ops.FusedDomain, Inputs: []string{n.Inputs[0], n.Inputs[1], bias, other},
			Outputs: g.Nodes[last].Outputs, Attrs: attrs, Doc: n.Doc, Metadata: n.Metadata, DeviceConfigs: n.DeviceConfigs, Index: n.Index}
		if !sameDevice(pm, g, n, f, devices) {
			continue
		}
		if ops.SetParams(f, 1) != nil {
			continue
		}
		g.Nodes[last] = f
		gone[i] = true
		if last != j {
			gone[j] = true
			removed++
		}
		removed++
	}
	return removed
}

// fuseConvSwish replaces each float32 Conv followed by SiLU written out as
// Sigmoid and Mul (see fuse) by one FusedConv at the place of the Mul,
// marks the Conv and the Sigmoid gone and returns how many nodes it
// removed.
func fuseConvSwish(pm *graph.Model, g *graph.Graph, devices []Device, uses map[string]int, consumers map[string][]int, gone map[int]bool) int {
	removed := 0
	for i, n := range g.Nodes {
		if gone[i] || n.Domain != "" || n.OpType != "Conv" || len(n.Outputs) != 1 || uses[n.Outputs[0]] != 2 {
			continue
		}
		out := n.Outputs[0]
		if t := g.TypeOf(out); t == nil || t.Kind != graph.TensorKind || !fusable(t.Elem) {
			continue
		}
		sig, mul := -1, -1
		for _, k := range consumers[out] {
			switch c := g.Nodes[k]; {
			case gone[k] || c.Domain != "" || len(c.Outputs) != 1:
			case c.OpType == "Sigmoid" && len(c.Inputs) == 1:
				sig = k
			case c.OpType == "Mul" && len(c.Inputs) == 2:
				mul = k
			}
		}
		if sig < 0 || mul < 0 {
			continue
		}
		s, m := g.Nodes[sig].Outputs[0], g.Nodes[mul]
		if uses[s] != 1 || !(m.Inputs[0] == out && m.Inputs[1] == s || m.Inputs[0] == s && m.Inputs[1] == out) {
			continue
		}
		attrs := maps.Clone(n.Attrs)
		if attrs == nil {
			attrs = map[string]*graph.Attribute{}
		}
		attrs["activation"] = &graph.Attribute{Name: "activation", Type: graph.AttrString, S: []byte(ops.ActSwish)}
		f := &graph.Node{Name: n.Name, OpType: "FusedConv", Domain: ops.FusedDomain, Inputs: n.Inputs,
			Outputs: m.Outputs, Attrs: attrs, Doc: n.Doc, Metadata: n.Metadata, DeviceConfigs: n.DeviceConfigs, Index: n.Index}
		if !sameDevice(pm, g, n, f, devices) {
			continue
		}
		if ops.SetParams(f, 1) != nil {
			continue
		}
		g.Nodes[mul] = f
		gone[i], gone[sig] = true, true
		removed += 2
	}
	return removed
}
