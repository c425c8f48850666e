package loader

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// ErrInvalidModel is wrapped by every error that reports a malformed model.
var ErrInvalidModel = errors.New("invalid model")

// ErrUnknownOp is wrapped by the error listing the operators that the
// catalog does not know at the versions the model imports.
var ErrUnknownOp = errors.New("unknown operators")

// maxErrors bounds the errors one validation reports besides the list of
// unknown operators.
const maxErrors = 20

// Validate checks m in the spirit of onnx.checker: sane opset imports, SSA
// form, topological order, every value defined before use (subgraphs see the
// values of enclosing graphs), graph outputs defined, every node's domain
// imported and op known at that version, input and output counts, attribute
// names and types, required attributes. It reports everything it finds at
// once: ops unknown to the catalog in one error wrapping ErrUnknownOp, and
// up to 20 other errors joined with errors.Join; each wraps ErrInvalidModel.
// It returns nil for a valid model.
func Validate(m *graph.Model) error { return validate(m) }

// invalid attributes err to model m.
func invalid(m *graph.Model, err error) error {
	return fmt.Errorf("loader: %w %q: %w", ErrInvalidModel, m.Name, err)
}

// domainLabel names an operator domain in messages.
func domainLabel(d string) string {
	if d == graph.DefaultDomain {
		return "ai.onnx"
	}
	return d
}

type unknownKey struct {
	domain, op string
	version    int64
}

type unknownOp struct {
	unknownKey
	count int
	first string
}

// checker collects what is wrong with one model.
type checker struct {
	m       *graph.Model
	errs    []error
	more    int
	unknown map[unknownKey]*unknownOp
	order   []*unknownOp
}

// valueScope is the set of values visible in a graph: its own and, through
// parent, those of enclosing graphs defined before the node holding it.
type valueScope struct {
	names  map[string]bool
	parent *valueScope
}

func (s *valueScope) has(name string) bool {
	for c := s; c != nil; c = c.parent {
		if c.names[name] {
			return true
		}
	}
	return false
}

// place says where in a model something is: a chain of parts built as the
// checks descend into graphs, nodes and subgraphs, and rendered only for a
// message, so that deep nesting costs memory linear in its depth.
type place struct {
	parent    *place
	sep, text string
}

// then returns the place text within p, written after sep.
func (p *place) then(sep, text string) *place { return &place{parent: p, sep: sep, text: text} }

func (p *place) String() string {
	var parts []string
	for q := p; q != nil; q = q.parent {
		parts = append(parts, q.text, q.sep)
	}
	slices.Reverse(parts)
	return strings.Join(parts, "")
}

func validate(m *graph.Model) error {
	if m == nil {
		return fmt.Errorf("loader: %w: nil model", ErrInvalidModel)
	}
	c := &checker{m: m, unknown: map[unknownKey]*unknownOp{}}
	if len(m.Opsets) == 0 {
		c.add(nil, "the model imports no opset")
	}
	for _, d := range slices.Sorted(maps.Keys(m.Opsets)) {
		if v := m.Opsets[d]; v <= 0 {
			c.add(nil, "opset import of domain %s has version %d", domainLabel(d), v)
		}
	}
	if m.Graph == nil {
		c.add(nil, "the model has no graph")
	} else {
		c.graph(m.Graph, (*place)(nil).then("", fmt.Sprintf("graph %q", m.Graph.Name)), nil)
	}
	return c.result()
}

// add records an error found at where (nil: the model).
func (c *checker) add(where *place, format string, args ...any) {
	if len(c.errs) == maxErrors {
		c.more++
		return
	}
	msg := fmt.Sprintf(format, args...)
	if where != nil {
		msg = where.String() + ": " + msg
	}
	c.errs = append(c.errs, invalid(c.m, errors.New(msg)))
}

