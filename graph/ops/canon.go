package ops

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/onnxvk/onnxvk/graph"
)

// canonicalRule brings a node of one op of the default domain to the form
// of the op's newest schema.
type canonicalRule struct {
	// before is the version from which the op has its newest form: nodes
	// following an older version go through up (every version of an op
	// that up renames).
	before int64
	// up rewrites r.n in place: attributes that became inputs, renamed
	// attributes, an op renamed (Upsample to Resize). It returns false,
	// having changed nothing, to leave a node whose old form the new one
	// cannot express (see upResize).
	up func(r *rewriter) bool
}

// reduceAxes is the rule of a Reduce op whose axes became an input at
// version since.
func reduceAxes(since int64) canonicalRule {
	return canonicalRule{since, func(r *rewriter) bool { return r.intsToInput("axes", 1) }}
}

// canonical holds the ops of the default domain that Canonicalize
// rewrites; canonicalOps documents the others.
var canonical = map[string]canonicalRule{
	"Clip":            {11, upClip},
	"Pad":             {11, upPad},
	"Upsample":        {math.MaxInt64, upResize},
	"Resize":          {11, upResize},
	"Split":           {13, upSplit},
	"Squeeze":         {13, func(r *rewriter) bool { return r.intsToInput("axes", 1) }},
	"Unsqueeze":       {13, func(r *rewriter) bool { return r.intsToInput("axes", 1) }},
	"Slice":           {10, upSlice},
	"TopK":            {10, upTopK},
	"Dropout":         {12, upDropout},
	"ReduceSum":       reduceAxes(13),
	"ReduceL1":        reduceAxes(18),
	"ReduceL2":        reduceAxes(18),
	"ReduceLogSum":    reduceAxes(18),
	"ReduceLogSumExp": reduceAxes(18),
	"ReduceMax":       reduceAxes(18),
	"ReduceMean":      reduceAxes(18),
	"ReduceMin":       reduceAxes(18),
	"ReduceProd":      reduceAxes(18),
	"ReduceSumSquare": reduceAxes(18),
}

// Canonicalize brings every node of m (the main graph and every subgraph;
// model-local functions are inlined before) whose op canonical lists and
// that follows an older version than the op's newest schema to that
// schema's form, and records the version in the node (Node.Opset), so that
// shape inference, constant folding, kernels, lowerings, fusion and
// sharding see one form per op. Attributes that became inputs become
// initializers of the node's graph named after the node (its name, else
// its first output, then "/" and the input's name, made unique with a
// numeric suffix); a float bound or padding value of a type the load
// cannot know goes through a CastLike to the data's type, which constant
// folding removes. A node added that way takes the Index of the node it
// serves. Canonicalize expects a validated model (it trusts the old
// attributes' types) and is idempotent: it changes nothing in a model it
// has seen, so that many goroutines may plan that model. It returns the
// number of nodes it changed.
func Canonicalize(m *graph.Model) int {
	if m == nil || m.Graph == nil {
		return 0
	}
	c := &canonicalizer{m: m, names: map[string]bool{}}
	collectValueNames(m.Graph, c.names)
	c.graph(m.Graph)
	return c.changed
}

// canonicalizer is the state of one Canonicalize call.
type canonicalizer struct {
	m *graph.Model
	// names holds every value name of the model, so that new ones are
	// unique in any scope.
	names   map[string]bool
	changed int
}

// collectValueNames adds every value name of g and its subgraphs to names.
func collectValueNames(g *graph.Graph, names map[string]bool) {
	for _, vi := range slices.Concat(g.Inputs, g.Outputs) {
		names[vi.Name] = true
	}
	for name := range g.Initializers {
		names[name] = true
	}
	for name := range g.SparseInitializers {
		names[name] = true
	}
	for _, n := range g.Nodes {
		for _, v := range slices.Concat(n.Inputs, n.Outputs) {
			names[v] = true
		}
		for _, sub := range graph.NodeSubgraphs(n) {
			collectValueNames(sub, names)
		}
	}
}

// graph canonicalizes the nodes of g and its subgraphs.
func (c *canonicalizer) graph(g *graph.Graph) {
	var out []*graph.Node
	for i, n := range g.Nodes {
		for _, sub := range graph.NodeSubgraphs(n) {
			c.graph(sub)
		}
		rule, ok := canonical[n.OpType]
		version := n.OpsetIn(c.m.Opsets)
		if !ok || n.Domain != graph.DefaultDomain || version >= rule.before && version >= Newest(n.OpType) {
			if out != nil {
				out = append(out, n)
			}
			continue
		}
		r := &rewriter{c: c, g: g, n: n, version: version}
		if version < rule.before && !rule.up(r) {
			if out != nil {
				out = append(out, n)
			}
			continue
		}
		n.Opset = Newest(n.OpType)
		c.changed++
		if len(r.before)+len(r.after) > 0 && out == nil {
			out = slices.Clone(g.Nodes[:i])
		}
		if out != nil {
			out = append(append(append(out, r.before...), n), r.after...)
		}
	}
	if out != nil {
		g.Nodes = out
	}
}

