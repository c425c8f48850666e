package ops

import (
	"fmt"

	"github.com/onnxvk/onnxvk/graph"
)

// in returns the type of input i, or nil when it is absent or unknown.
func (c *InferContext) in(i int) *graph.Type {
	if i < 0 || i >= len(c.InTypes) {
		return nil
	}
	return c.InTypes[i]
}

// inTensor returns the type of input i when it is a tensor, else nil.
func (c *InferContext) inTensor(i int) *graph.Type {
	if t := c.in(i); t != nil && t.Kind == graph.TensorKind {
		return t
	}
	return nil
}

// inShape returns the shape of tensor input i; nil means an unknown rank.
func (c *InferContext) inShape(i int) graph.Shape {
	if t := c.inTensor(i); t != nil {
		return t.Shape
	}
	return nil
}

// inElem returns the element type of tensor input i, Undefined if unknown.
func (c *InferContext) inElem(i int) graph.DType {
	if t := c.inTensor(i); t != nil {
		return t.Elem
	}
	return graph.Undefined
}

// has reports whether the node names input i (an omitted optional input has
// the empty name).
func (c *InferContext) has(i int) bool { return c.Node.Input(i) != "" }

// val returns the plan-time value of input i, or nil.
func (c *InferContext) val(i int) *graph.Tensor {
	if i < 0 || i >= len(c.InValues) {
		return nil
	}
	return c.InValues[i]
}

// intsIn returns the value of input i as int64s when it is known.
func (c *InferContext) intsIn(i int) ([]int64, bool) {
	v := c.val(i)
	if v == nil || (!v.DType.IsInt() || v.DType.Bits() < 8) {
		return nil, false
	}
	out, err := v.Int64s()
	return out, err == nil
}

// set records the type of output i; outputs the node does not have are
// ignored, as are nil types.
func (c *InferContext) set(i int, t *graph.Type) {
	if i < len(c.OutTypes) && t != nil {
		c.OutTypes[i] = t
	}
}

// setTensor records a tensor type for output i; an Undefined element type
// with an unknown rank records nothing.
func (c *InferContext) setTensor(i int, dt graph.DType, s graph.Shape) {
	if dt == graph.Undefined && s == nil {
		return
	}
	c.set(i, graph.TensorType(dt, s))
}

// setValue records a computed value of output i and its type.
func (c *InferContext) setValue(i int, v *graph.Tensor) {
	if v == nil || i >= len(c.OutValues) {
		return
	}
	c.OutValues[i] = v
	c.OutTypes[i] = v.ValueType()
}

// normAxis maps a possibly negative axis into [0, rank).
func normAxis(axis int64, rank int) (int, error) {
	r := int64(rank)
	if axis < -r || axis >= r {
		return 0, fmt.Errorf("axis %d out of range for rank %d", axis, rank)
	}
	if axis < 0 {
		axis += r
	}
	return int(axis), nil
}

// normAxes normalises a list of axes for the given rank and rejects repeats.
func normAxes(axes []int64, rank int) ([]int, error) {
	out := make([]int, len(axes))
	seen := make(map[int]bool, len(axes))
	for i, a := range axes {
		n, err := normAxis(a, rank)
		if err != nil {
			return nil, err
		}
		if seen[n] {
			return nil, fmt.Errorf("axis %d repeated in %v", a, axes)
		}
		seen[n] = true
		out[i] = n
	}
	return out, nil
}

// unknownShape returns a shape of the given rank with every dimension unknown.
func unknownShape(rank int) graph.Shape {
	s := make(graph.Shape, rank)
	for i := range s {
		s[i] = graph.UnknownDim()
	}
	return s
}

// SameDim reports whether two dimensions are known to be equal.
func SameDim(a, b graph.Dim) bool {
	if a.Known() && b.Known() {
		return a.Value == b.Value
	}
	return a.Param != "" && a.Param == b.Param
}

