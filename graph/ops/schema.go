// Package ops describes ONNX operators: for each domain, op and opset
// version, its inputs, outputs, attributes with types and defaults, its type
// and shape inference rule, and the numerical tolerance its kernels are
// checked with, and its properties (Props) that passes and backends ask
// about instead of keeping lists of op names.
package ops

import (
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/onnxvk/onnxvk/graph"
)

// AttrSpec describes one attribute an op accepts.
type AttrSpec struct {
	Name     string
	Type     graph.AttrType
	Required bool
	// Default is the value used when the attribute is absent, or nil.
	Default *graph.Attribute
}

// Tolerance is the accepted difference between two implementations of an
// op: |a-b| <= Abs + Rel*|b| for floating-point results; integer results
// are equal or differ by at most Units (ops that round a float32 product
// to an integer, where an implementation computing in float64 may round
// the other way near a tie).
type Tolerance struct {
	Abs, Rel float64
	Units    float64
}

// DefaultTolerance applies to ops that declare none.
var DefaultTolerance = Tolerance{Abs: 1e-5, Rel: 1e-4}

// Schema is one version of an operator. A schema with Since = v applies to
// models importing the op's domain at versions v up to the next schema's
// Since - 1.
type Schema struct {
	Domain string
	Name   string
	Since  int64
	// MinInputs and MaxInputs bound the input count (MaxInputs < 0: any).
	MinInputs, MaxInputs int
	// OptionalInputs lists the inputs below MinInputs that may still be
	// omitted (""): ONNX counts Loop's M and cond and Scan-8's
	// sequence_lens in its minimum.
	OptionalInputs []int
	// MinOutputs and MaxOutputs bound the output count (MaxOutputs < 0: any).
	MinOutputs, MaxOutputs int
	Attrs                  []AttrSpec
	// Infer computes output types (and, for small integer tensors, values);
	// nil means the outputs' types are unknown until run time.
	Infer InferFunc
	// Tol is the op's tolerance; the zero value means DefaultTolerance.
	Tol Tolerance
	// Deprecated marks versions ONNX removed; models using them still load.
	Deprecated bool
	// Props are the op's properties, the same in every version.
	Props Props
}

// Props is a set of operator properties.
type Props uint8

// The properties an op may have. The file that defines an op's rule sets
// them (setProps); the planner and the backends read them with Has.
const (
	// Elementwise: each output element depends only on the input elements
	// at its position after multidirectional (numpy) broadcasting of the
	// inputs, so a part of the output needs only the matching parts of
	// the inputs. The op has one output.
	Elementwise Props = 1 << iota
	// View: output 0 holds input 0's elements in their order under another
	// shape, so it may share input 0's memory.
	View
	// FusableActivation: the planner may fold the op into the Conv before
	// it, as FusedConv's activation attribute (the op's name); every device
	// that runs FusedConv applies it.
	FusableActivation
	// Nondeterministic: the outputs are drawn at random (in some mode), so
	// they are computed at run time even when inference knows them.
	Nondeterministic
	// TypeOnly: the op reads only the types of its inputs, never their
	// elements (Shape, Size), so a device need not bring an input's
	// elements to the host for it.
	TypeOnly
)

// Has reports whether s has every property of p.
func (s *Schema) Has(p Props) bool { return s.Props&p == p }

// Attr returns the spec of the named attribute, or nil.
func (s *Schema) Attr(name string) *AttrSpec {
	for i := range s.Attrs {
		if s.Attrs[i].Name == name {
			return &s.Attrs[i]
		}
	}
	return nil
}

// Tolerance returns the op's tolerance, DefaultTolerance if it declares none.
func (s *Schema) Tolerance() Tolerance {
	if s.Tol == (Tolerance{}) {
		return DefaultTolerance
	}
	return s.Tol
}

// InferContext is what an inference rule sees of one node.
type InferContext struct {
	Node  *graph.Node
	Opset int64
	// InTypes are the input types, nil for absent inputs and unknown types.
	InTypes []*graph.Type
	// InValues are the inputs' values when known at plan time (initializers,
	// constants, propagated shape computations), else nil.
	InValues []*graph.Tensor
	// OutTypes are filled by the rule; it may leave entries nil.
	OutTypes []*graph.Type
	// OutValues may be filled with small computed values (shapes and the
	// like) so that later rules can use them.
	OutValues []*graph.Tensor
	// Subgraph runs inference over a subgraph attribute with the given input
	// types and returns its output types.
	Subgraph func(g *graph.Graph, inputs []*graph.Type) ([]*graph.Type, error)

	// inSyms and outSyms carry small integer tensors whose elements are
	// partly symbolic (shapes with symbolic dimensions) between the rules
	// that compute shapes; see symbolic.go.
	inSyms, outSyms []*symTensor
}

