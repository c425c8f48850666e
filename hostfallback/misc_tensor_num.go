package hostfallback

import (
	"math"
	"unsafe"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/x448/float16"
)

// Numeric helpers for the data-movement kernels that do some arithmetic
// (scatter reductions, Resize, Range, TopK, Unique, EyeLike).

// number is the Go element types with arithmetic.
type number interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// typedView views b as []T without alignment checks; tensor data from
// graph.NewTensor is 8-byte aligned and kernels index it at element
// boundaries.
func typedView[T any](b []byte) []T {
	var z T
	n := len(b) / int(unsafe.Sizeof(z))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// f16ToF32 widens a float16 bit pattern.
func f16ToF32(b uint16) float32 { return float16.Frombits(b).Float32() }

// f32ToF16 rounds to the nearest float16, ties to even.
func f32ToF16(f float32) uint16 { return float16.Fromfloat32(f).Bits() }

// toFloat64s returns t's elements as float64s for the real numeric types
// and bool; ok is false for other types.
func toFloat64s(t *graph.Tensor) (v []float64, ok bool) {
	n := t.NumElements()
	v = make([]float64, n)
	switch t.DType {
	case graph.Float:
		widen(v, typedView[float32](t.Data))
	case graph.Double:
		copy(v, typedView[float64](t.Data))
	case graph.Int8:
		widen(v, typedView[int8](t.Data))
	case graph.Uint8, graph.Bool:
		widen(v, t.Data)
	case graph.Int16:
		widen(v, typedView[int16](t.Data))
	case graph.Uint16:
		widen(v, typedView[uint16](t.Data))
	case graph.Int32:
		widen(v, typedView[int32](t.Data))
	case graph.Uint32:
		widen(v, typedView[uint32](t.Data))
	case graph.Int64:
		widen(v, typedView[int64](t.Data))
	case graph.Uint64:
		widen(v, typedView[uint64](t.Data))
	case graph.Float16:
		for i, b := range typedView[uint16](t.Data)[:n] {
			v[i] = float64(f16ToF32(b))
		}
	case graph.BFloat16:
		for i, b := range typedView[uint16](t.Data)[:n] {
			v[i] = float64(graph.BFloat16ToFloat32(b))
		}
	default:
		return nil, false
	}
	return v, true
}

func widen[T number](dst []float64, src []T) {
	for i := range dst {
		dst[i] = float64(src[i])
	}
}

// fromFloat64s stores v into t, converting to t's type as the ONNX
// reference's saturate_cast does: floats and integers are rounded to
// nearest (integer ties to even) and integers saturated to their range
// (NaN becomes 0); bools are v != 0. ok is false for other types.
func fromFloat64s(t *graph.Tensor, v []float64) (ok bool) {
	switch t.DType {
	case graph.Float:
		d := typedView[float32](t.Data)[:len(v)]
		for i, x := range v {
			d[i] = float32(x)
		}
	case graph.Double:
		copy(typedView[float64](t.Data), v)
	case graph.Float16:
		d := typedView[uint16](t.Data)
		for i, x := range v {
			d[i] = f32ToF16(float32(x))
		}
	case graph.BFloat16:
		d := typedView[uint16](t.Data)
		for i, x := range v {
			d[i] = graph.Float32ToBFloat16(float32(x))
		}
	case graph.Bool:
		for i, x := range v {
			t.Data[i] = 0
			if x != 0 {
				t.Data[i] = 1
			}
		}
	case graph.Int8:
		narrow(typedView[int8](t.Data), v, math.MinInt8, math.MaxInt8)
	case graph.Uint8:
		narrow(t.Data, v, 0, math.MaxUint8)
	case graph.Int16:
		narrow(typedView[int16](t.Data), v, math.MinInt16, math.MaxInt16)
	case graph.Uint16:
		narrow(typedView[uint16](t.Data), v, 0, math.MaxUint16)
	case graph.Int32:
		narrow(typedView[int32](t.Data), v, math.MinInt32, math.MaxInt32)
	case graph.Uint32:
		narrow(typedView[uint32](t.Data), v, 0, math.MaxUint32)
	case graph.Int64:
		narrow(typedView[int64](t.Data), v, math.MinInt64, math.MaxInt64)
	case graph.Uint64:
		narrow(typedView[uint64](t.Data), v, 0, math.MaxUint64)
	default:
		return false
	}
	return true
}

// narrow rounds v to the nearest integer, ties to even, saturating to the
// integer type's range [lo, hi].
func narrow[T number](dst []T, v []float64, lo, hi T) {
	flo, fhi := float64(lo), float64(hi)
	for i, x := range v {
		switch {
		case x != x:
			dst[i] = 0
		case x <= flo:
			dst[i] = lo
		case x >= fhi:
			dst[i] = hi
		default:
			dst[i] = T(math.RoundToEven(x))
		}
	}
}

// scalarBytes encodes v as one element of dt (a real numeric type or bool);
// ok is false for other types.
func scalarBytes(dt graph.DType, v float64) (b []byte, ok bool) {
	t := graph.NewTensor(dt, nil)
	if dt == graph.String || !fromFloat64s(t, []float64{v}) {
		return nil, false
	}
	return t.Data, true
}

// orderOf returns a total order on t's elements by flat index: numbers by
// value with NaN above everything and all NaNs equal (so -0 equals 0),
// complex numbers by real then imaginary part, bools false before true,
// strings bytewise. ok is false for other types.
func orderOf(t *graph.Tensor) (cmp func(i, j int64) int, ok bool) {
	switch t.DType {
	case graph.Float:
		return orderTyped(typedView[float32](t.Data)), true
	case graph.Double:
		return orderTyped(typedView[float64](t.Data)), true
	case graph.Int8:
		return orderTyped(typedView[int8](t.Data)), true
	case graph.Uint8, graph.Bool:
		return orderTyped(t.Data), true
	case graph.Int16:
		return orderTyped(typedView[int16](t.Data)), true
	case graph.Uint16:
		return orderTyped(typedView[uint16](t.Data)), true
	case graph.Int32:
		return orderTyped(typedView[int32](t.Data)), true
	case graph.Uint32:
		return orderTyped(typedView[uint32](t.Data)), true
	case graph.Int64:
		return orderTyped(typedView[int64](t.Data)), true
	case graph.Uint64:
		return orderTyped(typedView[uint64](t.Data)), true
	case graph.Float16, graph.BFloat16:
		v, _ := toFloat64s(t)
		return orderTyped(v), true
	case graph.Complex64:
		return orderPairs(typedView[float32](t.Data)), true
	case graph.Complex128:
		return orderPairs(typedView[float64](t.Data)), true
	case graph.String:
		s := t.Strings
		return func(i, j int64) int {
			switch {
			case s[i] < s[j]:
				return -1
			case s[i] > s[j]:
				return 1
			}
			return 0
		}, true
	}
	return nil, false
}

// compareNum orders numbers with NaN above everything and NaNs equal.
func compareNum[T number](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	case a == b:
		return 0
	case a != a && b != b:
		return 0
	case a != a:
		return 1
	}
	return -1
}

func orderTyped[T number](v []T) func(i, j int64) int {
	return func(i, j int64) int { return compareNum(v[i], v[j]) }
}

func orderPairs[T number](v []T) func(i, j int64) int {
	return func(i, j int64) int {
		if c := compareNum(v[2*i], v[2*j]); c != 0 {
			return c
		}
		return compareNum(v[2*i+1], v[2*j+1])
	}
}