// Newest returns the version of the newest schema of op name of the
// default domain.
func Newest(name string) int64 {
	v := Versions(graph.DefaultDomain, name)
	if len(v) == 0 {
		return 0
	}
	return v[len(v)-1].Since
}

// rewriter rewrites one node n of graph g, which follows version.
type rewriter struct {
	c       *canonicalizer
	g       *graph.Graph
	n       *graph.Node
	version int64
	// before and after are the nodes made for n, to go before and after
	// it.
	before, after []*graph.Node
}

// base is the stem of the names made for the node.
func (r *rewriter) base() string {
	switch {
	case r.n.Name != "":
		return r.n.Name
	case len(r.n.Outputs) > 0 && r.n.Outputs[0] != "":
		return r.n.Outputs[0]
	}
	return fmt.Sprintf("%s#%d", r.n.OpType, r.n.Index)
}

// fresh returns a value name made from the node's base and what, unused in
// the model, and reserves it.
func (r *rewriter) fresh(what string) string {
	name := r.base() + "/" + what
	for k := 2; r.c.names[name]; k++ {
		name = fmt.Sprintf("%s/%s_%d", r.base(), what, k)
	}
	r.c.names[name] = true
	return name
}

// setInput makes value the node's input i, padding with omitted inputs.
// The node gets a list of its own.
func (r *rewriter) setInput(i int, value string) {
	r.n.Inputs = slices.Clone(r.n.Inputs)
	for len(r.n.Inputs) <= i {
		r.n.Inputs = append(r.n.Inputs, "")
	}
	r.n.Inputs[i] = value
}

// drop removes attributes from the node.
func (r *rewriter) drop(names ...string) {
	if r.n.Attrs == nil {
		return
	}
	r.n.Attrs = maps.Clone(r.n.Attrs)
	for _, name := range names {
		delete(r.n.Attrs, name)
	}
}

// setAttr sets an attribute of the node.
func (r *rewriter) setAttr(a *graph.Attribute) {
	r.n.Attrs = maps.Clone(r.n.Attrs)
	if r.n.Attrs == nil {
		r.n.Attrs = map[string]*graph.Attribute{}
	}
	r.n.Attrs[a.Name] = a
}

// initializer adds t to the node's graph under a fresh name made from
// what and returns the name.
func (r *rewriter) initializer(what string, t *graph.Tensor) string {
	name := r.fresh(what)
	if r.g.Initializers == nil {
		r.g.Initializers = map[string]*graph.Tensor{}
	}
	r.g.Initializers[name] = t
	return name
}

// vector returns a 1-D tensor of v.
func vector[T graph.Elem](dt graph.DType, v []T) *graph.Tensor {
	t, err := graph.FromSlice(dt, []int64{int64(len(v))}, v)
	if err != nil {
		panic(err) // the shape is v's length
	}
	return t
}

// intsToInput moves the ints attribute name, when present, to input i as
// an int64 initializer. It returns true, as a rule does that rewrites.
func (r *rewriter) intsToInput(name string, i int) bool {
	a := r.n.Attr(name)
	if a == nil {
		return true
	}
	r.setInput(i, r.initializer(name, vector(graph.Int64, a.Ints)))
	r.drop(name)
	return true
}

// likeInput returns a value holding the float v as the element type of
// the node's input 0: a float32 initializer cast by a CastLike node added
// before the node.
func (r *rewriter) likeInput(what string, v float32) string {
	src := r.initializer(what+"_float", graph.Scalar(graph.Float, v))
	out := r.fresh(what)
	r.before = append(r.before, &graph.Node{Name: out, OpType: "CastLike", Inputs: []string{src, r.n.Inputs[0]},
		Outputs: []string{out}, Index: r.n.Index, Opset: Newest("CastLike")})
	return out
}

// upClip moves Clip's min and max attributes (before version 11) to
// inputs 1 and 2; an absent one stays absent, which does not clip.
func upClip(r *rewriter) bool {
	for i, name := range []string{"min", "max"} {
		if a := r.n.Attr(name); a != nil {
			r.setInput(i+1, r.likeInput(name, a.F))
		}
	}
	r.drop("min", "max", "consumed_inputs")
	return true
}

// upPad moves Pad's pads (paddings in version 1) and value attributes
// (before version 11) to inputs 1 and 2; a value of 0 is the default and
// stays absent. mode is kept.
func upPad(r *rewriter) bool {
	p := Params[PadParams](r.n, r.version)
	pads := p.Pads
	if r.version < 2 {
		pads = p.Paddings
	}
	r.setInput(1, r.initializer("pads", vector(graph.Int64, pads)))
	if v := p.Value; v != 0 {
		r.setInput(2, r.likeInput("value", v))
	}
	r.drop("pads", "paddings", "value")
	return true
}

// upSplit moves Split's split attribute (before version 13) to input 1.
func upSplit(r *rewriter) bool { return r.intsToInput("split", 1) }

