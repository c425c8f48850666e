// Package graph is onnxvk's in-memory model IR: models, graphs, nodes,
// attributes, value types with symbolic shapes, and host tensors.
//
// Values are named, as in ONNX: a node's inputs and outputs are value names,
// and the empty name stands for an omitted optional input or output.
package graph

import (
	"fmt"
	"math"
)

// DType is a tensor element type. Its values are ONNX's TensorProto.DataType
// numbers, so a DType converts to and from the wire value directly.
type DType int32

// Element types, numbered as in ONNX.
const (
	Undefined      DType = 0
	Float          DType = 1
	Uint8          DType = 2
	Int8           DType = 3
	Uint16         DType = 4
	Int16          DType = 5
	Int32          DType = 6
	Int64          DType = 7
	String         DType = 8
	Bool           DType = 9
	Float16        DType = 10
	Double         DType = 11
	Uint32         DType = 12
	Uint64         DType = 13
	Complex64      DType = 14
	Complex128     DType = 15
	BFloat16       DType = 16
	Float8E4M3FN   DType = 17
	Float8E4M3FNUZ DType = 18
	Float8E5M2     DType = 19
	Float8E5M2FNUZ DType = 20
	Uint4          DType = 21
	Int4           DType = 22
	Float4E2M1     DType = 23
	Float8E8M0     DType = 24
	Uint2          DType = 25
	Int2           DType = 26
)

var dtypeInfo = [...]struct {
	name string
	bits int
}{
	Undefined:      {"undefined", 0},
	Float:          {"float32", 32},
	Uint8:          {"uint8", 8},
	Int8:           {"int8", 8},
	Uint16:         {"uint16", 16},
	Int16:          {"int16", 16},
	Int32:          {"int32", 32},
	Int64:          {"int64", 64},
	String:         {"string", 0},
	Bool:           {"bool", 8},
	Float16:        {"float16", 16},
	Double:         {"float64", 64},
	Uint32:         {"uint32", 32},
	Uint64:         {"uint64", 64},
	Complex64:      {"complex64", 64},
	Complex128:     {"complex128", 128},
	BFloat16:       {"bfloat16", 16},
	Float8E4M3FN:   {"float8e4m3fn", 8},
	Float8E4M3FNUZ: {"float8e4m3fnuz", 8},
	Float8E5M2:     {"float8e5m2", 8},
	Float8E5M2FNUZ: {"float8e5m2fnuz", 8},
	Uint4:          {"uint4", 4},
	Int4:           {"int4", 4},
	Float4E2M1:     {"float4e2m1", 4},
	Float8E8M0:     {"float8e8m0", 8},
	Uint2:          {"uint2", 2},
	Int2:           {"int2", 2},
}

// Valid reports whether d is a known element type other than Undefined.
func (d DType) Valid() bool { return d > Undefined && int(d) < len(dtypeInfo) }

// String returns the type's lower-case name, e.g. "float32" or "bfloat16".
func (d DType) String() string {
	if d == Undefined || d.Valid() {
		return dtypeInfo[d].name
	}
	return fmt.Sprintf("dtype(%d)", int32(d))
}

// Bits is the storage size of one element in bits: 4 for int4, 0 for strings
// and unknown types.
func (d DType) Bits() int {
	if !d.Valid() {
		return 0
	}
	return dtypeInfo[d].bits
}

// Size is the storage size of one element in bytes, 0 for strings, unknown
// types and the sub-byte types (use ByteSize for those).
func (d DType) Size() int { return d.Bits() / 8 }

// ByteSize is the number of bytes n densely packed elements of d occupy:
// sub-byte types pack several elements per byte, the first in the low bits.
// A count whose size overflows int64 (never one that Bytes accepts) gives
// math.MaxInt64.
func (d DType) ByteSize(n int64) int64 {
	b, ok := MulSize(n, int64(d.Bits()))
	if !ok || b > math.MaxInt64-7 {
		return math.MaxInt64
	}
	return (b + 7) / 8
}

// IsFloat reports whether d is a real floating-point type (any width).
func (d DType) IsFloat() bool {
	switch d {
	case Float, Double, Float16, BFloat16, Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2,
		Float8E5M2FNUZ, Float4E2M1, Float8E8M0:
		return true
	}
	return false
}

// IsInt reports whether d is a signed or unsigned integer type (any width).
func (d DType) IsInt() bool {
	switch d {
	case Uint8, Int8, Uint16, Int16, Int32, Int64, Uint32, Uint64, Uint4, Int4, Uint2, Int2:
		return true
	}
	return false
}

// IsSigned reports whether d is a signed integer or a floating-point type.
func (d DType) IsSigned() bool {
	switch d {
	case Int8, Int16, Int32, Int64, Int4, Int2:
		return true
	}
	return d.IsFloat()
}

// ParseDType returns the DType named by s (as String prints it; "float" and
// "double" are accepted too).
func ParseDType(s string) (DType, bool) {
	switch s {
	case "float":
		return Float, true
	case "double":
		return Double, true
	}
	for d := range dtypeInfo {
		if dtypeInfo[d].name == s && d != 0 {
			return DType(d), true
		}
	}
	return Undefined, false
}
