package graph

import (
	"math"
	"math/rand/v2"
	"testing"
)

type lowFloatCodec struct {
	name   string
	bits   int
	decode func(uint8) float32
	encode func(float32, bool) uint8
}

var lowFloatCodecs = []lowFloatCodec{
	{"e4m3fn", 8, Float8E4M3FNToFloat32, Float32ToFloat8E4M3FN},
	{"e4m3fnuz", 8, Float8E4M3FNUZToFloat32, Float32ToFloat8E4M3FNUZ},
	{"e5m2", 8, Float8E5M2ToFloat32, Float32ToFloat8E5M2},
	{"e5m2fnuz", 8, Float8E5M2FNUZToFloat32, Float32ToFloat8E5M2FNUZ},
	{"e2m1", 4, Float4E2M1ToFloat32, func(f float32, _ bool) uint8 { return Float32ToFloat4E2M1(f) }},
}

func sameFloat(a, b float32) bool {
	if a != a || b != b {
		return a != a && b != b
	}
	return a == b && math.Signbit(float64(a)) == math.Signbit(float64(b))
}

func TestLowFloatDecode(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	p := func(e int) float32 { return float32(math.Ldexp(1, e)) }
	negZero := float32(math.Copysign(0, -1))
	tests := []struct {
		name string
		dec  func(uint8) float32
		in   uint8
		want float32
	}{
		{"e4m3fn zero", Float8E4M3FNToFloat32, 0x00, 0},
		{"e4m3fn -zero", Float8E4M3FNToFloat32, 0x80, negZero},
		{"e4m3fn min subnormal", Float8E4M3FNToFloat32, 0x01, p(-9)},
		{"e4m3fn max subnormal", Float8E4M3FNToFloat32, 0x07, 7 * p(-9)},
		{"e4m3fn min normal", Float8E4M3FNToFloat32, 0x08, p(-6)},
		{"e4m3fn one", Float8E4M3FNToFloat32, 0x38, 1},
		{"e4m3fn -1.875", Float8E4M3FNToFloat32, 0xBF, -1.875},
		{"e4m3fn max", Float8E4M3FNToFloat32, 0x7E, 448},
		{"e4m3fn -max", Float8E4M3FNToFloat32, 0xFE, -448},
		{"e4m3fn nan", Float8E4M3FNToFloat32, 0x7F, nan},
		{"e4m3fn -nan", Float8E4M3FNToFloat32, 0xFF, nan},
		{"e4m3fn 256 is finite", Float8E4M3FNToFloat32, 0x78, 256},
		{"e4m3fnuz zero", Float8E4M3FNUZToFloat32, 0x00, 0},
		{"e4m3fnuz nan", Float8E4M3FNUZToFloat32, 0x80, nan},
		{"e4m3fnuz min subnormal", Float8E4M3FNUZToFloat32, 0x01, p(-10)},
		{"e4m3fnuz one", Float8E4M3FNUZToFloat32, 0x40, 1},
		{"e4m3fnuz max", Float8E4M3FNUZToFloat32, 0x7F, 240},
		{"e4m3fnuz -max", Float8E4M3FNUZToFloat32, 0xFF, -240},
		{"e5m2 one", Float8E5M2ToFloat32, 0x3C, 1},
		{"e5m2 min subnormal", Float8E5M2ToFloat32, 0x01, p(-16)},
		{"e5m2 min normal", Float8E5M2ToFloat32, 0x04, p(-14)},
		{"e5m2 max", Float8E5M2ToFloat32, 0x7B, 57344},
		{"e5m2 inf", Float8E5M2ToFloat32, 0x7C, inf},
		{"e5m2 -inf", Float8E5M2ToFloat32, 0xFC, -inf},
		{"e5m2 nan 7d", Float8E5M2ToFloat32, 0x7D, nan},
		{"e5m2 nan 7f", Float8E5M2ToFloat32, 0x7F, nan},
		{"e5m2 -zero", Float8E5M2ToFloat32, 0x80, negZero},
		{"e5m2fnuz one", Float8E5M2FNUZToFloat32, 0x40, 1},
		{"e5m2fnuz min subnormal", Float8E5M2FNUZToFloat32, 0x01, p(-17)},
		{"e5m2fnuz max", Float8E5M2FNUZToFloat32, 0x7F, 57344},
		{"e5m2fnuz nan", Float8E5M2FNUZToFloat32, 0x80, nan},
		{"e2m1 zero", Float4E2M1ToFloat32, 0x0, 0},
		{"e2m1 half", Float4E2M1ToFloat32, 0x1, 0.5},
		{"e2m1 1", Float4E2M1ToFloat32, 0x2, 1},
		{"e2m1 1.5", Float4E2M1ToFloat32, 0x3, 1.5},
		{"e2m1 2", Float4E2M1ToFloat32, 0x4, 2},
		{"e2m1 3", Float4E2M1ToFloat32, 0x5, 3},
		{"e2m1 4", Float4E2M1ToFloat32, 0x6, 4},
		{"e2m1 max", Float4E2M1ToFloat32, 0x7, 6},
		{"e2m1 -zero", Float4E2M1ToFloat32, 0x8, negZero},
		{"e2m1 -max", Float4E2M1ToFloat32, 0xF, -6},
		{"e2m1 ignores high nibble", Float4E2M1ToFloat32, 0xA3, 1.5},
		{"e8m0 one", Float8E8M0ToFloat32, 0x7F, 1},
		{"e8m0 min", Float8E8M0ToFloat32, 0x00, p(-127)},
		{"e8m0 max", Float8E8M0ToFloat32, 0xFE, p(127)},
		{"e8m0 nan", Float8E8M0ToFloat32, 0xFF, nan},
	}
	for _, tt := range tests {
		if got := tt.dec(tt.in); !sameFloat(got, tt.want) {
			t.Errorf("%s: decode(%#02x) = %g, want %g", tt.name, tt.in, got, tt.want)
		}
	}
}

