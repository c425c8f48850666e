package hostfallback

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/x448/float16"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

func init() {
	Register("Cast", castKernel)
	Register("CastLike", castLikeKernel)
}

// castKernel is Cast (all versions): the to attribute names the result
// type (a DataType number, or its name such as "FLOAT" in Cast-1);
// saturate (Cast-19+) says whether float8 results clamp to their largest
// finite value; round_mode (Cast-24+) rounds FLOAT8E8M0 results.
func castKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	a := c.Node.Attr("to")
	switch {
	case a != nil && a.Type == graph.AttrInt:
		return castNode(c, x, graph.DType(a.I))
	case a != nil && a.Type == graph.AttrString:
		dt, ok := graph.ParseDType(strings.ToLower(string(a.S)))
		if !ok {
			return c.Errorf("unknown type name %q", a.S)
		}
		return castNode(c, x, dt)
	}
	return c.Errorf("missing attribute to")
}

// castLikeKernel is CastLike: Cast to the element type of the second input.
func castLikeKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	like, err := inputTensor(c, 1)
	if err != nil {
		return err
	}
	return castNode(c, x, like.DType)
}

// castNode casts x to type to as output 0 of c, with c's Cast attributes.
func castNode(c *Call, x *graph.Tensor, to graph.DType) error {
	if !to.Valid() {
		return c.Errorf("invalid target type %d", int32(to))
	}
	p := ops.Params[ops.CastParams](c.Node, c.Opset)
	o := castOptions{saturate: p.Saturate != 0}
	switch m := p.RoundMode; m {
	case "up":
		o.e8m0 = graph.E8M0RoundUp
	case "down":
		o.e8m0 = graph.E8M0RoundDown
	case "nearest":
		o.e8m0 = graph.E8M0RoundNearest
	default:
		return c.Errorf("unknown round_mode %q", m)
	}
	if err := castTensor(c.Threads, c.Output(0, to, x.Shape), x, o); err != nil {
		return c.Errorf("%w", err)
	}
	return nil
}

// castOptions are Cast's attributes for the low-precision float targets.
type castOptions struct {
	// saturate clamps values beyond a float8 type's range to its largest
	// finite value instead of giving infinity or NaN.
	saturate bool
	e8m0     graph.E8M0Rounding
}

// castTensor converts src's elements into dst, a tensor of the same element
// count, as ONNX's Cast does: floats to integers truncate toward zero (out
// of range values wrap as the hardware conversion gives them), numbers to
// bool test for non-zero, bool to numbers gives 0 or 1, the packed 4- and
// 2-bit integers saturate after rounding half to even, strings parse as
// decimal or scientific numbers (INF, +INF, -INF and NaN in any case), and
// numbers format as numpy's str does, with the shortest digits that
// round-trip through the source type. The error wraps ErrUnsupported for
// type pairs Cast does not define (complex types).
func castTensor(threads *Threads, dst, src *graph.Tensor, o castOptions) error {
	if dst.DType == src.DType {
		copyTensor(dst, src)
		return nil
	}
	dt := src.DType
	switch dt {
	case graph.Float:
		return castFrom(threads, dst, graph.View[float32](src), dt, o)
	case graph.Double:
		return castFrom(threads, dst, graph.View[float64](src), dt, o)
	case graph.Int8:
		return castFrom(threads, dst, graph.View[int8](src), dt, o)
	case graph.Int16:
		return castFrom(threads, dst, graph.View[int16](src), dt, o)
	case graph.Int32:
		return castFrom(threads, dst, graph.View[int32](src), dt, o)
	case graph.Int64:
		return castFrom(threads, dst, graph.View[int64](src), dt, o)
	case graph.Uint8, graph.Bool:
		return castFrom(threads, dst, src.Data, dt, o)
	case graph.Uint16:
		return castFrom(threads, dst, graph.View[uint16](src), dt, o)
	case graph.Uint32:
		return castFrom(threads, dst, graph.View[uint32](src), dt, o)
	case graph.Uint64:
		return castFrom(threads, dst, graph.View[uint64](src), dt, o)
	case graph.String:
		return castFromStrings(threads, dst, src.Strings, o)
	case graph.Int4, graph.Int2, graph.Uint4, graph.Uint2:
		v := make([]int8, src.NumElements())
		for i := range v {
			switch dt {
			case graph.Int4:
				v[i] = graph.Int4At(src.Data, int64(i))
			case graph.Int2:
				v[i] = graph.Int2At(src.Data, int64(i))
			case graph.Uint4:
				v[i] = int8(graph.Uint4At(src.Data, int64(i)))
			default:
				v[i] = int8(graph.Uint2At(src.Data, int64(i)))
			}
		}
		return castFrom(threads, dst, v, dt, o)
	}
	if !dt.IsFloat() {
		return fmt.Errorf("cast from %s: %w", dt, ErrUnsupported)
	}
	return castFrom(threads, dst, float32Of(threads, src), dt, o)
}

