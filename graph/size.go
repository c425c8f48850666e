package graph

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// MaxBytes is the largest tensor onnxvk accepts, in bytes: 2^48 (256 TiB),
// more than any machine addresses, and small enough that element counts,
// byte sizes and offsets derived from an accepted shape (with elements of
// up to 16 bytes) fit in an int64. On a 32-bit platform it is the largest
// int.
const MaxBytes = min(1<<48, math.MaxInt)

// ErrTooLarge is wrapped by the errors of Elements and Bytes: a shape with a
// negative dimension, or whose element count or byte size overflows int64
// or exceeds MaxBytes.
var ErrTooLarge = errors.New("size out of range")

// MulSize returns a*b for non-negative a and b; ok is false when either is
// negative or the product overflows int64.
func MulSize(a, b int64) (int64, bool) {
	if a < 0 || b < 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt64 {
		return 0, false
	}
	return int64(lo), true
}

// AddSize returns a+b for non-negative a and b; ok is false when either is
// negative or the sum overflows int64.
func AddSize(a, b int64) (int64, bool) {
	if a < 0 || b < 0 || a > math.MaxInt64-b {
		return 0, false
	}
	return a + b, true
}

// Elements is the number of elements of shape (1 for a scalar), or an
// error wrapping ErrTooLarge when a dimension is negative or the product
// of the non-zero dimensions overflows int64 (so that strides computed
// from an accepted shape never overflow, even when a zero dimension makes
// it empty).
func Elements(shape []int64) (int64, error) {
	n, empty := int64(1), false
	for _, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("shape %v: negative dimension %d: %w", shape, d, ErrTooLarge)
		}
		if d == 0 {
			empty = true
			continue
		}
		m, ok := MulSize(n, d)
		if !ok {
			return 0, fmt.Errorf("shape %v: the element count overflows int64: %w", shape, ErrTooLarge)
		}
		n = m
	}
	if empty {
		return 0, nil
	}
	return n, nil
}

// Bytes is the storage a tensor of type dt and the given shape takes (for
// strings, their headers: 16 bytes an element), or an error wrapping
// ErrTooLarge when Elements fails or the size exceeds MaxBytes. It is the
// check every shape that comes from a model, a caller or a computation
// passes before anything is allocated for it.
func Bytes(dt DType, shape []int64) (int64, error) {
	n, err := Elements(shape)
	if err != nil {
		return 0, err
	}
	bitsPer := int64(dt.Bits())
	if dt == String {
		bitsPer = 128
	}
	b, ok := MulSize(n, bitsPer)
	if !ok || b > MaxBytes*8 {
		return 0, fmt.Errorf("shape %v: %d %s elements exceed the limit of %d bytes: %w", shape, n, dt, int64(MaxBytes), ErrTooLarge)
	}
	return (b + 7) / 8, nil
}
