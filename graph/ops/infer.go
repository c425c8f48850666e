package ops

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"weak"

	"github.com/onnxvk/onnxvk/graph"
)

// latestOpset is the newest ai.onnx opset the catalog describes; a model that
// does not import the default domain is inferred against it.
const latestOpset = 24

// InferModel runs type and shape inference over m's main graph and every
// subgraph, filling Graph.ValueInfo. inputs overrides the types of graph
// inputs (for concrete run shapes); nil keeps the declared types. It returns
// the values known at plan time (initializers, constants and propagated
// shape computations) by name.
//
// With eval set, a value a rule computes for a node whose inputs are all
// known is computed again by eval, the run-time kernel, whose outputs
// replace the rule's: what constant folding stores is then what a Run
// would compute, and a node whose kernel fails keeps no value (it runs,
// and fails, at run time) instead of folding to a result no Run gives.
//
// A declared symbolic dimension gives way to an inferred known size; two
// different known sizes for one dimension are an error that names the node
// and the value. InferModel changes nothing but the ValueInfo maps of m's
// graphs, in which it replaces entries (never mutating a ValueInfo). The
// declared types of a graph are its ValueInfo as the first call over it
// found them, so the same model may be inferred again with other input
// shapes.
func InferModel(m *graph.Model, inputs map[string]*graph.Type, eval Evaluator) (map[string]*graph.Tensor, error) {
	if m == nil || m.Graph == nil {
		return nil, fmt.Errorf("ops: infer: model has no graph")
	}
	in := &inferer{m: m, eval: eval, known: map[string]*graph.Tensor{}, bindings: map[string]int64{},
		declared: map[*graph.Graph]map[string]*graph.Type{}}
	s, err := in.newScope(m.Graph, nil)
	if err != nil {
		return nil, err
	}
	for name := range inputs {
		if !m.Graph.IsInput(name) {
			return nil, fmt.Errorf("ops: infer: %q is not an input of the model", name)
		}
	}
	for _, vi := range m.Graph.Inputs {
		declared := s.declaredInput(vi)
		t := declared
		if o, ok := inputs[vi.Name]; ok && o != nil {
			if t, err = in.merge(declared, o.Clone(), true); err != nil {
				return nil, fmt.Errorf("ops: infer: input %q: given %s, declared %s: %w", vi.Name, o, declared, err)
			}
		}
		if err := checkSize(t); err != nil {
			return nil, fmt.Errorf("ops: infer: input %q: %w", vi.Name, err)
		}
		s.setType(vi.Name, t)
	}
	if err := in.run(s); err != nil {
		return nil, err
	}
	return in.known, nil
}

// checkSize refuses a type whose known dimensions already make a tensor
// that graph.Bytes refuses (a negative size, a count that overflows, more
// than graph.MaxBytes), for tensors and the tensors of sequences and
// optionals; unknown dimensions count as 1.
func checkSize(t *graph.Type) error {
	for ; t != nil; t = t.Inner {
		if t.Kind != graph.TensorKind && t.Kind != graph.SparseTensorKind {
			continue
		}
		dims := make([]int64, 0, len(t.Shape))
		for _, d := range t.Shape {
			if d.Known() {
				dims = append(dims, d.Value)
			} else if d.Param == "" && d.Value < -1 {
				dims = append(dims, d.Value)
			}
		}
		if _, err := graph.Bytes(t.Elem, dims); err != nil {
			return err
		}
	}
	return nil
}

// Evaluator computes node n, imported at opset, from the values of its
// inputs (nil for an omitted one) as the run-time kernel does, and returns
// its outputs (nil for one that is not a tensor), or the kernel's error.
type Evaluator func(n *graph.Node, opset int64, inputs []*graph.Tensor) ([]*graph.Tensor, error)

// inferer is the state of one InferModel call.
type inferer struct {
	m    *graph.Model
	eval Evaluator
	// known collects every value computed or constant at plan time.
	known map[string]*graph.Tensor
	// bindings are the symbolic dimensions that the input overrides fixed.
	bindings map[string]int64
	// declared keeps each graph's declared types as they were before this
	// call wrote ValueInfo, for subgraphs inferred more than once.
	declared map[*graph.Graph]map[string]*graph.Type
}

// scope is one graph being inferred; names not found in it are looked up in
// the enclosing scopes.
type scope struct {
	g        *graph.Graph
	parent   *scope
	types    map[string]*graph.Type
	values   map[string]*graph.Tensor
	syms     map[string]*symTensor
	declared map[string]*graph.Type
}

