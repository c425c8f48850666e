package hostfallback

import (
	"errors"
	"math"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

// ewUnaryCase is an op applied to inputs with the expected outputs.
type ewUnaryCase struct {
	op    string
	attrs ewAttrs
	in    []float64
	want  []float64
	tol   float64
}

// ewRunUnaryCases runs each case on float32 and float64 tensors.
func ewRunUnaryCases(t *testing.T, opset int64, cases []ewUnaryCase) {
	t.Helper()
	for _, tc := range cases {
		n := int64(len(tc.in))
		f32 := make([]float32, n)
		want32 := make([]float64, n)
		for i, v := range tc.in {
			f32[i] = float32(v)
			want32[i] = float64(float32(tc.want[i]))
		}
		tol := max(tc.tol, 1e-7)
		ewCheck(t, tc.op+" float32", ewRun(t, tc.op, opset, tc.attrs, ewF32(ewShape(n), f32...)), graph.Float, ewShape(n), want32, tol)
		ewCheck(t, tc.op+" float64", ewRun(t, tc.op, opset, tc.attrs, ewT(graph.Double, ewShape(n), tc.in...)), graph.Double, ewShape(n), tc.want, max(tc.tol, 1e-15))
	}
}

func TestUnaryMath(t *testing.T) {
	inf, nan, den := ewInf, ewNaN, ewDen
	negZero := math.Copysign(0, -1)
	ewRunUnaryCases(t, 13, []ewUnaryCase{
		{op: "Abs", in: []float64{-2, 3, -inf, nan, negZero, -den}, want: []float64{2, 3, inf, nan, 0, den}},
		{op: "Neg", in: []float64{-2, 3, inf, nan, 0, den}, want: []float64{2, -3, -inf, nan, negZero, -den}},
		{op: "Sign", in: []float64{-2, 3, inf, nan, 0, -den}, want: []float64{-1, 1, 1, nan, 0, -1}},
		{op: "Exp", in: []float64{0, 1, -inf, inf, nan, 100}, want: []float64{1, math.E, 0, inf, nan, math.Exp(100)}, tol: 1e-15},
		{op: "Log", in: []float64{1, math.E, 0, -1, inf, den}, want: []float64{0, 1, -inf, nan, inf, math.Log(den)}, tol: 1e-15},
		{op: "Sqrt", in: []float64{4, 2, 0, -1, inf, 1e-40}, want: []float64{2, math.Sqrt2, 0, nan, inf, 1e-20}, tol: 1e-7},
		{op: "Reciprocal", in: []float64{4, -0.5, 0, negZero, inf}, want: []float64{0.25, -2, inf, -inf, 0}},
		{op: "Floor", in: []float64{1.5, -1.5, -0.2, inf, nan}, want: []float64{1, -2, -1, inf, nan}},
		{op: "Ceil", in: []float64{1.5, -1.5, 0.2, -inf, nan}, want: []float64{2, -1, 1, -inf, nan}},
		{op: "Round", in: []float64{0.5, 1.5, 2.5, -2.5, -0.4, 2.6, nan}, want: []float64{0, 2, 2, -2, 0, 3, nan}},
		{op: "Sin", in: []float64{0, math.Pi / 2, inf}, want: []float64{0, 1, nan}, tol: 1e-15},
		{op: "Cos", in: []float64{0, math.Pi}, want: []float64{1, -1}, tol: 1e-15},
		{op: "Tan", in: []float64{0, math.Pi / 4}, want: []float64{0, 1}, tol: 1e-15},
		{op: "Asin", in: []float64{0, 1, 2}, want: []float64{0, math.Pi / 2, nan}, tol: 1e-15},
		{op: "Acos", in: []float64{1, 0, -1}, want: []float64{0, math.Pi / 2, math.Pi}, tol: 1e-15},
		{op: "Atan", in: []float64{0, 1, inf}, want: []float64{0, math.Pi / 4, math.Pi / 2}, tol: 1e-15},
		{op: "Sinh", in: []float64{0, 1, -inf}, want: []float64{0, math.Sinh(1), -inf}, tol: 1e-15},
		{op: "Cosh", in: []float64{0, 1, 1000}, want: []float64{1, math.Cosh(1), inf}, tol: 1e-15},
		{op: "Asinh", in: []float64{0, math.Sinh(2)}, want: []float64{0, 2}, tol: 1e-15},
		{op: "Acosh", in: []float64{1, math.Cosh(2), 0.5}, want: []float64{0, 2, nan}, tol: 1e-15},
		{op: "Atanh", in: []float64{0, 1, -1, math.Tanh(0.5)}, want: []float64{0, inf, -inf, 0.5}, tol: 1e-15},
		{op: "Erf", in: []float64{0, 1, -inf, 0.5}, want: []float64{0, 0.8427007929497149, -1, 0.5204998778130465}, tol: 1e-15},
	})
}

func TestUnaryIntegerAndTypes(t *testing.T) {
	i8 := ewT(graph.Int8, ewShape(4), int8(-128), -3, 0, 7)
	ewCheck(t, "Abs int8", ewRun(t, "Abs", 13, nil, i8), graph.Int8, ewShape(4), []float64{-128, 3, 0, 7}, 0)
	ewCheck(t, "Neg int8", ewRun(t, "Neg", 13, nil, i8), graph.Int8, ewShape(4), []float64{-128, 3, 0, -7}, 0)
	ewCheck(t, "Sign int8", ewRun(t, "Sign", 13, nil, i8), graph.Int8, ewShape(4), []float64{-1, -1, 0, 1}, 0)
	u := ewT(graph.Uint16, ewShape(2), uint16(0), 9)
	ewCheck(t, "Abs uint16", ewRun(t, "Abs", 13, nil, u), graph.Uint16, ewShape(2), []float64{0, 9}, 0)
	ewCheck(t, "Sign uint16", ewRun(t, "Sign", 13, nil, u), graph.Uint16, ewShape(2), []float64{0, 1}, 0)
	ewCheck(t, "BitwiseNot", ewRun(t, "BitwiseNot", 18, nil, ewT(graph.Int32, ewShape(2), int32(0), -6)), graph.Int32, ewShape(2), []float64{-1, 5}, 0)
	ewCheck(t, "BitwiseNot uint8", ewRun(t, "BitwiseNot", 18, nil, ewT(graph.Uint8, ewShape(1), uint8(0x0F))), graph.Uint8, ewShape(1), []float64{0xF0}, 0)
	ewCheck(t, "rank 0", ewRun(t, "Exp", 13, nil, ewF32(nil, 0)), graph.Float, ewShape(), []float64{1}, 0)
	ewCheck(t, "empty", ewRun(t, "Sqrt", 13, nil, ewF32(ewShape(2, 0))), graph.Float, ewShape(2, 0), nil, 0)
	h := ewRun(t, "Sqrt", 13, nil, ewT(graph.Float16, ewShape(2), uint16(0x4400), 0x7C00))
	ewCheck(t, "float16", h, graph.Float16, ewShape(2), []float64{2, ewInf}, 0)
	b := ewRun(t, "Neg", 13, nil, ewT(graph.BFloat16, ewShape(1), uint16(0x3F80)))
	ewCheck(t, "bfloat16", b, graph.BFloat16, ewShape(1), []float64{-1}, 0)
	_, err := runElementwiseKernel(t, "Exp", 13, nil, 1, ewT(graph.Int32, ewShape(1), int32(1)))
	if !errors.Is(err, ErrUnsupported) {
		t.Errorf("Exp int32: %v, want ErrUnsupported", err)
	}
	ewFails(t, "BitwiseNot", 18, nil, ewF32(ewShape(1), 1))
	ewFails(t, "Abs", 13, nil)
}

func TestIsNaNIsInf(t *testing.T) {
	x := ewF32(ewShape(5), 1, float32(ewNaN), float32(ewInf), float32(-ewInf), math.MaxFloat32)
	ewCheck(t, "IsNaN", ewRun(t, "IsNaN", 13, nil, x), graph.Bool, ewShape(5), []float64{0, 1, 0, 0, 0}, 0)
	ewCheck(t, "IsInf", ewRun(t, "IsInf", 10, nil, x), graph.Bool, ewShape(5), []float64{0, 0, 1, 1, 0}, 0)
	ewCheck(t, "IsInf positive", ewRun(t, "IsInf", 10, ewWith(ewInt("detect_negative", 0)), x), graph.Bool, ewShape(5), []float64{0, 0, 1, 0, 0}, 0)
	ewCheck(t, "IsInf negative", ewRun(t, "IsInf", 10, ewWith(ewInt("detect_positive", 0)), x), graph.Bool, ewShape(5), []float64{0, 0, 0, 1, 0}, 0)
	ewCheck(t, "IsInf neither", ewRun(t, "IsInf", 10, ewWith(ewInt("detect_positive", 0), ewInt("detect_negative", 0)), x), graph.Bool, ewShape(5), []float64{0, 0, 0, 0, 0}, 0)
	d := ewT(graph.Double, ewShape(2), ewNaN, -ewInf)
	ewCheck(t, "IsNaN double", ewRun(t, "IsNaN", 13, nil, d), graph.Bool, ewShape(2), []float64{1, 0}, 0)
	ewCheck(t, "IsNaN float16", ewRun(t, "IsNaN", 13, nil, ewT(graph.Float16, ewShape(2), uint16(0x7E00), 0x7C00)), graph.Bool, ewShape(2), []float64{1, 0}, 0)
	ewFails(t, "IsNaN", 13, nil, ewT(graph.Int32, ewShape(1), int32(1)))
}

func TestIdentity(t *testing.T) {
	x := ewT(graph.Int64, ewShape(2), int64(4), 5)
	y := ewRun(t, "Identity", 16, nil, x)
	ewCheck(t, "tensor", y, graph.Int64, ewShape(2), []float64{4, 5}, 0)
	if y == x || &y.Data[0] != &x.Data[0] {
		t.Error("Identity is not a view of its input")
	}
	s := ewRun(t, "Identity", 16, nil, ewStrings(ewShape(1), "hi"))
	if s.Strings[0] != "hi" {
		t.Errorf("string: %q", s.Strings)
	}
	seq := &graph.Sequence{Elem: graph.TensorType(graph.Float, nil), Items: []graph.Value{x}}
	out, err := runElementwiseKernel(t, "Identity", 16, nil, 1, seq)
	if err != nil || out[0] != graph.Value(seq) {
		t.Errorf("sequence: %v, %v", out[0], err)
	}
	ewFails(t, "Identity", 16, nil)
}

// TestErfF32 checks the float32 Erf against the float64 math.Erf over
// [−6, 6] in steps of 1e-4 (within a relative 1e-6: a few float32 ulp),
// and at NaN and the infinities.
func TestErfF32(t *testing.T) {
	for i := -60000; i <= 60000; i++ {
		x := float32(i) * 1e-4
		got, want := float64(erfF32(x)), math.Erf(float64(x))
		if math.Abs(got-want) > 1e-6*math.Abs(want) {
			t.Fatalf("erf(%g) = %g, want %g", x, got, want)
		}
	}
	if v := erfF32(float32(math.NaN())); v == v {
		t.Errorf("erf(NaN) = %g", v)
	}
	if erfF32(float32(math.Inf(1))) != 1 || erfF32(float32(math.Inf(-1))) != -1 {
		t.Errorf("erf(±Inf) = %g, %g", erfF32(float32(math.Inf(1))), erfF32(float32(math.Inf(-1))))
	}
}