func TestLowFloatEncode(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	p := func(e int) float32 { return float32(math.Ldexp(1, e)) }
	negZero := float32(math.Copysign(0, -1))
	tests := []struct {
		name     string
		enc      func(float32, bool) uint8
		in       float32
		sat, raw uint8 // results with and without saturation
	}{
		{"e4m3fn tie to even down", Float32ToFloat8E4M3FN, 1 + 1.0/16, 0x38, 0x38},
		{"e4m3fn tie to even up", Float32ToFloat8E4M3FN, 1 + 3.0/16, 0x3A, 0x3A},
		{"e4m3fn above tie", Float32ToFloat8E4M3FN, 1 + 1.0/16 + 1.0/1024, 0x39, 0x39},
		{"e4m3fn 464 ties to max", Float32ToFloat8E4M3FN, 464, 0x7E, 0x7E},
		{"e4m3fn 465 overflows", Float32ToFloat8E4M3FN, 465, 0x7E, 0x7F},
		{"e4m3fn -1000", Float32ToFloat8E4M3FN, -1000, 0xFE, 0xFF},
		{"e4m3fn inf", Float32ToFloat8E4M3FN, inf, 0x7E, 0x7F},
		{"e4m3fn -inf", Float32ToFloat8E4M3FN, -inf, 0xFE, 0xFF},
		{"e4m3fn nan", Float32ToFloat8E4M3FN, nan, 0x7F, 0x7F},
		{"e4m3fn -zero", Float32ToFloat8E4M3FN, negZero, 0x80, 0x80},
		{"e4m3fn subnormal tie to zero", Float32ToFloat8E4M3FN, p(-10), 0x00, 0x00},
		{"e4m3fn subnormal tie to 2", Float32ToFloat8E4M3FN, 3 * p(-10), 0x02, 0x02},
		{"e4m3fn subnormal rounds to min normal", Float32ToFloat8E4M3FN, 15 * p(-10), 0x08, 0x08},
		{"e4m3fn tiny negative", Float32ToFloat8E4M3FN, -1e-10, 0x80, 0x80},
		{"e4m3fnuz one", Float32ToFloat8E4M3FNUZ, 1, 0x40, 0x40},
		{"e4m3fnuz -zero is zero", Float32ToFloat8E4M3FNUZ, negZero, 0x00, 0x00},
		{"e4m3fnuz tiny negative is zero", Float32ToFloat8E4M3FNUZ, -1e-10, 0x00, 0x00},
		{"e4m3fnuz 247 rounds to max", Float32ToFloat8E4M3FNUZ, 247, 0x7F, 0x7F},
		{"e4m3fnuz 248 ties to even past max", Float32ToFloat8E4M3FNUZ, 248, 0x7F, 0x80},
		{"e4m3fnuz -inf", Float32ToFloat8E4M3FNUZ, -inf, 0xFF, 0x80},
		{"e4m3fnuz nan", Float32ToFloat8E4M3FNUZ, nan, 0x80, 0x80},
		{"e5m2 one", Float32ToFloat8E5M2, 1, 0x3C, 0x3C},
		{"e5m2 60000", Float32ToFloat8E5M2, 60000, 0x7B, 0x7B},
		{"e5m2 61440 ties up to inf", Float32ToFloat8E5M2, 61440, 0x7B, 0x7C},
		{"e5m2 inf", Float32ToFloat8E5M2, inf, 0x7B, 0x7C},
		{"e5m2 -inf", Float32ToFloat8E5M2, -inf, 0xFB, 0xFC},
		{"e5m2 nan", Float32ToFloat8E5M2, nan, 0x7F, 0x7F},
		{"e5m2 min subnormal", Float32ToFloat8E5M2, p(-16), 0x01, 0x01},
		{"e5m2fnuz inf", Float32ToFloat8E5M2FNUZ, inf, 0x7F, 0x80},
		{"e5m2fnuz -zero", Float32ToFloat8E5M2FNUZ, negZero, 0x00, 0x00},
		{"e5m2fnuz min subnormal", Float32ToFloat8E5M2FNUZ, p(-17), 0x01, 0x01},
	}
	for _, tt := range tests {
		if got := tt.enc(tt.in, true); got != tt.sat {
			t.Errorf("%s: saturating encode(%g) = %#02x, want %#02x", tt.name, tt.in, got, tt.sat)
		}
		if got := tt.enc(tt.in, false); got != tt.raw {
			t.Errorf("%s: non-saturating encode(%g) = %#02x, want %#02x", tt.name, tt.in, got, tt.raw)
		}
	}
}

