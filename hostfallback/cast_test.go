package hostfallback

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

// ewCast runs Cast (opset 19 unless told) to type to with extra attributes.
func ewCast(t *testing.T, x *graph.Tensor, to graph.DType, attrs ...*graph.Attribute) *graph.Tensor {
	t.Helper()
	return ewRun(t, "Cast", 19, ewWith(append(attrs, ewInt("to", int64(to)))...), x)
}

func TestCastNumeric(t *testing.T) {
	f := ewF32(ewShape(4), 1.9, -1.9, 0, 2.5)
	ewCheck(t, "float→int32", ewCast(t, f, graph.Int32), graph.Int32, ewShape(4), []float64{1, -1, 0, 2}, 0)
	ewCheck(t, "float→uint8", ewCast(t, ewF32(ewShape(2), 255, 3.7), graph.Uint8), graph.Uint8, ewShape(2), []float64{255, 3}, 0)
	ewCheck(t, "int32→uint8 wraps", ewCast(t, ewT(graph.Int32, ewShape(2), int32(300), -1), graph.Uint8), graph.Uint8, ewShape(2), []float64{44, 255}, 0)
	ewCheck(t, "int64→float", ewCast(t, ewT(graph.Int64, ewShape(1), int64(1<<40+1)), graph.Float), graph.Float, ewShape(1), []float64{1 << 40}, 0)
	ewCheck(t, "double→float overflow", ewCast(t, ewT(graph.Double, ewShape(2), 1e300, -1e-300), graph.Float), graph.Float, ewShape(2), []float64{ewInf, 0}, 0)
	ewCheck(t, "float→bool", ewCast(t, ewF32(ewShape(4), 0, float32(math.Copysign(0, -1)), float32(ewNaN), 2), graph.Bool), graph.Bool, ewShape(4), []float64{0, 0, 1, 1}, 0)
	ewCheck(t, "bool→double", ewCast(t, ewT(graph.Bool, ewShape(2), true, false), graph.Double), graph.Double, ewShape(2), []float64{1, 0}, 0)
	ewCheck(t, "uint64→int8", ewCast(t, ewT(graph.Uint64, ewShape(1), uint64(math.MaxUint64)), graph.Int8), graph.Int8, ewShape(1), []float64{-1}, 0)
	ewCheck(t, "same type", ewCast(t, ewT(graph.Int16, ewShape(1), int16(-3)), graph.Int16), graph.Int16, ewShape(1), []float64{-3}, 0)
	ewCheck(t, "rank 0", ewCast(t, ewF32(nil, 7), graph.Int64), graph.Int64, ewShape(), []float64{7}, 0)
	ewCheck(t, "empty", ewCast(t, ewF32(ewShape(0, 2)), graph.Double), graph.Double, ewShape(0, 2), nil, 0)
	ewCheck(t, "old opset", ewRun(t, "Cast", 6, ewWith(ewInt("to", int64(graph.Int32))), ewF32(ewShape(1), -3.5)), graph.Int32, ewShape(1), []float64{-3}, 0)
	ewCheck(t, "Cast-1 type name", ewRun(t, "Cast", 1, ewWith(ewString("to", "DOUBLE")), ewF32(ewShape(1), 0.5)), graph.Double, ewShape(1), []float64{0.5}, 0)
	ewCheck(t, "CastLike", ewRun(t, "CastLike", 15, nil, ewF32(ewShape(2), 2.5, -1), graph.NewTensor(graph.Int64, ewShape(0))), graph.Int64, ewShape(2), []float64{2, -1}, 0)
}

func TestCastHalf(t *testing.T) {
	f := ewF32(ewShape(5), 1, 65504, 65520, 1e-8, 0.1)
	h := ewCast(t, f, graph.Float16)
	if got, want := graph.View[uint16](h), []uint16{0x3C00, 0x7BFF, 0x7C00, 0, 0x2E66}; !slices.Equal(got, want) {
		t.Errorf("float→float16 bits %#x, want %#x", got, want)
	}
	ewCheck(t, "float16→double", ewCast(t, h, graph.Double), graph.Double, ewShape(5), []float64{1, 65504, ewInf, 0, 0.0999755859375}, 0)
	b := ewCast(t, ewF32(ewShape(4), 1.00390625, 1.01171875, float32(ewNaN), float32(-ewInf)), graph.BFloat16)
	if got, want := graph.View[uint16](b), []uint16{0x3F80, 0x3F82}; !slices.Equal(got[:2], want) {
		t.Errorf("float→bfloat16 ties %#x, want %#x", got[:2], want)
	}
	ewCheck(t, "bfloat16→float", ewCast(t, b, graph.Float), graph.Float, ewShape(4), []float64{1, 1.015625, ewNaN, -ewInf}, 0)
	ewCheck(t, "float16→bfloat16", ewCast(t, h, graph.BFloat16), graph.BFloat16, ewShape(5), []float64{1, 65536, ewInf, 0, 0.10009765625}, 0)
	ewCheck(t, "float16→int32", ewCast(t, ewCast(t, ewF32(ewShape(3), -2.5, 65504, 0.1), graph.Float16), graph.Int32), graph.Int32, ewShape(3), []float64{-2, 65504, 0}, 0)
}