// newScope prepares a scope for g: declared types, initializer types and
// the values of the initializers that no input overrides.
func (in *inferer) newScope(g *graph.Graph, parent *scope) (*scope, error) {
	s := &scope{g: g, parent: parent, types: map[string]*graph.Type{}, values: map[string]*graph.Tensor{},
		syms: map[string]*symTensor{}, declared: map[string]*graph.Type{}}
	if d, ok := in.declared[g]; ok {
		s.declared = d
		return s.addInitializers(in), nil
	}
	for name, t := range declaredTypes(g) {
		s.declared[name] = t
	}
	for _, vi := range g.Outputs {
		if vi.Type == nil {
			continue
		}
		t, err := in.merge(s.declared[vi.Name], vi.Type, false)
		if err != nil {
			return nil, fmt.Errorf("ops: infer: graph %q output %q: declared %s and %s: %w",
				g.Name, vi.Name, s.declared[vi.Name], vi.Type, err)
		}
		s.declared[vi.Name] = t
	}
	in.declared[g] = s.declared
	return s.addInitializers(in), nil
}

// addInitializers records the types of the graph's initializers and the
// values of those that no input overrides.
func (s *scope) addInitializers(in *inferer) *scope {
	g := s.g
	for name, sp := range g.SparseInitializers {
		if sp != nil && sp.Values != nil {
			s.setType(name, graph.TensorType(sp.Values.DType, graph.ShapeOf(sp.Dims...)))
		}
	}
	for name, t := range g.Initializers {
		if t == nil {
			continue
		}
		s.setType(name, t.ValueType())
		if !g.IsInput(name) {
			s.values[name] = t
			in.known[name] = t
		}
	}
	return s
}

// declaredInput returns the declared type of a graph input.
func (s *scope) declaredInput(vi *graph.ValueInfo) *graph.Type {
	if vi.Type != nil {
		return vi.Type
	}
	if t := s.types[vi.Name]; t != nil {
		return t
	}
	return s.declared[vi.Name]
}

// setType records the type of a value of the scope's graph.
func (s *scope) setType(name string, t *graph.Type) {
	if t == nil {
		return
	}
	s.types[name] = t
	doc := ""
	if old := s.g.ValueInfo[name]; old != nil {
		doc = old.Doc
	}
	if s.g.ValueInfo == nil {
		s.g.ValueInfo = map[string]*graph.ValueInfo{}
	}
	s.g.ValueInfo[name] = &graph.ValueInfo{Name: name, Type: t, Doc: doc}
}

// declaredOf keeps, without keeping the graphs alive, each graph's
// declared value types as they were the first time inference saw it, so
// that a later call over the same graph (the planner infers each new set of
// input shapes; subgraphs may be shared between its copies) does not take
// the types an earlier call wrote into ValueInfo for declared ones.
var (
	declaredMu sync.Mutex
	declaredOf = map[weak.Pointer[graph.Graph]]map[string]*graph.Type{}
)

// declaredTypes returns g's declared value types; the map is shared and
// must not be modified.
func declaredTypes(g *graph.Graph) map[string]*graph.Type {
	wp := weak.Make(g)
	declaredMu.Lock()
	defer declaredMu.Unlock()
	if d, ok := declaredOf[wp]; ok {
		return d
	}
	d := make(map[string]*graph.Type, len(g.ValueInfo))
	for name, vi := range g.ValueInfo {
		if vi != nil && vi.Type != nil {
			d[name] = vi.Type
		}
	}
	declaredOf[wp] = d
	runtime.AddCleanup(g, func(wp weak.Pointer[graph.Graph]) {
		declaredMu.Lock()
		delete(declaredOf, wp)
		declaredMu.Unlock()
	}, wp)
	return d
}

// typeOf finds the type of a value in the scope or an enclosing one.
func (s *scope) typeOf(name string) *graph.Type {
	for x := s; x != nil; x = x.parent {
		if t, ok := x.types[name]; ok {
			return t
		}
	}
	for x := s; x != nil; x = x.parent {
		if t, ok := x.declared[name]; ok {
			return t
		}
	}
	return nil
}

// valueOf finds the plan-time value of a value, or nil.
func (s *scope) valueOf(name string) *graph.Tensor {
	for x := s; x != nil; x = x.parent {
		if v, ok := x.values[name]; ok {
			return v
		}
		if _, ok := x.types[name]; ok {
			return nil
		}
	}
	return nil
}

// symOf finds the symbolic value of a value, or nil.
func (s *scope) symOf(name string) *symTensor {
	for x := s; x != nil; x = x.parent {
		if v, ok := x.syms[name]; ok {
			return v
		}
		if _, ok := x.types[name]; ok {
			return nil
		}
	}
	return nil
}