// unifyDim combines two dimensions that must be equal: a known size wins
// over a symbol or an unknown, and two different known sizes are an error.
func unifyDim(a, b graph.Dim) (graph.Dim, error) {
	switch {
	case a.Known() && b.Known():
		if a.Value != b.Value {
			return a, fmt.Errorf("dimension %d does not match %d", a.Value, b.Value)
		}
		return a, nil
	case a.Known():
		return a, nil
	case b.Known():
		return b, nil
	case a.Param != "":
		return a, nil
	}
	return b, nil
}

// Broadcast applies numpy's multidirectional broadcasting to the shapes,
// as the elementwise ops' inference does (see broadcast).
func Broadcast(shapes ...graph.Shape) (graph.Shape, error) { return broadcast(shapes...) }

// broadcast applies numpy's multidirectional broadcasting to the shapes. A
// nil shape (unknown rank) makes the result's rank unknown.
func broadcast(shapes ...graph.Shape) (graph.Shape, error) {
	rank := 0
	for _, s := range shapes {
		if s == nil {
			return nil, nil
		}
		rank = max(rank, len(s))
	}
	out := make(graph.Shape, rank)
	for i := range rank {
		var known int64 = -1
		sym := ""
		symOK, other := true, false
		for _, s := range shapes {
			j := i - (rank - len(s))
			if j < 0 {
				continue
			}
			d := s[j]
			switch {
			case d.Known() && d.Value == 1:
			case d.Known():
				if known >= 0 && known != d.Value {
					return nil, fmt.Errorf("cannot broadcast shapes %v", shapes)
				}
				known = d.Value
			case d.Param != "":
				if sym != "" && sym != d.Param {
					symOK = false
				}
				sym = d.Param
				other = true
			default:
				symOK = false
				other = true
			}
		}
		switch {
		case known >= 0:
			out[i] = graph.DimOf(known)
		case !other:
			out[i] = graph.DimOf(1)
		case symOK:
			out[i] = graph.SymDim(sym)
		default:
			out[i] = graph.UnknownDim()
		}
	}
	return out, nil
}

// dimMul multiplies two dimensions: known if both are, else unknown.
func dimMul(a, b graph.Dim) graph.Dim {
	switch {
	case a.Known() && b.Known():
		return graph.DimOf(a.Value * b.Value)
	case a.Known() && a.Value == 1:
		return b
	case b.Known() && b.Value == 1:
		return a
	}
	return graph.UnknownDim()
}

// dimAdd adds two dimensions: known if both are, else unknown.
func dimAdd(a, b graph.Dim) graph.Dim {
	switch {
	case a.Known() && b.Known():
		return graph.DimOf(a.Value + b.Value)
	case a.Known() && a.Value == 0:
		return b
	case b.Known() && b.Value == 0:
		return a
	}
	return graph.UnknownDim()
}

// shapeProduct is the product of the dimensions of s.
func shapeProduct(s graph.Shape) graph.Dim {
	p := graph.DimOf(1)
	for _, d := range s {
		p = dimMul(p, d)
	}
	return p
}

// dimsFromInts turns sizes into a shape, negative sizes becoming unknown.
func dimsFromInts(v []int64) graph.Shape {
	s := make(graph.Shape, len(v))
	for i, x := range v {
		if x < 0 {
			s[i] = graph.UnknownDim()
		} else {
			s[i] = graph.DimOf(x)
		}
	}
	return s
}

// lenOf1D returns the length of the 1-D tensor input i (for shape-like
// inputs whose value is unknown), or -1. A length beyond maxValueElems
// counts as unknown: rules make shapes of that rank, and a declared
// length of 2^40 would make one of 2^40 dimensions.
func (c *InferContext) lenOf1D(i int) int {
	s := c.inShape(i)
	if len(s) == 1 && s[0].Known() && s[0].Value <= maxValueElems {
		return int(s[0].Value)
	}
	return -1
}

// passThrough makes output 0 a copy of input 0's type.
func passThrough(c *InferContext) error {
	c.set(0, c.in(0).Clone())
	return nil
}

// setRule attaches rule f to every version of each named default-domain op.
func setRule(f InferFunc, names ...string) {
	for _, n := range names {
		SetInfer("", n, 0, 0, f)
	}
}
