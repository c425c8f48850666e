package hostfallback

import (
	"errors"
	"math"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

func TestQuantizeLinear(t *testing.T) {
	x := ewF32(ewShape(6), 0, 2, 3, 1000, -254, -1000)
	scale := ewF32(ewShape(), 2)
	y := ewRun(t, "QuantizeLinear", 13, nil, x, scale, ewT(graph.Uint8, ewShape(), uint8(128)))
	// 3/2 = 1.5 rounds to even 2.
	ewCheck(t, "uint8", y, graph.Uint8, ewShape(6), []float64{128, 129, 130, 255, 1, 0}, 0)
	y = ewRun(t, "QuantizeLinear", 13, nil, x, scale)
	ewCheck(t, "default uint8", y, graph.Uint8, ewShape(6), []float64{0, 1, 2, 255, 0, 0}, 0)
	// Per axis 1 of [1, 2, 2].
	xa := ewF32(ewShape(1, 2, 2), 1, 2, 3, 4)
	y = ewRun(t, "QuantizeLinear", 13, nil, xa, ewF32(ewShape(2), 1, 0.5), ewT(graph.Int8, ewShape(2), int8(0), -10))
	ewCheck(t, "axis", y, graph.Int8, ewShape(1, 2, 2), []float64{1, 2, -4, -2}, 0)
	// Blocks of 2 along axis 1 of [2, 3]: blocks {0,1} and {2}.
	xb := ewF32(ewShape(2, 3), 2, 4, 6, 8, 10, 12)
	y = ewRun(t, "QuantizeLinear", 21, ewWith(ewInt("axis", 1), ewInt("block_size", 2)), xb, ewF32(ewShape(2, 2), 2, 3, 4, 6), ewT(graph.Int16, ewShape(2, 2), int16(0), 0, 0, 0))
	ewCheck(t, "blocked", y, graph.Int16, ewShape(2, 3), []float64{1, 2, 2, 2, 2, 2}, 0)
	// Packed int4 saturates to [-8, 7].
	y = ewRun(t, "QuantizeLinear", 21, ewWith(ewInt("output_dtype", int64(graph.Int4))), ewF32(ewShape(3), 20, -20, 5), ewF32(ewShape(), 1))
	ewCheck(t, "int4", y, graph.Int4, ewShape(3), []float64{7, -8, 5}, 0)
	// float8 saturates by default.
	y = ewRun(t, "QuantizeLinear", 19, nil, ewF32(ewShape(2), 1e6, 0.5), ewF32(ewShape(), 1), ewT(graph.Float8E4M3FN, ewShape(), uint8(0)))
	ewCheck(t, "float8", y, graph.Float8E4M3FN, ewShape(2), []float64{448, 0.5}, 0)
	nan := float32(math.NaN())
	y = ewRun(t, "QuantizeLinear", 13, nil, ewF32(ewShape(3), nan, 1000, -1000), ewF32(ewShape(1), 1), ewT(graph.Int8, ewShape(1), int8(3)))
	ewCheck(t, "int8 nan", y, graph.Int8, ewShape(3), []float64{0, 127, -128}, 0)
	ewFails(t, "QuantizeLinear", 13, nil, xa, ewF32(ewShape(3), 1, 1, 1))
	ewFails(t, "QuantizeLinear", 13, nil, x, scale, ewT(graph.Uint8, ewShape(2), uint8(1), 2))
}

func TestDequantizeLinear(t *testing.T) {
	x := ewT(graph.Uint8, ewShape(4), uint8(0), 3, 128, 255)
	y := ewRun(t, "DequantizeLinear", 13, nil, x, ewF32(ewShape(), 2), ewT(graph.Uint8, ewShape(), uint8(128)))
	ewCheck(t, "uint8", y, graph.Float, ewShape(4), []float64{-256, -250, 0, 254}, 0)
	xa := ewT(graph.Int8, ewShape(1, 2, 2), int8(1), 2, 3, 4)
	y = ewRun(t, "DequantizeLinear", 13, nil, xa, ewF32(ewShape(2), 1, 0.5), ewT(graph.Int8, ewShape(2), int8(0), 2))
	ewCheck(t, "axis", y, graph.Float, ewShape(1, 2, 2), []float64{1, 2, 0.5, 1}, 0)
	i4 := graph.NewTensor(graph.Int4, ewShape(3))
	graph.SetInt4(i4.Data, 0, -8)
	graph.SetInt4(i4.Data, 1, 7)
	graph.SetInt4(i4.Data, 2, -1)
	y = ewRun(t, "DequantizeLinear", 21, ewWith(ewInt("axis", 0), ewInt("block_size", 2)), i4, ewT(graph.Float16, ewShape(2), f32ToF16(1), f32ToF16(3)))
	ewCheck(t, "int4 blocked", y, graph.Float16, ewShape(3), []float64{-8, 7, -3}, 0)
	y = ewRun(t, "DequantizeLinear", 10, nil, ewT(graph.Int32, ewShape(2), int32(-5), 5), ewF32(ewShape(), 0.5))
	ewCheck(t, "int32", y, graph.Float, ewShape(2), []float64{-2.5, 2.5}, 0)
	ewFails(t, "DequantizeLinear", 13, nil, x, ewF32(ewShape(), 2), ewT(graph.Int8, ewShape(), int8(1)))
}

func TestDynamicQuantizeLinear(t *testing.T) {
	x := ewF32(ewShape(4), 0, 2, -3, -1)
	out := xOK(t, "", "DynamicQuantizeLinear", 11, nil, 3, x)
	// Range [-3, 2]: scale 5/255, zero point round(3/scale) = 153.
	scale := float32(5) / 255
	ewCheck(t, "scale", out[1], graph.Float, ewShape(), []float64{float64(scale)}, 0)
	ewCheck(t, "zero point", out[2], graph.Uint8, ewShape(), []float64{153}, 0)
	ewCheck(t, "y", out[0], graph.Uint8, ewShape(4), []float64{153, 255, 0, 102}, 0)
	out = xOK(t, "", "DynamicQuantizeLinear", 11, nil, 3, ewF32(ewShape(2), 0, 0))
	ewCheck(t, "zeros", out[0], graph.Uint8, ewShape(2), []float64{0, 0}, 0)
}

func TestQLinearMatMul(t *testing.T) {
	// The ONNX example: a [2, 4], b [4, 3] with uint8 zero points.
	a := ewT(graph.Uint8, ewShape(2, 4), uint8(208), 236, 0, 238, 3, 214, 255, 29)
	b := ewT(graph.Uint8, ewShape(4, 3), uint8(152), 51, 244, 60, 26, 255, 0, 127, 246, 127, 254, 247)
	y := ewRun(t, "QLinearMatMul", 10, nil,
		a, ewF32(ewShape(), 0.0066), ewT(graph.Uint8, ewShape(), uint8(113)),
		b, ewF32(ewShape(), 0.00705), ewT(graph.Uint8, ewShape(), uint8(114)),
		ewF32(ewShape(), 0.0107), ewT(graph.Uint8, ewShape(), uint8(118)))
	ewCheck(t, "example", y, graph.Uint8, ewShape(2, 3), []float64{168, 115, 255, 1, 66, 151}, 0)
	ewFails(t, "QLinearMatMul", 10, nil, a, ewF32(ewShape(3), 1, 1, 1), ewT(graph.Uint8, ewShape(), uint8(0)),
		b, ewF32(ewShape(), 1), ewT(graph.Uint8, ewShape(), uint8(0)), ewF32(ewShape(), 1), ewT(graph.Uint8, ewShape(), uint8(0)))
}

func TestQLinearConv(t *testing.T) {
	// A 1x1 convolution with two output channels, per-channel weight
	// scales and a bias.
	x := ewT(graph.Uint8, ewShape(1, 1, 1, 2), uint8(10), 20)
	w := ewT(graph.Int8, ewShape(2, 1, 1, 1), int8(2), -1)
	bias := ewT(graph.Int32, ewShape(2), int32(5), 0)
	y := ewRun(t, "QLinearConv", 10, nil,
		x, ewF32(ewShape(), 0.5), ewT(graph.Uint8, ewShape(), uint8(10)),
		w, ewF32(ewShape(2), 1, 2), ewT(graph.Int8, ewShape(2), int8(0), 0),
		ewF32(ewShape(), 1), ewT(graph.Int8, ewShape(), int8(1)), bias)
	// Channel 0: (x-10)·2 + 5 = 5, 25, times 0.5 → 2.5 (even: 2), 12.5
	// (12), plus 1. Channel 1: (x-10)·-1 times 1 → 0, -10, plus 1.
	ewCheck(t, "conv", y, graph.Int8, ewShape(1, 2, 1, 2), []float64{3, 13, 1, -9}, 0)
}

// TestQuantizePrecision checks QuantizeLinear-23's precision attribute:
// the division at float16 rounds 2049 to 2048 before quantizing.
func TestQuantizePrecision(t *testing.T) {
	x, s, zp := mvF32([]int64{2}, 2049, -3), mvF32(nil, 1), graph.Scalar(graph.Int16, int16(0))
	for _, tc := range []struct {
		precision graph.DType
		want      []int16
	}{{graph.Undefined, []int16{2049, -3}}, {graph.Float, []int16{2049, -3}}, {graph.Double, []int16{2049, -3}},
		{graph.Float16, []int16{2048, -3}}, {graph.BFloat16, []int16{2048, -3}}} {
		c, err := mvCall("QuantizeLinear", 23, []*graph.Attribute{mvInt("precision", int64(tc.precision))},
			[]*graph.Tensor{x, s, zp}, []string{"y"})
		if err != nil {
			t.Fatal(err)
		}
		if got := graph.View[int16](c.Out[0].(*graph.Tensor)); got[0] != tc.want[0] || got[1] != tc.want[1] {
			t.Errorf("precision %s: %v, want %v", tc.precision, got, tc.want)
		}
	}
	if _, err := mvCall("QuantizeLinear", 23, []*graph.Attribute{mvInt("precision", int64(graph.Int8))},
		[]*graph.Tensor{x, s, zp}, []string{"y"}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("precision int8: %v", err)
	}
}