// castFrom converts s, the elements of a tensor of type from (decoded to a
// Go type for the low-precision floats and packed integers), into dst.
func castFrom[S realNumber](threads *Threads, dst *graph.Tensor, s []S, from graph.DType, o castOptions) error {
	s = s[:dst.NumElements()]
	switch dst.DType {
	case graph.Float:
		convertSlice(threads, graph.View[float32](dst), s)
	case graph.Double:
		convertSlice(threads, graph.View[float64](dst), s)
	case graph.Int8:
		convertSlice(threads, graph.View[int8](dst), s)
	case graph.Int16:
		convertSlice(threads, graph.View[int16](dst), s)
	case graph.Int32:
		convertSlice(threads, graph.View[int32](dst), s)
	case graph.Int64:
		convertSlice(threads, graph.View[int64](dst), s)
	case graph.Uint8:
		convertSlice(threads, dst.Data, s)
	case graph.Uint16:
		convertSlice(threads, graph.View[uint16](dst), s)
	case graph.Uint32:
		convertSlice(threads, graph.View[uint32](dst), s)
	case graph.Uint64:
		convertSlice(threads, graph.View[uint64](dst), s)
	case graph.Bool:
		d := dst.Data
		for i, v := range s {
			d[i] = 0
			if v != 0 {
				d[i] = 1
			}
		}
	case graph.String:
		formatNumbers(dst.Strings, s, from)
	case graph.Int4, graph.Uint4, graph.Int2, graph.Uint2:
		packInts(dst, s)
	default:
		if !dst.DType.IsFloat() {
			return fmt.Errorf("cast to %s: %w", dst.DType, ErrUnsupported)
		}
		f, ok := any(s).([]float32)
		if !ok {
			f = make([]float32, len(s))
			convertSlice(threads, f, s)
		}
		encodeFloat32(threads, dst, f, o)
	}
	return nil
}

// convertSlice sets d[i] = D(s[i]) with Go's conversion rules.
func convertSlice[D, S realNumber](threads *Threads, d []D, s []S) {
	threads.For(len(d), parallelGrain, func(lo, hi int) {
		d := d[lo:hi]
		for i, v := range s[lo:hi] {
			d[i] = D(v)
		}
	})
}

// packInts stores s into a packed 4- or 2-bit integer tensor, rounding half
// to even and saturating to the type's range (NaN becomes 0).
func packInts[S realNumber](dst *graph.Tensor, s []S) {
	bits := dst.DType.Bits()
	lo, hi := 0.0, float64(int(1)<<bits-1)
	if dst.DType == graph.Int4 || dst.DType == graph.Int2 {
		lo, hi = -float64(int(1)<<(bits-1)), float64(int(1)<<(bits-1)-1)
	}
	for i, v := range s {
		f := math.RoundToEven(float64(v))
		if f != f {
			f = 0
		}
		q := uint8(int8(min(max(f, lo), hi)))
		if bits == 4 {
			graph.SetUint4(dst.Data, int64(i), q)
		} else {
			graph.SetUint2(dst.Data, int64(i), q)
		}
	}
}

// encodeFloat32 rounds f into dst, a Float16, BFloat16, float8 or float4
// tensor.
func encodeFloat32(threads *Threads, dst *graph.Tensor, f []float32, o castOptions) {
	switch dst.DType {
	case graph.Float16, graph.BFloat16:
		float32ToHalf(threads, dst.DType, graph.View[uint16](dst), f)
	case graph.Float4E2M1:
		for i, v := range f {
			graph.SetUint4(dst.Data, int64(i), graph.Float32ToFloat4E2M1(v))
		}
	case graph.Float8E8M0:
		for i, v := range f {
			dst.Data[i] = graph.Float32ToFloat8E8M0(v, o.saturate, o.e8m0)
		}
	default:
		enc := float8Encoder(dst.DType)
		threads.For(len(f), parallelGrain, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				dst.Data[i] = enc(f[i], o.saturate)
			}
		})
	}
}

// float8Encoder returns the float32 encoder of one of the four float8 types
// with a sign.
func float8Encoder(dt graph.DType) func(float32, bool) uint8 {
	switch dt {
	case graph.Float8E4M3FN:
		return graph.Float32ToFloat8E4M3FN
	case graph.Float8E4M3FNUZ:
		return graph.Float32ToFloat8E4M3FNUZ
	case graph.Float8E5M2:
		return graph.Float32ToFloat8E5M2
	}
	return graph.Float32ToFloat8E5M2FNUZ
}

