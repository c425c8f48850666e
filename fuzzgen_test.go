package onnxvk_test

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/x448/float16"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/hostfallback"
)

// fuzzGen decodes a fuzz input into a small model: every choice (the
// opset, each node's op, its inputs, attributes, shapes and values) takes
// the next bytes of the input, and 0 once the input is used up, so that
// every input makes a model and the fuzzer's mutations change it a little.
type fuzzGen struct {
	data  []byte
	pos   int
	opset int64
	// ops are the default-domain ops that have a CPU kernel and a current
	// schema at opset.
	ops []string
	// names numbers the values and nodes made so far.
	names int
	// feeds are the values a Run gives the graph inputs.
	feeds map[string]graph.Value
	// moderate keeps floats to the ordinary ones: the differential mode's
	// tolerances do not hold where huge values cancel out.
	moderate bool
}

// fuzzOpsets are the ai.onnx versions a fuzz model imports, chosen by
// the input's first byte modulo their number. Versions are only ever
// appended: the corpus's first bytes are kept below the number of
// versions, so that each of its inputs keeps its version.
var fuzzOpsets = []int64{18, 13, 21, 17, 11, 9, 7, 19, 15, 22, 23, 24}

// fuzzInts are the integers attributes and tensors draw from: the first
// ones small and valid for most uses, then boundary and hostile ones.
var fuzzInts = []int64{0, 1, 2, -1, 3, 4, -2, 5, 7, 16, -5, 1 << 31, 1<<31 - 1, 1<<32 - 1, 1 << 40,
	1 << 62, -1 << 62, math.MaxInt64, math.MinInt64, 1 << 20, -1 << 31}

// fuzzFloats are the floats attributes and tensors draw from.
var fuzzFloats = []float64{0, 1, -1, 0.5, 2, -0.5, 3, 1e-5, math.NaN(), math.Inf(1), math.Inf(-1), 1e30, -1e30,
	math.MaxFloat32, 1e-40, 100, math.Copysign(0, -1), 1e10, math.MaxFloat64}

// fuzzDTypes are the element types of made tensors, the common ones first.
var fuzzDTypes = []graph.DType{graph.Float, graph.Int64, graph.Int32, graph.Bool, graph.Float16, graph.Double,
	graph.Uint8, graph.Int8, graph.BFloat16, graph.Uint64, graph.String, graph.Int16, graph.Uint32}

// fuzzDims are the sizes of the dimensions of made tensors.
var fuzzDims = []int64{1, 2, 3, 0, 4, 5}

// fuzzHostileDims are the sizes a declared input shape may claim.
var fuzzHostileDims = []int64{-5, -1, 1 << 62, 1 << 40, math.MaxInt64, 1 << 31}

// fuzzStrings are the string attributes and elements drawn from: every
// string default of the catalogue, the other values ONNX defines for the
// common string attributes, and nonsense.
var fuzzStrings = func() []string {
	set := map[string]bool{}
	for _, name := range ops.Names(graph.DefaultDomain) {
		for _, s := range ops.Versions(graph.DefaultDomain, name) {
			for _, a := range s.Attrs {
				if a.Default != nil && a.Type == graph.AttrString {
					set[string(a.Default.S)] = true
				}
			}
		}
	}
	for _, s := range []string{"SAME_UPPER", "SAME_LOWER", "VALID", "reflect", "edge", "wrap", "linear", "cubic",
		"RIGHT", "LEFT", "add", "mul", "max", "min", "tf_crop_and_resize", "align_corners", "round_prefer_ceil",
		"floor", "ceil", "not_larger", "not_smaller", "ij,jk->ik", "...i,...i->...", "ii->i", "bogus", ""} {
		set[s] = true
	}
	return slices.Sorted(func(yield func(string) bool) {
		for s := range set {
			if !yield(s) {
				return
			}
		}
	})
}()