func TestCastFloat8(t *testing.T) {
	x := ewF32(ewShape(5), 1, 500, -500, float32(ewInf), float32(ewNaN))
	ewCheck(t, "e4m3fn saturate", ewCast(t, x, graph.Float8E4M3FN), graph.Float8E4M3FN, ewShape(5), []float64{1, 448, -448, 448, ewNaN}, 0)
	ewCheck(t, "e4m3fn no saturate", ewCast(t, x, graph.Float8E4M3FN, ewInt("saturate", 0)), graph.Float8E4M3FN, ewShape(5), []float64{1, ewNaN, ewNaN, ewNaN, ewNaN}, 0)
	y := ewT(graph.Double, ewShape(3), 1e6, 0.3, -57344)
	ewCheck(t, "e5m2 no saturate", ewCast(t, y, graph.Float8E5M2, ewInt("saturate", 0)), graph.Float8E5M2, ewShape(3), []float64{ewInf, 0.3125, -57344}, 0)
	ewCheck(t, "e5m2fnuz", ewCast(t, y, graph.Float8E5M2FNUZ), graph.Float8E5M2FNUZ, ewShape(3), []float64{57344, 0.3125, -57344}, 0)
	ewCheck(t, "e4m3fnuz", ewCast(t, ewF32(ewShape(2), 300, 0.1), graph.Float8E4M3FNUZ), graph.Float8E4M3FNUZ, ewShape(2), []float64{240, 0.1015625}, 0)
	f8 := ewCast(t, ewF32(ewShape(2), 3.5, -0.75), graph.Float8E4M3FN)
	ewCheck(t, "e4m3fn→float16", ewCast(t, f8, graph.Float16), graph.Float16, ewShape(2), []float64{3.5, -0.75}, 0)
	ewCheck(t, "e4m3fn→int8", ewCast(t, f8, graph.Int8), graph.Int8, ewShape(2), []float64{3, 0}, 0)
	ewCheck(t, "e8m0 up", ewRun(t, "Cast", 24, ewWith(ewInt("to", int64(graph.Float8E8M0))), ewF32(ewShape(2), 3, 0.5)), graph.Float8E8M0, ewShape(2), []float64{4, 0.5}, 0)
	ewCheck(t, "e8m0 down", ewRun(t, "Cast", 24, ewWith(ewInt("to", int64(graph.Float8E8M0)), ewString("round_mode", "down")), ewF32(ewShape(2), 3, 0.5)), graph.Float8E8M0, ewShape(2), []float64{2, 0.5}, 0)
	ewFails(t, "Cast", 24, ewWith(ewInt("to", int64(graph.Float8E8M0)), ewString("round_mode", "sideways")), ewF32(ewShape(1), 3))
	ewCheck(t, "float4", ewCast(t, ewF32(ewShape(3), 2.75, -7, 0.25), graph.Float4E2M1), graph.Float4E2M1, ewShape(3), []float64{3, -6, 0}, 0)
}

func TestCastPackedInts(t *testing.T) {
	x := ewF32(ewShape(5), 7.5, -9, 2.5, float32(ewNaN), -1)
	i4 := ewCast(t, x, graph.Int4)
	ewCheck(t, "int4", i4, graph.Int4, ewShape(5), []float64{7, -8, 2, 0, -1}, 0)
	ewCheck(t, "int4→int32", ewCast(t, i4, graph.Int32), graph.Int32, ewShape(5), []float64{7, -8, 2, 0, -1}, 0)
	u4 := ewCast(t, ewT(graph.Int32, ewShape(3), int32(20), -3, 9), graph.Uint4)
	ewCheck(t, "uint4", u4, graph.Uint4, ewShape(3), []float64{15, 0, 9}, 0)
	ewCheck(t, "uint4→float", ewCast(t, u4, graph.Float), graph.Float, ewShape(3), []float64{15, 0, 9}, 0)
	ewCheck(t, "int2", ewCast(t, ewT(graph.Int8, ewShape(4), int8(-5), -2, 1, 3), graph.Int2), graph.Int2, ewShape(4), []float64{-2, -2, 1, 1}, 0)
	ewCheck(t, "uint2→int64", ewCast(t, ewCast(t, ewT(graph.Uint8, ewShape(2), uint8(1), 9), graph.Uint2), graph.Int64), graph.Int64, ewShape(2), []float64{1, 3}, 0)
}

