// Package npy reads and writes NumPy's .npy array files as graph tensors.
//
// Read accepts format versions 1.0, 2.0 and 3.0, little- and big-endian data,
// C and Fortran order (Fortran-ordered arrays are transposed into the
// row-major order graph tensors use), the numeric dtypes f2 f4 f8 i1 i2 i4 i8
// u1 u2 u4 u8 b1 c8 c16, and the string dtypes U (UTF-32 text) and S (bytes),
// which become String tensors. Write produces what numpy.save does for the
// same array: format 1.0 (2.0 for very long headers), little-endian, C order.
//
// Element types NumPy has no dtype for (bfloat16, the float8 and sub-byte
// types) cannot be written; Write reports ErrUnsupported for them.
package npy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/onnxvk/onnxvk/graph"
)

// ErrFormat is wrapped by the errors for input that is not a well-formed .npy
// file.
var ErrFormat = errors.New("npy: malformed file")

// ErrUnsupported is wrapped by the errors for well-formed arrays or tensors
// this package cannot convert: structured or object dtypes on read, element
// types without a NumPy dtype on write.
var ErrUnsupported = errors.New("npy: unsupported")

// magic starts every .npy file; the format version's two bytes follow.
const magic = "\x93NUMPY"

// maxHeaderLen bounds the header Read accepts. NumPy itself refuses headers
// over 10000 bytes by default; the margin allows for tensors of high rank.
const maxHeaderLen = 1 << 20

// kind is how an element is stored: a fixed-size number, or a string.
type kind uint8

const (
	numeric kind = iota
	unicodeText
	byteString
)

// dtype is a parsed NumPy type descriptor.
type dtype struct {
	kind      kind
	elem      graph.DType // for numeric kinds
	size      int         // bytes per element
	bigEndian bool
	// swap is the size of the units byte-swapped for big-endian data: the
	// element size, a complex number's component size, 4 for UTF-32 text.
	swap int
}

// descrTypes maps a descriptor's type code (without its byte order) to the
// numeric element type.
var descrTypes = map[string]graph.DType{
	"f2": graph.Float16, "f4": graph.Float, "f8": graph.Double,
	"i1": graph.Int8, "i2": graph.Int16, "i4": graph.Int32, "i8": graph.Int64,
	"u1": graph.Uint8, "u2": graph.Uint16, "u4": graph.Uint32, "u8": graph.Uint64,
	"b1": graph.Bool, "c8": graph.Complex64, "c16": graph.Complex128,
}

// parseDescr parses a descriptor such as "<f4", ">c16", "|b1", "<U12" or "|S5".
func parseDescr(s string) (dtype, error) {
	if len(s) < 2 {
		return dtype{}, fmt.Errorf("%w: dtype descriptor %q", ErrFormat, s)
	}
	var dt dtype
	switch s[0] {
	case '<', '|':
	case '>':
		dt.bigEndian = true
	default:
		return dtype{}, fmt.Errorf("%w: dtype %q without a byte order", ErrUnsupported, s)
	}
	code := s[1:]
	if elem, ok := descrTypes[code]; ok {
		dt.kind, dt.elem, dt.size, dt.swap = numeric, elem, elem.Size(), elem.Size()
		if elem == graph.Complex64 || elem == graph.Complex128 {
			dt.swap = elem.Size() / 2
		}
		return dt, nil
	}
	var unit int
	switch code[0] {
	case 'U':
		dt.kind, unit = unicodeText, 4
	case 'S':
		dt.kind, unit = byteString, 1
	default:
		return dtype{}, fmt.Errorf("%w: dtype %q", ErrUnsupported, s)
	}
	n, err := parseCount(code[1:])
	if err != nil || n == 0 {
		return dtype{}, fmt.Errorf("%w: string dtype %q", ErrFormat, s)
	}
	dt.size, dt.swap = n*unit, unit
	return dt, nil
}

// parseCount parses a non-empty decimal count of at most 9 digits, which
// keeps the products computed from it within int64.
func parseCount(s string) (int, error) {
	if s == "" || len(s) > 9 {
		return 0, fmt.Errorf("%w: count %q", ErrFormat, s)
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%w: count %q", ErrFormat, s)
		}
		n = n*10 + int(c-'0')
	}
	return n, nil
}

// numericDescr returns the descriptor Write uses for a numeric element type,
// or "" when NumPy has no dtype for it.
func numericDescr(d graph.DType) string {
	for code, elem := range descrTypes {
		if elem == d {
			if d.Size() == 1 {
				return "|" + code
			}
			return "<" + code
		}
	}
	return ""
}

// shapeRepr prints a shape as Python prints a tuple: (), (3,), (2, 3).
func shapeRepr(shape []int64) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, d := range shape {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, d)
	}
	if len(shape) == 1 {
		b.WriteByte(',')
	}
	b.WriteByte(')')
	return b.String()
}
