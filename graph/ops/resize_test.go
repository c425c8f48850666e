package ops

import (
	"reflect"
	"strings"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

func TestResizeSpec(t *testing.T) {
	floatAttr := func(name string, v float32) *graph.Attribute {
		return &graph.Attribute{Name: name, Type: graph.AttrFloat, F: v}
	}
	type inputs struct{ roi, scales, sizes int } // RoiInput, ScalesInput, SizesInput
	cases := []struct {
		name    string
		op      string
		opset   int64
		attrs   []*graph.Attribute
		in      []int64
		roi     []float64
		scales  []float64
		sizes   []int64
		inputs  *inputs   // checked where set
		shape   []int64   // output shape
		scale   []float64 // per-axis scales
		wantRoi []float64
		legacy  bool
		cubicA  float64
		errHas  string // from NewResize or Resolve
	}{
		{name: "scales", op: "Resize", opset: 13, in: []int64{1, 1, 2, 4}, scales: []float64{1, 1, 2, 1.5},
			inputs: &inputs{-1, 2, 3}, shape: []int64{1, 1, 4, 6}, scale: []float64{1, 1, 2, 1.5}, cubicA: -0.75},
		{name: "scales truncate", op: "Resize", opset: 13, in: []int64{1, 1, 2, 4}, scales: []float64{1, 1, 0.6, 0.6},
			shape: []int64{1, 1, 1, 2}, scale: []float64{1, 1, 0.6, 0.6}, cubicA: -0.75},
		{name: "empty scales, sizes", op: "Resize", opset: 11, in: []int64{4}, scales: []float64{}, sizes: []int64{7},
			shape: []int64{7}, scale: []float64{1.75}, cubicA: -0.75},
		{name: "sizes stretch", op: "Resize", opset: 18, in: []int64{2, 3}, sizes: []int64{4, 4},
			shape: []int64{4, 4}, scale: []float64{2, 4.0 / 3}, cubicA: -0.75},
		{name: "not_larger", op: "Resize", opset: 18, attrs: []*graph.Attribute{strAttr("keep_aspect_ratio_policy", "not_larger")},
			in: []int64{2, 3}, sizes: []int64{4, 4}, shape: []int64{3, 4}, scale: []float64{4.0 / 3, 4.0 / 3}, cubicA: -0.75},
		{name: "not_smaller", op: "Resize", opset: 18, attrs: []*graph.Attribute{strAttr("keep_aspect_ratio_policy", "not_smaller")},
			in: []int64{2, 3}, sizes: []int64{4, 4}, shape: []int64{4, 6}, scale: []float64{2, 2}, cubicA: -0.75},
		{name: "policy ignored before 18", op: "Resize", opset: 13, attrs: []*graph.Attribute{strAttr("keep_aspect_ratio_policy", "not_smaller")},
			in: []int64{1, 1}, sizes: []int64{1, 2}, shape: []int64{1, 2}, scale: []float64{1, 2}, cubicA: -0.75},
		{name: "axes", op: "Resize", opset: 18, attrs: []*graph.Attribute{ints("axes", -1, 1)},
			in: []int64{2, 3, 5}, scales: []float64{2, 3}, shape: []int64{2, 9, 10}, scale: []float64{1, 3, 2}, cubicA: -0.75},
		{name: "axes with not_larger", op: "Resize", opset: 18,
			attrs: []*graph.Attribute{ints("axes", 2, 1), strAttr("keep_aspect_ratio_policy", "not_larger")},
			in:    []int64{7, 4, 8}, sizes: []int64{4, 4}, shape: []int64{7, 2, 4}, scale: []float64{1, 0.5, 0.5}, cubicA: -0.75},
		{name: "axes ignored before 18", op: "Resize", opset: 13, attrs: []*graph.Attribute{ints("axes", 1)},
			in: []int64{2, 3}, scales: []float64{2, 2}, shape: []int64{4, 6}, scale: []float64{2, 2}, cubicA: -0.75},
		{name: "empty axis stays empty", op: "Resize", opset: 13, in: []int64{0, 3}, sizes: []int64{0, 6},
			shape: []int64{0, 6}, scale: []float64{1, 2}, cubicA: -0.75},
		{name: "tf_crop_and_resize roi", op: "Resize", opset: 18,
			attrs: []*graph.Attribute{strAttr("coordinate_transformation_mode", "tf_crop_and_resize"), ints("axes", 1)},
			in:    []int64{2, 4}, roi: []float64{0.25, 0.75}, sizes: []int64{3}, inputs: &inputs{1, 2, 3},
			shape: []int64{2, 3}, scale: []float64{1, 0.75}, wantRoi: []float64{0, 0.25, 1, 0.75}, cubicA: -0.75},
		{name: "cubic_coeff_a", op: "Resize", opset: 13, attrs: []*graph.Attribute{strAttr("mode", "cubic"), floatAttr("cubic_coeff_a", -0.5)},
			in: []int64{4}, scales: []float64{2}, shape: []int64{8}, scale: []float64{2}, cubicA: -0.5},
		{name: "resize-10", op: "Resize", opset: 10, attrs: []*graph.Attribute{strAttr("coordinate_transformation_mode", "align_corners")},
			in: []int64{8}, scales: []float64{0.6}, inputs: &inputs{-1, 1, -1},
			shape: []int64{4}, scale: []float64{0.6}, legacy: true, cubicA: -0.75},

		{name: "both", op: "Resize", opset: 13, in: []int64{4}, scales: []float64{2}, sizes: []int64{8}, errHas: "both scales and sizes"},
		{name: "neither", op: "Resize", opset: 13, in: []int64{4}, errHas: "neither scales nor sizes"},
		{name: "scales length", op: "Resize", opset: 13, in: []int64{4}, scales: []float64{2, 2}, errHas: "2 scales for 1 axes"},
		{name: "sizes length", op: "Resize", opset: 18, attrs: []*graph.Attribute{ints("axes", 0)},
			in: []int64{4, 4}, sizes: []int64{2, 2}, errHas: "2 sizes for 1 axes"},
		{name: "negative scale", op: "Resize", opset: 13, in: []int64{4}, scales: []float64{-2}, errHas: "scale -2 must be positive"},
		{name: "zero scale", op: "Resize", opset: 10, in: []int64{4}, scales: []float64{0}, errHas: "must be positive"},
		{name: "huge scale", op: "Resize", opset: 13, in: []int64{4}, scales: []float64{1 << 40}, errHas: "makes axis 0 too large"},
		{name: "negative size", op: "Resize", opset: 13, in: []int64{4}, sizes: []int64{-2}, errHas: "cannot resize axis 0 of size 4 to -2"},
		{name: "enlarge empty axis", op: "Resize", opset: 13, in: []int64{0}, sizes: []int64{2}, errHas: "cannot resize axis 0 of size 0 to 2"},
		{name: "huge aspect", op: "Resize", opset: 18, attrs: []*graph.Attribute{strAttr("keep_aspect_ratio_policy", "not_smaller")},
			in: []int64{1, 1}, sizes: []int64{1, 1 << 41}, errHas: "make axis 0 too large"},
		{name: "unknown policy", op: "Resize", opset: 18, attrs: []*graph.Attribute{strAttr("keep_aspect_ratio_policy", "x")},
			in: []int64{4}, sizes: []int64{2}, errHas: `unknown keep_aspect_ratio_policy "x"`},
		{name: "axis out of range", op: "Resize", opset: 18, attrs: []*graph.Attribute{ints("axes", 2)}, in: []int64{4, 4},
			errHas: "axis 2 out of range for rank 2"},
		{name: "axis repeated", op: "Resize", opset: 18, attrs: []*graph.Attribute{ints("axes", 1, -1)}, in: []int64{4, 4},
			errHas: "axis -1 repeated"},
		{name: "roi length", op: "Resize", opset: 13, attrs: []*graph.Attribute{strAttr("coordinate_transformation_mode", "tf_crop_and_resize")},
			in: []int64{4}, roi: []float64{0}, scales: []float64{2}, errHas: "roi has 1 values for 1 axes"},
		{name: "unknown mode", op: "Resize", opset: 13, attrs: []*graph.Attribute{strAttr("mode", "area")},
			in: []int64{4}, scales: []float64{2}, errHas: `unknown mode "area"`},
		{name: "unknown coordinates", op: "Resize", opset: 13, attrs: []*graph.Attribute{strAttr("coordinate_transformation_mode", "x")},
			in: []int64{4}, scales: []float64{2}, errHas: `unknown coordinate_transformation_mode "x"`},
		{name: "unknown nearest_mode", op: "Resize", opset: 13, attrs: []*graph.Attribute{strAttr("nearest_mode", "x")},
			in: []int64{4}, scales: []float64{2}, errHas: `unknown nearest_mode "x"`},
		{name: "nearest_mode ignored by resize-10", op: "Resize", opset: 10, attrs: []*graph.Attribute{strAttr("nearest_mode", "x")},
			in: []int64{4}, scales: []float64{2}, shape: []int64{8}, scale: []float64{2}, legacy: true, cubicA: -0.75},
		{name: "antialias nearest", op: "Resize", opset: 18, attrs: []*graph.Attribute{intAttr("antialias", 1)},
			in: []int64{4}, scales: []float64{2}, errHas: "antialias does not apply"},
	}
	for _, tc := range cases {
		n := &graph.Node{Name: tc.name, OpType: tc.op, Attrs: map[string]*graph.Attribute{}}
		for _, a := range tc.attrs {
			n.Attrs[a.Name] = a
		}
		s, err := NewResize(n, tc.opset, tc.in)
		if err == nil {
			if tc.inputs != nil {
				if got := (inputs{s.RoiInput, s.ScalesInput, s.SizesInput}); got != *tc.inputs {
					t.Errorf("%s: inputs %+v, want %+v", tc.name, got, *tc.inputs)
				}
			}
			err = s.Resolve(tc.roi, tc.scales, tc.sizes)
		}
		if tc.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.errHas)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !reflect.DeepEqual(s.Shape, tc.shape) || !reflect.DeepEqual(s.Scales, tc.scale) {
			t.Errorf("%s: shape %v scales %v, want %v and %v", tc.name, s.Shape, s.Scales, tc.shape, tc.scale)
		}
		if !reflect.DeepEqual(s.Roi, tc.wantRoi) {
			t.Errorf("%s: roi %v, want %v", tc.name, s.Roi, tc.wantRoi)
		}
		if s.Legacy != tc.legacy || s.CubicA != tc.cubicA {
			t.Errorf("%s: legacy %v cubic_coeff_a %g, want %v and %g", tc.name, s.Legacy, s.CubicA, tc.legacy, tc.cubicA)
		}
	}
}

