package vulkan

import (
	"math"
	"slices"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// resizeRank is the most dimensions resize.comp walks, after the
// dimensions a resize leaves alone are merged.
const resizeRank = 4

// maxResizeAxis is the longest axis resize.comp resamples: its output
// coordinates must be exact in float32.
const maxResizeAxis = 1 << 24

// resizeModes maps Resize's mode to the OP specialization constant of
// resize.comp.
var resizeModes = map[string]int32{"nearest": 0, "linear": 1, "cubic": 2}

func init() {
	register("Resize", lowerResize)
	register("Upsample", lowerUpsample)
}

// resizeSpec is a resize with every argument resolved to full rank, as
// hostfallback/resize.go resolves it.
type resizeSpec struct {
	mode, coord, nearest string
	// legacy selects Upsample's and Resize-10's nearest rounding.
	legacy         bool
	cubicA         float64
	excludeOutside bool
	extrapolation  float64
	scales         []float64
	shape          []int64
	roi            []float64
}

// constFloats returns the values of optional input k: nil when it is
// absent; ok is false when it is present but not a constant float tensor.
func (q *query) constFloats(k int) (v []float64, ok bool) {
	if k >= len(q.shapes) || q.shapes[k] == nil {
		return nil, true
	}
	t := q.consts[k]
	if t == nil || !t.DType.IsFloat() {
		return nil, false
	}
	v = make([]float64, t.NumElements())
	for i := range v {
		v[i] = t.Float64At(int64(i))
	}
	return v, true
}

// lowerResize lowers Resize (opset 10 on) of float32 in modes nearest,
// linear and cubic, every coordinate transformation, with constant roi,
// scales or sizes, axes and keep_aspect_ratio_policy. It declines
// antialias.
func lowerResize(q *query) (*launch, bool) {
	n, x := q.n, q.shapes[0]
	r := len(x)
	s := &resizeSpec{mode: n.AttrString("mode", "nearest"), coord: "asymmetric", legacy: true, cubicA: -0.75}
	if q.opset < 11 {
		scales, ok := q.constFloats(1)
		if !ok || len(q.shapes) != 2 || !s.fromScales(x, scales, nil) {
			return nil, false
		}
		return s.lower(q)
	}
	if len(q.shapes) > 4 {
		return nil, false
	}
	s.legacy = false
	s.coord = n.AttrString("coordinate_transformation_mode", "half_pixel")
	s.nearest = n.AttrString("nearest_mode", "round_prefer_floor")
	s.cubicA = float64(n.AttrFloat("cubic_coeff_a", -0.75))
	s.excludeOutside = n.AttrInt("exclude_outside", 0) != 0
	s.extrapolation = float64(n.AttrFloat("extrapolation_value", 0))
	var axes []int
	if q.opset >= 18 {
		if n.AttrInt("antialias", 0) != 0 {
			return nil, false
		}
		if a := n.Attr("axes"); a != nil && a.Type == graph.AttrInts {
			seen := make([]bool, r)
			for _, v := range a.Ints {
				if v < 0 {
					v += int64(r)
				}
				if v < 0 || v >= int64(r) || seen[v] {
					return nil, false
				}
				seen[v] = true
				axes = append(axes, int(v))
			}
		}
	}
	if axes == nil {
		axes = make([]int, r)
		for i := range axes {
			axes[i] = i
		}
	}
	if s.coord == "tf_crop_and_resize" {
		roi, ok := q.constFloats(1)
		if !ok || len(roi) != 2*len(axes) {
			return nil, false
		}
		s.roi = make([]float64, 2*r)
		for i := range r {
			s.roi[r+i] = 1
		}
		for i, a := range axes {
			s.roi[a], s.roi[r+a] = roi[i], roi[len(axes)+i]
		}
	}
	scales, ok := q.constFloats(2)
	if !ok {
		return nil, false
	}
	var sizes []int64
	if len(q.shapes) > 3 && q.shapes[3] != nil {
		if sizes, ok = q.constInts(3); !ok {
			return nil, false
		}
	}
	switch {
	case len(scales) > 0 && len(sizes) > 0:
		return nil, false
	case len(scales) > 0:
		ok = s.fromScales(x, scales, axes)
	case len(sizes) > 0:
		policy := "stretch"
		if q.opset >= 18 {
			policy = n.AttrString("keep_aspect_ratio_policy", "stretch")
		}
		ok = s.fromSizes(x, sizes, axes, policy)
	default:
		ok = false
	}
	if !ok {
		return nil, false
	}
	return s.lower(q)
}

// lowerUpsample lowers Upsample with the scales attribute (opset 7) or a
// constant scales input (opset 9).
func lowerUpsample(q *query) (*launch, bool) {
	s := &resizeSpec{mode: q.n.AttrString("mode", "nearest"), coord: "asymmetric", legacy: true}
	var scales []float64
	switch {
	case q.opset < 7:
		return nil, false
	case q.opset < 9:
		if len(q.shapes) != 1 {
			return nil, false
		}
		for _, f := range q.n.AttrFloats("scales", nil) {
			scales = append(scales, float64(f))
		}
	default:
		var ok bool
		if scales, ok = q.constFloats(1); !ok || len(q.shapes) != 2 {
			return nil, false
		}
	}
	if !s.fromScales(q.shapes[0], scales, nil) {
		return nil, false
	}
	return s.lower(q)
}

// fromScales sets scales and the output shape from per-axis scales (given
// for axes, or for all axes when axes is nil); ok is false for bad scales.
func (s *resizeSpec) fromScales(in []int64, scales []float64, axes []int) bool {
	r := len(in)
	if axes == nil {
		axes = make([]int, r)
		for i := range axes {
			axes[i] = i
		}
	}
	if len(scales) != len(axes) {
		return false
	}
	s.scales = slices.Repeat([]float64{1}, r)
	for i, a := range axes {
		if !(scales[i] > 0) || math.IsInf(scales[i], 0) {
			return false
		}
		s.scales[a] = scales[i]
	}
	s.shape = make([]int64, r)
	for i, d := range in {
		f := s.scales[i] * float64(d)
		if f >= maxResizeAxis {
			return false
		}
		s.shape[i] = int64(f)
	}
	return true
}

// fromSizes sets scales and the output shape from per-axis output sizes
// and the keep_aspect_ratio_policy; ok is false for bad sizes.
func (s *resizeSpec) fromSizes(in, sizes []int64, axes []int, policy string) bool {
	if len(sizes) != len(axes) {
		return false
	}
	s.shape = slices.Clone(in)
	s.scales = slices.Repeat([]float64{1}, len(in))
	for i, a := range axes {
		if sizes[i] <= 0 || sizes[i] >= maxResizeAxis {
			return false
		}
		s.shape[a] = sizes[i]
		s.scales[a] = float64(sizes[i]) / float64(in[a])
	}
	if policy == "stretch" {
		return true
	}
	scale := s.scales[axes[0]]
	for _, a := range axes {
		switch policy {
		case "not_larger":
			scale = min(scale, s.scales[a])
		case "not_smaller":
			scale = max(scale, s.scales[a])
		default:
			return false
		}
	}
	for _, a := range axes {
		f := scale*float64(in[a]) + 0.5
		if f >= maxResizeAxis {
			return false
		}
		s.scales[a] = scale
		s.shape[a] = int64(f)
	}
	return true
}

// origin maps output coordinate o of axis d, resized from in to out
// elements, to the input coordinate, exactly as the CPU kernel computes
// it; extrap reports a tf_crop_and_resize coordinate outside the input.
func (s *resizeSpec) origin(d int, o, in, out int64) (x float64, extrap bool) {
	var lo, hi float64
	if s.coord == "tf_crop_and_resize" {
		r := len(s.shape)
		lo, hi = s.roi[d], s.roi[r+d]
	}
	return ops.ResizeOrigin(s.coord, o, in, out, s.scales[d], lo, hi)
}

// affine returns a and b with origin(d, o, in, out) = a*o + b up to
// rounding.
func (s *resizeSpec) affine(d int, in, out int64) (a, b float64) {
	x0, _ := s.origin(d, 0, in, out)
	fin, scale := float64(in), s.scales[d]
	outW := scale * fin
	switch s.coord {
	case "align_corners":
		if outW != 1 {
			a = (fin - 1) / (outW - 1)
		}
	case "tf_crop_and_resize":
		r := len(s.shape)
		if outW != 1 {
			a = (s.roi[r+d] - s.roi[d]) * (fin - 1) / (outW - 1)
		}
	case "pytorch_half_pixel":
		if outW != 1 {
			a = 1 / scale
		}
	default:
		a = 1 / scale
	}
	return a, x0
}

// nearestIndex returns the input index nearest mode reads for input
// coordinate x of an axis of in elements, as the CPU kernel picks it.
func (s *resizeSpec) nearestIndex(d int, x float64, in int64) int64 {
	if s.legacy {
		i := int64(x)
		if s.scales[d] < 1 {
			i = int64(math.Ceil(x))
		}
		return min(max(i, 0), in-1)
	}
	ratio := x - math.Floor(x)
	if ratio == 0 {
		ratio = 1
	}
	var second bool
	switch s.nearest {
	case "round_prefer_floor":
		second = ratio > 0.5
	case "round_prefer_ceil":
		second = ratio >= 0.5
	case "ceil":
		second = true
	}
	start := min(max(int64(math.Ceil(x+1))-2, -1), in-1)
	if ratio == 1 || second {
		start++
	}
	return min(max(start, 0), in-1)
}

// resizeDim is one dimension walked by resize.comp.
type resizeDim struct {
	in, out int64
	resized bool
	a, b    float32
	lo, hi  int64
}

// axis works out how resize.comp walks axis d: unchanged (resized false),
// or resampled with its affine map and the range of output coordinates
// inside the input. ok is false when no float32 map reproduces the CPU
// kernel's nearest indices.
func (s *resizeSpec) axis(d int, in int64) (rd resizeDim, ok bool) {
	out := s.shape[d]
	rd = resizeDim{in: in, out: out, lo: out, hi: -1}
	xs := make([]float64, out)
	identity := in == out
	for o := range out {
		x, ex := s.origin(d, o, in, out)
		xs[o] = x
		if !ex {
			rd.lo, rd.hi = min(rd.lo, o), max(rd.hi, o)
		}
		if ex || x != float64(o) && (s.mode != "nearest" || s.nearestIndex(d, x, in) != o) {
			identity = false
		}
	}
	// An axis of one element stays one element: every tap reads it and
	// the weights sum to 1.
	if identity || in == 1 && out == 1 && rd.lo == 0 {
		return rd, true
	}
	if in > maxResizeAxis || out > maxResizeAxis {
		return rd, false
	}
	rd.resized = true
	for o := rd.lo; o <= rd.hi; o++ {
		if _, ex := s.origin(d, o, in, out); ex {
			return rd, false
		}
	}
	a, b := s.affine(d, in, out)
	rd.a, rd.b = float32(a), float32(b)
	if s.mode != "nearest" || rd.lo > rd.hi {
		return rd, true
	}
	idx := make([]int64, out)
	for o := rd.lo; o <= rd.hi; o++ {
		idx[o] = s.nearestIndex(d, xs[o], in)
	}
	rd.a, rd.b, ok = fitFloor(idx[rd.lo:rd.hi+1], rd.lo, in, a)
	return rd, ok
}

// maxFitSearch is the most output coordinates fitFloor searches a slope
// for.
const maxFitSearch = 1 << 16

// fitFloor returns a and b such that resize.comp's nearest index,
// clamp(floor(a*o + b), 0, in-1) in float32 arithmetic, is idx[o-first]
// for every o from first on. It tries slope a0 first and then searches
// the slope that leaves b the widest interval: the CPU kernel's float64
// coordinates can round to indices that no exact affine map gives.
func fitFloor(idx []int64, first, in int64, a0 float64) (a, b float32, ok bool) {
	// bounds returns the interval [lo, hi) of b that slope a allows: each
	// index bounds a*o + b from below (unless it is 0) and from above
	// (unless it is in-1).
	bounds := func(a float64) (lo, hi float64) {
		lo, hi = math.Inf(-1), math.Inf(1)
		for k, i := range idx {
			ao := a * float64(first+int64(k))
			if i > 0 {
				lo = max(lo, float64(i)-ao)
			}
			if i < in-1 {
				hi = min(hi, float64(i+1)-ao)
			}
		}
		return lo, hi
	}
	try := func(slope float64) (a, b float32, ok bool) {
		a = float32(slope)
		lo, hi := bounds(float64(a))
		switch {
		case !(lo < hi):
			return 0, 0, false
		case math.IsInf(lo, -1) && math.IsInf(hi, 1):
			b = 0
		case math.IsInf(lo, -1):
			b = float32(hi - 0.5)
		case math.IsInf(hi, 1):
			b = float32(lo + 0.5)
		default:
			b = float32((lo + hi) / 2)
		}
		for k, i := range idx {
			c := float64(float32(float32(a*float32(first+int64(k))) + b))
			if min(max(int64(math.Floor(c)), 0), in-1) != i {
				return 0, 0, false
			}
		}
		return a, b, true
	}
	if a, b, ok := try(a0); ok || len(idx) > maxFitSearch {
		return a, b, ok
	}
	// The interval's width is concave in the slope: ternary search.
	width := func(a float64) float64 {
		lo, hi := bounds(a)
		return hi - lo
	}
	lo, hi := min(0, a0), 2*max(0, a0)+1
	for range 200 {
		m1, m2 := lo+(hi-lo)/3, hi-(hi-lo)/3
		if width(m1) < width(m2) {
			lo = m1
		} else {
			hi = m2
		}
	}
	return try((lo + hi) / 2)
}

// lower builds the dispatch of resize.comp for input 0 of q.
func (s *resizeSpec) lower(q *query) (*launch, bool) {
	x := q.shapes[0]
	code, ok := resizeModes[s.mode]
	if !ok || len(x) == 0 {
		return nil, false
	}
	switch s.coord {
	case "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
		"tf_crop_and_resize", "tf_half_pixel_for_nn":
	default:
		return nil, false
	}
	switch s.nearest {
	case "", "round_prefer_floor", "round_prefer_ceil", "floor", "ceil":
	default:
		return nil, false
	}
	elems := graph.NumElements(s.shape)
	if elems <= 0 || elems > q.maxElems {
		return nil, false
	}
	var dims []resizeDim
	for d, in := range x {
		rd, ok := s.axis(d, in)
		if !ok {
			return nil, false
		}
		if k := len(dims) - 1; !rd.resized && k >= 0 && !dims[k].resized {
			dims[k].in *= in
			dims[k].out *= in
			continue
		}
		if rd.resized || in != 1 {
			dims = append(dims, rd)
		}
	}
	if len(dims) == 0 {
		dims = []resizeDim{{in: 1, out: 1}}
	}
	if len(dims) > resizeRank {
		return nil, false
	}
	var mask uint32
	if s.excludeOutside && s.mode == "cubic" {
		mask = 256
	}
	vals := make([]uint32, 5+6*resizeRank)
	vals[0], vals[1], vals[3], vals[4] = uint32(elems), uint32(len(dims)), math.Float32bits(float32(s.extrapolation)), math.Float32bits(float32(s.cubicA))
	for d, rd := range dims {
		lo, hi := int64(0), rd.out-1
		if rd.resized {
			mask |= 1 << d
			lo, hi = rd.lo, rd.hi
		}
		vals[5+d], vals[5+resizeRank+d] = uint32(rd.in), uint32(rd.out)
		vals[5+2*resizeRank+d], vals[5+3*resizeRank+d] = math.Float32bits(rd.a), math.Float32bits(rd.b)
		vals[5+4*resizeRank+d], vals[5+5*resizeRank+d] = uint32(int32(lo)), uint32(int32(hi))
	}
	vals[2] = mask
	return &launch{shader: "resize", op: code, bindings: []slot{{false, 0}, {true, 0}}, push: words(vals...),
		elems: elems, outShapes: [][]int64{s.shape}}, true
}
