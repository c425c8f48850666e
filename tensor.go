package onnxvk

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/x448/float16"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/graph"
)

// DType is a tensor element type, numbered as ONNX's TensorProto.DataType.
type DType = graph.DType

// Element types most programs need; every ONNX type is available in package
// graph.
const (
	Float32  = graph.Float
	Float64  = graph.Double
	Float16  = graph.Float16
	BFloat16 = graph.BFloat16
	Int8     = graph.Int8
	Int16    = graph.Int16
	Int32    = graph.Int32
	Int64    = graph.Int64
	Uint8    = graph.Uint8
	Uint16   = graph.Uint16
	Uint32   = graph.Uint32
	Uint64   = graph.Uint64
	Bool     = graph.Bool
	String   = graph.String
)

// Elem lists the Go element types a Tensor can be built from and read as.
// float16.Float16 (github.com/x448/float16) maps to Float16; uint16 to
// Uint16.
type Elem interface {
	float32 | float64 | float16.Float16 | int8 | int16 | int32 | int64 |
		uint8 | uint16 | uint32 | uint64 | bool | complex64 | complex128
}

// Tensor is an input or output of a model: an element type, a shape, and
// row-major data. A Tensor returned by Session.Run is owned by the caller.
//
// A device tensor (RunOptions.KeepOnDevice) holds its data in GPU memory
// that belongs to the Session whose Run made it: a later Run of that
// Session reads it in place, with no copy through the host. Its data is
// copied to the host once, when first read (Bytes, Data, Float32s,
// Graph, String). Release gives the GPU memory back at once; otherwise it
// is freed when the tensor is garbage collected or the Session closed,
// after which the data can no longer be read (Data and Float32s say so;
// Bytes and Graph return nil). Shape, DType and Len never touch the data.
type Tensor struct {
	t *graph.Tensor
	// dev is the GPU memory of a device tensor, nil for host tensors.
	dev *deviceData
}

// deviceData is a device tensor's memory, and its host copy once read.
type deviceData struct {
	r    backend.Resident
	typ  *graph.Type
	once sync.Once
	t    *graph.Tensor
	err  error
}

// deviceTensor wraps a Resident value as a Tensor whose memory is released
// when it becomes unreachable.
func deviceTensor(r backend.Resident) *Tensor {
	t := &Tensor{dev: &deviceData{r: r, typ: r.ValueType()}}
	runtime.AddCleanup(t, func(r backend.Resident) { r.Release() }, r)
	return t
}

// host returns the tensor's host form, reading a device tensor on first
// use.
func (t *Tensor) host() (*graph.Tensor, error) {
	if t.dev == nil {
		return t.t, nil
	}
	d := t.dev
	d.once.Do(func() {
		d.t, d.err = d.r.Read()
		if d.err != nil {
			d.err = fmt.Errorf("onnxvk: reading a device tensor: %w", d.err)
		}
	})
	return d.t, d.err
}

// hostOrNil is host without its error.
func (t *Tensor) hostOrNil() *graph.Tensor {
	h, _ := t.host()
	return h
}

// OnDevice names the device that holds a device tensor ("vulkan:0"), ""
// for a host tensor.
func (t *Tensor) OnDevice() string {
	if t.dev == nil {
		return ""
	}
	return t.dev.r.DeviceName()
}

// Release frees a device tensor's GPU memory now (its data can no longer
// be read unless it was read before); for a host tensor it does nothing.
// Releasing twice is harmless.
func (t *Tensor) Release() {
	if t.dev != nil {
		t.dev.r.Release()
	}
}

// value returns the tensor as a value for a Run: the Resident value of a
// device tensor, the host tensor otherwise.
func (t *Tensor) value() graph.Value {
	if t.dev != nil {
		return t.dev.r
	}
	return t.t
}

// dtypeOf maps a Go element type to its DType.
func dtypeOf[T Elem]() DType {
	var zero T
	switch any(zero).(type) {
	case float32:
		return graph.Float
	case float64:
		return graph.Double
	case float16.Float16:
		return graph.Float16
	case int8:
		return graph.Int8
	case int16:
		return graph.Int16
	case int32:
		return graph.Int32
	case int64:
		return graph.Int64
	case uint8:
		return graph.Uint8
	case uint16:
		return graph.Uint16
	case uint32:
		return graph.Uint32
	case uint64:
		return graph.Uint64
	case bool:
		return graph.Bool
	case complex64:
		return graph.Complex64
	case complex128:
		return graph.Complex128
	}
	panic("unreachable")
}

