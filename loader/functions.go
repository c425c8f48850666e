package loader

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/onnxvk/onnxvk/graph"
)

// Function is a decoded model-local function (FunctionProto).
type Function struct {
	// Domain, Name and Overload identify the function: a node calls it when
	// its domain, op type and overload are equal to them.
	Domain, Name, Overload string
	// Inputs and Outputs are the formal parameter names used by the body.
	Inputs, Outputs []string
	// AttrNames are the attributes without defaults (FunctionProto.attribute).
	AttrNames []string
	// AttrDefaults are the attributes with defaults (FunctionProto.attribute_proto).
	AttrDefaults map[string]*graph.Attribute
	// AttrRefs records attributes of body nodes that refer to a function
	// attribute (ref_attr_name): node -> attribute name -> referenced name.
	// Its keys are body nodes or nodes of subgraphs nested in body nodes'
	// attributes. A referencing attribute may also appear in the node's
	// Attrs as a placeholder; the reference takes precedence.
	AttrRefs map[*graph.Node]map[string]string
	// Nodes is the body, in topological order.
	Nodes []*graph.Node
	// ValueInfo holds the known types of the body's values.
	ValueInfo map[string]*graph.ValueInfo
	// Opsets are the function's opset imports, domain to version.
	Opsets map[string]int64
	// Doc is the function's doc_string.
	Doc string
}

// String names the function for error messages: its domain and name, and
// its overload after a colon when it has one.
func (f *Function) String() string {
	s := domainLabel(normDomain(f.Domain)) + "." + f.Name
	if f.Overload != "" {
		s += ":" + f.Overload
	}
	return s
}

// maxInlinedNodes bounds the nodes inlining may create, so that functions
// calling other functions many times cannot make a model explode.
const maxInlinedNodes = 1 << 22

type funcKey struct{ domain, name, overload string }

// normDomain maps the explicit spelling of the default domain to "".
func normDomain(d string) string {
	if d == "ai.onnx" {
		return graph.DefaultDomain
	}
	return d
}

type inliner struct {
	fns map[funcKey]*Function
	// used holds every value name of the model and every name inlining has
	// created, so that fresh names never clash.
	used    map[string]bool
	applied map[*Function]bool
	created int
}

// inlineFunctions replaces every node of m (in the main graph and in
// subgraphs at any depth) that calls one of fns by the function's body, and
// merges the opset imports of the functions it applied into m's.
func inlineFunctions(m *graph.Model, fns []*Function) error {
	if len(fns) == 0 {
		return nil
	}
	if m == nil || m.Graph == nil {
		return fmt.Errorf("loader: %w: model without a graph", ErrInvalidModel)
	}
	in := &inliner{
		fns:     map[funcKey]*Function{},
		used:    map[string]bool{},
		applied: map[*Function]bool{},
	}
	for i, f := range fns {
		if err := checkFunction(f); err != nil {
			return invalid(m, fmt.Errorf("function #%d: %w", i, err))
		}
		k := funcKey{normDomain(f.Domain), f.Name, f.Overload}
		if in.fns[k] != nil {
			return invalid(m, fmt.Errorf("function %s is defined twice", f))
		}
		in.fns[k] = f
	}
	collectNames(m.Graph, in.used)
	if err := in.graph(m.Graph, nil); err != nil {
		return invalid(m, err)
	}
	if m.Opsets == nil {
		m.Opsets = map[string]int64{}
	}
	for _, f := range fns {
		if !in.applied[f] {
			continue
		}
		for _, d := range slices.Sorted(maps.Keys(f.Opsets)) {
			v, nd := f.Opsets[d], normDomain(d)
			if mv, ok := m.Opsets[nd]; ok && mv != v {
				return invalid(m, fmt.Errorf("function %s imports %s version %d, but version %d is already imported",
					f, domainLabel(nd), v, mv))
			}
			m.Opsets[nd] = v
		}
	}
	return nil
}

// checkFunction rejects functions whose signature is malformed.
func checkFunction(f *Function) error {
	if f == nil {
		return errors.New("nil function")
	}
	if f.Name == "" {
		return errors.New("function without a name")
	}
	for _, list := range [][]string{f.Inputs, f.Outputs} {
		seen := map[string]bool{}
		for i, x := range list {
			if x == "" {
				return fmt.Errorf("function %s: parameter #%d has no name", f, i)
			}
			if seen[x] {
				return fmt.Errorf("function %s: parameter %q is declared twice", f, x)
			}
			seen[x] = true
		}
	}
	return nil
}

