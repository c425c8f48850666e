package hostfallback

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/x448/float16"
)

var (
	ewInf  = math.Inf(1)
	ewNaN  = math.NaN()
	ewMaxF = float64(math.MaxFloat32)
	ewDen  = float64(math.SmallestNonzeroFloat32)
)

func TestArithFloat32(t *testing.T) {
	inf, nan := float32(ewInf), float32(ewNaN)
	a := ewF32(ewShape(6), 1, -2, inf, nan, math.MaxFloat32, math.SmallestNonzeroFloat32)
	b := ewF32(ewShape(6), 4, 0.5, inf, 1, math.MaxFloat32, math.SmallestNonzeroFloat32)
	for _, tc := range []struct {
		op   string
		want []float64
	}{
		{"Add", []float64{5, -1.5, ewInf, ewNaN, ewInf, 2 * ewDen}},
		{"Sub", []float64{-3, -2.5, ewNaN, ewNaN, 0, 0}},
		{"Mul", []float64{4, -1, ewInf, ewNaN, ewInf, 0}},
		{"Div", []float64{0.25, -4, ewNaN, ewNaN, 1, 1}},
	} {
		ewCheck(t, tc.op, ewRun(t, tc.op, 14, nil, a, b), graph.Float, ewShape(6), tc.want, 0)
	}
}

// ewNaiveBinary computes a binary op elementwise with explicit broadcasting.
func ewNaiveBinary(a, b *graph.Tensor, f func(x, y float64) float64) ([]int64, []float64) {
	out, _ := broadcastShapes(a.Shape, b.Shape)
	n := graph.NumElements(out)
	vals := make([]float64, n)
	for o := range n {
		idx := ewUnravel(o, out)
		vals[o] = f(a.Float64At(ewIndex(a.Shape, out, idx)), b.Float64At(ewIndex(b.Shape, out, idx)))
	}
	return out, vals
}

// TestArithBroadcastRandom checks Add, Sub, Mul, Div and the Max/Min pair
// against a naive broadcast over random shapes of rank 0 to 6.
func TestArithBroadcastRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	sizes := []int64{1, 2, 3, 13}
	ops := map[string]func(x, y float64) float64{
		"Add": func(x, y float64) float64 { return float64(float32(x) + float32(y)) },
		"Sub": func(x, y float64) float64 { return float64(float32(x) - float32(y)) },
		"Mul": func(x, y float64) float64 { return float64(float32(x) * float32(y)) },
		"Div": func(x, y float64) float64 { return float64(float32(x) / float32(y)) },
		"Max": math.Max,
		"Min": math.Min,
	}
	for iter := range 120 {
		rank := iter % 7
		out := make([]int64, rank)
		for i := range out {
			out[i] = sizes[rng.IntN(len(sizes))]
		}
		if iter == 5 {
			out[len(out)-1] = 127
		}
		shapes := [2][]int64{}
		for k := range shapes {
			s := slices.Clone(out[rng.IntN(rank+1):])
			for i := range s {
				if rng.IntN(2) == 0 {
					s[i] = 1
				}
			}
			shapes[k] = s
		}
		a, b := ewRandF32(rng, shapes[0]), ewRandF32(rng, shapes[1])
		for op, f := range ops {
			shape, want := ewNaiveBinary(a, b, f)
			ewCheck(t, op, ewRun(t, op, 14, nil, a, b), graph.Float, shape, want, 0)
		}
	}
}

// TestArithLargeParallel exercises the parallel split with runs that cross
// chunk boundaries: [N,C,H,W] + [C,1,1] bias and a same-shape add.
func TestArithLargeParallel(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	x := ewRandF32(rng, ewShape(3, 7, 61, 67))
	bias := ewRandF32(rng, ewShape(7, 1, 1))
	shape, want := ewNaiveBinary(x, bias, func(a, b float64) float64 { return float64(float32(a) + float32(b)) })
	ewCheck(t, "bias", ewRun(t, "Add", 14, nil, x, bias), graph.Float, shape, want, 0)
	shape, want = ewNaiveBinary(x, x, func(a, b float64) float64 { return float64(float32(a) * float32(b)) })
	ewCheck(t, "square", ewRun(t, "Mul", 14, nil, x, x), graph.Float, shape, want, 0)
	shape, want = ewNaiveBinary(bias, x, func(a, b float64) float64 { return float64(float32(a) - float32(b)) })
	ewCheck(t, "sv", ewRun(t, "Sub", 14, nil, bias, x), graph.Float, shape, want, 0)
}