// NewTensor returns a tensor of the given shape holding a copy of data,
// whose element type follows from T. len(data) must equal the product of
// the shape.
func NewTensor[T Elem](shape []int64, data []T) (*Tensor, error) {
	t, err := graph.FromSlice(dtypeOf[T](), shape, data)
	if err != nil {
		return nil, fmt.Errorf("onnxvk: NewTensor: %w", err)
	}
	return &Tensor{t: t}, nil
}

// NewStringTensor returns a string tensor of the given shape.
func NewStringTensor(shape []int64, data []string) (*Tensor, error) {
	if _, err := graph.Bytes(graph.String, shape); err != nil {
		return nil, fmt.Errorf("onnxvk: NewStringTensor: %w", err)
	}
	if int64(len(data)) != graph.NumElements(shape) {
		return nil, fmt.Errorf("onnxvk: NewStringTensor: %d strings for shape %v", len(data), shape)
	}
	t := graph.NewTensor(graph.String, shape)
	copy(t.Strings, data)
	return &Tensor{t: t}, nil
}

// NewTensorBytes returns a tensor of any element type from its raw
// little-endian bytes (packed two per byte for 4-bit types), copied.
func NewTensorBytes(dt DType, shape []int64, raw []byte) (*Tensor, error) {
	if !dt.Valid() || dt == graph.String {
		return nil, fmt.Errorf("onnxvk: NewTensorBytes: element type %s has no byte form", dt)
	}
	if _, err := graph.Bytes(dt, shape); err != nil {
		return nil, fmt.Errorf("onnxvk: NewTensorBytes: %w", err)
	}
	if want := dt.ByteSize(graph.NumElements(shape)); int64(len(raw)) != want {
		return nil, fmt.Errorf("onnxvk: NewTensorBytes: %d bytes for %s%v, want %d", len(raw), dt, shape, want)
	}
	t := graph.NewTensor(dt, shape)
	copy(t.Data, raw)
	return &Tensor{t: t}, nil
}

// TensorFrom wraps a graph tensor without copying it.
func TensorFrom(t *graph.Tensor) *Tensor { return &Tensor{t: t} }

// Graph returns the underlying graph tensor (shared, not copied); for a
// device tensor, its host copy.
func (t *Tensor) Graph() *graph.Tensor { return t.hostOrNil() }

// Shape returns the tensor's dimensions.
func (t *Tensor) Shape() []int64 {
	if t.dev != nil {
		return t.dev.typ.Shape.Ints()
	}
	return append([]int64{}, t.t.Shape...)
}

// DType returns the element type.
func (t *Tensor) DType() DType {
	if t.dev != nil {
		return t.dev.typ.Elem
	}
	return t.t.DType
}

// Len returns the number of elements.
func (t *Tensor) Len() int { return int(graph.NumElements(t.Shape())) }

// Bytes returns the raw little-endian data (shared, not copied); nil for
// string tensors.
func (t *Tensor) Bytes() []byte {
	if h := t.hostOrNil(); h != nil {
		return h.Data
	}
	return nil
}

// Strings returns the elements of a string tensor (shared, not copied).
func (t *Tensor) Strings() []string {
	if h := t.hostOrNil(); h != nil {
		return h.Strings
	}
	return nil
}

// String summarises the tensor: type, shape and leading values.
func (t *Tensor) String() string {
	h, err := t.host()
	if err != nil {
		return fmt.Sprintf("%s%v on %s (%v)", t.DType(), t.Shape(), t.OnDevice(), err)
	}
	return h.String()
}

// Data returns the tensor's elements as a []T sharing the tensor's memory.
// T must match the element type exactly (float16.Float16 for Float16).
func Data[T Elem](t *Tensor) ([]T, error) {
	if dt := dtypeOf[T](); dt != t.DType() {
		var zero T
		return nil, fmt.Errorf("onnxvk: Data[%T] of a %s tensor", zero, t.DType())
	}
	h, err := t.host()
	if err != nil {
		return nil, err
	}
	return graph.View[T](h), nil
}

// Float32s returns the elements converted to float32 (a copy), for any
// numeric or bool element type.
func (t *Tensor) Float32s() ([]float32, error) {
	dt := t.DType()
	if dt == graph.String || (!dt.IsFloat() && !dt.IsInt() && dt != graph.Bool) {
		return nil, fmt.Errorf("onnxvk: Float32s of a %s tensor", dt)
	}
	h, err := t.host()
	if err != nil {
		return nil, err
	}
	if dt == graph.Float {
		return append([]float32{}, graph.View[float32](h)...), nil
	}
	out := make([]float32, h.NumElements())
	for i := range out {
		out[i] = float32(h.Float64At(int64(i)))
	}
	return out, nil
}
