package graph

import "math"

// This file converts between float32 and ONNX's low-precision element types
// (the float8 family, FLOAT8E8M0 and FLOAT4E2M1) and reads and writes the
// packed 4-bit and 2-bit integer types. Decoding is exact; encoding rounds to
// nearest, ties to even, as ONNX's Cast does.

// miniFloat describes a small binary floating-point format with a sign bit,
// some exponent bits and mant mantissa bits.
type miniFloat struct {
	mant    int     // mantissa bits
	bias    int     // exponent bias
	signBit uint8   // the sign bit's mask (0x80, or 0x08 for 4-bit formats)
	max     float64 // largest finite value
	maxBits uint8   // encoding of max, sign excluded
	uz      bool    // unsigned zero: the only NaN is the sign bit alone
	hasInf  bool    // all-ones exponent is infinity (mantissa 0) or NaN, as in IEEE 754
	hasNaN  bool    // false for FLOAT4E2M1, which has neither NaN nor infinity
}

var (
	e4m3fn   = miniFloat{mant: 3, bias: 7, signBit: 0x80, max: 448, maxBits: 0x7E, hasNaN: true}
	e4m3fnuz = miniFloat{mant: 3, bias: 8, signBit: 0x80, max: 240, maxBits: 0x7F, uz: true, hasNaN: true}
	e5m2     = miniFloat{mant: 2, bias: 15, signBit: 0x80, max: 57344, maxBits: 0x7B, hasInf: true, hasNaN: true}
	e5m2fnuz = miniFloat{mant: 2, bias: 16, signBit: 0x80, max: 57344, maxBits: 0x7F, uz: true, hasNaN: true}
	e2m1     = miniFloat{mant: 1, bias: 1, signBit: 0x08, max: 6, maxBits: 0x07}
)

// decode returns the value of the encoding b exactly.
func (f *miniFloat) decode(b uint8) float32 {
	if f.uz && b == f.signBit {
		return float32(math.NaN())
	}
	neg := b&f.signBit != 0
	v := b &^ f.signBit
	allOnes := f.signBit - 1
	expAllOnes := int(allOnes >> f.mant)
	e := int(v >> f.mant)
	m := int(v & (1<<f.mant - 1))
	var x float64
	switch {
	case f.hasInf && e == expAllOnes && m == 0:
		x = math.Inf(1)
	case f.hasInf && e == expAllOnes, !f.hasInf && !f.uz && f.hasNaN && v == allOnes:
		return float32(math.NaN())
	case e == 0:
		x = math.Ldexp(float64(m), 1-f.bias-f.mant)
	default:
		x = math.Ldexp(float64(1<<f.mant|m), e-f.bias-f.mant)
	}
	if neg {
		x = -x
	}
	return float32(x)
}

// nan is the format's NaN encoding for a value of the given sign; formats
// without NaN saturate to the largest positive value, as ONNX specifies.
func (f *miniFloat) nan(sign uint8) uint8 {
	switch {
	case f.uz:
		return f.signBit
	case !f.hasNaN:
		return f.maxBits
	}
	return sign | (f.signBit - 1)
}

// overflow is the encoding of a value too large for the format when the
// conversion does not saturate: infinity where the format has one, else NaN.
func (f *miniFloat) overflow(sign uint8) uint8 {
	if f.hasInf {
		return sign | (f.signBit-1)>>f.mant<<f.mant
	}
	return f.nan(sign)
}

// encode rounds x to the nearest representable value, ties to even. Values
// beyond the largest finite value, infinities included, become that value
// when saturate is set and overflow otherwise.
func (f *miniFloat) encode(x float32, saturate bool) uint8 {
	var sign uint8
	if math.Signbit(float64(x)) {
		sign = f.signBit
	}
	if x != x {
		return f.nan(sign)
	}
	a := math.Abs(float64(x))
	emin := 1 - f.bias
	var r float64
	if !math.IsInf(a, 0) {
		_, exp := math.Frexp(a)
		e := max(exp-1, emin)
		q := math.Ldexp(1, e-f.mant)
		r = math.RoundToEven(a/q) * q
	}
	if math.IsInf(a, 0) || r > f.max {
		if saturate {
			return sign | f.maxBits
		}
		return f.overflow(sign)
	}
	if r == 0 {
		if f.uz {
			return 0
		}
		return sign
	}
	_, exp := math.Frexp(r)
	e := exp - 1
	if e < emin {
		return sign | uint8(math.Ldexp(r, f.mant-emin))
	}
	m := uint8(math.Ldexp(r, f.mant-e)) &^ (1 << f.mant)
	return sign | uint8(e+f.bias)<<f.mant | m
}

// table returns the decoded values of every encoding of an n-bit format.
func (f *miniFloat) table(n int) []float32 {
	t := make([]float32, n)
	for b := range t {
		t[b] = f.decode(uint8(b))
	}
	return t
}