// collectNames adds every value name of g and of its subgraphs to used.
func collectNames(g *graph.Graph, used map[string]bool) {
	for _, vis := range [][]*graph.ValueInfo{g.Inputs, g.Outputs} {
		for _, vi := range vis {
			if vi != nil {
				used[vi.Name] = true
			}
		}
	}
	for name := range g.Initializers {
		used[name] = true
	}
	for name := range g.SparseInitializers {
		used[name] = true
	}
	for name := range g.ValueInfo {
		used[name] = true
	}
	for _, n := range g.Nodes {
		if n == nil {
			continue
		}
		for _, x := range slices.Concat(n.Inputs, n.Outputs) {
			used[x] = true
		}
		for _, a := range n.Attrs {
			for _, sub := range graph.Subgraphs(a) {
				collectNames(sub, used)
			}
		}
	}
}

// fresh returns a new value name for name inlined by the call labelled label.
func (in *inliner) fresh(label, name string) string {
	c := label + "/" + name
	for k := 1; in.used[c]; k++ {
		c = label + "/" + name + "_" + strconv.Itoa(k)
	}
	in.used[c] = true
	return c
}

// graph inlines the calls among g's nodes and in their subgraphs; stack is
// the chain of functions being expanded around g.
func (in *inliner) graph(g *graph.Graph, stack []*Function) error {
	var nodes []*graph.Node
	for i, n := range g.Nodes {
		if n == nil {
			return fmt.Errorf("graph %q: node #%d is nil", g.Name, i)
		}
		out, err := in.node(g, n, stack)
		if err != nil {
			return fmt.Errorf("graph %q: %w", g.Name, err)
		}
		nodes = append(nodes, out...)
	}
	g.Nodes = nodes
	for i, n := range nodes {
		n.Index = i
	}
	return nil
}

// node returns what n, a node of g, becomes: n itself with its subgraphs
// inlined, or the inlined body of the function it calls.
func (in *inliner) node(g *graph.Graph, n *graph.Node, stack []*Function) ([]*graph.Node, error) {
	for _, name := range slices.Sorted(maps.Keys(n.Attrs)) {
		for _, sub := range graph.Subgraphs(n.Attrs[name]) {
			if err := in.graph(sub, stack); err != nil {
				return nil, fmt.Errorf("%s: attribute %q: %w", n, name, err)
			}
		}
	}
	f := in.fns[funcKey{normDomain(n.Domain), n.OpType, n.Overload}]
	if f == nil {
		return []*graph.Node{n}, nil
	}
	if i := slices.Index(stack, f); i >= 0 {
		chain := make([]string, 0, len(stack)-i+1)
		for _, s := range append(stack[i:len(stack):len(stack)], f) {
			chain = append(chain, s.String())
		}
		return nil, fmt.Errorf("%s: recursive function call %s", n, strings.Join(chain, " -> "))
	}
	body, err := in.expand(g, n, f)
	if err != nil {
		return nil, fmt.Errorf("%s: function %s: %w", n, f, err)
	}
	in.applied[f] = true
	inner := append(stack[:len(stack):len(stack)], f)
	var out []*graph.Node
	for _, b := range body {
		nodes, err := in.node(g, b, inner)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		out = append(out, nodes...)
	}
	return out, nil
}

// scope maps the value names of a function body, or of a subgraph nested in
// it, to their names after inlining. A nil scope renames nothing: it copies
// graphs that come from outside the function, the call's graph attributes.
type scope struct {
	names  map[string]string
	parent *scope
}

func (s *scope) lookup(name string) (string, bool) {
	if s == nil {
		return name, true
	}
	for c := s; c != nil; c = c.parent {
		if r, ok := c.names[name]; ok {
			return r, true
		}
	}
	return "", false
}

func (s *scope) child() *scope {
	if s == nil {
		return nil
	}
	return &scope{names: map[string]string{}, parent: s}
}

// expansion is one call being replaced by a copy of a function body.
type expansion struct {
	in    *inliner
	f     *Function
	call  *graph.Node
	label string
}