func TestResizeSpecOrigin(t *testing.T) {
	n := &graph.Node{OpType: "Resize", Attrs: map[string]*graph.Attribute{
		"coordinate_transformation_mode": strAttr("coordinate_transformation_mode", "tf_crop_and_resize"),
	}}
	s, err := NewResize(n, 13, []int64{5})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Resolve([]float64{0.25, 1.5}, nil, []int64{3}); err != nil {
		t.Fatal(err)
	}
	for o, want := range []struct {
		x      float64
		extrap bool
	}{{1, false}, {3.5, false}, {6, true}} {
		if x, ex := s.Origin(0, int64(o)); x != want.x || ex != want.extrap {
			t.Errorf("Origin(0, %d) = %g, %v, want %g, %v", o, x, ex, want.x, want.extrap)
		}
	}
}

func TestResizeSpecNearestUpper(t *testing.T) {
	ratios := []float64{0.25, 0.5, 0.75, 1}
	for mode, want := range map[string][]bool{
		"round_prefer_floor": {false, false, true, true},
		"round_prefer_ceil":  {false, true, true, true},
		"floor":              {false, false, false, true},
		"ceil":               {true, true, true, true},
	} {
		s := &ResizeSpec{Nearest: mode}
		for i, r := range ratios {
			if got := s.NearestUpper(r); got != want[i] {
				t.Errorf("%s: NearestUpper(%g) = %v, want %v", mode, r, got, want[i])
			}
		}
	}
}
