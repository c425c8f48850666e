package loader

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/loader/onnxpb"
)

// ReadTensor decodes a serialized TensorProto, as the ONNX test data stores
// inputs and outputs. External data is refused: the tensor has no folder.
func ReadTensor(data []byte) (*graph.Tensor, error) {
	var tp onnxpb.TensorProto
	err := proto.Unmarshal(data, &tp)
	if err != nil || tp.Segment != nil {
		if seq := isSequence(data); seq != "" {
			return nil, fmt.Errorf("loader: the data is %s, not a TensorProto: a tensor is wanted", seq)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("loader: TensorProto: %w", err)
	}
	t, err := valueDecoder().tensor(&tp)
	if err != nil {
		return nil, fmt.Errorf("loader: TensorProto %q: %w", tp.GetName(), err)
	}
	return t, nil
}

// isSequence describes data when it decodes as a SequenceProto with an
// element type, elements and no unknown fields ("a SequenceProto of 2
// tensors"), and returns "" otherwise. Its elements share field 3 with
// TensorProto.segment, so a sequence read as a tensor would otherwise be
// reported as a segmented tensor.
func isSequence(data []byte) string {
	var sp onnxpb.SequenceProto
	if proto.Unmarshal(data, &sp) != nil || sp.ElemType == nil || len(sp.ProtoReflect().GetUnknown()) > 0 {
		return ""
	}
	for _, c := range []struct {
		n    int
		kind string
	}{
		{len(sp.TensorValues), "tensors"},
		{len(sp.SparseTensorValues), "sparse tensors"},
		{len(sp.SequenceValues), "sequences"},
		{len(sp.MapValues), "maps"},
		{len(sp.OptionalValues), "optionals"},
	} {
		if c.n > 0 {
			return fmt.Sprintf("a SequenceProto of %d %s", c.n, c.kind)
		}
	}
	return ""
}

// ReadValue decodes a serialized value whose type is want, as the ONNX
// test data stores inputs and outputs (onnx-data.proto): a SequenceProto
// for a sequence, an OptionalProto for an optional, a MapProto for a map,
// and a TensorProto for a tensor or when want is nil or of unknown kind.
// The protobuf encoding does not say which message a file holds, so the
// caller's type decides. Sequences and optionals take their element type
// from want where the data leaves it open (an empty sequence, an empty
// optional).
func ReadValue(data []byte, want *graph.Type) (graph.Value, error) {
	kind := graph.TensorKind
	if want != nil && want.Kind != graph.UnknownKind {
		kind = want.Kind
	}
	var inner *graph.Type
	if want != nil {
		inner = want.Inner
	}
	d := valueDecoder()
	switch kind {
	case graph.TensorKind:
		return ReadTensor(data)
	case graph.SequenceKind:
		var sp onnxpb.SequenceProto
		if err := proto.Unmarshal(data, &sp); err != nil {
			return nil, fmt.Errorf("loader: SequenceProto: %w", err)
		}
		s, err := d.sequence(&sp, inner)
		if err != nil {
			return nil, fmt.Errorf("loader: SequenceProto %q: %w", sp.GetName(), err)
		}
		return s, nil
	case graph.OptionalKind:
		var op onnxpb.OptionalProto
		if err := proto.Unmarshal(data, &op); err != nil {
			return nil, fmt.Errorf("loader: OptionalProto: %w", err)
		}
		o, err := d.optional(&op, inner)
		if err != nil {
			return nil, fmt.Errorf("loader: OptionalProto %q: %w", op.GetName(), err)
		}
		return o, nil
	case graph.MapKind:
		var mp onnxpb.MapProto
		if err := proto.Unmarshal(data, &mp); err != nil {
			return nil, fmt.Errorf("loader: MapProto: %w", err)
		}
		m, err := d.mapValue(&mp)
		if err != nil {
			return nil, fmt.Errorf("loader: MapProto %q: %w", mp.GetName(), err)
		}
		return m, nil
	}
	return nil, fmt.Errorf("loader: cannot read a value of type %s", want)
}

// ReadValueFile reads a value of type want from a serialized protobuf file
// (.pb); see ReadValue. A nil want reads a TensorProto.
func ReadValueFile(path string, want *graph.Type) (graph.Value, error) {
	data, err := readRegular(path)
	if err != nil {
		return nil, fmt.Errorf("loader: %w", err)
	}
	v, err := ReadValue(data, want)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// readRegular reads the regular file at path, of at most protobuf's size
// limit.
func readRegular(path string) ([]byte, error) {
	f, st, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := (options{}).checkModelSize(path, st.Size()); err != nil {
		return nil, err
	}
	return readFile(f, st.Size())
}

// valueDecoder returns a decoder for values outside a model: external data
// is refused, since such a value has no folder.
func valueDecoder() *decoder {
	return &decoder{ext: newExternalData(&graph.Model{}, options{})}
}

// The element kinds of SequenceProto and OptionalProto (their DataType enums
// share the numbers).
const (
	elemUndefined = 0
	elemTensor    = 1
	elemSparse    = 2
	elemSequence  = 3
	elemMap       = 4
	elemOptional  = 5
)

// sequence decodes a SequenceProto whose element type is elem (nil when
// unknown: it is then taken from the first element).
func (d *decoder) sequence(sp *onnxpb.SequenceProto, elem *graph.Type) (*graph.Sequence, error) {
	s := &graph.Sequence{Elem: elem}
	var inner *graph.Type
	if elem != nil {
		inner = elem.Inner
	}
	switch sp.GetElemType() {
	case elemUndefined:
		if n := len(sp.GetTensorValues()) + len(sp.GetSequenceValues()) + len(sp.GetMapValues()) + len(sp.GetOptionalValues()) + len(sp.GetSparseTensorValues()); n > 0 {
			return nil, fmt.Errorf("%d values with an undefined element type", n)
		}
	case elemTensor:
		for i, tp := range sp.GetTensorValues() {
			t, err := d.tensor(tp)
			if err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
			s.Items = append(s.Items, t)
		}
	case elemSequence:
		for i, p := range sp.GetSequenceValues() {
			v, err := d.sequence(p, inner)
			if err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
			s.Items = append(s.Items, v)
		}
	case elemMap:
		for i, p := range sp.GetMapValues() {
			v, err := d.mapValue(p)
			if err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
			s.Items = append(s.Items, v)
		}
	case elemOptional:
		for i, p := range sp.GetOptionalValues() {
			v, err := d.optional(p, inner)
			if err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
			s.Items = append(s.Items, v)
		}
	case elemSparse:
		return nil, fmt.Errorf("sparse tensor elements are not supported")
	default:
		return nil, fmt.Errorf("%w element kind %d", errUnknownValue, sp.GetElemType())
	}
	if s.Elem == nil {
		s.Elem = &graph.Type{Kind: graph.TensorKind}
		if len(s.Items) > 0 {
			s.Elem = s.Items[0].ValueType()
		}
	}
	return s, nil
}

// optional decodes an OptionalProto whose element type is elem (nil when
// unknown).
func (d *decoder) optional(op *onnxpb.OptionalProto, elem *graph.Type) (*graph.Optional, error) {
	o := &graph.Optional{Elem: elem}
	var inner *graph.Type
	if elem != nil {
		inner = elem.Inner
	}
	var err error
	switch op.GetElemType() {
	case elemUndefined:
	case elemTensor:
		if op.TensorValue != nil {
			o.V, err = d.tensor(op.TensorValue)
		}
	case elemSequence:
		if op.SequenceValue != nil {
			o.V, err = d.sequence(op.SequenceValue, inner)
		}
	case elemMap:
		if op.MapValue != nil {
			o.V, err = d.mapValue(op.MapValue)
		}
	case elemOptional:
		if op.OptionalValue != nil {
			o.V, err = d.optional(op.OptionalValue, inner)
		}
	case elemSparse:
		return nil, fmt.Errorf("sparse tensor elements are not supported")
	default:
		return nil, fmt.Errorf("%w element kind %d", errUnknownValue, op.GetElemType())
	}
	if err != nil {
		return nil, err
	}
	if o.Elem == nil && o.V != nil {
		o.Elem = o.V.ValueType()
	}
	if o.Elem == nil {
		o.Elem = &graph.Type{Kind: graph.TensorKind}
	}
	return o, nil
}

// mapValue decodes a MapProto. Its keys become a 1-D tensor of the key
// type; values whose elements are all scalar tensors of one element type
// become a 1-D tensor of that type, other values stay a sequence.
func (d *decoder) mapValue(mp *onnxpb.MapProto) (*graph.Map, error) {
	kt, err := elemType(mp.GetKeyType())
	if err != nil {
		return nil, fmt.Errorf("key type: %w", err)
	}
	var keys *graph.Tensor
	switch {
	case kt == graph.String:
		keys = &graph.Tensor{DType: graph.String, Shape: []int64{int64(len(mp.GetStringKeys()))}}
		for _, k := range mp.GetStringKeys() {
			keys.Strings = append(keys.Strings, string(k))
		}
	case kt.IsInt():
		keys = graph.NewTensor(kt, []int64{int64(len(mp.GetKeys()))})
		if err := setInts(keys, mp.GetKeys()); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("key type %s is not an integer or string type", kt)
	}
	seq, err := d.sequence(mp.GetValues(), nil)
	if err != nil {
		return nil, fmt.Errorf("values: %w", err)
	}
	if int64(len(seq.Items)) != keys.Shape[0] {
		return nil, fmt.Errorf("%d keys but %d values", keys.Shape[0], len(seq.Items))
	}
	return &graph.Map{Keys: keys, Values: flattenScalars(seq)}, nil
}

// setInts stores integer keys into t, converting to its element type.
func setInts(t *graph.Tensor, keys []int64) error {
	for i, k := range keys {
		switch t.DType {
		case graph.Int8, graph.Uint8:
			t.Data[i] = byte(k)
		case graph.Int16, graph.Uint16:
			graph.View[uint16](t)[i] = uint16(k)
		case graph.Int32, graph.Uint32:
			graph.View[uint32](t)[i] = uint32(k)
		case graph.Int64, graph.Uint64:
			graph.View[uint64](t)[i] = uint64(k)
		default:
			return fmt.Errorf("key type %s is not supported", t.DType)
		}
	}
	return nil
}

// flattenScalars returns the items of seq as one 1-D tensor when they are
// all scalar tensors of one element type of whole bytes (or strings), and
// seq otherwise.
func flattenScalars(seq *graph.Sequence) graph.Value {
	if len(seq.Items) == 0 {
		return seq
	}
	var dt graph.DType
	for i, it := range seq.Items {
		t, ok := it.(*graph.Tensor)
		if !ok || len(t.Shape) != 0 || (t.DType != graph.String && t.DType.Bits() < 8) || (i > 0 && t.DType != dt) {
			return seq
		}
		dt = t.DType
	}
	out := &graph.Tensor{DType: dt, Shape: []int64{int64(len(seq.Items))}}
	if dt == graph.String {
		for _, it := range seq.Items {
			out.Strings = append(out.Strings, it.(*graph.Tensor).Strings...)
		}
		return out
	}
	out = graph.NewTensor(dt, out.Shape)
	size := int64(len(out.Data)) / int64(len(seq.Items))
	for i, it := range seq.Items {
		copy(out.Data[int64(i)*size:], it.(*graph.Tensor).Data)
	}
	return out
}
