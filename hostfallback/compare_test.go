package hostfallback

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

func TestCompare(t *testing.T) {
	nan, inf := float32(ewNaN), float32(ewInf)
	a := ewF32(ewShape(5), 1, 2, nan, -inf, 0)
	b := ewF32(ewShape(5), 2, 2, nan, -inf, float32(math.Copysign(0, -1)))
	for _, tc := range []struct {
		op   string
		want []float64
	}{
		{"Equal", []float64{0, 1, 0, 1, 1}},
		{"Less", []float64{1, 0, 0, 0, 0}},
		{"LessOrEqual", []float64{1, 1, 0, 1, 1}},
		{"Greater", []float64{0, 0, 0, 0, 0}},
		{"GreaterOrEqual", []float64{0, 1, 0, 1, 1}},
	} {
		ewCheck(t, tc.op, ewRun(t, tc.op, 16, nil, a, b), graph.Bool, ewShape(5), tc.want, 0)
	}
	// Broadcast in both directions and the swapped-operand modes.
	x := ewT(graph.Int64, ewShape(3, 1), int64(1), 2, 3)
	y := ewT(graph.Int64, ewShape(2), int64(2), 3)
	ewCheck(t, "Greater bcast", ewRun(t, "Greater", 13, nil, x, y), graph.Bool, ewShape(3, 2), []float64{0, 0, 0, 0, 1, 0}, 0)
	ewCheck(t, "GreaterOrEqual scalar", ewRun(t, "GreaterOrEqual", 16, nil, ewT(graph.Int64, nil, int64(2)), y), graph.Bool, ewShape(2), []float64{1, 0}, 0)
	ewCheck(t, "Less scalar", ewRun(t, "Less", 13, nil, y, ewT(graph.Int64, nil, int64(3))), graph.Bool, ewShape(2), []float64{1, 0}, 0)
	u := ewT(graph.Uint32, ewShape(2), uint32(math.MaxUint32), 0)
	ewCheck(t, "uint32", ewRun(t, "Less", 13, nil, u, ewT(graph.Uint32, nil, uint32(1))), graph.Bool, ewShape(2), []float64{0, 1}, 0)
	ewCheck(t, "bool Equal", ewRun(t, "Equal", 11, nil, ewT(graph.Bool, ewShape(2), true, false), ewT(graph.Bool, nil, true)), graph.Bool, ewShape(2), []float64{1, 0}, 0)
	s := ewRun(t, "Equal", 19, nil, ewStrings(ewShape(3), "a", "bc", ""), ewStrings(ewShape(1), "bc"))
	ewCheck(t, "string Equal", s, graph.Bool, ewShape(3), []float64{0, 1, 0}, 0)
	h := ewRun(t, "Less", 13, nil, ewT(graph.Float16, ewShape(2), uint16(0x3C00), 0x4000), ewT(graph.Float16, nil, uint16(0x3E00)))
	ewCheck(t, "float16", h, graph.Bool, ewShape(2), []float64{1, 0}, 0)
	l := ewRun(t, "Equal", 1, ewWith(ewInt("broadcast", 1), ewInt("axis", 0)), ewT(graph.Int32, ewShape(2, 2), int32(1), 2, 3, 4), ewT(graph.Int32, ewShape(2), int32(1), 4))
	ewCheck(t, "legacy", l, graph.Bool, ewShape(2, 2), []float64{1, 0, 0, 1}, 0)
	ewFails(t, "Less", 13, nil, ewT(graph.Bool, ewShape(1), true), ewT(graph.Bool, ewShape(1), true))
	ewFails(t, "Less", 13, nil, ewStrings(ewShape(1), "a"), ewStrings(ewShape(1), "b"))
	ewFails(t, "Equal", 13, nil, ewF32(ewShape(1), 1), ewT(graph.Double, ewShape(1), 1.0))
}

