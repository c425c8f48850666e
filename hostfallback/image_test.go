package hostfallback

import (
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

func TestGridSample(t *testing.T) {
	x := ewF32(ewShape(1, 1, 2, 2), 1, 2, 3, 4)
	// With align_corners the corners of [-1, 1]² are the pixel centres.
	grid := ewF32(ewShape(1, 1, 3, 2), -1, -1, 1, 1, 0, 0)
	y := ewRun(t, "GridSample", 16, ewWith(ewInt("align_corners", 1)), x, grid)
	ewCheck(t, "bilinear", y, graph.Float, ewShape(1, 1, 1, 3), []float64{1, 4, 2.5}, 1e-6)
	y = ewRun(t, "GridSample", 16, ewWith(ewString("mode", "nearest"), ewInt("align_corners", 1)), x, ewF32(ewShape(1, 1, 1, 2), 0.9, -0.9))
	ewCheck(t, "nearest", y, graph.Float, ewShape(1, 1, 1, 1), []float64{2}, 0)
	// Outside the image: zeros, border and reflection padding.
	out := ewF32(ewShape(1, 1, 1, 2), 3, -1)
	y = ewRun(t, "GridSample", 16, ewWith(ewInt("align_corners", 1)), x, out)
	ewCheck(t, "zeros", y, graph.Float, ewShape(1, 1, 1, 1), []float64{0}, 0)
	y = ewRun(t, "GridSample", 16, ewWith(ewInt("align_corners", 1), ewString("padding_mode", "border")), x, out)
	ewCheck(t, "border", y, graph.Float, ewShape(1, 1, 1, 1), []float64{2}, 0)
	y = ewRun(t, "GridSample", 16, ewWith(ewInt("align_corners", 1), ewString("padding_mode", "reflection")), x, ewF32(ewShape(1, 1, 1, 2), 3, -1))
	ewCheck(t, "reflection", y, graph.Float, ewShape(1, 1, 1, 1), []float64{1}, 0)
	// Bicubic sampling reproduces pixel centres.
	y = ewRun(t, "GridSample", 16, ewWith(ewString("mode", "bicubic"), ewInt("align_corners", 1)), x, ewF32(ewShape(1, 1, 1, 2), 1, -1))
	ewCheck(t, "bicubic", y, graph.Float, ewShape(1, 1, 1, 1), []float64{2}, 1e-6)
	// Opset 20: linear sampling of a volume.
	v := ewF32(ewShape(1, 1, 2, 1, 1), 10, 20)
	y = ewRun(t, "GridSample", 20, ewWith(ewInt("align_corners", 1)), v, ewF32(ewShape(1, 1, 1, 1, 3), 0, 0, 0))
	ewCheck(t, "3-D", y, graph.Float, ewShape(1, 1, 1, 1, 1), []float64{15}, 1e-6)
	ewFails(t, "GridSample", 16, ewWith(ewString("mode", "area")), x, grid)
	ewFails(t, "GridSample", 16, nil, x, ewF32(ewShape(1, 1, 1, 3), 0, 0, 0))
}

func TestAffineGrid(t *testing.T) {
	theta := ewF32(ewShape(1, 2, 3), 1, 0, 0, 0, 1, 0)
	size := xI64(ewShape(4), 1, 1, 2, 2)
	y := ewRun(t, "AffineGrid", 20, nil, theta, size)
	ewCheck(t, "identity", y, graph.Float, ewShape(1, 2, 2, 2), []float64{-0.5, -0.5, 0.5, -0.5, -0.5, 0.5, 0.5, 0.5}, 1e-6)
	shift := ewF32(ewShape(1, 2, 3), 2, 0, 1, 0, 1, 0)
	y = ewRun(t, "AffineGrid", 20, ewWith(ewInt("align_corners", 1)), shift, xI64(ewShape(4), 1, 1, 1, 2))
	ewCheck(t, "scaled", y, graph.Float, ewShape(1, 1, 2, 2), []float64{-1, -1, 3, -1}, 1e-6)
	ewFails(t, "AffineGrid", 20, nil, theta, xI64(ewShape(3), 1, 2, 2))
}

func TestCol2Im(t *testing.T) {
	// Two 1x2 blocks of a 1x3 image, overlapping in the middle pixel.
	x := ewF32(ewShape(1, 2, 2), 1, 2, 10, 20)
	y := ewRun(t, "Col2Im", 18, nil, x, xI64(ewShape(2), 1, 3), xI64(ewShape(2), 1, 2))
	ewCheck(t, "overlap", y, graph.Float, ewShape(1, 1, 1, 3), []float64{1, 12, 20}, 0)
	y = ewRun(t, "Col2Im", 18, ewWith(ewInts("strides", 1, 2), ewInts("pads", 0, 0, 0, 1)), ewF32(ewShape(1, 2, 2), 1, 2, 10, 20), xI64(ewShape(2), 1, 3), xI64(ewShape(2), 1, 2))
	ewCheck(t, "stride pad", y, graph.Float, ewShape(1, 1, 1, 3), []float64{1, 10, 2}, 0)
	ewFails(t, "Col2Im", 18, nil, ewF32(ewShape(1, 2, 3), 1, 2, 3, 4, 5, 6), xI64(ewShape(2), 1, 3), xI64(ewShape(2), 1, 2))
}

func TestCenterCropPad(t *testing.T) {
	x := ewT(graph.Int32, ewShape(3, 2), int32(1), 2, 3, 4, 5, 6)
	y := ewRun(t, "CenterCropPad", 18, nil, x, xI64(ewShape(2), 1, 4))
	ewCheck(t, "crop pad", y, graph.Int32, ewShape(1, 4), []float64{0, 3, 4, 0}, 0)
	y = ewRun(t, "CenterCropPad", 18, ewWith(ewInts("axes", -2)), x, xI64(ewShape(1), 2))
	ewCheck(t, "axes", y, graph.Int32, ewShape(2, 2), []float64{1, 2, 3, 4}, 0)
	s := ewRun(t, "CenterCropPad", 18, nil, ewStrings(ewShape(3), "a", "b", "c"), xI64(ewShape(1), 1))
	checkStrings(t, "strings", s, ewShape(1), "b")
	ewFails(t, "CenterCropPad", 18, nil, x, xI64(ewShape(1), 1))
}