// upSlice moves Slice-1's starts, ends and axes attributes to inputs 1 to
// 3.
func upSlice(r *rewriter) bool {
	for i, name := range []string{"starts", "ends", "axes"} {
		r.intsToInput(name, i+1)
	}
	return true
}

// upTopK moves TopK-1's k attribute to input 1, a one-element int64
// tensor.
func upTopK(r *rewriter) bool {
	r.setInput(1, r.initializer("k", vector(graph.Int64, []int64{Params[TopKParams](r.n, r.version).K})))
	r.drop("k")
	return true
}

// upDropout brings Dropout before version 12 to Dropout-13: the ratio
// attribute becomes input 1 (a float32 scalar), is_test and
// consumed_inputs go (inference ignores them, as it ignores the ratio),
// and a mask output before version 10, which has the data's type, becomes
// the bool mask cast to it by a CastLike node after the Dropout.
func upDropout(r *rewriter) bool {
	if a := r.n.Attr("ratio"); a != nil {
		r.setInput(1, r.initializer("ratio", graph.Scalar(graph.Float, a.F)))
	}
	r.drop("ratio", "is_test", "consumed_inputs")
	if r.version >= 10 || len(r.n.Outputs) < 2 || r.n.Outputs[1] == "" {
		return true
	}
	mask := r.n.Outputs[1]
	flags := r.fresh("mask_bool")
	r.n.Outputs = slices.Clone(r.n.Outputs)
	r.n.Outputs[1] = flags
	cast := &graph.Node{Name: mask, OpType: "CastLike", Inputs: []string{flags, r.n.Inputs[0]},
		Outputs: []string{mask}, Index: r.n.Index, Opset: Newest("CastLike")}
	r.after = append(r.after, cast)
	return true
}

// upResize brings Upsample and Resize-10 to Resize's newest form: inputs
// X, no roi, then the scales (from Upsample-1's height_scale and
// width_scale or Upsample-7's scales attribute, as a float32
// initializer), the asymmetric coordinate transformation, and in nearest
// mode the rounding the old versions apply: down when enlarging an axis,
// up when shrinking it. Upsample only enlarges (its scales are at least 1
// by its definition); a Resize-10 in nearest mode whose scales are not
// constant, or enlarge some axes and shrink others, keeps its old form.
// Upsample-1's bilinear mode is linear, and Upsample has no cubic mode:
// one asked for keeps cubic_coeff_a 0, as before.
func upResize(r *rewriter) bool {
	var mode string
	var up *UpsampleParams
	if r.n.OpType == "Upsample" {
		up = Params[UpsampleParams](r.n, r.version)
		mode = up.Mode
	} else {
		mode = Params[ResizeParams](r.n, r.version).Mode
	}
	var scales string
	switch {
	case up != nil && r.version < 7:
		scales = r.initializer("scales", vector(graph.Float, []float32{1, 1, up.HeightScale, up.WidthScale}))
		if mode == "bilinear" {
			mode = "linear"
		}
	case up != nil && r.version < 9:
		scales = r.initializer("scales", vector(graph.Float, up.Scales))
	default:
		scales = r.n.Input(1)
	}
	nearest := "floor"
	if mode == "nearest" && r.n.OpType == "Resize" {
		t := r.constant(scales)
		if t == nil {
			return false
		}
		up, down := false, false
		for i := range t.NumElements() {
			f := t.Float64At(i)
			up, down = up || f > 1, down || f < 1
		}
		if up && down {
			return false
		}
		if down {
			nearest = "ceil"
		}
	}
	if mode == "cubic" && r.n.OpType == "Upsample" {
		r.setAttr(&graph.Attribute{Name: "cubic_coeff_a", Type: graph.AttrFloat, F: 0})
	}
	r.n.OpType = "Resize"
	r.n.Inputs = []string{r.n.Inputs[0], "", scales}
	r.drop("height_scale", "width_scale", "scales")
	r.setAttr(&graph.Attribute{Name: "mode", Type: graph.AttrString, S: []byte(mode)})
	r.setAttr(&graph.Attribute{Name: "coordinate_transformation_mode", Type: graph.AttrString, S: []byte("asymmetric")})
	if mode == "nearest" {
		r.setAttr(&graph.Attribute{Name: "nearest_mode", Type: graph.AttrString, S: []byte(nearest)})
	}
	return true
}

// constant returns the value of name when it is a constant the caller
// cannot replace (an initializer of the node's graph or an enclosing one
// that is not also a graph input, or a Constant node's value), else nil.
func (r *rewriter) constant(name string) *graph.Tensor {
	for g := r.g; g != nil; g = g.Parent {
		if t, ok := g.Initializers[name]; ok {
			if g.IsInput(name) {
				return nil
			}
			return t
		}
		for _, n := range g.Nodes {
			if n.OpType == "Constant" && n.Domain == graph.DefaultDomain && slices.Contains(n.Outputs, name) {
				return n.AttrTensor("value")
			}
		}
	}
	return nil
}
