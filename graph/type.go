package graph

import (
	"fmt"
	"strings"
)

// Dim is one dimension of a shape: a known size (Value >= 0), a symbolic
// size named Param, or unknown (Value < 0 and Param empty). Symbolic names
// share one scope over the whole model, as the ONNX spec says.
type Dim struct {
	Value int64
	Param string
}

// Known reports whether the dimension's size is a number.
func (d Dim) Known() bool { return d.Value >= 0 && d.Param == "" }

// DimOf returns a known dimension.
func DimOf(v int64) Dim { return Dim{Value: v} }

// SymDim returns a symbolic dimension.
func SymDim(name string) Dim { return Dim{Value: -1, Param: name} }

// UnknownDim returns a dimension about which nothing is known.
func UnknownDim() Dim { return Dim{Value: -1} }

// String prints the size, the symbol, or "?".
func (d Dim) String() string {
	switch {
	case d.Param != "":
		return d.Param
	case d.Value >= 0:
		return fmt.Sprint(d.Value)
	}
	return "?"
}

// Shape is a tensor shape. A nil Shape means the rank is unknown; a scalar
// has the empty, non-nil Shape{}.
type Shape []Dim

// ShapeOf returns the fully known shape with the given sizes (non-nil, so
// ShapeOf() is the scalar shape).
func ShapeOf(dims ...int64) Shape {
	s := make(Shape, len(dims))
	for i, d := range dims {
		s[i] = DimOf(d)
	}
	return s
}

// Known reports whether the rank and every dimension are known numbers.
func (s Shape) Known() bool {
	if s == nil {
		return false
	}
	for _, d := range s {
		if !d.Known() {
			return false
		}
	}
	return true
}

// Ints returns the sizes of a Known shape.
func (s Shape) Ints() []int64 {
	out := make([]int64, len(s))
	for i, d := range s {
		out[i] = d.Value
	}
	return out
}

// String prints the shape as [1 3 H W], or [?*] for an unknown rank.
func (s Shape) String() string {
	if s == nil {
		return "[?*]"
	}
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = d.String()
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// Clone returns an independent copy of s (nil stays nil).
func (s Shape) Clone() Shape {
	if s == nil {
		return nil
	}
	return append(Shape{}, s...)
}

// TypeKind says which of ONNX's value kinds a Type describes.
type TypeKind uint8

// The value kinds of ONNX's TypeProto.
const (
	UnknownKind TypeKind = iota
	TensorKind
	SequenceKind
	MapKind
	OptionalKind
	SparseTensorKind
	OpaqueKind
)

// Type is the type of a value. Tensor and sparse tensor types have Elem and
// Shape; sequences and optionals have Inner; maps have Elem as the key type
// and Inner as the value type.
type Type struct {
	Kind  TypeKind
	Elem  DType
	Shape Shape
	Inner *Type
	// Denotation is ONNX's optional type denotation, kept for inspection.
	Denotation string
}

// TensorType returns the type of a tensor with the given element type and shape.
func TensorType(dt DType, shape Shape) *Type {
	return &Type{Kind: TensorKind, Elem: dt, Shape: shape}
}

// Clone returns a deep copy of t (nil stays nil).
func (t *Type) Clone() *Type {
	if t == nil {
		return nil
	}
	c := *t
	c.Shape = t.Shape.Clone()
	c.Inner = t.Inner.Clone()
	return &c
}

// String prints the type the way ONNX tools do, e.g. float32[1 3 224 224],
// seq(int64[?*]).
func (t *Type) String() string {
	if t == nil {
		return "?"
	}
	switch t.Kind {
	case TensorKind:
		return t.Elem.String() + t.Shape.String()
	case SparseTensorKind:
		return "sparse(" + t.Elem.String() + t.Shape.String() + ")"
	case SequenceKind:
		return "seq(" + t.Inner.String() + ")"
	case OptionalKind:
		return "optional(" + t.Inner.String() + ")"
	case MapKind:
		return "map(" + t.Elem.String() + "," + t.Inner.String() + ")"
	case OpaqueKind:
		return "opaque"
	}
	return "?"
}
