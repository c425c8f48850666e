package ops

import (
	"fmt"
	"math"
	"slices"

	"github.com/onnxvk/onnxvk/graph"
)

// maxResizeDim bounds an output dimension that a ResizeSpec computes from
// scales (or from sizes under a keep_aspect_ratio_policy), so that sizes
// computed from it cannot overflow.
const maxResizeDim = 1 << 40

// ResizeSpec is a Resize node with its attributes, and then
// its roi, scales and sizes, resolved to full rank: what the CPU kernel
// and the GPU lowerings resample by. NewResize reads the attributes and
// names the inputs still needed; Resolve takes their values and sets
// Scales, Shape and Roi.
type ResizeSpec struct {
	// Mode is the interpolation mode as the node gives it; Resolve refuses
	// any but nearest, linear and cubic.
	Mode string
	// Coord is the coordinate_transformation_mode: asymmetric for
	// Resize-10.
	Coord string
	// Nearest is the nearest_mode, empty when Legacy.
	Nearest string
	// Legacy selects Resize-10's nearest rounding: floor when enlarging an
	// axis, ceil when shrinking it. Canonicalize leaves a Resize-10 only
	// where its scales are not known at load (see upResize).
	Legacy bool
	// CubicA is cubic_coeff_a, -0.75 by default.
	CubicA float64
	// ExcludeOutside, Antialias and Extrapolation are exclude_outside,
	// antialias (Resize-18 on) and extrapolation_value.
	ExcludeOutside bool
	Antialias      bool
	Extrapolation  float64
	// In is the input shape.
	In []int64
	// Axes lists the axes that roi, scales and sizes give values for, in
	// their order: the axes attribute of Resize-18 on, else every axis.
	Axes []int
	// RoiInput, ScalesInput and SizesInput are the indices of the inputs
	// whose values Resolve needs, -1 for those it does not read: roi is
	// read only by tf_crop_and_resize.
	RoiInput, ScalesInput, SizesInput int

	// Scales holds the scale of every axis (1 where unchanged), Shape the
	// output shape; both are set by Resolve.
	Scales []float64
	Shape  []int64
	// Roi holds, for tf_crop_and_resize, the start of every axis's region
	// of interest and then its end (0 and 1 where roi names no value); nil
	// in other modes. Set by Resolve.
	Roi []float64

	policy string
}