// castFromStrings parses strings into dst: integers in decimal (a string
// with a fraction or exponent is truncated), floats in decimal or
// scientific notation, bools as strconv.ParseBool reads them or as non-zero
// numbers.
func castFromStrings(threads *Threads, dst *graph.Tensor, s []string, o castOptions) error {
	switch {
	case dst.DType.IsInt():
		v := make([]int64, len(s))
		for i, str := range s {
			x, err := parseInteger(str)
			if err != nil {
				return err
			}
			v[i] = x
		}
		if dst.DType == graph.Uint64 {
			convertSlice(threads, graph.View[uint64](dst), v)
			return nil
		}
		return castFrom(threads, dst, v, graph.Int64, o)
	case dst.DType == graph.Bool:
		for i, str := range s {
			b, err := strconv.ParseBool(strings.TrimSpace(str))
			if err != nil {
				f, ferr := parseFloat(str)
				if ferr != nil {
					return ferr
				}
				b = f != 0
			}
			dst.Data[i] = 0
			if b {
				dst.Data[i] = 1
			}
		}
		return nil
	}
	v := make([]float64, len(s))
	for i, str := range s {
		f, err := parseFloat(str)
		if err != nil {
			return err
		}
		v[i] = f
	}
	return castFrom(threads, dst, v, graph.Double, o)
}

// parseFloat parses a decimal or scientific number, or INF, +INF, -INF or
// NaN in any case.
func parseFloat(s string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil && !isRangeErr(err) {
		return 0, fmt.Errorf("cannot parse %q as a number", s)
	}
	return f, nil
}

// parseInteger parses a decimal integer; values past int64's range keep
// their uint64 bits, and numbers with a fraction or exponent truncate.
func parseInteger(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if i, err := strconv.ParseInt(t, 10, 64); err == nil {
		return i, nil
	}
	if u, err := strconv.ParseUint(t, 10, 64); err == nil {
		return int64(u), nil
	}
	f, err := parseFloat(t)
	return int64(f), err
}

// isRangeErr reports whether a strconv error is a range error, for which
// ParseFloat still returns the overflowed or underflowed value.
func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// formatNumbers formats s, the elements of a tensor of type from, into d.
func formatNumbers[S realNumber](d []string, s []S, from graph.DType) {
	for i, v := range s {
		switch {
		case from == graph.Bool:
			d[i] = "False"
			if v != 0 {
				d[i] = "True"
			}
		case from.IsFloat():
			d[i] = formatFloat(float64(v), from)
		case from.IsSigned():
			d[i] = strconv.FormatInt(int64(v), 10)
		default:
			d[i] = strconv.FormatUint(uint64(v), 10)
		}
	}
}

// formatFloat formats v, a value of float type dt, as numpy's str does: the
// fewest significant digits that read back as the same dt value, written
// positionally for magnitudes in [1e-4, 1e16) with ".0" after whole numbers
// and in scientific notation otherwise; infinities and NaN are spelled INF,
// -INF and NaN as in ONNX's Cast.
func formatFloat(v float64, dt graph.DType) string {
	switch {
	case v != v:
		return "NaN"
	case math.IsInf(v, 1):
		return "INF"
	case math.IsInf(v, -1):
		return "-INF"
	}
	bits := 64
	switch dt {
	case graph.Float:
		bits = 32
	case graph.Double:
	default:
		v = shortestDecimal(v, dt)
	}
	if a := math.Abs(v); a != 0 && (a < 1e-4 || a >= 1e16) {
		return strconv.FormatFloat(v, 'e', -1, bits)
	}
	s := strconv.FormatFloat(v, 'f', -1, bits)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// shortestDecimal returns the number with the fewest significant decimal
// digits that rounds to the same value of dt (a float type narrower than
// float32) as v does.
func shortestDecimal(v float64, dt graph.DType) float64 {
	enc := func(x float64) uint16 {
		f := float32(x)
		switch dt {
		case graph.Float16:
			return float16.Fromfloat32(f).Bits()
		case graph.BFloat16:
			return graph.Float32ToBFloat16(f)
		case graph.Float8E8M0:
			return uint16(graph.Float32ToFloat8E8M0(f, true, graph.E8M0RoundNearest))
		case graph.Float4E2M1:
			return uint16(graph.Float32ToFloat4E2M1(f))
		}
		return uint16(float8Encoder(dt)(f, true))
	}
	want := enc(v)
	for p := 0; p < 17; p++ {
		r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'e', p, 64), 64)
		if err == nil && enc(r) == want {
			return r
		}
	}
	return v
}