// expand returns a copy of f's body bound to call, a node of g.
func (in *inliner) expand(g *graph.Graph, call *graph.Node, f *Function) ([]*graph.Node, error) {
	if len(call.Inputs) > len(f.Inputs) {
		return nil, fmt.Errorf("%d inputs given, the function takes %d", len(call.Inputs), len(f.Inputs))
	}
	if len(call.Outputs) > len(f.Outputs) {
		return nil, fmt.Errorf("%d outputs given, the function has %d", len(call.Outputs), len(f.Outputs))
	}
	in.created += len(f.Nodes)
	if in.created > maxInlinedNodes {
		return nil, fmt.Errorf("inlining creates more than %d nodes", maxInlinedNodes)
	}
	label := call.Name
	if label == "" {
		label = call.OpType + "_" + strconv.Itoa(call.Index)
	}
	e := &expansion{in: in, f: f, call: call, label: label}
	top := &scope{names: map[string]string{}}
	for i, x := range f.Inputs {
		top.names[x] = call.Input(i)
	}
	actual := map[string]string{}
	for i, o := range call.Outputs {
		if o != "" {
			actual[f.Outputs[i]] = o
		}
	}
	defined := map[string]bool{}
	for i, b := range f.Nodes {
		if b == nil {
			return nil, fmt.Errorf("body node #%d is nil", i)
		}
		for _, o := range b.Outputs {
			if o == "" {
				continue
			}
			if _, ok := top.names[o]; ok {
				return nil, fmt.Errorf("body node %d (%s): value %q is defined twice", i, b.OpType, o)
			}
			defined[o] = true
			if a, ok := actual[o]; ok {
				top.names[o] = a
			} else {
				top.names[o] = in.fresh(label, o)
			}
		}
	}
	var out []*graph.Node
	for i, b := range f.Nodes {
		name := b.Name
		if name == "" {
			name = strconv.Itoa(i)
		}
		nb, err := e.node(b, top, g, label+"/"+name)
		if err != nil {
			return nil, err
		}
		nb.Index = i
		out = append(out, nb)
	}
	for _, o := range f.Outputs {
		if defined[o] {
			continue
		}
		if !slices.Contains(f.Inputs, o) {
			return nil, fmt.Errorf("output %q is not computed by the body", o)
		}
		a, bound := actual[o]
		if !bound {
			continue
		}
		if top.names[o] == "" {
			return nil, fmt.Errorf("output %q passes input %q through, but the call omits that input", o, o)
		}
		out = append(out, &graph.Node{Name: label + "/" + o, OpType: "Identity",
			Inputs: []string{top.names[o]}, Outputs: []string{a}, Index: len(out)})
	}
	for name, vi := range f.ValueInfo {
		if !defined[name] || vi == nil {
			continue
		}
		if g.ValueInfo == nil {
			g.ValueInfo = map[string]*graph.ValueInfo{}
		}
		if r := top.names[name]; g.ValueInfo[r] == nil {
			g.ValueInfo[r] = &graph.ValueInfo{Name: r, Type: vi.Type.Clone(), Doc: vi.Doc}
		}
	}
	return out, nil
}

// rename maps value names through sc; "" (an omitted value) stays "".
func rename(names []string, sc *scope, orig *graph.Node) ([]string, error) {
	if names == nil {
		return nil, nil
	}
	out := make([]string, len(names))
	for i, x := range names {
		if x == "" {
			continue
		}
		r, ok := sc.lookup(x)
		if !ok {
			return nil, fmt.Errorf("body node %q (%s): value %q is not defined in the function", orig.Name, orig.OpType, x)
		}
		out[i] = r
	}
	return out, nil
}

