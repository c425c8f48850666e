package hostfallback

import (
	"math"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

func TestActivations(t *testing.T) {
	inf, nan := ewInf, ewNaN
	const (
		seluAlpha = 1.67326319217681884765625
		seluGamma = 1.05070102214813232421875
	)
	ewRunUnaryCases(t, 18, []ewUnaryCase{
		{op: "Relu", in: []float64{-1, 0, 2, nan, -inf, inf}, want: []float64{0, 0, 2, nan, 0, inf}},
		{op: "LeakyRelu", in: []float64{-100, 3, -inf}, want: []float64{-1, 3, -inf}, tol: 1e-7},
		{op: "LeakyRelu", attrs: ewWith(ewFloat("alpha", 0.5)), in: []float64{-2, 3}, want: []float64{-1, 3}},
		{op: "Elu", attrs: ewWith(ewFloat("alpha", 2)), in: []float64{-1, 1, -inf, 0}, want: []float64{2 * (math.Exp(-1) - 1), 1, -2, 0}, tol: 1e-15},
		{op: "Selu", in: []float64{1, -1, 0, -inf}, want: []float64{seluGamma, seluGamma * seluAlpha * (math.Exp(-1) - 1), 0, -seluGamma * seluAlpha}, tol: 1e-15},
		{op: "Selu", attrs: ewWith(ewFloat("alpha", 2), ewFloat("gamma", 3)), in: []float64{1, -1}, want: []float64{3, 6 * (math.Exp(-1) - 1)}, tol: 1e-15},
		{op: "Celu", attrs: ewWith(ewFloat("alpha", 2)), in: []float64{-2, 3, 0}, want: []float64{2 * (math.Exp(-1) - 1), 3, 0}, tol: 1e-15},
		{op: "Sigmoid", in: []float64{0, 1000, -1000, 2, -2, nan}, want: []float64{0.5, 1, 0, 0.8807970779778823, 0.11920292202211755, nan}, tol: 1e-15},
		{op: "HardSigmoid", in: []float64{1, -3, 3, 0}, want: []float64{0.7, 0, 1, 0.5}, tol: 1e-7},
		{op: "HardSigmoid", attrs: ewWith(ewFloat("alpha", 0.5), ewFloat("beta", 0.25)), in: []float64{1, -1}, want: []float64{0.75, 0}},
		{op: "HardSwish", in: []float64{3, -3, 1, 0, 4}, want: []float64{3, 0, 2.0 / 3, 0, 4}, tol: 1e-7},
		{op: "Tanh", in: []float64{0, 1, inf, -inf, 20}, want: []float64{0, 0.7615941559557649, 1, -1, 1}, tol: 1e-15},
		{op: "Softplus", in: []float64{0, 100, -100, inf, -inf, 1}, want: []float64{math.Ln2, 100, 3.720075976020836e-44, inf, 0, 1.3132616875182228}, tol: 1e-15},
		{op: "Softsign", in: []float64{1, -3, 0, 1e30}, want: []float64{0.5, -0.75, 0, 1}, tol: 1e-15},
		{op: "Mish", in: []float64{1, 0, -1, 50}, want: []float64{0.8650983882673103, 0, -0.30340146137410895, 50}, tol: 1e-15},
		{op: "ThresholdedRelu", in: []float64{0.5, 1, 2, nan}, want: []float64{0, 0, 2, 0}},
		{op: "ThresholdedRelu", attrs: ewWith(ewFloat("alpha", -1)), in: []float64{-2, -0.5}, want: []float64{0, -0.5}},
		{op: "Shrink", attrs: ewWith(ewFloat("lambd", 1.5), ewFloat("bias", 0.5)), in: []float64{-2, -1, 0, 1, 2}, want: []float64{-1.5, 0, 0, 0, 1.5}},
		{op: "Shrink", in: []float64{-1, 0.25, 2}, want: []float64{-1, 0, 2}},
		{op: "Gelu", in: []float64{1, -1, 0, 3}, want: []float64{0.8413447460685429, -0.15865525393145707, 0, 2.9959503059051097}, tol: 1e-15},
		{op: "Gelu", attrs: ewWith(ewString("approximate", "tanh")), in: []float64{1, -1, 0}, want: []float64{0.8411919906082768, -0.15880800939172324, 0}, tol: 1e-15},
	})
	ewCheck(t, "Relu int32", ewRun(t, "Relu", 14, nil, ewT(graph.Int32, ewShape(3), int32(-5), 0, 5)), graph.Int32, ewShape(3), []float64{0, 0, 5}, 0)
	ewCheck(t, "Shrink int8", ewRun(t, "Shrink", 9, ewWith(ewFloat("lambd", 1), ewFloat("bias", 1)), ewT(graph.Int8, ewShape(3), int8(-3), 1, 4)), graph.Int8, ewShape(3), []float64{-2, 0, 3}, 0)
	ewCheck(t, "Sigmoid float16", ewRun(t, "Sigmoid", 13, nil, ewT(graph.Float16, ewShape(1), uint16(0))), graph.Float16, ewShape(1), []float64{0.5}, 0)
	ewFails(t, "Sigmoid", 13, nil, ewT(graph.Int32, ewShape(1), int32(0)))
}

// TestSwish checks Swish-24 against numpy's x/(1+exp(-alpha·x)) with the
// default alpha (1, SiLU) and two others.
func TestSwish(t *testing.T) {
	in := []float64{1, -1, 0, 3, -20, 50}
	ewRunUnaryCases(t, 24, []ewUnaryCase{
		{op: "Swish", in: in, want: []float64{0.7310585786300049, -0.2689414213699951, 0, 2.8577223804672998, -4.122307236380407e-08, 50}, tol: 1e-15},
		{op: "Swish", attrs: ewWith(ewFloat("alpha", 0.5)), in: in,
			want: []float64{0.6224593312018546, -0.3775406687981454, 0, 2.452723428580931, -0.0009079573740486878, 49.9999999993056}, tol: 1e-15},
		{op: "Swish", attrs: ewWith(ewFloat("alpha", 2)), in: in,
			want: []float64{0.8807970779778823, -0.11920292202211755, 0, 2.992582130530096, -8.496708510583178e-17, 50}, tol: 1e-15},
	})
}

func TestClip(t *testing.T) {
	nan := float32(ewNaN)
	x := ewF32(ewShape(5), -2, 0.5, 2, nan, float32(ewInf))
	ewCheck(t, "bounds", ewRun(t, "Clip", 13, nil, x, ewF32(nil, -1), ewF32(nil, 1)), graph.Float, ewShape(5), []float64{-1, 0.5, 1, ewNaN, 1}, 0)
	ewCheck(t, "no bounds", ewRun(t, "Clip", 13, nil, x), graph.Float, ewShape(5), []float64{-2, 0.5, 2, ewNaN, ewInf}, 0)
	ewCheck(t, "min only", ewRun(t, "Clip", 11, nil, x, ewF32(nil, 0)), graph.Float, ewShape(5), []float64{0, 0.5, 2, ewNaN, ewInf}, 0)
	ewCheck(t, "max only", ewRun(t, "Clip", 11, nil, x, nil, ewF32(nil, 1)), graph.Float, ewShape(5), []float64{-2, 0.5, 1, ewNaN, 1}, 0)
	ewCheck(t, "min > max", ewRun(t, "Clip", 13, nil, x, ewF32(nil, 3), ewF32(ewShape(1), 1)), graph.Float, ewShape(5), []float64{1, 1, 1, ewNaN, 1}, 0)
	i := ewT(graph.Int32, ewShape(4), int32(math.MinInt32), -3, 4, math.MaxInt32)
	ewCheck(t, "int32", ewRun(t, "Clip", 12, nil, i, ewT(graph.Int32, nil, int32(-3)), ewT(graph.Int32, nil, int32(3))), graph.Int32, ewShape(4), []float64{-3, -3, 3, 3}, 0)
	ewCheck(t, "int32 no bounds", ewRun(t, "Clip", 12, nil, i), graph.Int32, ewShape(4), []float64{math.MinInt32, -3, 4, math.MaxInt32}, 0)
	u := ewT(graph.Uint8, ewShape(3), uint8(0), 100, 255)
	ewCheck(t, "uint8", ewRun(t, "Clip", 12, nil, u, ewT(graph.Uint8, nil, uint8(10))), graph.Uint8, ewShape(3), []float64{10, 100, 255}, 0)
	h := ewRun(t, "Clip", 13, nil, ewT(graph.Float16, ewShape(2), uint16(0xC000), 0x4000), ewT(graph.Float16, nil, uint16(0xBC00)), ewT(graph.Float16, nil, uint16(0x3C00)))
	ewCheck(t, "float16", h, graph.Float16, ewShape(2), []float64{-1, 1}, 0)
	ewCheck(t, "empty", ewRun(t, "Clip", 13, nil, ewF32(ewShape(0)), ewF32(nil, 0)), graph.Float, ewShape(0), nil, 0)
	ewFails(t, "Clip", 13, nil, x, ewF32(ewShape(2), 0, 1))
	ewFails(t, "Clip", 13, nil, x, ewT(graph.Double, nil, 0.0))
	ewFails(t, "Clip", 13, nil, ewT(graph.Bool, ewShape(1), true))
}

func TestDropout(t *testing.T) {
	x := ewF32(ewShape(2, 2), 1, -2, 3, 4)
	out, err := runElementwiseKernel(t, "Dropout", 13, nil, 2, x, ewF32(nil, 0.9), nil)
	if err != nil {
		t.Fatal(err)
	}
	ewCheck(t, "identity", out[0].(*graph.Tensor), graph.Float, ewShape(2, 2), []float64{1, -2, 3, 4}, 0)
	ewCheck(t, "mask", out[1].(*graph.Tensor), graph.Bool, ewShape(2, 2), []float64{1, 1, 1, 1}, 0)
	notTraining := ewT(graph.Bool, nil, false)
	y := ewRun(t, "Dropout", 13, nil, x, ewF32(nil, 0.5), notTraining)
	ewCheck(t, "training_mode false", y, graph.Float, ewShape(2, 2), []float64{1, -2, 3, 4}, 0)

	big := graph.NewTensor(graph.Double, ewShape(100, 100))
	for i := range graph.View[float64](big) {
		graph.View[float64](big)[i] = 1
	}
	training := ewT(graph.Bool, nil, true)
	run := func() (*graph.Tensor, *graph.Tensor) {
		out, err := runElementwiseKernel(t, "Dropout", 13, ewWith(ewInt("seed", 3)), 2, big, ewT(graph.Double, nil, 0.25), training)
		if err != nil {
			t.Fatal(err)
		}
		return out[0].(*graph.Tensor), out[1].(*graph.Tensor)
	}
	y1, m1 := run()
	y2, _ := run()
	kept := 0
	for i, v := range graph.View[float64](y1) {
		if v != graph.View[float64](y2)[i] {
			t.Fatal("training output differs between runs with the same seed")
		}
		switch {
		case m1.Data[i] == 1 && v == 1/0.75:
			kept++
		case m1.Data[i] == 0 && v == 0:
		default:
			t.Fatalf("element %d: %v with mask %d", i, v, m1.Data[i])
		}
	}
	if kept < 7300 || kept > 7700 {
		t.Errorf("kept %d of 10000 at ratio 0.25", kept)
	}
	h := ewRun(t, "Dropout", 13, ewWith(ewInt("seed", 1)), ewT(graph.Float16, ewShape(2), uint16(0x3C00), 0x3C00), ewT(graph.Float16, nil, uint16(0)), training)
	ewCheck(t, "float16 ratio 0", h, graph.Float16, ewShape(2), []float64{1, 1}, 0)
	ewFails(t, "Dropout", 13, nil, x, ewF32(nil, 1), training)
	ewFails(t, "Dropout", 13, nil, x, ewT(graph.Int32, nil, int32(0)), training)
	ewFails(t, "Dropout", 13, nil, x, ewF32(nil, 0.5), ewF32(nil, 1))
}
