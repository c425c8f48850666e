package graph

// Value is a runtime value: *Tensor, *Sequence, *Optional or *Map.
// A nil Value stands for an omitted optional input.
type Value interface {
	// ValueType describes the value, with known shapes for tensors.
	ValueType() *Type
}

// ValueType describes a tensor with its concrete shape.
func (t *Tensor) ValueType() *Type { return TensorType(t.DType, ShapeOf(t.Shape...)) }

// Sequence is an ONNX sequence value: an ordered list of values of one type.
type Sequence struct {
	// Elem is the element type; it is needed when the sequence is empty.
	Elem  *Type
	Items []Value
}

// ValueType describes the sequence.
func (s *Sequence) ValueType() *Type { return &Type{Kind: SequenceKind, Inner: s.Elem} }

// Optional is an ONNX optional value; V is nil when it holds nothing.
type Optional struct {
	Elem *Type
	V    Value
}

// ValueType describes the optional.
func (o *Optional) ValueType() *Type { return &Type{Kind: OptionalKind, Inner: o.Elem} }

// Map is an ONNX map value: Keys (a 1-D tensor of the key type) paired
// position by position with Values.
type Map struct {
	Keys   *Tensor
	Values Value
}

// ValueType describes the map.
func (m *Map) ValueType() *Type {
	return &Type{Kind: MapKind, Elem: m.Keys.DType, Inner: m.Values.ValueType()}
}
