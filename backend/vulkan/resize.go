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
}

// resizeSpec is a resolved resize with the lowering's methods.
type resizeSpec struct{ *ops.ResizeSpec }

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

// lowerResize lowers Resize of float32 in modes nearest, linear and cubic, every coordinate
// transformation, with constant roi, scales or sizes, axes and
// keep_aspect_ratio_policy, as ops.ResizeSpec resolves them. It declines
// antialias, and whatever the resolver refuses (where the CPU kernel
// fails).
func lowerResize(q *query) (*launch, bool) {
	switch {
	case q.opset < 11:
		if len(q.shapes) != 2 {
			return nil, false
		}
	case len(q.shapes) > 4:
		return nil, false
	}
	spec, err := ops.NewResize(q.n, q.opset, q.shapes[0])
	if err != nil || spec.Antialias {
		return nil, false
	}
	var roi, scales []float64
	var sizes []int64
	ok := true
	if spec.RoiInput >= 0 {
		roi, ok = q.constFloats(spec.RoiInput)
	}
	if ok && spec.ScalesInput >= 0 {
		scales, ok = q.constFloats(spec.ScalesInput)
	}
	if k := spec.SizesInput; ok && k >= 0 && k < len(q.shapes) && q.shapes[k] != nil {
		sizes, ok = q.constInts(k)
	}
	if !ok || spec.Resolve(roi, scales, sizes) != nil {
		return nil, false
	}
	// resize.comp maps output coordinates in float32: the resized axes
	// (every axis, for scales) must stay below maxResizeAxis.
	for _, v := range sizes {
		if v <= 0 || v >= maxResizeAxis {
			return nil, false
		}
	}
	for d, v := range spec.Shape {
		if v >= maxResizeAxis && (len(sizes) == 0 || slices.Contains(spec.Axes, d)) {
			return nil, false
		}
	}
	return resizeSpec{spec}.lower(q)
}

// affine returns a and b with s.Origin(d, o) = a*o + b up to rounding,
// for axis d of in elements.
func (s resizeSpec) affine(d int, in int64) (a, b float64) {
	x0, _ := s.Origin(d, 0)
	fin, scale := float64(in), s.Scales[d]
	outW := scale * fin
	switch s.Coord {
	case "align_corners":
		if outW != 1 {
			a = (fin - 1) / (outW - 1)
		}
	case "tf_crop_and_resize":
		r := len(s.Shape)
		if outW != 1 {
			a = (s.Roi[r+d] - s.Roi[d]) * (fin - 1) / (outW - 1)
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
func (s resizeSpec) axis(d int, in int64) (rd resizeDim, ok bool) {
	out := s.Shape[d]
	rd = resizeDim{in: in, out: out, lo: out, hi: -1}
	xs := make([]float64, out)
	extrap := make([]bool, out)
	identity := in == out
	for o := range out {
		x, ex := s.Origin(d, o)
		xs[o], extrap[o] = x, ex
		if !ex {
			rd.lo, rd.hi = min(rd.lo, o), max(rd.hi, o)
		}
		if ex || x != float64(o) && (s.Mode != "nearest" || s.NearestIndex(d, x) != o) {
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
	if slices.Contains(extrap[max(rd.lo, 0):rd.hi+1], true) {
		return rd, false
	}
	a, b := s.affine(d, in)
	rd.a, rd.b = float32(a), float32(b)
	if s.Mode != "nearest" || rd.lo > rd.hi {
		return rd, true
	}
	idx := make([]int64, out)
	for o := rd.lo; o <= rd.hi; o++ {
		idx[o] = s.NearestIndex(d, xs[o])
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
func (s resizeSpec) lower(q *query) (*launch, bool) {
	x := q.shapes[0]
	code, ok := resizeModes[s.Mode]
	if !ok || len(x) == 0 {
		return nil, false
	}
	elems := graph.NumElements(s.Shape)
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
	if s.ExcludeOutside && s.Mode == "cubic" {
		mask = 256
	}
	vals := make([]uint32, 5+6*resizeRank)
	vals[0], vals[1], vals[3], vals[4] = uint32(elems), uint32(len(dims)), math.Float32bits(float32(s.Extrapolation)), math.Float32bits(float32(s.CubicA))
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
		elems: elems, outShapes: [][]int64{s.Shape}}, true
}
