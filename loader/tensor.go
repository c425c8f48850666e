package loader

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/loader/onnxpb"
)

// maxElements bounds a tensor's element count so that its size in bits
// (at most 128 per element) fits in an int64.
const maxElements = 1 << 56

// elementCount returns the product of dims, refusing negative dimensions
// and products too large to address.
func elementCount(dims []int64) (int64, error) {
	n := int64(1)
	for i, v := range dims {
		if v < 0 {
			return 0, fmt.Errorf("dimension %d is negative (%d)", i, v)
		}
		if v == 0 {
			n = 0
		}
	}
	if n == 0 {
		return 0, nil
	}
	for _, v := range dims {
		if n > maxElements/v {
			return 0, fmt.Errorf("dims %v hold more than 2^56 elements", dims)
		}
		n *= v
	}
	return n, nil
}

// tensor decodes tp, naming it in errors.
func (d *decoder) tensor(tp *onnxpb.TensorProto) (*graph.Tensor, error) {
	t, err := d.tensorData(tp)
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %w", tp.GetName(), err)
	}
	return t, nil
}

func (d *decoder) tensorData(tp *onnxpb.TensorProto) (*graph.Tensor, error) {
	dt := graph.DType(tp.GetDataType())
	if dt == graph.Undefined {
		return nil, errors.New("undefined data type (0)")
	}
	if !dt.Valid() {
		return nil, fmt.Errorf("%w data type %d", errUnknownValue, tp.GetDataType())
	}
	if tp.Segment != nil {
		return nil, fmt.Errorf("%w: segmented tensors (TensorProto.segment) are not supported", ErrUnsupported)
	}
	n, err := elementCount(tp.Dims)
	if err != nil {
		return nil, err
	}
	t := &graph.Tensor{DType: dt, Shape: append([]int64{}, tp.Dims...)}
	fields := typedFieldsSet(tp)
	switch loc := tp.GetDataLocation(); loc {
	case onnxpb.TensorProto_DEFAULT, onnxpb.TensorProto_EXTERNAL:
	default:
		return nil, fmt.Errorf("%w data_location %d", errUnknownValue, int32(loc))
	}
	if tp.GetDataLocation() == onnxpb.TensorProto_EXTERNAL {
		if tp.RawData != nil || fields != "" {
			return nil, errors.New("external tensor also holds data in its value fields")
		}
		if dt == graph.String {
			return nil, fmt.Errorf("%w: string tensors cannot be stored externally", ErrExternalData)
		}
		t.Data, err = d.ext.tensorData(tp, dt.ByteSize(n))
		return t, err
	}
	if len(tp.ExternalData) > 0 {
		return nil, errors.New("external_data is given but data_location is not EXTERNAL")
	}
	if dt == graph.String {
		if tp.RawData != nil {
			return nil, errors.New("string tensor with raw_data")
		}
		if int64(len(tp.StringData)) != n {
			return nil, fmt.Errorf("string_data holds %d strings for %d elements", len(tp.StringData), n)
		}
		t.Strings = make([]string, n)
		for i, s := range tp.StringData {
			t.Strings[i] = string(s)
		}
		return t, nil
	}
	if tp.RawData != nil {
		if fields != "" {
			return nil, fmt.Errorf("both raw_data and %s hold values", fields)
		}
		if want := dt.ByteSize(n); int64(len(tp.RawData)) != want {
			return nil, fmt.Errorf("raw_data holds %d bytes, %s%v needs %d", len(tp.RawData), dt, tp.Dims, want)
		}
		t.Data = aligned(tp.RawData)
		return t, nil
	}
	t.Data, err = typedData(tp, dt, n)
	return t, err
}

// typedFieldsSet names the typed value fields of tp that hold values ("" if
// none do).
func typedFieldsSet(tp *onnxpb.TensorProto) string {
	s := ""
	add := func(set bool, name string) {
		if set {
			if s != "" {
				s += ", "
			}
			s += name
		}
	}
	add(len(tp.FloatData) > 0, "float_data")
	add(len(tp.Int32Data) > 0, "int32_data")
	add(len(tp.StringData) > 0, "string_data")
	add(len(tp.Int64Data) > 0, "int64_data")
	add(len(tp.DoubleData) > 0, "double_data")
	add(len(tp.Uint64Data) > 0, "uint64_data")
	return s
}

// aligned returns b itself when it starts on an 8-byte boundary, else an
// aligned copy, so that typed views of tensor data are always valid.
func aligned(b []byte) []byte {
	if len(b) == 0 {
		return []byte{}
	}
	if uintptr(unsafe.Pointer(unsafe.SliceData(b)))%8 == 0 {
		return b[:len(b):len(b)]
	}
	c := graph.AllocBytes(int64(len(b)))
	copy(c, b)
	return c
}

// asBytes views a slice of fixed-size numbers as its bytes, without copying.
func asBytes[T int32 | int64 | uint64 | float32 | float64](s []T) []byte {
	if len(s) == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(s[0])))
}

