package hostfallback

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

// ewAxes returns an int64 axes input.
func ewAxes(a ...int64) *graph.Tensor {
	if a == nil {
		return graph.NewTensor(graph.Int64, ewShape(0))
	}
	return ewT(graph.Int64, ewShape(int64(len(a))), a...)
}

func TestReduceOps(t *testing.T) {
	x := ewF32(ewShape(2, 3), -1, 2, -3, 4, -5, 6)
	lse := func(v ...float64) float64 {
		s := 0.0
		for _, f := range v {
			s += math.Exp(f)
		}
		return math.Log(s)
	}
	for _, tc := range []struct {
		op   string
		want []float64
	}{
		{"ReduceSum", []float64{-2, 5}},
		{"ReduceMean", []float64{-2.0 / 3, 5.0 / 3}},
		{"ReduceMax", []float64{2, 6}},
		{"ReduceMin", []float64{-3, -5}},
		{"ReduceProd", []float64{6, -120}},
		{"ReduceL1", []float64{6, 15}},
		{"ReduceL2", []float64{math.Sqrt(14), math.Sqrt(77)}},
		{"ReduceSumSquare", []float64{14, 77}},
		{"ReduceLogSum", []float64{ewNaN, math.Log(5)}},
		{"ReduceLogSumExp", []float64{lse(-1, 2, -3), lse(4, -5, 6)}},
	} {
		y := ewRun(t, tc.op, 18, nil, x, ewAxes(1))
		ewCheck(t, tc.op+" keepdims", y, graph.Float, ewShape(2, 1), tc.want, 1e-7)
		y = ewRun(t, tc.op, 18, ewWith(ewInt("keepdims", 0)), x, ewAxes(-1))
		ewCheck(t, tc.op+" input", y, graph.Float, ewShape(2), tc.want, 1e-7)
	}
	ewCheck(t, "ReduceSum-13 input", ewRun(t, "ReduceSum", 13, nil, x, ewAxes(0)), graph.Float, ewShape(1, 3), []float64{3, -3, 3}, 0)
	ewCheck(t, "ReduceMean all", ewRun(t, "ReduceMean", 13, nil, x), graph.Float, ewShape(1, 1), []float64{0.5}, 0)
	ewCheck(t, "ReduceMax all no keepdims", ewRun(t, "ReduceMax", 13, ewWith(ewInt("keepdims", 0)), x), graph.Float, ewShape(), []float64{6}, 0)
	ewCheck(t, "empty axes input", ewRun(t, "ReduceMin", 18, nil, x, ewAxes()), graph.Float, ewShape(1, 1), []float64{-5}, 0)
	ewCheck(t, "noop", ewRun(t, "ReduceMin", 18, ewWith(ewInt("noop_with_empty_axes", 1)), x), graph.Float, ewShape(2, 3), []float64{-1, 2, -3, 4, -5, 6}, 0)
	ewCheck(t, "noop axes given", ewRun(t, "ReduceSum", 13, ewWith(ewInt("noop_with_empty_axes", 1)), x, ewAxes(0, 1)), graph.Float, ewShape(1, 1), []float64{3}, 0)
	ewCheck(t, "stable logsumexp", ewRun(t, "ReduceLogSumExp", 13, nil, ewF32(ewShape(2), 1000, 1000)), graph.Float, ewShape(1), []float64{1000 + math.Ln2}, 1e-7)
	ewCheck(t, "logsumexp -inf", ewRun(t, "ReduceLogSumExp", 13, nil, ewF32(ewShape(2), float32(-ewInf), float32(-ewInf))), graph.Float, ewShape(1), []float64{-ewInf}, 0)
	ewCheck(t, "max NaN", ewRun(t, "ReduceMax", 13, nil, ewF32(ewShape(3), 1, float32(ewNaN), 3)), graph.Float, ewShape(1), []float64{ewNaN}, 0)
	ewCheck(t, "rank 0", ewRun(t, "ReduceSum", 13, nil, ewF32(nil, 4)), graph.Float, ewShape(), []float64{4}, 0)
	h := ewRun(t, "ReduceMean", 18, nil, ewT(graph.Float16, ewShape(2), uint16(0x3C00), 0x4000), ewAxes(0))
	ewCheck(t, "float16", h, graph.Float16, ewShape(1), []float64{1.5}, 0)
	ewFails(t, "ReduceSum", 13, nil, x, ewAxes(2))
	ewFails(t, "ReduceSum", 13, nil, x, ewAxes(1, -1))
	ewFails(t, "ReduceMax", 18, nil, x, ewAxes(-3))
	ewFails(t, "ReduceMax", 18, nil, x, ewF32(ewShape(1), 0))
}

