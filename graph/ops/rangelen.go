package ops

import (
	"fmt"
	"math"
)

// MaxRangeElements is the longest Range that shape inference and the
// kernels accept.
const MaxRangeElements = 1 << 40

// RangeLength returns the number of elements of Range(start, limit, delta)
// over integers: max(ceil((limit-start)/delta), 0), counted in uint64 so
// that limit-start cannot overflow. It fails when delta is 0 or the count
// exceeds MaxRangeElements.
func RangeLength(start, limit, delta int64) (int64, error) {
	if delta == 0 {
		return 0, fmt.Errorf("delta is 0")
	}
	var span, step uint64
	switch {
	case delta > 0 && limit > start:
		span, step = uint64(limit)-uint64(start), uint64(delta)
	case delta < 0 && limit < start:
		span, step = uint64(start)-uint64(limit), -uint64(delta)
	default:
		return 0, nil
	}
	n := (span-1)/step + 1
	if n > MaxRangeElements {
		return 0, fmt.Errorf("range from %d to %d by %d is too long", start, limit, delta)
	}
	return int64(n), nil
}

// RangeLengthFloat is RangeLength over floating-point values; it also
// fails when a value is NaN or infinite.
func RangeLengthFloat(start, limit, delta float64) (int64, error) {
	if delta == 0 {
		return 0, fmt.Errorf("delta is 0")
	}
	f := math.Ceil((limit - start) / delta)
	if math.IsNaN(f) || !(f < MaxRangeElements) {
		return 0, fmt.Errorf("range from %g to %g by %g is too long or not finite", start, limit, delta)
	}
	return int64(max(f, 0)), nil
}