func TestArithIntegerTypes(t *testing.T) {
	i8 := func(v ...int8) *graph.Tensor { return ewT(graph.Int8, ewShape(int64(len(v))), v...) }
	ewCheck(t, "int8 add wraps", ewRun(t, "Add", 14, nil, i8(127, -128, 5), i8(1, -1, -7)), graph.Int8, ewShape(3), []float64{-128, 127, -2}, 0)
	ewCheck(t, "int8 div truncates", ewRun(t, "Div", 14, nil, i8(7, -7, 7, -128), i8(2, 2, -2, -1)), graph.Int8, ewShape(4), []float64{3, -3, -3, -128}, 0)
	u16 := ewT(graph.Uint16, ewShape(2), uint16(3), 65535)
	ewCheck(t, "uint16 sub wraps", ewRun(t, "Sub", 14, nil, u16, ewT(graph.Uint16, nil, uint16(4))), graph.Uint16, ewShape(2), []float64{65535, 65531}, 0)
	i64 := ewT(graph.Int64, ewShape(2), int64(math.MaxInt64), -3)
	ewCheck(t, "int64 mul", ewRun(t, "Mul", 14, nil, i64, ewT(graph.Int64, ewShape(1), int64(1))), graph.Int64, ewShape(2), []float64{math.MaxInt64, -3}, 0)
	u64 := ewT(graph.Uint64, ewShape(1), uint64(math.MaxUint64))
	y := ewRun(t, "Div", 14, nil, u64, ewT(graph.Uint64, ewShape(1), uint64(2)))
	if got := graph.View[uint64](y)[0]; got != math.MaxUint64/2 {
		t.Errorf("uint64 div: %d", got)
	}
	for _, dt := range []graph.DType{graph.Int8, graph.Int16, graph.Int32, graph.Int64, graph.Uint8, graph.Uint16, graph.Uint32, graph.Uint64, graph.Double} {
		a, b := graph.NewTensor(dt, ewShape(2, 1)), graph.NewTensor(dt, ewShape(3))
		a.Data[0], b.Data[0] = 9, 2
		if dt == graph.Double {
			a, b = ewT(dt, ewShape(2, 1), 9.0, 0), ewT(dt, ewShape(3), 2.0, 0, 0)
		}
		y := ewRun(t, "Add", 14, nil, a, b)
		ewCheck(t, "add "+dt.String(), y, dt, ewShape(2, 3), []float64{11, 9, 9, 2, 0, 0}, 0)
	}
}

func TestArithErrors(t *testing.T) {
	ewFails(t, "Div", 14, nil, ewT(graph.Int32, ewShape(2), int32(1), 2), ewT(graph.Int32, ewShape(2), int32(1), 0))
	ewFails(t, "Add", 14, nil, ewF32(ewShape(2), 1, 2), ewT(graph.Int32, ewShape(2), int32(1), 2))
	ewFails(t, "Add", 14, nil, ewF32(ewShape(2), 1, 2), ewF32(ewShape(3), 1, 2, 3))
	ewFails(t, "Add", 14, nil, ewF32(ewShape(2), 1, 2))
	ewFails(t, "Mod", 13, nil, ewT(graph.Int64, ewShape(1), int64(1)), ewT(graph.Int64, ewShape(1), int64(0)))
	ewFails(t, "Mod", 13, nil, ewF32(ewShape(1), 1), ewF32(ewShape(1), 1))
	_, err := runElementwiseKernel(t, "Add", 14, nil, 1, ewStrings(ewShape(1), "a"), ewStrings(ewShape(1), "b"))
	if !errors.Is(err, ErrUnsupported) {
		t.Errorf("string Add: %v, want ErrUnsupported", err)
	}
}

func TestArithEmptyAndScalar(t *testing.T) {
	e := ewRun(t, "Add", 14, nil, ewF32(ewShape(0, 3)), ewF32(ewShape(3), 1, 2, 3))
	ewCheck(t, "empty", e, graph.Float, ewShape(0, 3), nil, 0)
	e = ewRun(t, "Mul", 14, nil, ewF32(ewShape(1, 0)), ewF32(ewShape(4, 1), 1, 2, 3, 4))
	ewCheck(t, "empty broadcast", e, graph.Float, ewShape(4, 0), nil, 0)
	s := ewRun(t, "Sub", 14, nil, ewF32(nil, 3), ewF32(nil, 5))
	ewCheck(t, "scalars", s, graph.Float, ewShape(), []float64{-2}, 0)
}