func TestReduceEmptySet(t *testing.T) {
	x := ewF32(ewShape(2, 0))
	for _, tc := range []struct {
		op   string
		want float64
	}{
		{"ReduceSum", 0}, {"ReduceProd", 1}, {"ReduceMax", -ewInf}, {"ReduceMin", ewInf},
		{"ReduceMean", ewNaN}, {"ReduceL1", 0}, {"ReduceL2", 0}, {"ReduceSumSquare", 0},
		{"ReduceLogSum", -ewInf}, {"ReduceLogSumExp", -ewInf},
	} {
		ewCheck(t, tc.op, ewRun(t, tc.op, 18, nil, x, ewAxes(1)), graph.Float, ewShape(2, 1), []float64{tc.want, tc.want}, 0)
	}
	ewCheck(t, "int32 max", ewRun(t, "ReduceMax", 18, ewWith(ewInt("keepdims", 0)), graph.NewTensor(graph.Int32, ewShape(0, 3)), ewAxes(0)), graph.Int32, ewShape(3), []float64{math.MinInt32, math.MinInt32, math.MinInt32}, 0)
	ewCheck(t, "int64 mean", ewRun(t, "ReduceMean", 18, nil, graph.NewTensor(graph.Int64, ewShape(0)), ewAxes(0)), graph.Int64, ewShape(1), []float64{0}, 0)
	ewCheck(t, "empty output", ewRun(t, "ReduceSum", 13, nil, ewF32(ewShape(0, 3)), ewAxes(1)), graph.Float, ewShape(0, 1), nil, 0)
}

func TestReduceIntegers(t *testing.T) {
	i := ewT(graph.Int32, ewShape(2, 2), int32(math.MaxInt32), 1, -7, 2)
	ewCheck(t, "sum wraps", ewRun(t, "ReduceSum", 13, nil, i, ewAxes(1)), graph.Int32, ewShape(2, 1), []float64{math.MinInt32, -5}, 0)
	ewCheck(t, "mean truncates", ewRun(t, "ReduceMean", 18, nil, ewT(graph.Int64, ewShape(3), int64(-7), 0, 0), ewAxes(0)), graph.Int64, ewShape(1), []float64{-2}, 0)
	ewCheck(t, "l2", ewRun(t, "ReduceL2", 18, nil, ewT(graph.Int32, ewShape(2), int32(3), 5)), graph.Int32, ewShape(1), []float64{5}, 0)
	ewCheck(t, "logsumexp", ewRun(t, "ReduceLogSumExp", 18, nil, ewT(graph.Int64, ewShape(2), int64(10), 10)), graph.Int64, ewShape(1), []float64{10}, 0)
	u := ewT(graph.Uint8, ewShape(3), uint8(200), 3, 255)
	ewCheck(t, "uint8 max", ewRun(t, "ReduceMax", 18, nil, u), graph.Uint8, ewShape(1), []float64{255}, 0)
	ewCheck(t, "uint8 min", ewRun(t, "ReduceMin", 18, nil, u), graph.Uint8, ewShape(1), []float64{3}, 0)
	ewCheck(t, "uint64 prod", ewRun(t, "ReduceProd", 18, nil, ewT(graph.Uint64, ewShape(2), uint64(1<<32), 1<<31)), graph.Uint64, ewShape(1), []float64{1 << 63}, 0)
	ewCheck(t, "int8 l1", ewRun(t, "ReduceL1", 18, nil, ewT(graph.Int8, ewShape(3), int8(-2), 3, -4)), graph.Int8, ewShape(1), []float64{9}, 0)
	ewFails(t, "ReduceSum", 13, nil, ewT(graph.Bool, ewShape(2), true, true))
	ewCheck(t, "bool max", ewRun(t, "ReduceMax", 20, nil, ewT(graph.Bool, ewShape(2), false, true)), graph.Bool, ewShape(1), []float64{1}, 0)
}