// run infers every node of the scope's graph in order.
func (in *inferer) run(s *scope) error {
	for _, n := range s.g.Nodes {
		if err := in.node(s, n); err != nil {
			return err
		}
	}
	for _, vi := range s.g.Outputs {
		if _, ok := s.types[vi.Name]; ok || s.declared[vi.Name] == nil {
			continue
		}
		if t := s.typeOf(vi.Name); t != nil {
			s.setType(vi.Name, t)
		}
	}
	return nil
}

// normDomain maps "ai.onnx" to the default domain's empty name.
func normDomain(d string) string {
	if d == "ai.onnx" {
		return graph.DefaultDomain
	}
	return d
}

// opset returns the version of n's domain (normalised: domain) whose
// schema n follows: its own (Node.Opset) or the model's import.
func (in *inferer) opset(n *graph.Node, domain string) int64 {
	if n.Opset > 0 {
		return n.Opset
	}
	if v := in.m.Opset(domain); v > 0 {
		return v
	}
	if domain == graph.DefaultDomain {
		if v := in.m.Opset("ai.onnx"); v > 0 {
			return v
		}
		return latestOpset
	}
	return 0
}

// node infers one node and records its outputs' types and values.
func (in *inferer) node(s *scope, n *graph.Node) (err error) {
	domain := normDomain(n.Domain)
	opset := in.opset(n, domain)
	c := &InferContext{
		Node:      n,
		Opset:     opset,
		InTypes:   make([]*graph.Type, len(n.Inputs)),
		InValues:  make([]*graph.Tensor, len(n.Inputs)),
		OutTypes:  make([]*graph.Type, len(n.Outputs)),
		OutValues: make([]*graph.Tensor, len(n.Outputs)),
	}
	for i, name := range n.Inputs {
		if name == "" {
			continue
		}
		c.InTypes[i] = s.typeOf(name)
		c.InValues[i] = s.valueOf(name)
		if c.InValues[i] == nil {
			if st := s.symOf(name); st != nil {
				if c.inSyms == nil {
					c.inSyms = make([]*symTensor, len(n.Inputs))
				}
				c.inSyms[i] = st
			}
		}
	}
	c.Subgraph = func(g *graph.Graph, inputs []*graph.Type) ([]*graph.Type, error) {
		return in.subgraph(s, g, inputs)
	}
	if sc := Lookup(domain, n.OpType, opset); sc != nil && sc.Infer != nil {
		if err := runRule(sc.Infer, c); err != nil {
			return fmt.Errorf("ops: infer: %s: inputs %s: %w", n, describeInputs(c), err)
		}
		in.evaluate(c)
	}
	for i, name := range n.Outputs {
		if name == "" {
			continue
		}
		t, v := c.OutTypes[i], c.OutValues[i]
		if v != nil && t == nil {
			t = v.ValueType()
		}
		merged, err := in.merge(s.declared[name], t, false)
		if err != nil {
			return fmt.Errorf("ops: infer: %s: output %q: inferred %s, declared %s: %w", n, name, t, s.declared[name], err)
		}
		if err := checkSize(merged); err != nil {
			return fmt.Errorf("ops: infer: %s: output %q: %w", n, name, err)
		}
		s.setType(name, merged)
		if v != nil {
			s.values[name] = v
			in.known[name] = v
		} else if i < len(c.outSyms) && c.outSyms[i] != nil {
			s.syms[name] = c.outSyms[i]
		}
	}
	return nil
}

// evaluate replaces the values the rule computed for c's node by those of
// in.eval when every input of the node is known and its outputs are
// deterministic; where eval fails, the node keeps its types but no values.
// Nodes with subgraphs keep the rule's values, which come from their
// subgraphs' nodes, evaluated in turn.
func (in *inferer) evaluate(c *InferContext) {
	n := c.Node
	if in.eval == nil || !slices.ContainsFunc(c.OutValues, func(v *graph.Tensor) bool { return v != nil }) ||
		Has(n.Domain, n.OpType, Nondeterministic) || len(graph.NodeSubgraphs(n)) > 0 {
		return
	}
	for i, name := range n.Inputs {
		if name != "" && c.InValues[i] == nil {
			return
		}
	}
	out, err := in.eval(n, c.Opset, c.InValues)
	for i := range c.OutValues {
		c.OutValues[i] = nil
		if err == nil && i < len(out) && out[i] != nil && out[i].NumElements() <= maxValueElems {
			c.OutValues[i] = out[i]
			c.OutTypes[i] = out[i].ValueType()
		}
	}
}

// ErrRulePanicked is wrapped by the error of a rule that panicked: a bug
// of the rule, which should have returned an error naming what is wrong.
var ErrRulePanicked = errors.New("inference rule panicked")