func newFuzzGen(data []byte) *fuzzGen {
	g := &fuzzGen{data: data, feeds: map[string]graph.Value{}}
	g.opset = fuzzOpsets[g.intn(len(fuzzOpsets))]
	for _, name := range ops.Names(graph.DefaultDomain) {
		s := ops.Lookup(graph.DefaultDomain, name, g.opset)
		if s != nil && !s.Deprecated && hostfallback.Lookup(graph.DefaultDomain, name) != nil {
			g.ops = append(g.ops, name)
		}
	}
	return g
}

// byte returns the next byte of the input, 0 past its end.
func (g *fuzzGen) byte() byte {
	if g.pos >= len(g.data) {
		return 0
	}
	b := g.data[g.pos]
	g.pos++
	return b
}

// intn returns a choice in [0, n).
func (g *fuzzGen) intn(n int) int {
	if n <= 1 {
		return 0
	}
	if n <= 256 {
		return int(g.byte()) % n
	}
	return (int(g.byte())<<8 | int(g.byte())) % n
}

// rare reports a choice taken once in k.
func (g *fuzzGen) rare(k int) bool { return g.intn(k) == k-1 }

// int draws an integer: mostly one of the small ones.
func (g *fuzzGen) int() int64 {
	if g.rare(4) {
		return fuzzInts[g.intn(len(fuzzInts))]
	}
	return fuzzInts[g.intn(9)]
}

// float draws a float: mostly one of the ordinary ones, only those when
// g is moderate.
func (g *fuzzGen) float() float64 {
	if g.rare(4) && !g.moderate {
		return fuzzFloats[g.intn(len(fuzzFloats))]
	}
	return fuzzFloats[g.intn(8)]
}

func (g *fuzzGen) name(prefix string) string {
	g.names++
	return fmt.Sprintf("%s%d", prefix, g.names)
}

// fuzzScope is a graph being made: the values its nodes may read (its own
// and, in a subgraph, its parents').
type fuzzScope struct {
	g      *graph.Graph
	parent *fuzzScope
	values []string
	types  map[string]*graph.Type
	depth  int
}

func (sc *fuzzScope) add(name string, t *graph.Type) {
	sc.values = append(sc.values, name)
	sc.types[name] = t
}

// visible lists the values the scope's nodes may read.
func (sc *fuzzScope) visible() []string {
	var out []string
	for s := sc; s != nil; s = s.parent {
		out = append(out, s.values...)
	}
	return out
}

func (sc *fuzzScope) typeOf(name string) *graph.Type {
	for s := sc; s != nil; s = s.parent {
		if t, ok := s.types[name]; ok {
			return t
		}
	}
	return nil
}

// model makes the fuzz model: 1 to 4 nodes whose every output is a graph
// output.
func (g *fuzzGen) model() *graph.Model {
	gr := graph.NewGraph("fuzz")
	sc := &fuzzScope{g: gr, types: map[string]*graph.Type{}}
	for range 1 + g.intn(4) {
		n := g.node(sc)
		for _, o := range n.Outputs {
			if o != "" {
				gr.Outputs = append(gr.Outputs, &graph.ValueInfo{Name: o})
			}
		}
	}
	ir := int64(8)
	if g.opset >= 19 {
		ir = 10
	}
	return &graph.Model{Name: "fuzz", IRVersion: ir, Opsets: map[string]int64{"": g.opset}, Graph: gr}
}