// TestArithLegacyBroadcast covers the opset 1-6 broadcast/axis attributes.
func TestArithLegacyBroadcast(t *testing.T) {
	a := ewF32(ewShape(2, 3), 1, 2, 3, 4, 5, 6)
	y := ewRun(t, "Add", 6, ewWith(ewInt("broadcast", 1), ewInt("axis", 0)), a, ewF32(ewShape(2), 10, 20))
	ewCheck(t, "axis 0", y, graph.Float, ewShape(2, 3), []float64{11, 12, 13, 24, 25, 26}, 0)
	y = ewRun(t, "Mul", 1, ewWith(ewInt("broadcast", 1), ewInts("consumed_inputs", 0, 0)), a, ewF32(ewShape(3), 1, 0, -1))
	ewCheck(t, "suffix", y, graph.Float, ewShape(2, 3), []float64{1, 0, -3, 4, 0, -6}, 0)
	y = ewRun(t, "Sub", 6, ewWith(ewInt("broadcast", 1)), a, ewF32(ewShape(1), 1))
	ewCheck(t, "scalar", y, graph.Float, ewShape(2, 3), []float64{0, 1, 2, 3, 4, 5}, 0)
	ewFails(t, "Add", 6, nil, a, ewF32(ewShape(3), 1, 2, 3))
	// From opset 7 the same inputs broadcast numpy-style.
	y = ewRun(t, "Add", 7, nil, a, ewF32(ewShape(3), 1, 2, 3))
	ewCheck(t, "numpy", y, graph.Float, ewShape(2, 3), []float64{2, 4, 6, 5, 7, 9}, 0)
}

func TestArithHalfTypes(t *testing.T) {
	h := func(v ...float32) *graph.Tensor {
		b := make([]uint16, len(v))
		for i, f := range v {
			b[i] = float16.Fromfloat32(f).Bits()
		}
		return ewT(graph.Float16, ewShape(int64(len(v))), b...)
	}
	// 0.1 and 0.2 round to 0.0999755859375 and 0.199951171875; their sum is
	// a tie between two float16 values and rounds to the even one.
	y := ewRun(t, "Add", 14, nil, h(1, 65504, 0.1), h(2, 65504, 0.2))
	ewCheck(t, "float16", y, graph.Float16, ewShape(3), []float64{3, ewInf, 0.2998046875}, 0)
	bf := func(v ...float32) *graph.Tensor {
		b := make([]uint16, len(v))
		for i, f := range v {
			b[i] = graph.Float32ToBFloat16(f)
		}
		return ewT(graph.BFloat16, ewShape(int64(len(v))), b...)
	}
	y = ewRun(t, "Mul", 14, nil, bf(3, -1.5), bf(0.5, 2))
	ewCheck(t, "bfloat16", y, graph.BFloat16, ewShape(2), []float64{1.5, -3}, 0)
	y = ewRun(t, "Max", 13, nil, bf(3, -1.5), bf(0.5, 2), bf(7))
	ewCheck(t, "bfloat16 max", y, graph.BFloat16, ewShape(2), []float64{7, 7}, 0)
}

func TestVariadic(t *testing.T) {
	nan := float32(ewNaN)
	a := ewF32(ewShape(3), 1, nan, -2)
	b := ewF32(ewShape(2, 1), 0, 5)
	c := ewF32(nil, 4)
	ewCheck(t, "Max", ewRun(t, "Max", 13, nil, a, b, c), graph.Float, ewShape(2, 3), []float64{4, ewNaN, 4, 5, ewNaN, 5}, 0)
	ewCheck(t, "Min", ewRun(t, "Min", 13, nil, a, b, c), graph.Float, ewShape(2, 3), []float64{0, ewNaN, -2, 1, ewNaN, -2}, 0)
	ewCheck(t, "Sum", ewRun(t, "Sum", 13, nil, a, b, c), graph.Float, ewShape(2, 3), []float64{5, ewNaN, 2, 10, ewNaN, 7}, 0)
	ewCheck(t, "Mean", ewRun(t, "Mean", 13, nil, a, b, c), graph.Float, ewShape(2, 3), []float64{5.0 / 3, ewNaN, 2.0 / 3, 10.0 / 3, ewNaN, 7.0 / 3}, 1e-7)
	ewCheck(t, "Sum of one", ewRun(t, "Sum", 6, nil, b), graph.Float, ewShape(2, 1), []float64{0, 5}, 0)
	ewCheck(t, "Mean of two", ewRun(t, "Mean", 8, nil, b, b), graph.Float, ewShape(2, 1), []float64{0, 5}, 0)
	i := ewT(graph.Int32, ewShape(2), int32(-3), 8)
	ewCheck(t, "int Max", ewRun(t, "Max", 13, nil, i, ewT(graph.Int32, nil, int32(0))), graph.Int32, ewShape(2), []float64{0, 8}, 0)
	ewCheck(t, "uint8 Min", ewRun(t, "Min", 13, nil, ewT(graph.Uint8, ewShape(2), uint8(200), 3), ewT(graph.Uint8, ewShape(2), uint8(100), 9)), graph.Uint8, ewShape(2), []float64{100, 3}, 0)
	ewFails(t, "Mean", 13, nil, i, i)
	ewFails(t, "Max", 13, nil, i, a)
	ewFails(t, "Sum", 13, nil, a, ewF32(ewShape(2), 1, 2))
	ewFails(t, "Sum", 13, nil)
}

