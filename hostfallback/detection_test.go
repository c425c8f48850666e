package hostfallback

import (
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

func TestNonMaxSuppression(t *testing.T) {
	// The ONNX suppress_by_IOU case: six boxes in two clusters and one
	// far away.
	boxes := ewF32(ewShape(1, 6, 4),
		0, 0, 1, 1, 0, 0.1, 1, 1.1, 0, -0.1, 1, 0.9,
		0, 10, 1, 11, 0, 10.1, 1, 11.1, 0, 100, 1, 101)
	scores := ewF32(ewShape(1, 1, 6), 0.9, 0.75, 0.6, 0.95, 0.5, 0.3)
	maxOut := xI64(ewShape(1), 3)
	iou := ewF32(ewShape(1), 0.5)
	score := ewF32(ewShape(1), 0)
	y := ewRun(t, "NonMaxSuppression", 11, nil, boxes, scores, maxOut, iou, score)
	ewCheck(t, "iou", y, graph.Int64, ewShape(3, 3), []float64{0, 0, 3, 0, 0, 0, 0, 0, 5}, 0)
	y = ewRun(t, "NonMaxSuppression", 11, nil, boxes, scores, maxOut, iou, ewF32(ewShape(1), 0.4))
	ewCheck(t, "score", y, graph.Int64, ewShape(2, 3), []float64{0, 0, 3, 0, 0, 0}, 0)
	// Centre format: the same first two boxes as (xc, yc, w, h).
	centre := ewF32(ewShape(1, 2, 4), 0.5, 0.5, 1, 1, 0.5, 0.6, 1, 1)
	y = ewRun(t, "NonMaxSuppression", 11, ewWith(ewInt("center_point_box", 1)), centre, ewF32(ewShape(1, 1, 2), 0.5, 0.9), maxOut, iou)
	ewCheck(t, "centre", y, graph.Int64, ewShape(1, 3), []float64{0, 0, 1}, 0)
	y = ewRun(t, "NonMaxSuppression", 11, nil, boxes, scores)
	ewCheck(t, "no max", y, graph.Int64, ewShape(0, 3), nil, 0)
	ewFails(t, "NonMaxSuppression", 11, nil, boxes, ewF32(ewShape(1, 1, 5), 1, 2, 3, 4, 5))
}

func TestRoiAlign(t *testing.T) {
	x := ewF32(ewShape(1, 1, 2, 2), 1, 2, 3, 4)
	rois := ewF32(ewShape(1, 4), 0, 0, 1, 1)
	batch := xI64(ewShape(1), 0)
	// Without the half-pixel offset the single bin covers [0, 1]² and its
	// sample at (0.5, 0.5) blends the four pixels.
	y := ewRun(t, "RoiAlign", 16, ewWith(ewString("coordinate_transformation_mode", "output_half_pixel"), ewInt("sampling_ratio", 1)), x, rois, batch)
	ewCheck(t, "avg", y, graph.Float, ewShape(1, 1, 1, 1), []float64{2.5}, 1e-6)
	// Half-pixel: the 2x2 bins of [-0.5, 0.5]² sample at -0.25 and 0.25,
	// clamped to 0 below.
	y = ewRun(t, "RoiAlign", 16, ewWith(ewInt("output_height", 2), ewInt("output_width", 2), ewInt("sampling_ratio", 1)), x, rois, batch)
	ewCheck(t, "half pixel", y, graph.Float, ewShape(1, 1, 2, 2), []float64{1, 1.25, 1.5, 1.75}, 1e-6)
	y = ewRun(t, "RoiAlign", 10, ewWith(ewString("mode", "max"), ewInt("sampling_ratio", 1)), x, rois, batch)
	ewCheck(t, "max", y, graph.Float, ewShape(1, 1, 1, 1), []float64{1}, 1e-6)
	ewFails(t, "RoiAlign", 16, nil, x, rois, xI64(ewShape(1), 1))
}