// node adds a node of a random op to sc: its inputs are values of the
// scope, new constants or (in the main graph) new inputs, its attributes
// drawn from the schema's.
func (g *fuzzGen) node(sc *fuzzScope) *graph.Node {
	op := g.ops[g.intn(len(g.ops))]
	s := ops.Lookup(graph.DefaultDomain, op, g.opset)
	if sc.depth >= 2 && hasGraphAttr(s) {
		op, s = "Identity", ops.Lookup(graph.DefaultDomain, "Identity", g.opset)
	}
	n := &graph.Node{Name: g.name("n"), OpType: op, Attrs: map[string]*graph.Attribute{}, Index: len(sc.g.Nodes)}
	nIn := s.MinInputs + g.intn(spread(s.MinInputs, s.MaxInputs)+1)
	for i := range nIn {
		switch {
		case (i >= s.MinInputs || slices.Contains(s.OptionalInputs, i)) && g.rare(4):
			n.Inputs = append(n.Inputs, "")
		case op == "Loop" && i == 0:
			n.Inputs = append(n.Inputs, g.constant(sc, graph.Int64, []int64{}))
		case op == "Loop" && i == 1:
			n.Inputs = append(n.Inputs, g.constant(sc, graph.Bool, []int64{}))
		default:
			n.Inputs = append(n.Inputs, g.input(sc))
		}
	}
	nOut := max(s.MinOutputs, 1) + g.intn(spread(s.MinOutputs, s.MaxOutputs)+1)
	for i := range nOut {
		if i > 0 && g.rare(4) {
			n.Outputs = append(n.Outputs, "")
			continue
		}
		n.Outputs = append(n.Outputs, g.name("v"))
	}
	for _, a := range s.Attrs {
		if !a.Required && !g.rare(3) {
			continue
		}
		if at := g.attr(sc, n, a); at != nil {
			n.Attrs[a.Name] = at
		}
	}
	sc.g.Nodes = append(sc.g.Nodes, n)
	for _, o := range n.Outputs {
		if o != "" {
			sc.add(o, nil)
		}
	}
	return n
}

// spread is how many inputs or outputs beyond the minimum a node may have.
func spread(lo, hi int) int {
	if hi < 0 {
		return 3
	}
	return min(hi-lo, 3)
}

func hasGraphAttr(s *ops.Schema) bool {
	return slices.ContainsFunc(s.Attrs, func(a ops.AttrSpec) bool { return a.Type == graph.AttrGraph })
}

// input picks a value for a node input: one the scope has, or a new
// constant or graph input.
func (g *fuzzGen) input(sc *fuzzScope) string {
	if vis := sc.visible(); len(vis) > 0 && g.intn(2) == 0 {
		return vis[len(vis)-1-g.intn(len(vis))]
	}
	dt := g.dtype()
	shape := g.shape()
	if sc.parent == nil && g.intn(3) == 0 {
		return g.graphInput(sc, dt, shape)
	}
	return g.constant(sc, dt, shape)
}

// dtype draws an element type: float half the time.
func (g *fuzzGen) dtype() graph.DType {
	switch g.intn(4) {
	case 0, 1:
		return graph.Float
	case 2:
		return fuzzDTypes[g.intn(3)]
	}
	return fuzzDTypes[g.intn(len(fuzzDTypes))]
}

// shape draws a rank from 0 to 4 and small dimensions.
func (g *fuzzGen) shape() []int64 {
	shape := make([]int64, g.intn(5))
	for i := range shape {
		shape[i] = fuzzDims[g.intn(len(fuzzDims))]
	}
	return shape
}

// constant adds an initializer.
func (g *fuzzGen) constant(sc *fuzzScope, dt graph.DType, shape []int64) string {
	name := g.name("c")
	t := g.tensor(dt, shape)
	sc.g.Initializers[name] = t
	sc.add(name, t.ValueType())
	return name
}

// graphInput adds a graph input fed with a tensor of the shape; its
// declared shape is that shape, symbolic, unknown or hostile.
func (g *fuzzGen) graphInput(sc *fuzzScope, dt graph.DType, shape []int64) string {
	name := g.name("x")
	t := g.tensor(dt, shape)
	g.feeds[name] = t
	declared := graph.ShapeOf(shape...)
	switch g.intn(6) {
	case 1:
		for i := range declared {
			declared[i] = graph.SymDim(fmt.Sprint("d", i))
		}
	case 2:
		declared = nil
	case 3:
		if len(declared) > 0 {
			declared[g.intn(len(declared))] = graph.DimOf(fuzzHostileDims[g.intn(len(fuzzHostileDims))])
		}
	}
	sc.g.Inputs = append(sc.g.Inputs, &graph.ValueInfo{Name: name, Type: graph.TensorType(dt, declared)})
	sc.add(name, t.ValueType())
	return name
}

// tensor makes a tensor whose elements are drawn from the palettes.
func (g *fuzzGen) tensor(dt graph.DType, shape []int64) *graph.Tensor {
	t := graph.NewTensor(dt, shape)
	for k := range int(t.NumElements()) {
		g.setElem(t, k)
	}
	return t
}

