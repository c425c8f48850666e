package graph

import (
	"fmt"
	"math"
	"strings"
	"unsafe"

	"github.com/x448/float16"
)

// Tensor is a host tensor: an element type, a shape and densely packed
// little-endian bytes in row-major order. String tensors keep their elements
// in Strings and have no Data.
//
// Data may be backed by memory the tensor does not own (a memory-mapped
// weight file, a planner arena); such tensors are read-only for kernels.
// Data is at least 8-byte aligned when it was allocated by NewTensor or
// AllocBytes, so the typed views below are valid.
type Tensor struct {
	DType   DType
	Shape   []int64
	Data    []byte
	Strings []string
}

// NumElements is the product of the dimensions (1 for a scalar) of a shape
// that Elements accepts: every tensor and every inferred shape has passed
// it. For any other shape it saturates at math.MaxInt64, so that a size
// comparison refuses it and an allocation of that many elements fails
// instead of wrapping to a small count.
func NumElements(shape []int64) int64 {
	n, err := Elements(shape)
	if err != nil {
		return math.MaxInt64
	}
	return n
}

// Strides returns the row-major element strides of shape.
func Strides(shape []int64) []int64 {
	st := make([]int64, len(shape))
	step := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = step
		step *= shape[i]
	}
	return st
}

// AllocBytes returns n zeroed bytes whose first byte is 8-byte aligned.
func AllocBytes(n int64) []byte {
	if n == 0 {
		return []byte{}
	}
	words := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), n)
}

// NewTensor returns a zero-filled tensor of the given type and shape.
// The shape slice is copied.
func NewTensor(dt DType, shape []int64) *Tensor {
	t := &Tensor{DType: dt, Shape: append([]int64{}, shape...)}
	n := NumElements(shape)
	if dt == String {
		t.Strings = make([]string, n)
		return t
	}
	t.Data = AllocBytes(dt.ByteSize(n))
	return t
}

// NumElements is the number of elements in t.
func (t *Tensor) NumElements() int64 { return NumElements(t.Shape) }

// Rank is the number of dimensions of t.
func (t *Tensor) Rank() int { return len(t.Shape) }

// Elem is a Go type whose memory layout matches a tensor element type.
type Elem interface {
	~float32 | ~float64 | ~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 |
		~uint32 | ~uint64 | ~bool | ~complex64 | ~complex128
}

// View returns t's data as a []T without copying. T must have the element
// size of t.DType (float32 for Float, uint16 for Float16 and BFloat16 bits,
// bool for Bool, uint8 for the float8 types, ...); View panics otherwise,
// since that is a programming error.
func View[T Elem](t *Tensor) []T {
	var zero T
	size := int(unsafe.Sizeof(zero))
	if t.DType.Bits() != size*8 {
		panic(fmt.Sprintf("graph.View: %T view of a %s tensor", zero, t.DType))
	}
	n := len(t.Data) / size
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&t.Data[0])), n)
}

// FromSlice returns a tensor of type dt and shape holding a copy of data.
// len(data) must equal the element count and T must match dt's element size.
func FromSlice[T Elem](dt DType, shape []int64, data []T) (*Tensor, error) {
	if _, err := Bytes(dt, shape); err != nil {
		return nil, fmt.Errorf("graph: %w", err)
	}
	if int64(len(data)) != NumElements(shape) {
		return nil, fmt.Errorf("graph: %d values for shape %v (%d elements)", len(data), shape, NumElements(shape))
	}
	var zero T
	if dt.Bits() != int(unsafe.Sizeof(zero))*8 {
		return nil, fmt.Errorf("graph: %T values for a %s tensor", zero, dt)
	}
	t := NewTensor(dt, shape)
	copy(View[T](t), data)
	return t, nil
}

// Scalar returns a rank-0 tensor holding v.
func Scalar[T Elem](dt DType, v T) *Tensor {
	t, err := FromSlice(dt, nil, []T{v})
	if err != nil {
		panic(err)
	}
	return t
}

// Clone returns a deep copy of t whose data the caller owns.
func (t *Tensor) Clone() *Tensor {
	c := &Tensor{DType: t.DType, Shape: append([]int64{}, t.Shape...)}
	if t.Strings != nil {
		c.Strings = append([]string{}, t.Strings...)
	}
	if t.Data != nil {
		c.Data = AllocBytes(int64(len(t.Data)))
		copy(c.Data, t.Data)
	}
	return c
}

// Float64At returns element i converted to float64, for any numeric or bool
// type (complex types give their real part). It is meant for tests,
// summaries and shape computation, not for kernels' inner loops.
func (t *Tensor) Float64At(i int64) float64 {
	switch t.DType {
	case Float:
		return float64(View[float32](t)[i])
	case Double:
		return View[float64](t)[i]
	case Float16:
		return float64(float16.Frombits(View[uint16](t)[i]).Float32())
	case BFloat16:
		return float64(BFloat16ToFloat32(View[uint16](t)[i]))
	case Int8:
		return float64(View[int8](t)[i])
	case Int16:
		return float64(View[int16](t)[i])
	case Int32:
		return float64(View[int32](t)[i])
	case Int64:
		return float64(View[int64](t)[i])
	case Uint8:
		return float64(t.Data[i])
	case Uint16:
		return float64(View[uint16](t)[i])
	case Uint32:
		return float64(View[uint32](t)[i])
	case Uint64:
		return float64(View[uint64](t)[i])
	case Bool:
		if t.Data[i] != 0 {
			return 1
		}
		return 0
	case Complex64:
		return float64(real(View[complex64](t)[i]))
	case Complex128:
		return real(View[complex128](t)[i])
	}
	if f, ok := smallFloatDecoders[t.DType]; ok {
		return float64(f(t.Data, i))
	}
	panic(fmt.Sprintf("graph: Float64At on a %s tensor", t.DType))
}

// Int64s returns the elements of an integer tensor as int64s (a copy). It is
// meant for shape-like inputs (axes, shapes, pads); it fails for other types.
func (t *Tensor) Int64s() ([]int64, error) {
	if !t.DType.IsInt() && t.DType != Bool {
		return nil, fmt.Errorf("graph: expected an integer tensor, got %s", t.DType)
	}
	n := t.NumElements()
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(t.Float64At(int64(i)))
	}
	if t.DType == Int64 {
		copy(out, View[int64](t))
	}
	return out, nil
}

// String summarises t for humans: type, shape and the first few values.
func (t *Tensor) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s%v", t.DType, t.Shape)
	n := t.NumElements()
	show := min(n, 8)
	b.WriteString(" [")
	for i := int64(0); i < show; i++ {
		if i > 0 {
			b.WriteString(" ")
		}
		if t.DType == String {
			fmt.Fprintf(&b, "%q", t.Strings[i])
		} else if _, ok := smallFloatDecoders[t.DType]; ok || t.DType.Bits() >= 8 {
			fmt.Fprintf(&b, "%g", t.Float64At(i))
		} else {
			b.WriteString("?")
		}
	}
	if n > show {
		b.WriteString(" ...")
	}
	b.WriteString("]")
	return b.String()
}

// smallFloatDecoders decode the 8- and 4-bit float types; they are filled in
// by lowfloat.go.
var smallFloatDecoders = map[DType]func(data []byte, i int64) float32{}
