package ops

import (
	"errors"
	"fmt"

	"github.com/onnxvk/onnxvk/graph"
)

//go:generate go test -run TestParamsGenerated -update-params .

// Typed parameters. For every op of the catalog, params_gen.go defines a
// struct XParams (X the op's name) with a field per attribute of any of
// its versions, named in Go's style (keepdims: Keepdims, auto_pad:
// AutoPad). Params reads a node's attributes into it: an attribute the
// node has, else the default of the schema of the node's version, else
// the zero value. A scalar attribute that some version leaves without a
// default is a pointer, nil when absent; a list attribute is nil when
// absent. Attribute groups that several ops share (Window, Axis, ...) are
// embedded structs, so that code common to those ops reads them with
// WindowOf, AxisOf, ... The defaults live in the catalog only: no kernel,
// lowering or pass restates one.

// paramSet is implemented by every generated parameter struct.
type paramSet interface {
	read(r *attrReader)
}

// Params returns n's attributes as P, the parameters of n's op, for a
// model importing n's domain at opset: those ParseParams cached on the
// node, else read now. Asking for another op's parameters is a
// programming error; the fields then hold that op's defaults for n's
// attributes where the names match.
func Params[P any, PP interface {
	*P
	paramSet
}](n *graph.Node, opset int64) *P {
	if p, ok := n.Params.(*P); ok {
		return p
	}
	p := PP(new(P))
	p.read(newAttrReader(n, opset))
	return (*P)(p)
}

// ParamsOf returns n's parameters (a pointer to its op's XParams struct)
// as Params does, or nil for an op without parameters.
func ParamsOf(n *graph.Node, opset int64) any {
	if n.Params != nil {
		return n.Params
	}
	p, _ := readParams(n, opset)
	return p
}

// readParams reads n's parameters, reporting an attribute of the wrong
// type.
func readParams(n *graph.Node, opset int64) (any, error) {
	mk := paramTypes[key{normDomain(n.Domain), n.OpType}]
	if mk == nil {
		return nil, nil
	}
	p := mk()
	r := newAttrReader(n, opset)
	p.read(r)
	return p, r.err
}

// SetParams reads n's parameters and caches them on the node (its Params
// field), so that every later reader shares them. It returns an error
// naming the node and the attribute when an attribute has another type
// than its schema's. The caller owns n: nothing else may read it
// meanwhile.
func SetParams(n *graph.Node, opset int64) error {
	p, err := readParams(n, opset)
	if err != nil {
		return err
	}
	n.Params = p
	return nil
}

// ParseParams caches the parameters of every node of m, its subgraphs
// included (SetParams), and returns the errors found, each naming its
// node. It runs once at load, before anything else reads m.
func ParseParams(m *graph.Model) error {
	if m == nil || m.Graph == nil {
		return nil
	}
	var errs []error
	var walk func(g *graph.Graph)
	walk = func(g *graph.Graph) {
		for _, n := range g.Nodes {
			for _, sub := range graph.NodeSubgraphs(n) {
				walk(sub)
			}
			if err := SetParams(n, n.OpsetIn(m.Opsets)); err != nil {
				errs = append(errs, fmt.Errorf("model %q: %w", m.Name, err))
			}
		}
	}
	walk(m.Graph)
	return errors.Join(errs...)
}

// attrReader reads the attributes of one node into parameter fields.
type attrReader struct {
	n      *graph.Node
	schema *Schema
	// later are the versions of the op after schema, newest first.
	later []*Schema
	err   error
}

func newAttrReader(n *graph.Node, opset int64) *attrReader {
	r := &attrReader{n: n}
	versions := Versions(normDomain(n.Domain), n.OpType)
	for i := len(versions) - 1; i >= 0; i-- {
		if versions[i].Since <= opset {
			r.schema = versions[i]
			break
		}
		r.later = append(r.later, versions[i])
	}
	return r
}

// get returns the node's attribute name, else the default of the schema
// of the node's version, else, for an attribute that version does not
// have, the default of the newest version that has it (ONNX adds an
// attribute with the default that keeps the older versions' behaviour:
// Cast's round_mode "up", ScatterElements' reduction "none"), else nil;
// an attribute of another type than t is an error and reads as absent.
func (r *attrReader) get(name string, t graph.AttrType) *graph.Attribute {
	if a := r.n.Attr(name); a != nil {
		if a.Type == t {
			return a
		}
		if r.declares(name, a.Type) {
			// A field for a version that types the attribute otherwise
			// (Cast-1's string to beside the later int to).
			return nil
		}
		if r.err == nil {
			r.err = fmt.Errorf("%v: attribute %q is of type %v, want %v", r.n, name, a.Type, t)
		}
	}
	if r.schema != nil {
		if s := r.schema.Attr(name); s != nil {
			if s.Default != nil && s.Default.Type == t {
				return s.Default
			}
			return nil
		}
	}
	for _, v := range r.later {
		if s := v.Attr(name); s != nil {
			if s.Default != nil && s.Default.Type == t {
				return s.Default
			}
			return nil
		}
	}
	return nil
}