// TestReduceRandom compares reductions over random axis sets (inner, outer,
// middle and non-adjacent) with a naive float64 loop.
func TestReduceRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	type naive struct {
		op      string
		init    float64
		step    func(a, v float64) float64
		finish  func(a float64, n int) float64
		shifted bool
	}
	ops := []naive{
		{op: "ReduceSum", step: func(a, v float64) float64 { return a + v }},
		{op: "ReduceMax", init: math.Inf(-1), step: math.Max},
		{op: "ReduceMean", step: func(a, v float64) float64 { return a + v }, finish: func(a float64, n int) float64 { return a / float64(n) }},
		{op: "ReduceSumSquare", step: func(a, v float64) float64 { return a + v*v }},
		{op: "ReduceLogSumExp", step: func(a, v float64) float64 { return a + math.Exp(v) }, finish: func(a float64, _ int) float64 { return math.Log(a) }},
	}
	for iter := range 150 {
		rank := 1 + iter%6
		shape := make([]int64, rank)
		for i := range shape {
			shape[i] = []int64{1, 2, 3, 5, 13}[rng.IntN(5)]
		}
		for graph.NumElements(shape) > 2000 {
			shape[rng.IntN(rank)] = 1
		}
		if iter%25 == 3 {
			for i := range shape {
				shape[i] = min(shape[i], 2)
			}
			shape[rng.IntN(rank)] = 2500
			for graph.NumElements(shape) > 10000 {
				if i := rng.IntN(rank); shape[i] == 2 {
					shape[i] = 1
				}
			}
		}
		var axes []int64
		red := make([]bool, rank)
		for i := range shape {
			if rng.IntN(2) == 0 {
				axes = append(axes, int64(i))
				red[i] = true
			}
		}
		if axes == nil {
			for i := range red {
				red[i] = true
			}
		}
		x := graph.NewTensor(graph.Double, shape)
		xv := graph.View[float64](x)
		for i := range xv {
			xv[i] = rng.Float64()*4 - 2
		}
		out := make([]int64, rank)
		for i, d := range shape {
			out[i] = d
			if red[i] {
				out[i] = 1
			}
		}
		for _, op := range ops {
			acc := make([]float64, graph.NumElements(out))
			cnt := make([]int, len(acc))
			for i := range acc {
				acc[i] = op.init
			}
			for i, v := range xv {
				idx := ewUnravel(int64(i), shape)
				for j := range idx {
					if red[j] {
						idx[j] = 0
					}
				}
				o := ewIndex(out, out, idx)
				acc[o] = op.step(acc[o], v)
				cnt[o]++
			}
			if op.finish != nil {
				for i := range acc {
					acc[i] = op.finish(acc[i], cnt[i])
				}
			}
			y := ewRun(t, op.op, 18, nil, x, ewAxes(axes...))
			ewCheck(t, op.op, y, graph.Double, out, acc, 1e-12)
		}
	}
}

func TestArgMaxMin(t *testing.T) {
	x := ewF32(ewShape(2, 3), 1, 5, 5, 7, 2, 7)
	ewCheck(t, "max axis 1", ewRun(t, "ArgMax", 13, ewWith(ewInt("axis", 1)), x), graph.Int64, ewShape(2, 1), []float64{1, 0}, 0)
	ewCheck(t, "max last", ewRun(t, "ArgMax", 13, ewWith(ewInt("axis", -1), ewInt("select_last_index", 1), ewInt("keepdims", 0)), x), graph.Int64, ewShape(2), []float64{2, 2}, 0)
	ewCheck(t, "min axis 1", ewRun(t, "ArgMin", 13, ewWith(ewInt("axis", 1), ewInt("keepdims", 0)), x), graph.Int64, ewShape(2), []float64{0, 1}, 0)
	ewCheck(t, "max axis 0", ewRun(t, "ArgMax", 11, nil, x), graph.Int64, ewShape(1, 3), []float64{1, 0, 1}, 0)
	ewCheck(t, "min axis 0", ewRun(t, "ArgMin", 11, ewWith(ewInt("keepdims", 0)), x), graph.Int64, ewShape(3), []float64{0, 1, 0}, 0)
	ties := ewF32(ewShape(2, 2), 3, 3, 3, 3)
	ewCheck(t, "ties first", ewRun(t, "ArgMin", 12, nil, ties), graph.Int64, ewShape(1, 2), []float64{0, 0}, 0)
	ewCheck(t, "ties last", ewRun(t, "ArgMin", 12, ewWith(ewInt("select_last_index", 1)), ties), graph.Int64, ewShape(1, 2), []float64{1, 1}, 0)
	nan := ewF32(ewShape(4), 1, float32(ewNaN), 3, float32(ewNaN))
	ewCheck(t, "NaN max", ewRun(t, "ArgMax", 13, nil, nan), graph.Int64, ewShape(1), []float64{1}, 0)
	ewCheck(t, "NaN max last", ewRun(t, "ArgMax", 13, ewWith(ewInt("select_last_index", 1)), nan), graph.Int64, ewShape(1), []float64{3}, 0)
	ewCheck(t, "NaN min", ewRun(t, "ArgMin", 13, nil, nan), graph.Int64, ewShape(1), []float64{1}, 0)
	ewCheck(t, "uint8", ewRun(t, "ArgMax", 13, nil, ewT(graph.Uint8, ewShape(3), uint8(1), 255, 7)), graph.Int64, ewShape(1), []float64{1}, 0)
	ewCheck(t, "int64", ewRun(t, "ArgMin", 13, nil, ewT(graph.Int64, ewShape(3), int64(1), math.MinInt64, 7)), graph.Int64, ewShape(1), []float64{1}, 0)
	ewCheck(t, "float16", ewRun(t, "ArgMax", 13, nil, ewT(graph.Float16, ewShape(2), uint16(0x3C00), 0x4000)), graph.Int64, ewShape(1), []float64{1}, 0)
	ewCheck(t, "empty outer", ewRun(t, "ArgMax", 13, ewWith(ewInt("axis", 1)), ewF32(ewShape(0, 3))), graph.Int64, ewShape(0, 1), nil, 0)
	ewFails(t, "ArgMax", 13, ewWith(ewInt("axis", 1)), ewF32(ewShape(3, 0)))
	ewFails(t, "ArgMax", 13, ewWith(ewInt("axis", 2)), x)
	ewFails(t, "ArgMax", 13, nil, ewF32(nil, 1))

	rng := rand.New(rand.NewPCG(11, 12))
	big := ewRandF32(rng, ewShape(3, 3000, 5))
	v := graph.View[float32](big)
	want := make([]float64, 15)
	for o := range 3 {
		for j := range 5 {
			best := 0
			for r := range 3000 {
				if v[(o*3000+r)*5+j] > v[(o*3000+best)*5+j] {
					best = r
				}
			}
			want[o*5+j] = float64(best)
		}
	}
	ewCheck(t, "large middle axis", ewRun(t, "ArgMax", 13, ewWith(ewInt("axis", 1), ewInt("keepdims", 0)), big), graph.Int64, ewShape(3, 5), want, 0)
}