var (
	e4m3fnTable   = e4m3fn.table(256)
	e4m3fnuzTable = e4m3fnuz.table(256)
	e5m2Table     = e5m2.table(256)
	e5m2fnuzTable = e5m2fnuz.table(256)
	e2m1Table     = e2m1.table(16)
)

// Float8E4M3FNToFloat32 decodes a FLOAT8E4M3FN value (bias 7, no
// infinities, NaN = S.1111.111, max 448).
func Float8E4M3FNToFloat32(b uint8) float32 { return e4m3fnTable[b] }

// Float32ToFloat8E4M3FN encodes f as FLOAT8E4M3FN, rounding to nearest even.
// With saturate, values beyond ±448 and infinities become ±448; without,
// they become NaN. NaN stays NaN.
func Float32ToFloat8E4M3FN(f float32, saturate bool) uint8 { return e4m3fn.encode(f, saturate) }

// Float8E4M3FNUZToFloat32 decodes a FLOAT8E4M3FNUZ value (bias 8, no
// infinities, no negative zero, NaN = 0x80, max 240).
func Float8E4M3FNUZToFloat32(b uint8) float32 { return e4m3fnuzTable[b] }

// Float32ToFloat8E4M3FNUZ encodes f as FLOAT8E4M3FNUZ, rounding to nearest
// even; -0 becomes 0. With saturate, values beyond ±240 and infinities become
// ±240; without, they become NaN.
func Float32ToFloat8E4M3FNUZ(f float32, saturate bool) uint8 { return e4m3fnuz.encode(f, saturate) }

// Float8E5M2ToFloat32 decodes a FLOAT8E5M2 value (IEEE-like: bias 15,
// infinities and NaNs at exponent 31, max 57344).
func Float8E5M2ToFloat32(b uint8) float32 { return e5m2Table[b] }

// Float32ToFloat8E5M2 encodes f as FLOAT8E5M2, rounding to nearest even.
// With saturate, values beyond ±57344 and infinities become ±57344; without,
// they become ±infinity.
func Float32ToFloat8E5M2(f float32, saturate bool) uint8 { return e5m2.encode(f, saturate) }

// Float8E5M2FNUZToFloat32 decodes a FLOAT8E5M2FNUZ value (bias 16, no
// infinities, no negative zero, NaN = 0x80, max 57344).
func Float8E5M2FNUZToFloat32(b uint8) float32 { return e5m2fnuzTable[b] }

// Float32ToFloat8E5M2FNUZ encodes f as FLOAT8E5M2FNUZ, rounding to nearest
// even; -0 becomes 0. With saturate, values beyond ±57344 and infinities
// become ±57344; without, they become NaN.
func Float32ToFloat8E5M2FNUZ(f float32, saturate bool) uint8 { return e5m2fnuz.encode(f, saturate) }

// Float4E2M1ToFloat32 decodes a FLOAT4E2M1 value held in the low nibble of
// b (bias 1, no infinities or NaN, values 0, 0.5, 1, 1.5, 2, 3, 4, 6 and
// their negatives). The high nibble is ignored.
func Float4E2M1ToFloat32(b uint8) float32 { return e2m1Table[b&0x0F] }

// Float32ToFloat4E2M1 encodes f as FLOAT4E2M1 in the low nibble, rounding to
// nearest even. The conversion always saturates, as ONNX specifies: values
// beyond ±6 and infinities become ±6, NaN becomes +6.
func Float32ToFloat4E2M1(f float32) uint8 { return e2m1.encode(f, true) }

// Float8E8M0ToFloat32 decodes a FLOAT8E8M0 value: 2^(b-127), with 0xFF NaN.
// The format has no sign and no zero.
func Float8E8M0ToFloat32(b uint8) float32 {
	if b == 0xFF {
		return float32(math.NaN())
	}
	return float32(math.Ldexp(1, int(b)-127))
}

// E8M0Rounding says how Float32ToFloat8E8M0 rounds a value that is not a
// power of two; the values follow ONNX Cast's round_mode attribute.
type E8M0Rounding uint8

// Rounding modes of Float32ToFloat8E8M0. The zero value is ONNX's default.
const (
	// E8M0RoundUp rounds up to the next power of two ("up").
	E8M0RoundUp E8M0Rounding = iota
	// E8M0RoundDown truncates to the power of two below ("down").
	E8M0RoundDown
	// E8M0RoundNearest rounds to the nearest power of two, ties up ("nearest").
	E8M0RoundNearest
)