func TestFloat4E2M1Encode(t *testing.T) {
	tests := []struct {
		in   float32
		want uint8
	}{
		{0, 0x0}, {float32(math.Copysign(0, -1)), 0x8}, {0.25, 0x0}, {0.3, 0x1}, {0.75, 0x2},
		{1.25, 0x2}, {1.75, 0x4}, {2.5, 0x4}, {3.5, 0x6}, {5, 0x6}, {5.1, 0x7}, {7, 0x7},
		{1e30, 0x7}, {-1e30, 0xF}, {-3, 0xD}, {float32(math.Inf(1)), 0x7},
		{float32(math.Inf(-1)), 0xF}, {float32(math.NaN()), 0x7},
	}
	for _, tt := range tests {
		if got := Float32ToFloat4E2M1(tt.in); got != tt.want {
			t.Errorf("Float32ToFloat4E2M1(%g) = %#x, want %#x", tt.in, got, tt.want)
		}
	}
}

func TestFloat8E8M0Encode(t *testing.T) {
	maxF := math.MaxFloat32
	tests := []struct {
		in       float32
		sat      bool
		mode     E8M0Rounding
		want     uint8
		describe string
	}{
		{1, true, E8M0RoundUp, 0x7F, "power of two, up"},
		{1, true, E8M0RoundNearest, 0x7F, "power of two, nearest"},
		{1.5, true, E8M0RoundUp, 0x80, "1.5 up"},
		{1.5, true, E8M0RoundDown, 0x7F, "1.5 down"},
		{1.5, true, E8M0RoundNearest, 0x80, "1.5 nearest ties up"},
		{1.25, true, E8M0RoundNearest, 0x7F, "1.25 nearest"},
		{1.75, true, E8M0RoundNearest, 0x80, "1.75 nearest"},
		{-2, true, E8M0RoundUp, 0x80, "sign dropped"},
		{0, true, E8M0RoundUp, 0x00, "zero"},
		{float32(maxF), true, E8M0RoundUp, 0xFE, "max float saturates"},
		{float32(maxF), false, E8M0RoundUp, 0xFF, "max float overflows"},
		{float32(math.Inf(1)), true, E8M0RoundUp, 0xFF, "inf"},
		{float32(math.NaN()), true, E8M0RoundDown, 0xFF, "nan"},
	}
	for _, tt := range tests {
		if got := Float32ToFloat8E8M0(tt.in, tt.sat, tt.mode); got != tt.want {
			t.Errorf("%s: Float32ToFloat8E8M0(%g) = %#02x, want %#02x", tt.describe, tt.in, got, tt.want)
		}
	}
	for b := range 255 {
		if got := Float32ToFloat8E8M0(Float8E8M0ToFloat32(uint8(b)), false, E8M0RoundNearest); got != uint8(b) {
			t.Errorf("E8M0 %#02x does not round-trip: got %#02x", b, got)
		}
	}
}

// TestLowFloatRoundTrip checks that every finite encoding survives decode
// then encode.
func TestLowFloatRoundTrip(t *testing.T) {
	for _, c := range lowFloatCodecs {
		for b := range 1 << c.bits {
			f := c.decode(uint8(b))
			if f != f || math.IsInf(float64(f), 0) {
				continue
			}
			if got := c.encode(f, false); got != uint8(b) {
				t.Errorf("%s: %#02x decodes to %g, which encodes to %#02x", c.name, b, f, got)
			}
		}
	}
}