func (c *checker) result() error {
	var errs []error
	if len(c.order) > 0 {
		parts := make([]string, len(c.order))
		for i, u := range c.order {
			nodes := "nodes"
			if u.count == 1 {
				nodes = "node"
			}
			parts[i] = fmt.Sprintf("%s (%s v%d): %d %s, first %s", u.op, domainLabel(u.domain), u.version, u.count, nodes, u.first)
		}
		errs = append(errs, fmt.Errorf("loader: %w %q: %w at the imported opset versions: %s",
			ErrInvalidModel, c.m.Name, ErrUnknownOp, strings.Join(parts, "; ")))
	}
	errs = append(errs, c.errs...)
	if c.more > 0 {
		errs = append(errs, invalid(c.m, fmt.Errorf("%d more errors not shown", c.more)))
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return errors.Join(errs...)
}

// graph checks g, described by where, whose enclosing graphs' visible
// values are outer.
func (c *checker) graph(g *graph.Graph, where *place, outer *valueScope) {
	sc := &valueScope{names: map[string]bool{}, parent: outer}
	for i, vi := range g.Inputs {
		switch {
		case vi == nil || vi.Name == "":
			c.add(where, "input #%d has no name", i)
		case sc.names[vi.Name]:
			c.add(where, "input %q is declared twice", vi.Name)
		default:
			sc.names[vi.Name] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(g.Initializers)) {
		if name == "" {
			c.add(where, "an initializer has no name")
		} else if g.Initializers[name] == nil {
			c.add(where, "initializer %q has no tensor", name)
		}
		sc.names[name] = true
	}
	for _, name := range slices.Sorted(maps.Keys(g.SparseInitializers)) {
		switch st := g.SparseInitializers[name]; {
		case name == "":
			c.add(where, "a sparse initializer has no name")
		case g.Initializers[name] != nil:
			c.add(where, "sparse initializer %q has the name of an initializer", name)
		case st == nil || st.Values == nil || st.Indices == nil:
			c.add(where, "sparse initializer %q has no values or indices", name)
		}
		sc.names[name] = true
	}
	producer := map[string]int{}
	for i, n := range g.Nodes {
		if n == nil {
			continue
		}
		for _, o := range n.Outputs {
			if _, seen := producer[o]; !seen {
				producer[o] = i
			}
		}
	}
	for i, n := range g.Nodes {
		if n == nil {
			c.add(where, "node #%d is nil", i)
			continue
		}
		nw := where.then(": ", n.String())
		for _, x := range n.Inputs {
			if x == "" || sc.has(x) {
				continue
			}
			if p, ok := producer[x]; ok && p >= i {
				c.add(nw, "input %q is used before node #%d produces it (nodes must be in topological order)", x, p)
			} else {
				c.add(nw, "input %q is not defined", x)
			}
		}
		c.node(n, nw, sc)
		for _, o := range n.Outputs {
			if o == "" {
				continue
			}
			if sc.has(o) {
				c.add(nw, "output %q is already defined (values must be assigned once)", o)
			}
			sc.names[o] = true
		}
	}
	for i, vi := range g.Outputs {
		switch {
		case vi == nil || vi.Name == "":
			c.add(where, "output #%d has no name", i)
		case !sc.has(vi.Name):
			c.add(where, "output %q is not produced by any node, input or initializer", vi.Name)
		}
	}
}

// node checks n against its schema and checks its subgraphs, which see the
// values in sc.
func (c *checker) node(n *graph.Node, nw *place, sc *valueScope) {
	if n.OpType == "" {
		c.add(nw, "the node has no op type")
	} else if _, ok := c.m.Opsets[n.Domain]; !ok {
		c.add(nw, "domain %s is not imported by the model", domainLabel(n.Domain))
	} else if s := ops.Lookup(n.Domain, n.OpType, c.m.OpsetOf(n)); s == nil {
		c.unknownOp(n, c.m.OpsetOf(n), nw)
	} else {
		c.schema(n, nw, s)
	}
	for _, name := range slices.Sorted(maps.Keys(n.Attrs)) {
		a := n.Attrs[name]
		switch {
		case a == nil:
			c.add(nw, "attribute %q is nil", name)
			continue
		case a.Type == graph.AttrUndefined:
			c.add(nw, "attribute %q has no type", name)
		case a.Type == graph.AttrGraph && a.G == nil:
			c.add(nw, "graph attribute %q holds no graph", name)
		}
		for _, sub := range graph.Subgraphs(a) {
			c.graph(sub, nw.then(": ", fmt.Sprintf("attribute %q: graph %q", name, sub.Name)), sc)
		}
	}
}

func (c *checker) unknownOp(n *graph.Node, version int64, nw *place) {
	k := unknownKey{n.Domain, n.OpType, version}
	if u := c.unknown[k]; u != nil {
		u.count++
		return
	}
	u := &unknownOp{unknownKey: k, count: 1, first: nw.String()}
	c.unknown[k] = u
	c.order = append(c.order, u)
}

// schema checks n's input and output counts and attributes against s.
func (c *checker) schema(n *graph.Node, nw *place, s *ops.Schema) {
	op := fmt.Sprintf("%s (%s v%d)", s.Name, domainLabel(s.Domain), s.Since)
	if len(n.Inputs) < s.MinInputs {
		c.add(nw, "%d inputs, %s takes at least %d", len(n.Inputs), op, s.MinInputs)
	}
	if s.MaxInputs >= 0 && len(n.Inputs) > s.MaxInputs {
		c.add(nw, "%d inputs, %s takes at most %d", len(n.Inputs), op, s.MaxInputs)
	}
	for i := range min(s.MinInputs, len(n.Inputs)) {
		if n.Inputs[i] == "" && !slices.Contains(s.OptionalInputs, i) {
			c.add(nw, "required input #%d of %s is omitted", i, op)
		}
	}
	if len(n.Outputs) < s.MinOutputs {
		c.add(nw, "%d outputs, %s has at least %d", len(n.Outputs), op, s.MinOutputs)
	}
	if s.MaxOutputs >= 0 && len(n.Outputs) > s.MaxOutputs {
		c.add(nw, "%d outputs, %s has at most %d", len(n.Outputs), op, s.MaxOutputs)
	}
	for _, name := range slices.Sorted(maps.Keys(n.Attrs)) {
		a := n.Attrs[name]
		if a == nil || a.Type == graph.AttrUndefined {
			continue
		}
		switch spec := s.Attr(name); {
		case spec == nil:
			c.add(nw, "unknown attribute %q for %s", name, op)
		case spec.Type != graph.AttrUndefined && a.Type != spec.Type:
			c.add(nw, "attribute %q is of type %s, %s wants %s", name, a.Type, op, spec.Type)
		}
	}
	for _, spec := range s.Attrs {
		if spec.Required && n.Attr(spec.Name) == nil {
			c.add(nw, "required attribute %q of %s is missing", spec.Name, op)
		}
	}
}