// Float32ToFloat8E8M0 encodes the magnitude of f as FLOAT8E8M0 from its
// float32 exponent, as ONNX's reference does: the sign is dropped, NaN and
// infinities give 0xFF, and rounding follows mode. With saturate, rounding
// never goes past the largest value 2^127 (0xFE); without, it may give 0xFF.
func Float32ToFloat8E8M0(f float32, saturate bool, mode E8M0Rounding) uint8 {
	bits := math.Float32bits(f)
	exp := bits >> 23 & 0xFF
	if exp == 0xFF {
		return 0xFF
	}
	var up bool
	switch mode {
	case E8M0RoundUp:
		up = bits&0x7FFFFF != 0
	case E8M0RoundNearest:
		guard := bits&0x400000 != 0
		rest := bits&0x3FFFFF != 0
		up = guard && (rest || exp > 0)
	}
	if up && !(saturate && exp == 0xFE) {
		exp++
	}
	return uint8(exp)
}

// Uint4At returns element i of packed 4-bit data (two per byte, the first in
// the low nibble).
func Uint4At(data []byte, i int64) uint8 { return data[i>>1] >> (4 * (i & 1)) & 0x0F }

// Int4At returns element i of packed signed 4-bit data, sign-extended.
func Int4At(data []byte, i int64) int8 { return int8(Uint4At(data, i)<<4) >> 4 }

// SetUint4 stores the low 4 bits of v as element i of packed 4-bit data,
// leaving the other nibble of the byte unchanged.
func SetUint4(data []byte, i int64, v uint8) {
	shift := 4 * (i & 1)
	data[i>>1] = data[i>>1]&^(0x0F<<shift) | (v&0x0F)<<shift
}

// SetInt4 stores the low 4 bits of v (two's complement, so -8..7 round-trip)
// as element i of packed 4-bit data.
func SetInt4(data []byte, i int64, v int8) { SetUint4(data, i, uint8(v)) }

// Uint2At returns element i of packed 2-bit data (four per byte, the first
// in the lowest two bits).
func Uint2At(data []byte, i int64) uint8 { return data[i>>2] >> (2 * (i & 3)) & 0x03 }

// Int2At returns element i of packed signed 2-bit data, sign-extended (-2..1).
func Int2At(data []byte, i int64) int8 { return int8(Uint2At(data, i)<<6) >> 6 }

// SetUint2 stores the low 2 bits of v as element i of packed 2-bit data,
// leaving the byte's other elements unchanged.
func SetUint2(data []byte, i int64, v uint8) {
	shift := 2 * (i & 3)
	data[i>>2] = data[i>>2]&^(0x03<<shift) | (v&0x03)<<shift
}

// SetInt2 stores the low 2 bits of v (two's complement, so -2..1 round-trip)
// as element i of packed 2-bit data.
func SetInt2(data []byte, i int64, v int8) { SetUint2(data, i, uint8(v)) }

// init registers the element readers Tensor.Float64At uses for the types
// narrower than a byte or with no Go equivalent: the small floats and, so
// that Float64At and Int64s cover every numeric type, the packed integers.
func init() {
	smallFloatDecoders[Float8E4M3FN] = func(d []byte, i int64) float32 { return e4m3fnTable[d[i]] }
	smallFloatDecoders[Float8E4M3FNUZ] = func(d []byte, i int64) float32 { return e4m3fnuzTable[d[i]] }
	smallFloatDecoders[Float8E5M2] = func(d []byte, i int64) float32 { return e5m2Table[d[i]] }
	smallFloatDecoders[Float8E5M2FNUZ] = func(d []byte, i int64) float32 { return e5m2fnuzTable[d[i]] }
	smallFloatDecoders[Float8E8M0] = func(d []byte, i int64) float32 { return Float8E8M0ToFloat32(d[i]) }
	smallFloatDecoders[Float4E2M1] = func(d []byte, i int64) float32 { return e2m1Table[Uint4At(d, i)] }
	smallFloatDecoders[Uint4] = func(d []byte, i int64) float32 { return float32(Uint4At(d, i)) }
	smallFloatDecoders[Int4] = func(d []byte, i int64) float32 { return float32(Int4At(d, i)) }
	smallFloatDecoders[Uint2] = func(d []byte, i int64) float32 { return float32(Uint2At(d, i)) }
	smallFloatDecoders[Int2] = func(d []byte, i int64) float32 { return float32(Int2At(d, i)) }
}

// BFloat16ToFloat32 widens a bfloat16 bit pattern (exact).
func BFloat16ToFloat32(b uint16) float32 { return math.Float32frombits(uint32(b) << 16) }

// Float32ToBFloat16 rounds f to the nearest bfloat16, ties to even; NaNs
// stay quiet NaNs.
func Float32ToBFloat16(f float32) uint16 {
	b := math.Float32bits(f)
	if f != f {
		return uint16(b>>16) | 0x40
	}
	b += 0x7FFF + (b>>16)&1
	return uint16(b >> 16)
}