// typedData converts the typed value field that ONNX prescribes for dt into
// packed little-endian bytes. Fields whose layout already matches (float_data
// of a float tensor, int64_data of an int64 tensor, ...) are used in place.
func typedData(tp *onnxpb.TensorProto, dt graph.DType, n int64) ([]byte, error) {
	want := func(field string, have int, per int64) error {
		if int64(have) != n*per {
			return fmt.Errorf("%s holds %d values, %s%v needs %d", field, have, dt, tp.Dims, n*per)
		}
		return nil
	}
	switch dt {
	case graph.Float, graph.Complex64:
		per := int64(1)
		if dt == graph.Complex64 {
			per = 2
		}
		if err := want("float_data", len(tp.FloatData), per); err != nil {
			return nil, err
		}
		return aligned(asBytes(tp.FloatData)), nil
	case graph.Double, graph.Complex128:
		per := int64(1)
		if dt == graph.Complex128 {
			per = 2
		}
		if err := want("double_data", len(tp.DoubleData), per); err != nil {
			return nil, err
		}
		return aligned(asBytes(tp.DoubleData)), nil
	case graph.Int32:
		if err := want("int32_data", len(tp.Int32Data), 1); err != nil {
			return nil, err
		}
		return aligned(asBytes(tp.Int32Data)), nil
	case graph.Int64:
		if err := want("int64_data", len(tp.Int64Data), 1); err != nil {
			return nil, err
		}
		return aligned(asBytes(tp.Int64Data)), nil
	case graph.Uint64:
		if err := want("uint64_data", len(tp.Uint64Data), 1); err != nil {
			return nil, err
		}
		return aligned(asBytes(tp.Uint64Data)), nil
	case graph.Uint32:
		if err := want("uint64_data", len(tp.Uint64Data), 1); err != nil {
			return nil, err
		}
		out := graph.AllocBytes(4 * n)
		for i, v := range tp.Uint64Data {
			binary.LittleEndian.PutUint32(out[4*i:], uint32(v))
		}
		return out, nil
	case graph.Int16, graph.Uint16, graph.Float16, graph.BFloat16:
		if err := want("int32_data", len(tp.Int32Data), 1); err != nil {
			return nil, err
		}
		out := graph.AllocBytes(2 * n)
		for i, v := range tp.Int32Data {
			binary.LittleEndian.PutUint16(out[2*i:], uint16(v))
		}
		return out, nil
	case graph.Bool:
		if err := want("int32_data", len(tp.Int32Data), 1); err != nil {
			return nil, err
		}
		out := graph.AllocBytes(n)
		for i, v := range tp.Int32Data {
			if v != 0 {
				out[i] = 1
			}
		}
		return out, nil
	}
	if b := dt.Bits(); b > 0 && b <= 8 {
		// One byte per int32: an element of the 8-bit types, or a byte of
		// packed 4-bit or 2-bit elements.
		size := dt.ByteSize(n)
		if int64(len(tp.Int32Data)) != size {
			return nil, fmt.Errorf("int32_data holds %d values, %s%v needs %d", len(tp.Int32Data), dt, tp.Dims, size)
		}
		out := graph.AllocBytes(size)
		for i, v := range tp.Int32Data {
			out[i] = byte(v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: data type %s in typed fields", ErrUnsupported, dt)
}

// sparse decodes a sparse tensor and checks that its indices lie inside its
// dense shape.
func (d *decoder) sparse(sp *onnxpb.SparseTensorProto) (*graph.SparseTensor, error) {
	if sp.Values == nil || sp.Indices == nil {
		return nil, errors.New("sparse tensor without values or indices")
	}
	dense, err := elementCount(sp.Dims)
	if err != nil {
		return nil, err
	}
	values, err := d.tensor(sp.Values)
	if err != nil {
		return nil, fmt.Errorf("values: %w", err)
	}
	indices, err := d.tensor(sp.Indices)
	if err != nil {
		return nil, fmt.Errorf("indices: %w", err)
	}
	st := &graph.SparseTensor{Values: values, Indices: indices, Dims: append([]int64{}, sp.Dims...)}
	if values.Rank() != 1 {
		return nil, fmt.Errorf("values have shape %v, want [NNZ]", values.Shape)
	}
	nnz := values.Shape[0]
	if indices.DType != graph.Int64 {
		return nil, fmt.Errorf("indices are %s, want int64", indices.DType)
	}
	idx := graph.View[int64](indices)
	switch {
	case indices.Rank() == 1 && indices.Shape[0] == nnz:
		for i, v := range idx {
			if v < 0 || v >= dense {
				return nil, fmt.Errorf("index #%d (%d) is outside [0, %d)", i, v, dense)
			}
		}
	case indices.Rank() == 2 && indices.Shape[0] == nnz && indices.Shape[1] == int64(len(sp.Dims)):
		r := len(sp.Dims)
		for i, v := range idx {
			if lim := sp.Dims[i%r]; v < 0 || v >= lim {
				return nil, fmt.Errorf("coordinate %d of index #%d (%d) is outside [0, %d)", i%r, i/r, v, lim)
			}
		}
	default:
		return nil, fmt.Errorf("indices have shape %v, want [%d] or [%d %d]", indices.Shape, nnz, nnz, len(sp.Dims))
	}
	return st, nil
}