// InferFunc is an op's type and shape inference rule. It returns an error
// only when the inputs are inconsistent (a bad model), never for missing
// information.
type InferFunc func(c *InferContext) error

type key struct{ domain, name string }

var (
	mu       sync.RWMutex
	registry = map[key][]*Schema{}
)

// Register adds schemas to the registry. It panics when the same domain,
// op and version is registered twice: that is a programming error.
func Register(schemas ...*Schema) {
	mu.Lock()
	defer mu.Unlock()
	for _, s := range schemas {
		k := key{s.Domain, s.Name}
		for _, old := range registry[k] {
			if old.Since == s.Since {
				panic(fmt.Sprintf("ops: %s %q version %d registered twice", domainName(s.Domain), s.Name, s.Since))
			}
		}
		registry[k] = append(registry[k], s)
		sort.Slice(registry[k], func(i, j int) bool { return registry[k][i].Since < registry[k][j].Since })
	}
}

// Lookup returns the schema of op name in domain for a model importing the
// domain at version opset, or nil when the op does not exist there.
func Lookup(domain, name string, opset int64) *Schema {
	mu.RLock()
	defer mu.RUnlock()
	var best *Schema
	for _, s := range registry[key{domain, name}] {
		if s.Since <= opset {
			best = s
		}
	}
	return best
}

// Versions returns every registered version of the op, oldest first.
func Versions(domain, name string) []*Schema {
	mu.RLock()
	defer mu.RUnlock()
	return append([]*Schema{}, registry[key{domain, name}]...)
}

// Names returns the names of the ops registered in domain, sorted.
func Names(domain string) []string {
	mu.RLock()
	defer mu.RUnlock()
	var out []string
	for k := range registry {
		if k.domain == domain {
			out = append(out, k.name)
		}
	}
	sort.Strings(out)
	return out
}

// Domains returns the domains of the registered ops, sorted ("" is the
// default ONNX domain).
func Domains() []string {
	mu.RLock()
	defer mu.RUnlock()
	var out []string
	for k := range registry {
		if !slices.Contains(out, k.domain) {
			out = append(out, k.domain)
		}
	}
	slices.Sort(out)
	return out
}

// SetInfer attaches an inference rule to every registered version of the op
// from since onwards (up to, but excluding, until; until <= 0 means no upper
// bound). Rule files call it from init after the catalog is registered.
func SetInfer(domain, name string, since, until int64, f InferFunc) {
	mu.Lock()
	defer mu.Unlock()
	for _, s := range registry[key{domain, name}] {
		if s.Since >= since && (until <= 0 || s.Since < until) {
			s.Infer = f
		}
	}
}

// SetTolerance sets the tolerance of every registered version of the op.
func SetTolerance(domain, name string, tol Tolerance) {
	mu.Lock()
	defer mu.Unlock()
	for _, s := range registry[key{domain, name}] {
		s.Tol = tol
	}
}

// AttrFloat returns n's float attribute name, or else its default in the
// schema of n's op at opset (0 when the schema gives none).
func AttrFloat(n *graph.Node, opset int64, name string) float32 {
	if a := n.Attr(name); a != nil && a.Type == graph.AttrFloat {
		return a.F
	}
	if s := Lookup(normDomain(n.Domain), n.OpType, opset); s != nil {
		if spec := s.Attr(name); spec != nil && spec.Default != nil && spec.Default.Type == graph.AttrFloat {
			return spec.Default.F
		}
	}
	return 0
}

// Has reports whether the op name of domain ("ai.onnx" or "" for the
// default domain) has every property of p; false for an unknown op.
func Has(domain, name string, p Props) bool {
	mu.RLock()
	defer mu.RUnlock()
	versions := registry[key{normDomain(domain), name}]
	return len(versions) > 0 && versions[0].Has(p)
}

// setProps adds p to the properties of every registered version of each
// named op of the default domain. It panics on an op that is not
// registered, so that a misspelt name cannot drop a property.
func setProps(p Props, names ...string) {
	mu.Lock()
	defer mu.Unlock()
	for _, name := range names {
		versions := registry[key{graph.DefaultDomain, name}]
		if len(versions) == 0 {
			panic(fmt.Sprintf("ops: properties set on unknown op %q", name))
		}
		for _, s := range versions {
			s.Props |= p
		}
	}
}

func domainName(d string) string {
	if d == "" {
		return "ai.onnx"
	}
	return d
}