func TestLogical(t *testing.T) {
	a := ewT(graph.Bool, ewShape(2, 2), true, true, false, false)
	b := ewT(graph.Bool, ewShape(2), true, false)
	ewCheck(t, "And", ewRun(t, "And", 7, nil, a, b), graph.Bool, ewShape(2, 2), []float64{1, 0, 0, 0}, 0)
	ewCheck(t, "Or", ewRun(t, "Or", 7, nil, a, b), graph.Bool, ewShape(2, 2), []float64{1, 1, 1, 0}, 0)
	ewCheck(t, "Xor", ewRun(t, "Xor", 7, nil, a, b), graph.Bool, ewShape(2, 2), []float64{0, 1, 1, 0}, 0)
	ewCheck(t, "Xor scalar", ewRun(t, "Xor", 7, nil, ewT(graph.Bool, nil, true), b), graph.Bool, ewShape(2), []float64{0, 1}, 0)
	ewCheck(t, "Not", ewRun(t, "Not", 1, nil, a), graph.Bool, ewShape(2, 2), []float64{0, 0, 1, 1}, 0)
	ewCheck(t, "Not empty", ewRun(t, "Not", 1, nil, graph.NewTensor(graph.Bool, ewShape(0))), graph.Bool, ewShape(0), nil, 0)
	ewFails(t, "And", 7, nil, ewF32(ewShape(1), 1), ewF32(ewShape(1), 1))
	ewFails(t, "Not", 1, nil, ewF32(ewShape(1), 1))
}

func TestWhere(t *testing.T) {
	cond := ewT(graph.Bool, ewShape(2, 1), true, false)
	x := ewF32(ewShape(3), 1, 2, 3)
	y := ewF32(nil, -1)
	ewCheck(t, "float", ewRun(t, "Where", 16, nil, cond, x, y), graph.Float, ewShape(2, 3), []float64{1, 2, 3, -1, -1, -1}, 0)
	s := ewRun(t, "Where", 16, nil, ewT(graph.Bool, ewShape(2), false, true), ewStrings(ewShape(2), "a", "b"), ewStrings(nil, "z"))
	if s.Strings[0] != "z" || s.Strings[1] != "b" {
		t.Errorf("strings: %q", s.Strings)
	}
	i8 := ewRun(t, "Where", 9, nil, ewT(graph.Bool, nil, true), ewT(graph.Int8, ewShape(2), int8(-5), 6), ewT(graph.Int8, ewShape(2), int8(0), 0))
	ewCheck(t, "int8", i8, graph.Int8, ewShape(2), []float64{-5, 6}, 0)
	f16 := ewRun(t, "Where", 16, nil, ewT(graph.Bool, ewShape(2), true, false), ewT(graph.Float16, ewShape(2), uint16(0x3C00), 0x3C00), ewT(graph.Float16, nil, uint16(0xC000)))
	ewCheck(t, "float16", f16, graph.Float16, ewShape(2), []float64{1, -2}, 0)
	ewFails(t, "Where", 16, nil, ewF32(ewShape(1), 1), x, y)
	ewFails(t, "Where", 16, nil, cond, x, ewT(graph.Double, ewShape(1), 1.0))
	ewFails(t, "Where", 16, nil, ewT(graph.Bool, ewShape(2), true, true), x, y)

	// Random shapes of rank 0 to 6 against a naive three-way broadcast.
	rng := rand.New(rand.NewPCG(7, 8))
	for iter := range 60 {
		rank := iter % 7
		out := make([]int64, rank)
		for i := range out {
			out[i] = []int64{1, 2, 3, 13}[rng.IntN(4)]
		}
		var shapes [3][]int64
		for k := range shapes {
			s := append([]int64{}, out[rng.IntN(rank+1):]...)
			for i := range s {
				if rng.IntN(2) == 0 {
					s[i] = 1
				}
			}
			shapes[k] = s
		}
		c := graph.NewTensor(graph.Bool, shapes[0])
		for i := range c.Data {
			c.Data[i] = byte(rng.IntN(2))
		}
		a, b := ewRandF32(rng, shapes[1]), ewRandF32(rng, shapes[2])
		full, _ := broadcastShapes(shapes[:]...)
		want := make([]float64, graph.NumElements(full))
		for o := range want {
			idx := ewUnravel(int64(o), full)
			if c.Data[ewIndex(shapes[0], full, idx)] != 0 {
				want[o] = a.Float64At(ewIndex(shapes[1], full, idx))
			} else {
				want[o] = b.Float64At(ewIndex(shapes[2], full, idx))
			}
		}
		ewCheck(t, "random", ewRun(t, "Where", 16, nil, c, a, b), graph.Float, full, want, 0)
	}
}