func TestCumSum(t *testing.T) {
	x := ewF32(ewShape(4), 1, 2, 3, 4)
	axis := ewT(graph.Int64, nil, int64(0))
	ewCheck(t, "plain", ewRun(t, "CumSum", 14, nil, x, axis), graph.Float, ewShape(4), []float64{1, 3, 6, 10}, 0)
	ewCheck(t, "exclusive", ewRun(t, "CumSum", 14, ewWith(ewInt("exclusive", 1)), x, axis), graph.Float, ewShape(4), []float64{0, 1, 3, 6}, 0)
	ewCheck(t, "reverse", ewRun(t, "CumSum", 14, ewWith(ewInt("reverse", 1)), x, axis), graph.Float, ewShape(4), []float64{10, 9, 7, 4}, 0)
	ewCheck(t, "both", ewRun(t, "CumSum", 14, ewWith(ewInt("reverse", 1), ewInt("exclusive", 1)), x, axis), graph.Float, ewShape(4), []float64{9, 7, 4, 0}, 0)
	m := ewT(graph.Int32, ewShape(2, 3), int32(1), 2, 3, 4, 5, 6)
	ewCheck(t, "axis 0", ewRun(t, "CumSum", 11, nil, m, ewT(graph.Int32, nil, int32(0))), graph.Int32, ewShape(2, 3), []float64{1, 2, 3, 5, 7, 9}, 0)
	ewCheck(t, "axis -1", ewRun(t, "CumSum", 11, nil, m, ewT(graph.Int32, ewShape(1), int32(-1))), graph.Int32, ewShape(2, 3), []float64{1, 3, 6, 4, 9, 15}, 0)
	ewCheck(t, "axis 0 reverse exclusive", ewRun(t, "CumSum", 11, ewWith(ewInt("reverse", 1), ewInt("exclusive", 1)), m, ewT(graph.Int32, nil, int32(0))), graph.Int32, ewShape(2, 3), []float64{4, 5, 6, 0, 0, 0}, 0)
	ewCheck(t, "uint64", ewRun(t, "CumSum", 14, nil, ewT(graph.Uint64, ewShape(2), uint64(math.MaxUint64), 2), axis), graph.Uint64, ewShape(2), []float64{math.MaxUint64, 1}, 0)
	ewCheck(t, "float16", ewRun(t, "CumSum", 14, nil, ewT(graph.Float16, ewShape(2), uint16(0x3C00), 0x3C00), axis), graph.Float16, ewShape(2), []float64{1, 2}, 0)
	ewCheck(t, "empty", ewRun(t, "CumSum", 14, nil, ewF32(ewShape(0)), axis), graph.Float, ewShape(0), nil, 0)
	ewFails(t, "CumSum", 14, nil, x, ewT(graph.Int64, ewShape(2), int64(0), 0))
	ewFails(t, "CumSum", 14, nil, x, ewF32(nil, 0))
	ewFails(t, "CumSum", 14, nil, x, ewT(graph.Int64, nil, int64(1)))
	ewFails(t, "CumSum", 14, nil, x)
}