// setElem sets element k of t to a drawn value.
func (g *fuzzGen) setElem(t *graph.Tensor, k int) {
	switch t.DType {
	case graph.String:
		t.Strings[k] = fuzzStrings[g.intn(len(fuzzStrings))]
	case graph.Bool:
		t.Data[k] = byte(g.intn(2))
	case graph.Float:
		graph.View[float32](t)[k] = float32(g.float())
	case graph.Double:
		graph.View[float64](t)[k] = g.float()
	case graph.Float16:
		graph.View[uint16](t)[k] = float16.Fromfloat32(float32(g.float())).Bits()
	case graph.BFloat16:
		graph.View[uint16](t)[k] = graph.Float32ToBFloat16(float32(g.float()))
	case graph.Int64:
		graph.View[int64](t)[k] = g.int()
	case graph.Uint64:
		graph.View[uint64](t)[k] = uint64(g.int())
	case graph.Int32:
		graph.View[int32](t)[k] = int32(g.int())
	case graph.Uint32:
		graph.View[uint32](t)[k] = uint32(g.int())
	case graph.Int16:
		graph.View[int16](t)[k] = int16(g.int())
	case graph.Int8:
		graph.View[int8](t)[k] = int8(g.int())
	case graph.Uint8:
		t.Data[k] = uint8(g.int())
	}
}

// attr draws a value of the attribute's type: its default, an ordinary
// value or a hostile one; subgraphs fit the op's signature.
func (g *fuzzGen) attr(sc *fuzzScope, n *graph.Node, spec ops.AttrSpec) *graph.Attribute {
	a := &graph.Attribute{Name: spec.Name, Type: spec.Type}
	if spec.Default != nil && spec.Type != graph.AttrGraph && g.rare(4) {
		return spec.Default
	}
	switch spec.Type {
	case graph.AttrInt:
		a.I = g.int()
	case graph.AttrFloat:
		a.F = float32(g.float())
	case graph.AttrString:
		a.S = []byte(fuzzStrings[g.intn(len(fuzzStrings))])
	case graph.AttrInts:
		for range g.intn(7) {
			a.Ints = append(a.Ints, g.int())
		}
	case graph.AttrFloats:
		for range g.intn(5) {
			a.Floats = append(a.Floats, float32(g.float()))
		}
	case graph.AttrStrings:
		for range g.intn(4) {
			a.Strings = append(a.Strings, []byte(fuzzStrings[g.intn(len(fuzzStrings))]))
		}
	case graph.AttrTensor:
		a.T = g.tensor(g.dtype(), g.shape())
	case graph.AttrSparseTensor:
		a.Sparse = g.sparse()
	case graph.AttrGraph:
		a.G = g.body(sc, n)
	default:
		return nil
	}
	return a
}

// sparse makes a sparse tensor of up to 4 values at drawn (possibly out
// of range) linear indices in drawn, possibly huge, dims.
func (g *fuzzGen) sparse() *graph.SparseTensor {
	nnz := int64(g.intn(5))
	dims := g.shape()
	if g.rare(4) && len(dims) > 0 {
		dims[0] = fuzzHostileDims[g.intn(len(fuzzHostileDims))]
	}
	return &graph.SparseTensor{Values: g.tensor(graph.Float, []int64{nnz}), Indices: g.tensor(graph.Int64, []int64{nnz}), Dims: dims}
}