func TestPow(t *testing.T) {
	x := ewF32(ewShape(5), 2, -3, 0, 4, float32(ewInf))
	ewCheck(t, "square", ewRun(t, "Pow", 15, nil, x, ewF32(nil, 2)), graph.Float, ewShape(5), []float64{4, 9, 0, 16, ewInf}, 0)
	ewCheck(t, "cube", ewRun(t, "Pow", 15, nil, x, ewF32(nil, 3)), graph.Float, ewShape(5), []float64{8, -27, 0, 64, ewInf}, 0)
	ewCheck(t, "one", ewRun(t, "Pow", 15, nil, x, ewF32(nil, 1)), graph.Float, ewShape(5), []float64{2, -3, 0, 4, ewInf}, 0)
	ewCheck(t, "sqrt", ewRun(t, "Pow", 15, nil, x, ewF32(nil, 0.5)), graph.Float, ewShape(5), []float64{math.Sqrt2, ewNaN, 0, 2, ewInf}, 1e-7)
	ewCheck(t, "int64 exponent", ewRun(t, "Pow", 15, nil, x, ewT(graph.Int64, nil, int64(-1))), graph.Float, ewShape(5), []float64{0.5, -1.0 / 3, ewInf, 0.25, 0}, 1e-7)
	ewCheck(t, "vector exponent", ewRun(t, "Pow", 15, nil, ewF32(ewShape(2), 2, 9), ewT(graph.Double, ewShape(2), 10.0, 0.5)), graph.Float, ewShape(2), []float64{1024, 3}, 0)
	ewCheck(t, "scalar base", ewRun(t, "Pow", 15, nil, ewF32(nil, 2), ewF32(ewShape(3), 0, 1, -2)), graph.Float, ewShape(3), []float64{1, 2, 0.25}, 0)
	ewCheck(t, "double", ewRun(t, "Pow", 15, nil, ewT(graph.Double, ewShape(1), 10.0), ewT(graph.Int32, ewShape(1), int32(300))), graph.Double, ewShape(1), []float64{1e300}, 1e-15)
	i := ewT(graph.Int64, ewShape(6), int64(2), -3, 1, -1, 0, 3)
	ewCheck(t, "int", ewRun(t, "Pow", 15, nil, i, ewT(graph.Int64, ewShape(6), int64(10), 3, -5, -3, 0, 40)), graph.Int64, ewShape(6), []float64{1024, -27, 1, -1, 1, 12157665459056928801 - 1<<64}, 0)
	ewCheck(t, "int negative exponent", ewRun(t, "Pow", 15, nil, i, ewT(graph.Int32, nil, int32(-2))), graph.Int64, ewShape(6), []float64{0, 0, 1, 1, 0, 0}, 0)
	ewCheck(t, "int float exponent", ewRun(t, "Pow", 15, nil, ewT(graph.Int32, ewShape(2), int32(9), 2), ewF32(nil, 0.5)), graph.Int32, ewShape(2), []float64{3, 1}, 0)
	ewCheck(t, "legacy", ewRun(t, "Pow", 1, ewWith(ewInt("broadcast", 1)), ewF32(ewShape(2, 2), 1, 2, 3, 4), ewF32(ewShape(2), 2, 1)), graph.Float, ewShape(2, 2), []float64{1, 2, 9, 4}, 0)
	ewFails(t, "Pow", 15, nil, ewT(graph.Uint8, ewShape(1), uint8(2)), ewT(graph.Uint8, ewShape(1), uint8(2)))
}