// runRule calls a rule, turning a panic on malformed input into an error
// wrapping ErrRulePanicked, so that a bad model never brings the process
// down. A fault reading mapped weights whose file was truncated is
// reported as such (see graph.FaultError).
func runRule(f InferFunc, c *InferContext) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if err = graph.FaultError(r); err == nil {
				err = fmt.Errorf("%w: %v", ErrRulePanicked, r)
			}
		}
	}()
	return f(c)
}

// describeInputs lists the node's inputs with their types for error messages.
func describeInputs(c *InferContext) string {
	parts := make([]string, len(c.Node.Inputs))
	for i, name := range c.Node.Inputs {
		parts[i] = fmt.Sprintf("%q %s", name, c.InTypes[i])
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// subgraph infers g as a subgraph of s with the given input types and
// returns its output types.
func (in *inferer) subgraph(parent *scope, g *graph.Graph, inputs []*graph.Type) ([]*graph.Type, error) {
	if g == nil {
		return nil, fmt.Errorf("missing subgraph")
	}
	for _, n := range g.Nodes {
		for _, name := range n.Outputs {
			delete(in.known, name)
		}
	}
	s, err := in.newScope(g, parent)
	if err != nil {
		return nil, err
	}
	for i, vi := range g.Inputs {
		t := s.declaredInput(vi)
		if i < len(inputs) && inputs[i] != nil {
			if t, err = in.merge(t, inputs[i], false); err != nil {
				return nil, fmt.Errorf("subgraph %q input %q: given %s, declared %s: %w", g.Name, vi.Name, inputs[i], vi.Type, err)
			}
		}
		s.setType(vi.Name, t)
		s.values[vi.Name] = nil
	}
	if err := in.run(s); err != nil {
		return nil, fmt.Errorf("subgraph %q: %w", g.Name, err)
	}
	out := make([]*graph.Type, len(g.Outputs))
	for i, vi := range g.Outputs {
		out[i] = s.typeOf(vi.Name)
	}
	return out, nil
}

// merge combines a declared type with an inferred one. Inferred known sizes
// win over declared symbols; declared information fills what inference left
// unknown, an inferred symbol wins over a declared one; two different known
// sizes, ranks or element types are an error. With override set (an input's
// given type), the symbols the given sizes replace are bound to them.
func (in *inferer) merge(declared, inferred *graph.Type, override bool) (*graph.Type, error) {
	if inferred == nil {
		return in.resolve(declared), nil
	}
	if declared == nil {
		return in.resolve(inferred), nil
	}
	if declared.Kind != graph.UnknownKind && inferred.Kind != graph.UnknownKind && declared.Kind != inferred.Kind {
		return nil, fmt.Errorf("kinds differ")
	}
	out := inferred.Clone()
	if out.Kind == graph.UnknownKind {
		out.Kind = declared.Kind
	}
	if out.Elem == graph.Undefined {
		out.Elem = declared.Elem
	} else if declared.Elem != graph.Undefined && declared.Elem != out.Elem {
		return nil, fmt.Errorf("element types differ")
	}
	switch {
	case out.Shape == nil:
		out.Shape = declared.Shape.Clone()
	case declared.Shape != nil:
		if len(declared.Shape) != len(out.Shape) {
			return nil, fmt.Errorf("ranks differ")
		}
		for i, d := range declared.Shape {
			o := out.Shape[i]
			switch {
			case o.Known():
				if d.Known() && d.Value != o.Value {
					return nil, fmt.Errorf("dimension %d: %d and %d differ", i, o.Value, d.Value)
				}
				if d.Param != "" && override {
					if _, ok := in.bindings[d.Param]; !ok {
						in.bindings[d.Param] = o.Value
					}
				}
			case d.Known() || o.Param == "":
				out.Shape[i] = d
			}
		}
	}
	if declared.Inner != nil || out.Inner != nil {
		inner, err := in.merge(declared.Inner, out.Inner, override)
		if err != nil {
			return nil, fmt.Errorf("inner type: %w", err)
		}
		out.Inner = inner
	}
	return in.resolve(out), nil
}

// resolve replaces symbols bound by the input overrides with their sizes.
func (in *inferer) resolve(t *graph.Type) *graph.Type {
	if t == nil || len(in.bindings) == 0 {
		return t
	}
	var out *graph.Type
	for i, d := range t.Shape {
		if v, ok := in.bindings[d.Param]; ok && d.Param != "" {
			if out == nil {
				out = t.Clone()
			}
			out.Shape[i] = graph.DimOf(v)
		}
	}
	if t.Inner != nil {
		if inner := in.resolve(t.Inner); inner != t.Inner {
			if out == nil {
				out = t.Clone()
			}
			out.Inner = inner
		}
	}
	if out == nil {
		return t
	}
	return out
}