// body makes a subgraph for n's graph attribute: inputs as the op passes
// them (If none; Loop the iteration and condition, then the carried
// values; Scan and SequenceMap one per node input), 0 to 2 nodes, and
// as many outputs as the op reads from it.
func (g *fuzzGen) body(parent *fuzzScope, n *graph.Node) *graph.Graph {
	bg := graph.NewGraph(g.name("body"))
	bg.Parent = parent.g
	sc := &fuzzScope{g: bg, parent: parent, types: map[string]*graph.Type{}, depth: parent.depth + 1}
	var inTypes []*graph.Type
	nOut := len(n.Outputs)
	switch n.OpType {
	case "Loop":
		inTypes = []*graph.Type{graph.TensorType(graph.Int64, graph.ShapeOf()), graph.TensorType(graph.Bool, graph.ShapeOf())}
		for _, in := range n.Inputs[min(2, len(n.Inputs)):] {
			inTypes = append(inTypes, looseType(parent.typeOf(in)))
		}
		nOut++
	case "Scan", "SequenceMap":
		for _, in := range n.Inputs {
			inTypes = append(inTypes, looseType(parent.typeOf(in)))
		}
	}
	for i, t := range inTypes {
		name := g.name("b")
		bg.Inputs = append(bg.Inputs, &graph.ValueInfo{Name: name, Type: t})
		sc.add(name, t)
		if n.OpType == "Loop" && i == 1 && !g.rare(4) {
			// The condition passes through: the trip count ends the loop.
			bg.Outputs = append(bg.Outputs, &graph.ValueInfo{Name: name})
		}
	}
	for range g.intn(3) {
		g.node(sc)
	}
	if len(sc.values) == 0 {
		g.node(sc)
	}
	for len(bg.Outputs) < nOut {
		v := sc.values[len(sc.values)-1-g.intn(len(sc.values))]
		bg.Outputs = append(bg.Outputs, &graph.ValueInfo{Name: v})
	}
	return bg
}

// looseType is t with its shape forgotten (a body's input takes every
// iteration's shape), a float tensor where t is unknown.
func looseType(t *graph.Type) *graph.Type {
	if t == nil {
		return graph.TensorType(graph.Float, nil)
	}
	c := t.Clone()
	c.Shape = nil
	return c
}

// describe lists the model's nodes with their inputs' types and their
// attributes, for a failure's message.
func describeModel(m *graph.Model, feeds map[string]graph.Value) string {
	var b strings.Builder
	fmt.Fprintf(&b, "opset %d\n", m.Opset(graph.DefaultDomain))
	for _, in := range m.Graph.Inputs {
		fmt.Fprintf(&b, "input %s %s fed %v\n", in.Name, in.Type, feeds[in.Name])
	}
	describeGraph(&b, m.Graph, "")
	return b.String()
}

func describeGraph(b *strings.Builder, gr *graph.Graph, indent string) {
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range gr.Initializers {
			if !yield(k) {
				return
			}
		}
	}) {
		fmt.Fprintf(b, "%sconst %s = %v\n", indent, name, gr.Initializers[name])
	}
	for _, n := range gr.Nodes {
		fmt.Fprintf(b, "%s%s(%s) -> %s\n", indent, n, strings.Join(n.Inputs, ", "), strings.Join(n.Outputs, ", "))
		for _, name := range slices.Sorted(func(yield func(string) bool) {
			for k := range n.Attrs {
				if !yield(k) {
					return
				}
			}
		}) {
			a := n.Attrs[name]
			if a.G != nil {
				fmt.Fprintf(b, "%s  %s: graph inputs %s outputs %s\n", indent, name, valueNames(a.G.Inputs), valueNames(a.G.Outputs))
				describeGraph(b, a.G, indent+"    ")
				continue
			}
			fmt.Fprintf(b, "%s  %s = %s\n", indent, name, describeAttr(a))
		}
	}
}

func valueNames(vis []*graph.ValueInfo) string {
	names := make([]string, len(vis))
	for i, v := range vis {
		names[i] = v.Name
	}
	return strings.Join(names, ", ")
}

func describeAttr(a *graph.Attribute) string {
	switch a.Type {
	case graph.AttrString, graph.AttrStrings:
		return fmt.Sprintf("%q %q", a.S, a.Strings)
	case graph.AttrSparseTensor:
		return fmt.Sprintf("sparse %v at %v in %v", a.Sparse.Values, a.Sparse.Indices, a.Sparse.Dims)
	}
	v := map[graph.AttrType]any{graph.AttrInt: a.I, graph.AttrInts: a.Ints, graph.AttrFloat: a.F, graph.AttrFloats: a.Floats, graph.AttrTensor: a.T}
	return fmt.Sprint(v[a.Type])
}