func TestCastStrings(t *testing.T) {
	s := ewStrings(ewShape(7), "3.14", "1e-5", "INF", "-inf", "NaN", "+INF", " 2 ")
	ewCheck(t, "string→float", ewCast(t, s, graph.Float), graph.Float, ewShape(7), []float64{3.14, 1e-5, ewInf, -ewInf, ewNaN, ewInf, 2}, 1e-7)
	ewCheck(t, "string→int32", ewCast(t, ewStrings(ewShape(3), "42", "-7", "2.9"), graph.Int32), graph.Int32, ewShape(3), []float64{42, -7, 2}, 0)
	u := ewCast(t, ewStrings(ewShape(1), "18446744073709551615"), graph.Uint64)
	if graph.View[uint64](u)[0] != math.MaxUint64 {
		t.Errorf("string→uint64: %d", graph.View[uint64](u)[0])
	}
	ewCheck(t, "string→bool", ewCast(t, ewStrings(ewShape(4), "True", "0", "false", "2"), graph.Bool), graph.Bool, ewShape(4), []float64{1, 0, 0, 1}, 0)
	ewCheck(t, "string→float16", ewCast(t, ewStrings(ewShape(1), "0.1"), graph.Float16), graph.Float16, ewShape(1), []float64{0.0999755859375}, 0)
	ewFails(t, "Cast", 19, ewWith(ewInt("to", int64(graph.Float))), ewStrings(ewShape(1), "hello"))
	ewFails(t, "Cast", 19, ewWith(ewInt("to", int64(graph.Int32))), ewStrings(ewShape(1), "x1"))

	// float32(0.0001) is just below 1e-4, so numpy writes it in scientific
	// notation.
	for _, tc := range []struct {
		x    *graph.Tensor
		want []string
	}{
		{ewF32(ewShape(10), 0.9767611, 1e20, 1e-5, 100, float32(math.Copysign(0, -1)), float32(ewNaN), float32(ewInf), float32(-ewInf), 1234567, 0.0001),
			[]string{"0.9767611", "1e+20", "1e-05", "100.0", "-0.0", "NaN", "INF", "-INF", "1234567.0", "1e-04"}},
		{ewT(graph.Double, ewShape(3), 0.1, 1.0/3, 1e16), []string{"0.1", "0.3333333333333333", "1e+16"}},
		{ewT(graph.Int64, ewShape(2), int64(-5), math.MaxInt64), []string{"-5", "9223372036854775807"}},
		{ewT(graph.Uint64, ewShape(1), uint64(math.MaxUint64)), []string{"18446744073709551615"}},
		{ewT(graph.Bool, ewShape(2), true, false), []string{"True", "False"}},
		{ewT(graph.Float16, ewShape(3), uint16(0x2E66), 0x7BFF, 0x0001), []string{"0.1", "65500.0", "6e-08"}},
		{ewT(graph.BFloat16, ewShape(2), uint16(0x3DCD), 0x4049), []string{"0.1", "3.14"}},
		{ewCast(t, ewF32(ewShape(2), 0.1, 448), graph.Float8E4M3FN), []string{"0.1", "450.0"}},
	} {
		got := ewCast(t, tc.x, graph.String)
		if !slices.Equal(got.Strings, tc.want) {
			t.Errorf("%s→string: %q, want %q", tc.x.DType, got.Strings, tc.want)
		}
	}
	back := ewCast(t, ewCast(t, ewF32(ewShape(3), 0.9767611, 1e-5, float32(math.Pi)), graph.String), graph.Float)
	ewCheck(t, "round trip", back, graph.Float, ewShape(3), []float64{float64(float32(0.9767611)), float64(float32(1e-5)), float64(float32(math.Pi))}, 0)
}

func TestCastErrors(t *testing.T) {
	x := ewF32(ewShape(1), 1)
	ewFails(t, "Cast", 13, nil, x)
	ewFails(t, "Cast", 13, ewWith(ewInt("to", 99)), x)
	_, err := runElementwiseKernel(t, "Cast", 13, ewWith(ewInt("to", int64(graph.Complex64))), 1, x)
	if !errors.Is(err, ErrUnsupported) {
		t.Errorf("Cast to complex64: %v, want ErrUnsupported", err)
	}
	_, err = runElementwiseKernel(t, "Cast", 13, ewWith(ewInt("to", int64(graph.Float))), 1, ewT(graph.Complex64, ewShape(1), complex64(1)))
	if !errors.Is(err, ErrUnsupported) {
		t.Errorf("Cast from complex64: %v, want ErrUnsupported", err)
	}
	ewFails(t, "Cast", 1, ewWith(ewString("to", "FLOAT99")), x)
	ewFails(t, "CastLike", 15, nil, x)
}