// node copies orig, a node of the body or of a subgraph nested in it, into
// parent under the given name, renaming its values through sc and
// resolving its attribute references.
func (e *expansion) node(orig *graph.Node, sc *scope, parent *graph.Graph, name string) (*graph.Node, error) {
	n := &graph.Node{Name: name, OpType: orig.OpType, Domain: orig.Domain, Overload: orig.Overload,
		Doc: orig.Doc, Metadata: maps.Clone(orig.Metadata), Index: orig.Index}
	var err error
	if n.Inputs, err = rename(orig.Inputs, sc, orig); err != nil {
		return nil, err
	}
	if n.Outputs, err = rename(orig.Outputs, sc, orig); err != nil {
		return nil, err
	}
	for _, dc := range orig.DeviceConfigs {
		c := dc
		c.Sharding = slices.Clone(dc.Sharding)
		for i := range c.Sharding {
			if r, ok := sc.lookup(c.Sharding[i].TensorName); ok && r != "" {
				c.Sharding[i].TensorName = r
			}
		}
		n.DeviceConfigs = append(n.DeviceConfigs, c)
	}
	refs := e.f.AttrRefs[orig]
	if len(orig.Attrs)+len(refs) > 0 {
		n.Attrs = map[string]*graph.Attribute{}
	}
	for _, k := range slices.Sorted(maps.Keys(orig.Attrs)) {
		if _, isRef := refs[k]; isRef {
			continue
		}
		a := orig.Attrs[k]
		if a == nil {
			n.Attrs[k] = nil
			continue
		}
		if n.Attrs[k], err = e.attr(a, sc, parent); err != nil {
			return nil, fmt.Errorf("body node %q (%s): attribute %q: %w", orig.Name, orig.OpType, k, err)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(refs)) {
		src := e.call.Attr(refs[k])
		if src == nil {
			src = e.f.AttrDefaults[refs[k]]
		}
		if src == nil {
			continue
		}
		c, err := e.attr(src, nil, parent)
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", refs[k], err)
		}
		c.Name = k
		n.Attrs[k] = c
	}
	return n, nil
}

// attr copies a, renaming the values of its subgraphs through sc. Tensors
// and lists are shared: attribute values are read-only.
func (e *expansion) attr(a *graph.Attribute, sc *scope, parent *graph.Graph) (*graph.Attribute, error) {
	c := *a
	var err error
	switch a.Type {
	case graph.AttrGraph:
		if a.G != nil {
			c.G, err = e.graph(a.G, sc, parent)
		}
	case graph.AttrGraphs:
		c.Graphs = make([]*graph.Graph, len(a.Graphs))
		for i, g := range a.Graphs {
			if g == nil {
				continue
			}
			if c.Graphs[i], err = e.graph(g, sc, parent); err != nil {
				return nil, err
			}
		}
	}
	return &c, err
}

// graph copies orig, a subgraph in the body, as a child of parent. The
// values it defines get fresh names in a scope nested in sc.
func (e *expansion) graph(orig *graph.Graph, sc *scope, parent *graph.Graph) (*graph.Graph, error) {
	g := graph.NewGraph(orig.Name)
	g.Doc, g.Parent = orig.Doc, parent
	inner := sc.child()
	define := func(name string) string {
		if inner == nil || name == "" {
			return name
		}
		if r, ok := inner.names[name]; ok {
			return r
		}
		r := e.in.fresh(e.label, name)
		inner.names[name] = r
		return r
	}
	for i, vi := range orig.Inputs {
		if vi == nil {
			return nil, fmt.Errorf("graph %q: input #%d is nil", orig.Name, i)
		}
		g.Inputs = append(g.Inputs, &graph.ValueInfo{Name: define(vi.Name), Type: vi.Type.Clone(), Doc: vi.Doc})
	}
	for _, k := range slices.Sorted(maps.Keys(orig.Initializers)) {
		g.Initializers[define(k)] = orig.Initializers[k]
	}
	for _, k := range slices.Sorted(maps.Keys(orig.SparseInitializers)) {
		g.SparseInitializers[define(k)] = orig.SparseInitializers[k]
	}
	for i, n := range orig.Nodes {
		if n == nil {
			return nil, fmt.Errorf("graph %q: node #%d is nil", orig.Name, i)
		}
		for _, o := range n.Outputs {
			define(o)
		}
	}
	for _, n := range orig.Nodes {
		c, err := e.node(n, inner, g, n.Name)
		if err != nil {
			return nil, fmt.Errorf("graph %q: %w", orig.Name, err)
		}
		g.Nodes = append(g.Nodes, c)
	}
	for i, vi := range orig.Outputs {
		if vi == nil {
			return nil, fmt.Errorf("graph %q: output #%d is nil", orig.Name, i)
		}
		r, ok := inner.lookup(vi.Name)
		if !ok {
			return nil, fmt.Errorf("graph %q: output %q is not defined in the function", orig.Name, vi.Name)
		}
		g.Outputs = append(g.Outputs, &graph.ValueInfo{Name: r, Type: vi.Type.Clone(), Doc: vi.Doc})
	}
	for k, vi := range orig.ValueInfo {
		if r, ok := inner.lookup(k); ok && vi != nil && r != "" {
			g.ValueInfo[r] = &graph.ValueInfo{Name: r, Type: vi.Type.Clone(), Doc: vi.Doc}
		}
	}
	return g, nil
}