// TestLowFloatNearest compares encoding against a brute-force search for the
// nearest finite value, ties going to the even encoding.
func TestLowFloatNearest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range lowFloatCodecs {
		var maxVal float64
		signedZero := c.decode(uint8(1)<<(c.bits-1)) == 0
		for b := range 1 << c.bits {
			if f := float64(c.decode(uint8(b))); !math.IsInf(f, 0) && f == f {
				maxVal = max(maxVal, f)
			}
		}
		for range 20000 {
			x := float32((rng.Float64()*2 - 1) * maxVal * math.Pow(2, -rng.Float64()*20))
			best, bestDist := -1, math.Inf(1)
			for b := range 1 << c.bits {
				f := float64(c.decode(uint8(b)))
				if f != f || math.IsInf(f, 0) || (signedZero && f == 0 && math.Signbit(f) != math.Signbit(float64(x))) {
					continue
				}
				d := math.Abs(f - float64(x))
				if d < bestDist || (d == bestDist && b&1 == 0) {
					best, bestDist = b, d
				}
			}
			if got := c.encode(x, true); !sameFloat(c.decode(got), c.decode(uint8(best))) {
				t.Fatalf("%s: encode(%g) = %#02x (%g), nearest is %#02x (%g)", c.name, x, got, c.decode(got), best, c.decode(uint8(best)))
			}
		}
	}
}

func TestPackedIntegers(t *testing.T) {
	data := make([]byte, 4)
	for i := range int64(8) {
		SetInt4(data, i, int8(i)-4)
	}
	for i := range int64(8) {
		if got := Int4At(data, i); got != int8(i)-4 {
			t.Errorf("Int4At(%d) = %d, want %d", i, got, int8(i)-4)
		}
	}
	if data[0] != 0xDC {
		t.Errorf("first element not in the low nibble: byte 0 = %#02x, want 0xdc", data[0])
	}
	SetUint4(data, 3, 0xFF)
	if Uint4At(data, 3) != 15 || Int4At(data, 2) != -2 {
		t.Errorf("SetUint4 disturbed its neighbour or kept high bits: % x", data)
	}
	if Int4At([]byte{0x87}, 0) != 7 || Int4At([]byte{0x87}, 1) != -8 {
		t.Error("Int4At does not sign-extend")
	}

	two := make([]byte, 2)
	for i := range int64(8) {
		SetInt2(two, i, int8(i%4)-2)
	}
	for i := range int64(8) {
		if got := Int2At(two, i); got != int8(i%4)-2 {
			t.Errorf("Int2At(%d) = %d, want %d", i, got, int8(i%4)-2)
		}
	}
	if two[0] != 0x4E {
		t.Errorf("2-bit packing: byte 0 = %#02x, want 0x4e", two[0])
	}
	SetUint2(two, 5, 7)
	if Uint2At(two, 5) != 3 || Uint2At(two, 4) != 2 || Uint2At(two, 6) != 0 {
		t.Errorf("SetUint2 disturbed its neighbours or kept high bits: % x", two)
	}
}

func TestFloat64AtSmallTypes(t *testing.T) {
	tests := []struct {
		dt   DType
		data []byte
		want []float64
	}{
		{Float8E4M3FN, []byte{0x38, 0xFE}, []float64{1, -448}},
		{Float8E4M3FNUZ, []byte{0x40, 0x7F}, []float64{1, 240}},
		{Float8E5M2, []byte{0x3C, 0xFB}, []float64{1, -57344}},
		{Float8E5M2FNUZ, []byte{0x40}, []float64{1}},
		{Float8E8M0, []byte{0x80}, []float64{2}},
		{Float4E2M1, []byte{0xF2, 0x01}, []float64{1, -6, 0.5}},
		{Int4, []byte{0x8F, 0x07}, []float64{-1, -8, 7}},
		{Uint4, []byte{0x8F}, []float64{15, 8}},
		{Int2, []byte{0b10_01_11_00}, []float64{0, -1, 1, -2}},
		{Uint2, []byte{0b10_01_11_00}, []float64{0, 3, 1, 2}},
	}
	for _, tt := range tests {
		tensor := &Tensor{DType: tt.dt, Shape: []int64{int64(len(tt.want))}, Data: tt.data}
		for i, w := range tt.want {
			if got := tensor.Float64At(int64(i)); got != w {
				t.Errorf("%s: Float64At(%d) = %g, want %g", tt.dt, i, got, w)
			}
		}
	}
	ints, err := (&Tensor{DType: Int4, Shape: []int64{3}, Data: []byte{0x8F, 0x07}}).Int64s()
	if err != nil || ints[0] != -1 || ints[1] != -8 || ints[2] != 7 {
		t.Errorf("Int64s of int4 = %v, %v", ints, err)
	}
}