func TestMod(t *testing.T) {
	a := ewT(graph.Int32, ewShape(4), int32(7), -7, 7, -7)
	b := ewT(graph.Int32, ewShape(4), int32(3), 3, -3, -3)
	ewCheck(t, "mod", ewRun(t, "Mod", 13, nil, a, b), graph.Int32, ewShape(4), []float64{1, 2, -2, -1}, 0)
	ewCheck(t, "fmod", ewRun(t, "Mod", 13, ewWith(ewInt("fmod", 1)), a, b), graph.Int32, ewShape(4), []float64{1, -1, 1, -1}, 0)
	ewCheck(t, "mod scalar", ewRun(t, "Mod", 13, nil, a, ewT(graph.Int32, nil, int32(-4))), graph.Int32, ewShape(4), []float64{-1, -3, -1, -3}, 0)
	ewCheck(t, "mod scalar dividend", ewRun(t, "Mod", 13, nil, ewT(graph.Int32, nil, int32(-5)), b), graph.Int32, ewShape(4), []float64{1, 1, -2, -2}, 0)
	u := ewT(graph.Uint8, ewShape(2), uint8(250), 7)
	ewCheck(t, "uint8", ewRun(t, "Mod", 13, nil, u, ewT(graph.Uint8, nil, uint8(7))), graph.Uint8, ewShape(2), []float64{5, 0}, 0)
	f := ewF32(ewShape(4), 5.5, -5.5, 5.5, float32(ewInf))
	ewCheck(t, "float fmod", ewRun(t, "Mod", 13, ewWith(ewInt("fmod", 1)), f, ewF32(ewShape(4), 2, 2, -2, 2)), graph.Float, ewShape(4), []float64{1.5, -1.5, 1.5, ewNaN}, 0)
}

func TestPRelu(t *testing.T) {
	x := ewF32(ewShape(1, 2, 2), -1, 2, -3, 4)
	ewCheck(t, "channel slope", ewRun(t, "PRelu", 16, nil, x, ewF32(ewShape(2, 1), 0.5, 0.25)), graph.Float, ewShape(1, 2, 2), []float64{-0.5, 2, -0.75, 4}, 0)
	ewCheck(t, "scalar slope", ewRun(t, "PRelu", 9, nil, x, ewF32(ewShape(1), 0.1)), graph.Float, ewShape(1, 2, 2), []float64{-0.1, 2, -0.3, 4}, 1e-7)
	ewCheck(t, "same shape", ewRun(t, "PRelu", 9, nil, x, ewF32(ewShape(1, 2, 2), 1, 2, 3, 4)), graph.Float, ewShape(1, 2, 2), []float64{-1, 2, -9, 4}, 0)
	ewCheck(t, "int", ewRun(t, "PRelu", 16, nil, ewT(graph.Int32, ewShape(2), int32(-4), 4), ewT(graph.Int32, ewShape(1), int32(3))), graph.Int32, ewShape(2), []float64{-12, 4}, 0)
	ewFails(t, "PRelu", 16, nil, ewF32(ewShape(2), 1, 2), ewF32(ewShape(2, 2), 1, 2, 3, 4))
	// A NaN or infinite slope applies to negative x only (FuzzPipelineVulkan
	// found the CPU giving NaN for x = 2 where Vulkan gave 2).
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	ewCheck(t, "NaN and infinite slopes", ewRun(t, "PRelu", 16, nil, x, ewF32(ewShape(1, 2, 2), 1, nan, 1, inf)), graph.Float, ewShape(1, 2, 2), []float64{-1, 2, -3, 4}, 0)
}