// isHalf reports whether dt is one of the 16-bit float types that kernels
// compute in float32.
func isHalf(dt graph.DType) bool { return dt == graph.Float16 || dt == graph.BFloat16 }

// halfToFloat32 decodes s, Float16 or BFloat16 bits as dt says, into d.
func halfToFloat32(threads *Threads, dt graph.DType, d []float32, s []uint16) {
	threads.For(len(d), parallelGrain, func(lo, hi int) {
		d, s := d[lo:hi], s[lo:hi]
		if dt == graph.BFloat16 {
			for i, v := range s {
				d[i] = math.Float32frombits(uint32(v) << 16)
			}
			return
		}
		for i, v := range s {
			d[i] = float16.Frombits(v).Float32()
		}
	})
}

// float32ToHalf rounds s to nearest even into d as Float16 or BFloat16
// bits, as dt says.
func float32ToHalf(threads *Threads, dt graph.DType, d []uint16, s []float32) {
	threads.For(len(d), parallelGrain, func(lo, hi int) {
		d, s := d[lo:hi], s[lo:hi]
		if dt == graph.BFloat16 {
			for i, v := range s {
				d[i] = graph.Float32ToBFloat16(v)
			}
			return
		}
		for i, v := range s {
			d[i] = float16.Fromfloat32(v).Bits()
		}
	})
}

// float32Of returns the elements of a float tensor as float32s: t's own
// storage (not to be modified) for Float, a decoded copy for the float
// types narrower than float32.
func float32Of(threads *Threads, t *graph.Tensor) []float32 {
	if t.DType == graph.Float {
		return graph.View[float32](t)[:t.NumElements()]
	}
	f := make([]float32, t.NumElements())
	decodeFloat32(threads, f, t)
	return f
}

// float32Tensor returns t when it is a Float tensor, else a Float tensor
// holding t's values decoded from a narrower float type.
func float32Tensor(threads *Threads, t *graph.Tensor) *graph.Tensor {
	if t.DType == graph.Float {
		return t
	}
	ft := graph.NewTensor(graph.Float, t.Shape)
	decodeFloat32(threads, graph.View[float32](ft), t)
	return ft
}

// decodeFloat32 decodes the elements of t, a float tensor narrower than
// float32, into d.
func decodeFloat32(threads *Threads, d []float32, t *graph.Tensor) {
	var dec func(uint8) float32
	switch t.DType {
	case graph.Float16, graph.BFloat16:
		halfToFloat32(threads, t.DType, d, graph.View[uint16](t))
		return
	case graph.Float8E4M3FN:
		dec = graph.Float8E4M3FNToFloat32
	case graph.Float8E4M3FNUZ:
		dec = graph.Float8E4M3FNUZToFloat32
	case graph.Float8E5M2:
		dec = graph.Float8E5M2ToFloat32
	case graph.Float8E5M2FNUZ:
		dec = graph.Float8E5M2FNUZToFloat32
	case graph.Float8E8M0:
		dec = graph.Float8E8M0ToFloat32
	case graph.Float4E2M1:
		for i := range d {
			d[i] = graph.Float4E2M1ToFloat32(graph.Uint4At(t.Data, int64(i)))
		}
		return
	}
	for i := range d {
		d[i] = dec(t.Data[i])
	}
}

// viaFloat32 runs k on a copy of c whose Float16 and BFloat16 input tensors
// are converted to Float (a tensor that several inputs read, once), then
// rounds k's Float outputs into c's outputs as type dt. Kernels use it to
// compute the 16-bit float types in float32.
func viaFloat32(c *Call, dt graph.DType, k Kernel) error {
	sc := *c
	sc.Alloc = nil
	sc.In = make([]graph.Value, len(c.In))
	sc.Out = make([]graph.Value, len(c.Out))
	for i, v := range c.In {
		sc.In[i] = v
		t, ok := v.(*graph.Tensor)
		if !ok || !isHalf(t.DType) {
			continue
		}
		if j := slices.IndexFunc(c.In[:i], func(u graph.Value) bool { w, ok := u.(*graph.Tensor); return ok && w == t }); j >= 0 {
			sc.In[i] = sc.In[j]
			continue
		}
		sc.In[i] = float32Tensor(c.Threads, t)
	}
	if err := k(&sc); err != nil {
		return err
	}
	for i, v := range sc.Out {
		t, ok := v.(*graph.Tensor)
		if !ok || t.DType != graph.Float {
			c.Out[i] = v
			continue
		}
		out := c.Output(i, dt, t.Shape)
		float32ToHalf(c.Threads, dt, graph.View[uint16](out), graph.View[float32](t))
	}
	return nil
}
