package hostfallback

import (
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

func TestResize(t *testing.T) {
	x22 := mvF32(mvShape(1, 1, 2, 2), 1, 2, 3, 4)
	x24 := mvF32(mvShape(1, 1, 2, 4), 1, 2, 3, 4, 5, 6, 7, 8)
	cubicIn := mvF32(mvShape(4), 1, 2, 4, 8)
	squares := mvF32(mvShape(8), 0, 1, 4, 9, 16, 25, 36, 49)
	iota4 := mvIota(4)
	scales := func(v ...float32) *graph.Tensor { return mvF32(mvShape(int64(len(v))), v...) }
	sizes := func(v ...int64) *graph.Tensor { return mvI64(mvShape(int64(len(v))), v...) }
	attrs := func(kv ...string) []*graph.Attribute {
		var a []*graph.Attribute
		for i := 0; i < len(kv); i += 2 {
			a = append(a, mvStr(kv[i], kv[i+1]))
		}
		return a
	}
	nearestUp := mvF32(mvShape(1, 1, 4, 6), 1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4)
	mvRun(t, []mvCase{
		// Examples of the ONNX operator documentation.
		{name: "nearest upsample", op: "Resize", opset: 13, in: []*graph.Tensor{x22, nil, scales(1, 1, 2, 3)},
			want: []*graph.Tensor{nearestUp}},
		{name: "linear downsample", op: "Resize", opset: 13, attrs: attrs("mode", "linear"), in: []*graph.Tensor{x24, nil, scales(1, 1, 0.6, 0.6)},
			want: []*graph.Tensor{mvF32(mvShape(1, 1, 1, 2), 2.6666665, 4.3333335)}, tol: mvPrinted},
		{name: "linear align_corners", op: "Resize", opset: 13, attrs: attrs("mode", "linear", "coordinate_transformation_mode", "align_corners"),
			in: []*graph.Tensor{x24, nil, scales(1, 1, 0.6, 0.6)}, want: []*graph.Tensor{mvF32(mvShape(1, 1, 1, 2), 1, 3.142857)}, tol: mvPrinted},
		{name: "linear upsample", op: "Resize", opset: 11, attrs: attrs("mode", "linear"), in: []*graph.Tensor{x22, mvF32(mvShape(0)), scales(1, 1, 2, 2)},
			want: []*graph.Tensor{mvF32(mvShape(1, 1, 4, 4), 1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4)}},
		// Computed with the ONNX reference implementation.
		{name: "cubic", op: "Resize", opset: 13, attrs: attrs("mode", "cubic"), in: []*graph.Tensor{cubicIn, nil, scales(2)},
			want: []*graph.Tensor{mvF32(mvShape(8), 0.89453125, 1.15625, 1.5625, 2.41796875, 3.16015625, 5.1171875, 7.1640625, 8.421875)}, tol: mvPrinted},
		{name: "cubic exclude_outside", op: "Resize", opset: 13,
			attrs: append(attrs("mode", "cubic"), mvInt("exclude_outside", 1), mvFloat("cubic_coeff_a", -0.5)),
			in:    []*graph.Tensor{cubicIn, nil, scales(2)},
			want:  []*graph.Tensor{mvF32(mvShape(8), 0.91176468, 1.1459854, 1.6412214, 2.3828125, 3.3359375, 5.0229006, 7.2846713, 8.3529415)},
			tol:   mvPrinted},
		{name: "antialias linear", op: "Resize", opset: 18, attrs: append(attrs("mode", "linear"), mvInt("antialias", 1)),
			in: []*graph.Tensor{squares, nil, scales(0.5)}, want: []*graph.Tensor{mvF32(mvShape(4), 0.875, 7, 21, 41.125)}, tol: mvPrinted},
		{name: "antialias cubic", op: "Resize", opset: 18, attrs: append(attrs("mode", "cubic"), mvInt("antialias", 1)),
			in: []*graph.Tensor{squares, nil, nil, sizes(3)}, want: []*graph.Tensor{mvF32(mvShape(3), 0.65592629, 12.050786, 38.623112)}, tol: mvPrinted},
		{name: "half_pixel_symmetric", op: "Resize", opset: 19, attrs: attrs("mode", "linear", "coordinate_transformation_mode", "half_pixel_symmetric"),
			in:   []*graph.Tensor{mvF32(mvShape(4), 1, 2, 3, 4), nil, scales(1.7)},
			want: []*graph.Tensor{mvF32(mvShape(6), 1.0294118, 1.6176471, 2.2058823, 2.7941177, 3.3823528, 3.9705882)}, tol: mvPrinted},
		{name: "tf_crop_and_resize", op: "Resize", opset: 13,
			attrs: append(attrs("mode", "linear", "coordinate_transformation_mode", "tf_crop_and_resize"), mvFloat("extrapolation_value", -1)),
			in:    []*graph.Tensor{mvIota(4, 4), mvF32(mvShape(4), 0, 0.4, 0.6, 1.2), nil, sizes(3, 3)},
			want:  []*graph.Tensor{mvF32(mvShape(3, 3), 1.2, 2.4, -1, 4.8, 6, -1, 8.4, 9.6, -1)}, tol: mvPrinted},
		{name: "tf_crop_and_resize nearest", op: "Resize", opset: 13,
			attrs: append(attrs("coordinate_transformation_mode", "tf_crop_and_resize"), mvFloat("extrapolation_value", 9)),
			in:    []*graph.Tensor{iota4, mvF32(mvShape(2), 0.5, 1.5), nil, sizes(3)},
			want:  []*graph.Tensor{mvF32(mvShape(3), 1, 3, 9)}},
		// An empty output whose other axis is 3e9 long: its axis map
		// took 24 GB and the process died of out of memory (found by
		// the hostile sweep).
		{name: "empty output", op: "Resize", opset: 13, attrs: attrs("mode", "linear"), in: []*graph.Tensor{x22, nil, nil, sizes(1, 1, 3e9, 0)},
			want: []*graph.Tensor{mvF32(mvShape(1, 1, 3e9, 0))}},
		{name: "round_prefer_floor", op: "Resize", opset: 13, in: []*graph.Tensor{iota4, nil, nil, sizes(7)},
			want: []*graph.Tensor{mvF32(mvShape(7), 0, 0, 1, 1, 2, 3, 3)}},
		{name: "round_prefer_ceil", op: "Resize", opset: 13, attrs: attrs("nearest_mode", "round_prefer_ceil"), in: []*graph.Tensor{iota4, nil, nil, sizes(7)},
			want: []*graph.Tensor{mvF32(mvShape(7), 0, 0, 1, 2, 2, 3, 3)}},
		{name: "floor", op: "Resize", opset: 13, attrs: attrs("nearest_mode", "floor"), in: []*graph.Tensor{iota4, nil, nil, sizes(7)},
			want: []*graph.Tensor{mvF32(mvShape(7), 0, 0, 0, 1, 2, 2, 3)}},
		{name: "ceil", op: "Resize", opset: 13, attrs: attrs("nearest_mode", "ceil"), in: []*graph.Tensor{iota4, nil, nil, sizes(7)},
			want: []*graph.Tensor{mvF32(mvShape(7), 0, 1, 1, 2, 3, 3, 3)}},
		{name: "tf_half_pixel_for_nn", op: "Resize", opset: 11, attrs: attrs("coordinate_transformation_mode", "tf_half_pixel_for_nn"),
			in: []*graph.Tensor{iota4, mvF32(mvShape(0)), mvF32(mvShape(0)), sizes(2)}, want: []*graph.Tensor{mvF32(mvShape(2), 1, 3)}},
		{name: "axes", op: "Resize", opset: 18, attrs: append(attrs("mode", "linear", "coordinate_transformation_mode", "align_corners"), mvInts("axes", -1)),
			in: []*graph.Tensor{mvIota(2, 3), nil, nil, sizes(5)}, want: []*graph.Tensor{mvF32(mvShape(2, 5), 0, 0.5, 1, 1.5, 2, 3, 3.5, 4, 4.5, 5)}},
		{name: "not_larger", op: "Resize", opset: 18, attrs: attrs("keep_aspect_ratio_policy", "not_larger"),
			in: []*graph.Tensor{mvIota(2, 3), nil, nil, sizes(4, 4)}, want: []*graph.Tensor{mvF32(mvShape(3, 4), 0, 1, 1, 2, 3, 4, 4, 5, 3, 4, 4, 5)}},
		{name: "not_smaller", op: "Resize", opset: 18, attrs: attrs("keep_aspect_ratio_policy", "not_smaller"),
			in:   []*graph.Tensor{mvIota(2, 3), nil, nil, sizes(4, 4)},
			want: []*graph.Tensor{mvF32(mvShape(4, 6), 0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 3, 3, 4, 4, 5, 5)}},
		{name: "policy ignored before 18", op: "Resize", opset: 13, attrs: attrs("keep_aspect_ratio_policy", "not_smaller"),
			in: []*graph.Tensor{mvIota(1, 1), nil, nil, sizes(1, 2)}, want: []*graph.Tensor{mvF32(mvShape(1, 2), 0, 0)}},
		{name: "pytorch_half_pixel to 1", op: "Resize", opset: 13, attrs: attrs("mode", "linear", "coordinate_transformation_mode", "pytorch_half_pixel"),
			in: []*graph.Tensor{iota4, nil, nil, sizes(1)}, want: []*graph.Tensor{mvF32(mvShape(1), 0)}},
		{name: "uint8 rounds half to even", op: "Resize", opset: 13, attrs: attrs("mode", "linear", "coordinate_transformation_mode", "align_corners"),
			in: []*graph.Tensor{mvU8(mvShape(2), 10, 21), nil, nil, sizes(3)}, want: []*graph.Tensor{mvU8(mvShape(3), 10, 16, 21)}},
		{name: "nearest strings", op: "Resize", opset: 13, in: []*graph.Tensor{mvStrs(mvShape(2), "a", "b"), nil, scales(2)},
			want: []*graph.Tensor{mvStrs(mvShape(4), "a", "a", "b", "b")}},
		{name: "to empty", op: "Resize", opset: 13, in: []*graph.Tensor{iota4, nil, scales(0.2)}, want: []*graph.Tensor{mvF32(mvShape(0))}},
		// Resize-10 and Upsample: asymmetric coordinates; nearest floors
		// when enlarging and rounds up when shrinking.
		{name: "resize-10 nearest", op: "Resize", opset: 10, in: []*graph.Tensor{x22, scales(1, 1, 2, 3)}, want: []*graph.Tensor{nearestUp}},
		{name: "resize-10 shrink", op: "Resize", opset: 10, in: []*graph.Tensor{mvIota(8), scales(0.6)}, want: []*graph.Tensor{mvF32(mvShape(4), 0, 2, 4, 5)}},
		{name: "scales and sizes", op: "Resize", opset: 13, in: []*graph.Tensor{iota4, nil, scales(2), sizes(8)}, err: true},
		{name: "neither", op: "Resize", opset: 13, in: []*graph.Tensor{iota4}, err: true},
		{name: "scales length", op: "Resize", opset: 13, in: []*graph.Tensor{iota4, nil, scales(2, 2)}, err: true},
		{name: "negative scale", op: "Resize", opset: 13, in: []*graph.Tensor{iota4, nil, scales(-2)}, err: true},
		{name: "negative size", op: "Resize", opset: 13, in: []*graph.Tensor{iota4, nil, nil, sizes(-2)}, err: true},
		{name: "resize empty axis", op: "Resize", opset: 13, in: []*graph.Tensor{graph.NewTensor(graph.Float, mvShape(0)), nil, nil, sizes(2)}, err: true},
		{name: "unknown mode", op: "Resize", opset: 13, attrs: attrs("mode", "area"), in: []*graph.Tensor{iota4, nil, scales(2)}, err: true},
		{name: "unknown coordinates", op: "Resize", opset: 13, attrs: attrs("coordinate_transformation_mode", "x"), in: []*graph.Tensor{iota4, nil, scales(2)}, err: true},
		{name: "unknown nearest_mode", op: "Resize", opset: 13, attrs: attrs("nearest_mode", "x"), in: []*graph.Tensor{iota4, nil, scales(2)}, err: true},
		{name: "unknown policy", op: "Resize", opset: 18, attrs: attrs("keep_aspect_ratio_policy", "x"), in: []*graph.Tensor{iota4, nil, nil, sizes(2)}, err: true},
		{name: "antialias nearest", op: "Resize", opset: 18, attrs: []*graph.Attribute{mvInt("antialias", 1)}, in: []*graph.Tensor{iota4, nil, scales(2)}, err: true},
		{name: "roi length", op: "Resize", opset: 13, attrs: attrs("coordinate_transformation_mode", "tf_crop_and_resize"),
			in: []*graph.Tensor{iota4, mvF32(mvShape(1), 0), scales(2)}, err: true},
		{name: "integer scales", op: "Resize", opset: 13, in: []*graph.Tensor{iota4, nil, mvI64(mvShape(1), 2)}, err: true},
		{name: "linear strings", op: "Resize", opset: 13, attrs: attrs("mode", "linear"), in: []*graph.Tensor{mvStrs(mvShape(1), "a"), nil, scales(2)}, unsupported: true},
	})
}