func TestBitwise(t *testing.T) {
	a := ewT(graph.Uint8, ewShape(3), uint8(0b1100), 0xFF, 1)
	b := ewT(graph.Uint8, ewShape(3), uint8(0b1010), 0x0F, 0)
	ewCheck(t, "and", ewRun(t, "BitwiseAnd", 18, nil, a, b), graph.Uint8, ewShape(3), []float64{0b1000, 0x0F, 0}, 0)
	ewCheck(t, "or", ewRun(t, "BitwiseOr", 18, nil, a, b), graph.Uint8, ewShape(3), []float64{0b1110, 0xFF, 1}, 0)
	ewCheck(t, "xor", ewRun(t, "BitwiseXor", 18, nil, a, b), graph.Uint8, ewShape(3), []float64{0b0110, 0xF0, 1}, 0)
	s := ewT(graph.Int32, ewShape(2), int32(-1), 6)
	ewCheck(t, "int32 and scalar", ewRun(t, "BitwiseAnd", 18, nil, ewT(graph.Int32, nil, int32(3)), s), graph.Int32, ewShape(2), []float64{3, 2}, 0)
	ewFails(t, "BitwiseOr", 18, nil, ewF32(ewShape(1), 1), ewF32(ewShape(1), 1))

	x := ewT(graph.Uint32, ewShape(4), uint32(16), 4, 1, 0xFFFFFFFF)
	n := ewT(graph.Uint32, ewShape(4), uint32(1), 2, 31, 32)
	ewCheck(t, "right", ewRun(t, "BitShift", 11, ewWith(ewString("direction", "RIGHT")), x, n), graph.Uint32, ewShape(4), []float64{8, 1, 0, 0}, 0)
	ewCheck(t, "left", ewRun(t, "BitShift", 11, ewWith(ewString("direction", "LEFT")), x, n), graph.Uint32, ewShape(4), []float64{32, 16, 1 << 31, 0}, 0)
	ewCheck(t, "left scalar", ewRun(t, "BitShift", 11, ewWith(ewString("direction", "LEFT")), ewT(graph.Uint8, nil, uint8(1)), ewT(graph.Uint8, ewShape(3), uint8(0), 7, 8)), graph.Uint8, ewShape(3), []float64{1, 128, 0}, 0)
	ewFails(t, "BitShift", 11, nil, x, n)
	ewFails(t, "BitShift", 11, ewWith(ewString("direction", "LEFT")), s, s)
}

// TestArithF32 checks the float32 Add and Mul loops against the generic
// ones, bit for bit, over lengths around the vector width, in each run
// mode, NaN and infinities included.
func TestArithF32(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, mul := range []bool{false, true} {
		for _, m := range []runMode{runVV, runVS, runSV} {
			for n := 1; n < 70; n++ {
				a, b := nnRandFloats(r, n), nnRandFloats(r, n)
				a[r.IntN(n)], b[r.IntN(n)] = float32(math.NaN()), float32(math.Inf(-1))
				want, got := make([]float32, n), make([]float32, n)
				if mul {
					mulLoop(want, a, b, m)
				} else {
					addLoop(want, a, b, m)
				}
				arithF32(got, a, b, m, mul)
				if i := nnClose(got, want, 0, 0); i >= 0 {
					t.Fatalf("mul %v mode %d n %d: d[%d] = %v, want %v", mul, m, n, i, got[i], want[i])
				}
			}
		}
	}
}

// TestArithRows checks Add and Mul of a tensor and a value a row (the
// [N,C,H,W] by [N,C,1,1] plans that arithRows takes whole) against the
// element-by-element sum and product: plane sizes around the vector
// width's tails, the row value on either side, on the pool.
func TestArithRows(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, hw := range []int64{1, 3, 7, 8, 9, 15, 16, 17, 49, 196, 4100} {
		for _, op := range []string{"Add", "Mul"} {
			for _, first := range []bool{true, false} {
				x, s := nnRand(r, 2, 3, 1, hw), nnRand(r, 2, 3, 1, 1)
				in := []*graph.Tensor{x, s}
				if !first {
					in = []*graph.Tensor{s, x}
				}
				y, err := nnRun(op, 14, nil, in...)
				if err != nil {
					t.Fatal(err)
				}
				xs, ss, ys := graph.View[float32](x), graph.View[float32](s), graph.View[float32](y)
				for i, v := range xs {
					want := v + ss[i/int(hw)]
					if op == "Mul" {
						want = v * ss[i/int(hw)]
					}
					if ys[i] != want {
						t.Fatalf("%s hw=%d tensor first %v: y[%d] = %v, want %v", op, hw, first, i, ys[i], want)
					}
				}
			}
		}
	}
	// The portable loop matches the vector one, every tail length.
	for n := 1; n <= 33; n++ {
		a, s := nnRandFloats(r, 5*n), nnRandFloats(r, 5)
		for _, mul := range []bool{false, true} {
			got, want := make([]float32, 5*n+1), make([]float32, 5*n)
			got[5*n] = 42
			arithRows(got[:5*n], a, s, n, mul)
			arithRowsGo(want, a, s, n, mul)
			if !slices.Equal(got[:5*n], want) || got[5*n] != 42 {
				t.Fatalf("n=%d mul=%v: arithRows %v, want %v (and 42 after)", n, mul, got, want)
			}
		}
	}
}