// declares reports whether the schema of the node's version, or when that
// lacks the attribute any version, declares name with type t.
func (r *attrReader) declares(name string, t graph.AttrType) bool {
	if r.schema != nil {
		if s := r.schema.Attr(name); s != nil {
			return s.Type == t
		}
	}
	for _, v := range Versions(normDomain(r.n.Domain), r.n.OpType) {
		if s := v.Attr(name); s != nil && s.Type == t {
			return true
		}
	}
	return false
}

func (r *attrReader) int(name string, dst *int64) {
	if a := r.get(name, graph.AttrInt); a != nil {
		*dst = a.I
	}
}

func (r *attrReader) optInt(name string, dst **int64) {
	if a := r.get(name, graph.AttrInt); a != nil {
		v := a.I
		*dst = &v
	}
}

func (r *attrReader) float(name string, dst *float32) {
	if a := r.get(name, graph.AttrFloat); a != nil {
		*dst = a.F
	}
}

func (r *attrReader) optFloat(name string, dst **float32) {
	if a := r.get(name, graph.AttrFloat); a != nil {
		v := a.F
		*dst = &v
	}
}

func (r *attrReader) string(name string, dst *string) {
	if a := r.get(name, graph.AttrString); a != nil {
		*dst = string(a.S)
	}
}

func (r *attrReader) optString(name string, dst **string) {
	if a := r.get(name, graph.AttrString); a != nil {
		v := string(a.S)
		*dst = &v
	}
}

func (r *attrReader) ints(name string, dst *[]int64) {
	if a := r.get(name, graph.AttrInts); a != nil {
		*dst = a.Ints
	}
}

func (r *attrReader) floats(name string, dst *[]float32) {
	if a := r.get(name, graph.AttrFloats); a != nil {
		*dst = a.Floats
	}
}

func (r *attrReader) strings(name string, dst *[]string) {
	if a := r.get(name, graph.AttrStrings); a != nil {
		*dst = make([]string, len(a.Strings))
		for i, s := range a.Strings {
			(*dst)[i] = string(s)
		}
	}
}

func (r *attrReader) tensor(name string, dst **graph.Tensor) {
	if a := r.get(name, graph.AttrTensor); a != nil {
		*dst = a.T
	}
}

func (r *attrReader) tensors(name string, dst *[]*graph.Tensor) {
	if a := r.get(name, graph.AttrTensors); a != nil {
		*dst = a.Tensors
	}
}

func (r *attrReader) sparseTensor(name string, dst **graph.SparseTensor) {
	if a := r.get(name, graph.AttrSparseTensor); a != nil {
		*dst = a.Sparse
	}
}

func (r *attrReader) graph(name string, dst **graph.Graph) {
	if a := r.get(name, graph.AttrGraph); a != nil {
		*dst = a.G
	}
}

func (r *attrReader) graphs(name string, dst *[]*graph.Graph) {
	if a := r.get(name, graph.AttrGraphs); a != nil {
		*dst = a.Graphs
	}
}

func (r *attrReader) typeProto(name string, dst **graph.Type) {
	if a := r.get(name, graph.AttrTypeProto); a != nil {
		*dst = a.TP
	}
}

// StridesFor returns w's strides for r spatial axes: 1 on each when the
// node gives none.
func (w *Window) StridesFor(r int) []int64 { return orRepeat(w.Strides, r, 1) }

// DilationsFor returns w's dilations for r spatial axes: 1 on each when
// the node gives none.
func (w *Window) DilationsFor(r int) []int64 { return orRepeat(w.Dilations, r, 1) }

// PadsFor returns w's pads for r spatial axes (begins, then ends): 0 on
// each when the node gives none.
func (w *Window) PadsFor(r int) []int64 { return orRepeat(w.Pads, 2*r, 0) }

// KernelFor returns w's kernel_shape, or kernel (the weights' spatial
// dimensions) when the node gives none.
func (w *Window) KernelFor(kernel []int64) []int64 {
	if w.KernelShape == nil {
		return kernel
	}
	return w.KernelShape
}

// OutputPaddingFor returns ConvTranspose's output_padding for r spatial
// axes: 0 on each when the node gives none.
func (p *ConvTransposeParams) OutputPaddingFor(r int) []int64 { return orRepeat(p.OutputPadding, r, 0) }

// orRepeat returns v, or n copies of x when v is nil.
func orRepeat(v []int64, n int, x int64) []int64 {
	if v != nil {
		return v
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = x
	}
	return out
}