// NewResize reads the attributes of n, a Resize node of the given opset
// whose input has shape in. It fails naming what is wrong with
// them; the caller reads the inputs the spec names and passes their
// values to Resolve.
func NewResize(n *graph.Node, opset int64, in []int64) (*ResizeSpec, error) {
	r := len(in)
	p := Params[ResizeParams](n, opset)
	s := &ResizeSpec{
		Mode:        p.Mode,
		Coord:       "asymmetric",
		Legacy:      true,
		In:          in,
		RoiInput:    -1,
		ScalesInput: 1,
		SizesInput:  -1,
		policy:      "stretch",
	}
	all := make([]int, r)
	for i := range all {
		all[i] = i
	}
	s.Axes = all
	s.CubicA = -0.75
	if opset < 11 {
		return s, nil
	}
	s.Legacy = false
	s.Coord = p.CoordinateTransformationMode
	s.Nearest = p.NearestMode
	s.CubicA = float64(p.CubicCoeffA)
	s.ExcludeOutside = p.ExcludeOutside != 0
	s.Extrapolation = float64(p.ExtrapolationValue)
	s.ScalesInput, s.SizesInput = 2, 3
	if s.Coord == "tf_crop_and_resize" {
		s.RoiInput = 1
	}
	if opset >= 18 {
		s.Antialias = p.Antialias != 0
		s.policy = p.KeepAspectRatioPolicy
		if p.Axes != nil {
			var err error
			if s.Axes, err = normAxes(p.Axes, r); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}

// Resolve sets Scales, Shape and Roi from the values of the inputs the
// spec names (nil for one absent or not named; an empty one counts as
// absent): the scales, or the output sizes under the
// keep_aspect_ratio_policy, of the axes in Axes. It fails naming what is
// wrong: both or neither of scales and sizes, a length that does not
// match Axes, a scale that is not positive and finite, a size that is
// negative or enlarges an empty axis, an output axis of 2^40 elements or
// more, an unknown policy, mode, coordinate_transformation_mode or
// nearest_mode, or antialias in nearest mode.
func (s *ResizeSpec) Resolve(roi, scales []float64, sizes []int64) error {
	if err := s.resolveShape(roi, scales, sizes); err != nil {
		return err
	}
	switch s.Mode {
	case "nearest", "linear", "cubic":
	default:
		return fmt.Errorf("unknown mode %q", s.Mode)
	}
	switch s.Coord {
	case "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
		"tf_crop_and_resize", "tf_half_pixel_for_nn":
	default:
		return fmt.Errorf("unknown coordinate_transformation_mode %q", s.Coord)
	}
	switch {
	case s.Legacy:
	case s.Nearest == "round_prefer_floor", s.Nearest == "round_prefer_ceil", s.Nearest == "floor", s.Nearest == "ceil":
	default:
		return fmt.Errorf("unknown nearest_mode %q", s.Nearest)
	}
	if s.Mode == "nearest" && s.Antialias {
		return fmt.Errorf("antialias does not apply to nearest mode")
	}
	return nil
}

// resolveShape sets Roi, Scales and Shape.
func (s *ResizeSpec) resolveShape(roi, scales []float64, sizes []int64) error {
	if s.SizesInput < 0 {
		// Resize-10: scales of every axis, nothing else.
		return s.fromScales(scales)
	}
	r := len(s.In)
	if s.RoiInput >= 0 {
		if len(roi) != 2*len(s.Axes) {
			return fmt.Errorf("roi has %d values for %d axes", len(roi), len(s.Axes))
		}
		s.Roi = make([]float64, 2*r)
		for i := range r {
			s.Roi[r+i] = 1
		}
		for i, a := range s.Axes {
			s.Roi[a], s.Roi[r+a] = roi[i], roi[len(s.Axes)+i]
		}
	}
	switch {
	case len(scales) > 0 && len(sizes) > 0:
		return fmt.Errorf("both scales and sizes given")
	case len(scales) > 0:
		return s.fromScales(scales)
	case len(sizes) > 0:
		return s.fromSizes(sizes)
	}
	return fmt.Errorf("neither scales nor sizes given")
}

// fromScales sets Scales and Shape from the scales of Axes.
func (s *ResizeSpec) fromScales(scales []float64) error {
	if len(scales) != len(s.Axes) {
		return fmt.Errorf("%d scales for %d axes", len(scales), len(s.Axes))
	}
	s.Scales = slices.Repeat([]float64{1}, len(s.In))
	for i, a := range s.Axes {
		if !(scales[i] > 0) || math.IsInf(scales[i], 0) {
			return fmt.Errorf("scale %g must be positive", scales[i])
		}
		s.Scales[a] = scales[i]
	}
	s.Shape = make([]int64, len(s.In))
	for i, d := range s.In {
		f := s.Scales[i] * float64(d)
		if f >= maxResizeDim {
			return fmt.Errorf("scale %g makes axis %d too large", s.Scales[i], i)
		}
		s.Shape[i] = int64(f)
	}
	return nil
}

// fromSizes sets Scales and Shape from the output sizes of Axes and the
// keep_aspect_ratio_policy.
func (s *ResizeSpec) fromSizes(sizes []int64) error {
	in := s.In
	if len(sizes) != len(s.Axes) {
		return fmt.Errorf("%d sizes for %d axes", len(sizes), len(s.Axes))
	}
	s.Shape = slices.Clone(in)
	s.Scales = slices.Repeat([]float64{1}, len(in))
	for i, a := range s.Axes {
		if sizes[i] < 0 || (in[a] == 0 && sizes[i] != 0) {
			return fmt.Errorf("cannot resize axis %d of size %d to %d", a, in[a], sizes[i])
		}
		s.Shape[a] = sizes[i]
		if in[a] > 0 {
			s.Scales[a] = float64(sizes[i]) / float64(in[a])
		}
	}
	if s.policy == "stretch" {
		return nil
	}
	scale := s.Scales[s.Axes[0]]
	for _, a := range s.Axes {
		switch s.policy {
		case "not_larger":
			scale = min(scale, s.Scales[a])
		case "not_smaller":
			scale = max(scale, s.Scales[a])
		default:
			return fmt.Errorf("unknown keep_aspect_ratio_policy %q", s.policy)
		}
	}
	for _, a := range s.Axes {
		f := scale*float64(in[a]) + 0.5
		if f >= maxResizeDim {
			return fmt.Errorf("sizes %v make axis %d too large", sizes, a)
		}
		s.Scales[a] = scale
		s.Shape[a] = int64(f)
	}
	return nil
}

// Origin maps output coordinate o of axis d to the input coordinate (see
// ResizeOrigin); extrap reports a tf_crop_and_resize coordinate outside
// the input. The spec must be resolved.
func (s *ResizeSpec) Origin(d int, o int64) (x float64, extrap bool) {
	var lo, hi float64
	if s.Coord == "tf_crop_and_resize" {
		lo, hi = s.Roi[d], s.Roi[len(s.In)+d]
	}
	return ResizeOrigin(s.Coord, o, s.In[d], s.Shape[d], s.Scales[d], lo, hi)
}

// NearestUpper reports whether nearest mode (by Nearest, not Legacy) reads
// the upper of the two input elements around an input coordinate ratio
// past the lower one, ratio in (0, 1]; at 1 the coordinate is the upper
// element's.
func (s *ResizeSpec) NearestUpper(ratio float64) bool {
	switch s.Nearest {
	case "round_prefer_floor":
		return ratio > 0.5
	case "round_prefer_ceil":
		return ratio >= 0.5
	case "ceil":
		return true
	}
	return ratio == 1
}

// NearestIndex is the input element that nearest mode reads for input
// coordinate x of axis d, clamped to the axis: Legacy rounds down when
// enlarging the axis and up when shrinking it; otherwise the lower or
// upper of the two elements around x, as NearestUpper picks.
func (s *ResizeSpec) NearestIndex(d int, x float64) int64 {
	in := s.In[d]
	if s.Legacy {
		i := int64(x)
		if s.Scales[d] < 1 {
			i = int64(math.Ceil(x))
		}
		return min(max(i, 0), in-1)
	}
	ratio := x - math.Floor(x)
	if ratio == 0 {
		ratio = 1
	}
	start := min(max(int64(math.Ceil(x+1))-2, -1), in-1)
	if s.NearestUpper(ratio) {
		start++
	}
	return min(max(start, 0), in-1)
}
