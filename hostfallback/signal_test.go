package hostfallback

import (
	"math"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

func TestDFT(t *testing.T) {
	// [1, 4, 1] real signal 1, 2, 3, 4: X = 10, -2+2i, -2, -2-2i.
	x := ewF32(ewShape(1, 4, 1), 1, 2, 3, 4)
	y := ewRun(t, "DFT", 17, nil, x)
	ewCheck(t, "fft", y, graph.Float, ewShape(1, 4, 2), []float64{10, 0, -2, 2, -2, 0, -2, -2}, 1e-6)
	y = ewRun(t, "DFT", 17, ewWith(ewInt("onesided", 1)), x)
	ewCheck(t, "onesided", y, graph.Float, ewShape(1, 3, 2), []float64{10, 0, -2, 2, -2, 0}, 1e-6)
	// Length 3 (direct sum), zero-padded from 2 values: 1, 1, 0.
	y = ewRun(t, "DFT", 17, nil, xF64(ewShape(1, 2, 1), 1, 1), xI64(ewShape(), 3))
	h := math.Sqrt(3) / 2
	ewCheck(t, "padded", y, graph.Double, ewShape(1, 3, 2), []float64{2, 0, 0.5, -h, 0.5, h}, 1e-12)
	// The inverse of the transform gives the signal back, as complex.
	back := ewRun(t, "DFT", 17, ewWith(ewInt("inverse", 1)), ewF32(ewShape(1, 4, 2), 10, 0, -2, 2, -2, 0, -2, -2))
	ewCheck(t, "inverse", back, graph.Float, ewShape(1, 4, 2), []float64{1, 0, 2, 0, 3, 0, 4, 0}, 1e-6)
	// Opset 20 takes the axis as input 2: transform the rows of [1, 2, 2, 1].
	m := ewF32(ewShape(1, 2, 2, 1), 1, 2, 3, 5)
	y = ewRun(t, "DFT", 20, nil, m, nil, xI64(ewShape(), 2))
	ewCheck(t, "axis input", y, graph.Float, ewShape(1, 2, 2, 2), []float64{3, 0, -1, 0, 8, 0, -2, 0}, 1e-6)
	y = ewRun(t, "DFT", 17, ewWith(ewInt("axis", 1)), m)
	ewCheck(t, "axis attr", y, graph.Float, ewShape(1, 2, 2, 2), []float64{4, 0, 7, 0, -2, 0, -3, 0}, 1e-6)
	ewFails(t, "DFT", 17, ewWith(ewInt("axis", 2)), x)
	ewFails(t, "DFT", 17, ewWith(ewInt("inverse", 1), ewInt("onesided", 1)), x)
}

func TestSTFT(t *testing.T) {
	// Frames of 4 every 2 samples of 0..5: [0 1 2 3] and [2 3 4 5].
	x := ewF32(ewShape(1, 6, 1), 0, 1, 2, 3, 4, 5)
	y := ewRun(t, "STFT", 17, nil, x, xI64(ewShape(), 2), nil, xI64(ewShape(), 4))
	ewCheck(t, "frames", y, graph.Float, ewShape(1, 2, 3, 2), []float64{6, 0, -2, 2, -2, 0, 14, 0, -2, 2, -2, 0}, 1e-5)
	// A window zeroing all but the first sample of each frame.
	win := ewF32(ewShape(4), 1, 0, 0, 0)
	y = ewRun(t, "STFT", 17, ewWith(ewInt("onesided", 0)), x, xI64(ewShape(), 2), win)
	ewCheck(t, "window", y, graph.Float, ewShape(1, 2, 4, 2), []float64{0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2, 0, 2, 0, 2, 0}, 1e-6)
	ewFails(t, "STFT", 17, nil, x, xI64(ewShape(), 2))
	ewFails(t, "STFT", 17, nil, x, xI64(ewShape(), 2), nil, xI64(ewShape(), 7))
}

func TestWindows(t *testing.T) {
	size := ewT(graph.Int32, ewShape(), int32(4))
	y := ewRun(t, "HannWindow", 17, nil, size)
	ewCheck(t, "hann", y, graph.Float, ewShape(4), []float64{0, 0.5, 1, 0.5}, 1e-6)
	y = ewRun(t, "HammingWindow", 17, ewWith(ewInt("output_datatype", int64(graph.Double))), size)
	ewCheck(t, "hamming", y, graph.Double, ewShape(4), []float64{4.0 / 46, 25.0 / 46, 1, 25.0 / 46}, 1e-12)
	y = ewRun(t, "BlackmanWindow", 17, nil, size)
	ewCheck(t, "blackman", y, graph.Float, ewShape(4), []float64{0, 0.34, 1, 0.34}, 1e-6)
	y = ewRun(t, "HannWindow", 17, ewWith(ewInt("periodic", 0)), ewT(graph.Int64, ewShape(), int64(3)))
	ewCheck(t, "symmetric", y, graph.Float, ewShape(3), []float64{0, 1, 0}, 1e-6)
	ewFails(t, "HannWindow", 17, nil, ewT(graph.Int64, ewShape(), int64(-1)))
}

func TestMelWeightMatrix(t *testing.T) {
	// The ONNX test case: 8 mel bins of a 16-point DFT at 8192 Hz.
	y := ewRun(t, "MelWeightMatrix", 17, nil, ewT(graph.Int32, ewShape(), int32(8)), ewT(graph.Int32, ewShape(), int32(16)),
		ewT(graph.Int32, ewShape(), int32(8192)), ewF32(ewShape(), 0), ewF32(ewShape(), 4096))
	want := make([]float64, 9*8)
	for _, p := range [][2]int{{0, 0}, {0, 1}, {1, 2}, {1, 3}, {2, 4}, {3, 5}, {4, 6}, {5, 7}} {
		want[p[0]*8+p[1]] = 1
	}
	ewCheck(t, "mel", y, graph.Float, ewShape(9, 8), want, 0)
}
