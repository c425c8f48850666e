package hostfallback

import (
	"math"
	"slices"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// Resize (Upsample is canonicalized to it at load), following the ONNX reference
// implementation: every axis is resampled on its own (separably) with n
// taps per output position; a tap reads the input clamped to its edges
// ("edge" padding), and its weight comes from the mode's coefficients.
// Nearest resizing moves elements and works on every type; linear and
// cubic compute in float64 and convert back (integers truncated).

func init() {
	Register("Resize", resizeKernel)
}

// resizeSpec is a resolved resize with the CPU kernel's methods.
type resizeSpec struct{ *ops.ResizeSpec }

// resizeKernel runs Resize: ops.ResizeSpec resolves the
// attributes and the roi, scales and sizes inputs.
func resizeKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	spec, err := ops.NewResize(c.Node, c.Opset, x.Shape)
	if err != nil {
		return c.Errorf("%w", err)
	}
	var roi, scales []float64
	var sizes []int64
	if spec.RoiInput >= 0 {
		if roi, err = floatsInput(c, spec.RoiInput); err != nil {
			return err
		}
	}
	if spec.ScalesInput >= 0 {
		if scales, err = floatsInput(c, spec.ScalesInput); err != nil {
			return err
		}
	}
	if spec.SizesInput >= 0 {
		if sizes, _, err = intsInput(c, spec.SizesInput); err != nil {
			return err
		}
	}
	if err := spec.Resolve(roi, scales, sizes); err != nil {
		return c.Errorf("%w", err)
	}
	if err := c.Check(x.DType, spec.Shape); err != nil {
		return err
	}
	if graph.NumElements(spec.Shape) == 0 {
		// Nothing to compute: the axis maps of the other axes, whose
		// size may be anything, are not made.
		c.Output(0, x.DType, spec.Shape)
		return nil
	}
	return resizeSpec{spec}.run(c, x)
}

// floatsInput returns optional input i (a float tensor) as float64s.
func floatsInput(c *Call, i int) ([]float64, error) {
	t := c.Tensor(i)
	if t == nil {
		return nil, nil
	}
	if !t.DType.IsFloat() {
		return nil, c.Errorf("input %d must be floating-point, is %s", i, t.DType)
	}
	v, ok := toFloat64s(t)
	if !ok {
		return nil, c.Unsupported("input %d of type %s", i, t.DType)
	}
	return v, nil
}

// run resizes x to output 0.
func (s resizeSpec) run(c *Call, x *graph.Tensor) error {
	r := x.Rank()
	maps := make([]axisMap, r)
	for d := range r {
		maps[d] = s.axisMap(d, x.Shape[d], s.Shape[d])
	}
	if s.Mode == "nearest" {
		return s.nearestResize(c, x, maps)
	}
	if x.DType == graph.Float {
		// float32 is interpolated in float32, straight from the input into
		// the output: half the memory traffic of the float64 path.
		out := c.Output(0, x.DType, s.Shape)
		resample(c.Threads, maps, graph.View[float32](x), x.Shape, graph.View[float32](out), float32(s.Extrapolation))
		return nil
	}
	data, ok := toFloat64s(x)
	if !ok {
		return c.Unsupported("%s resize of %s", s.Mode, x.DType)
	}
	res := make([]float64, graph.NumElements(s.Shape))
	resample(c.Threads, maps, data, x.Shape, res, s.Extrapolation)
	fromFloat64s(c.Output(0, x.DType, s.Shape), res)
	return nil
}

// resample applies the axis maps to data, a tensor of the given shape, from
// the last axis to the first as the reference does, skipping axes the maps
// leave unchanged, and writes the result to dst.
func resample[F float32 | float64](threads *Threads, maps []axisMap, data []F, shape []int64, dst []F, extrap F) {
	var axes []int
	for d := len(maps) - 1; d >= 0; d-- {
		if !maps[d].identity(shape[d]) {
			axes = append(axes, d)
		}
	}
	if len(axes) == 0 {
		copy(dst, data)
		return
	}
	cur := slices.Clone(shape)
	for j, d := range axes {
		var into []F
		if j == len(axes)-1 {
			into = dst
		}
		data = resampleAxis(threads, &maps[d], data, cur, d, extrap, into)
		cur[d] = int64(len(maps[d].extrap))
	}
}

// nearestResize moves elements: axis d's output o reads its map's single
// tap, or the extrapolation value.
func (s resizeSpec) nearestResize(c *Call, x *graph.Tensor, maps []axisMap) error {
	strides := graph.Strides(x.Shape)
	tabs := make([][]int64, len(maps))
	needFill := false
	for d, m := range maps {
		tabs[d] = make([]int64, len(m.extrap))
		for o, ex := range m.extrap {
			if ex {
				tabs[d][o] = outside
				needFill = true
			} else {
				tabs[d][o] = m.idx[o] * strides[d]
			}
		}
	}
	var fill cells
	if needFill {
		b, ok := scalarBytes(x.DType, s.Extrapolation)
		if !ok {
			return c.Unsupported("extrapolation value for %s", x.DType)
		}
		fill = cells{b: b, size: len(b)}
	}
	out := c.Output(0, x.DType, s.Shape)
	dst := outCells(out)
	gatherTables(c.Threads, dst, inCells(x), s.Shape, tabs, fill)
	storeCells(out, dst)
	return nil
}

// axisMap is the resampling of one axis: output o is
// sum_t w[o*n+t] * in[idx[o*n+t]], or the extrapolation value when
// extrap[o].
type axisMap struct {
	n      int
	idx    []int64
	w      []float64
	extrap []bool
}

// axisMap computes the resampling of axis d from in to out elements.
func (s resizeSpec) axisMap(d int, in, out int64) axisMap {
	scale := s.Scales[d]
	m := axisMap{extrap: make([]bool, out)}
	if s.Mode == "nearest" {
		m.n = 1
		m.idx = make([]int64, out)
	}
	var coeffs []float64
	for o := range out {
		x, ex := s.Origin(d, o)
		if ex {
			m.extrap[o] = true
			if m.n == 1 {
				continue
			}
		}
		if s.Mode == "nearest" {
			// exclude_outside does not apply: the reference would
			// renormalise a single zeroed weight into NaN.
			m.idx[o] = s.NearestIndex(d, x)
			continue
		}
		// ratio is in (0, 1]: an integer x is approached from its left.
		ratio := x - math.Floor(x)
		if ratio == 0 {
			ratio = 1
		}
		coeffs = s.coeffs(coeffs[:0], ratio, scale)
		// The taps are the n integers nearest x, preferring lower ones,
		// kept within the input padded by ceil(n/2) on each side. Like the
		// reference, find them around x+pad in padded coordinates, which
		// can round differently from x.
		n := int64(len(coeffs))
		pad := (n + 1) / 2
		start := int64(math.Ceil(x+float64(pad))) - n/2 - pad
		start = min(max(start, -pad), in+pad-n)
		if m.n == 0 {
			m.n = len(coeffs)
			m.idx = make([]int64, out*n)
			m.w = make([]float64, out*n)
		}
		if s.ExcludeOutside {
			sum := 0.0
			for t := range coeffs {
				if j := start + int64(t); j < 0 || j >= in {
					coeffs[t] = 0
				}
				sum += coeffs[t]
			}
			for t := range coeffs {
				coeffs[t] /= sum
			}
		}
		for t, w := range coeffs {
			m.idx[o*n+int64(t)] = min(max(start+int64(t), 0), in-1)
			m.w[o*n+int64(t)] = w
		}
	}
	return m
}

// coeffs appends the mode's tap weights for an input coordinate ratio in
// (0, 1] past its left tap, at the given scale.
func (s resizeSpec) coeffs(dst []float64, ratio, scale float64) []float64 {
	switch s.Mode {
	case "nearest":
		if s.NearestUpper(ratio) {
			return append(dst, 0, 1)
		}
		return append(dst, 1, 0)
	case "linear":
		if !s.Antialias {
			return append(dst, 1-ratio, ratio)
		}
		sc := min(scale, 1)
		start := int64(math.Floor(-1/sc)) + 1
		sum := 0.0
		for i := start; i < 2-start; i++ {
			w := min(max(1-math.Abs((float64(i)-ratio)*sc), 0), 1)
			dst = append(dst, w)
			sum += w
		}
		return normalize(dst, sum)
	}
	a := s.CubicA
	if !s.Antialias {
		return append(dst,
			((a*(ratio+1)-5*a)*(ratio+1)+8*a)*(ratio+1)-4*a,
			((a+2)*ratio-(a+3))*ratio*ratio+1,
			((a+2)*(1-ratio)-(a+3))*(1-ratio)*(1-ratio)+1,
			((a*((1-ratio)+1)-5*a)*((1-ratio)+1)+8*a)*((1-ratio)+1)-4*a)
	}
	sc := min(scale, 1)
	start := int64(math.Floor(-2/sc)) + 1
	sum := 0.0
	for i := start; i < 2-start; i++ {
		x := math.Abs(sc * (float64(i) - ratio))
		var w float64
		switch {
		case x <= 1:
			w = (a+2)*x*x*x - (a+3)*x*x + 1
		case x < 2:
			w = a*x*x*x - 5*a*x*x + 8*a*x - 4*a
		}
		dst = append(dst, w)
		sum += w
	}
	return normalize(dst, sum)
}

// normalize divides the weights by their sum.
func normalize(w []float64, sum float64) []float64 {
	for i := range w {
		w[i] /= sum
	}
	return w
}

// identity reports whether the map leaves an axis of length in unchanged.
func (m *axisMap) identity(in int64) bool {
	if int64(len(m.extrap)) != in || m.n == 0 {
		return int64(len(m.extrap)) == in && in == 0
	}
	for o := range in {
		if m.extrap[o] {
			return false
		}
		for t := range m.n {
			k := o*int64(m.n) + int64(t)
			if w := m.w[k]; w != 0 && (w != 1 || m.idx[k] != o) {
				return false
			}
		}
	}
	return true
}

// resampleAxis resamples axis d of data, a tensor of the given shape, into
// dst (allocated when nil) and returns it.
func resampleAxis[F float32 | float64](threads *Threads, m *axisMap, data []F, shape []int64, d int, extrap F, dst []F) []F {
	in, out := shape[d], int64(len(m.extrap))
	outer, inner := graph.NumElements(shape[:d]), graph.NumElements(shape[d+1:])
	if dst == nil {
		dst = make([]F, outer*out*inner)
	}
	n := int64(m.n)
	threads.For(int(outer*out), int(max(1, 8192/max(inner*n, 1))), func(lo, hi int) {
		ob, o := int64(lo)/out, int64(lo)%out
		for row := int64(lo); row < int64(hi); row, o = row+1, o+1 {
			if o == out {
				ob, o = ob+1, 0
			}
			if inner == 1 {
				// The last axis: one dot product per output element.
				if m.extrap[o] {
					dst[row] = extrap
					continue
				}
				src := data[ob*in : (ob+1)*in]
				if n == 2 {
					dst[row] = F(m.w[2*o]*float64(src[m.idx[2*o]]) + m.w[2*o+1]*float64(src[m.idx[2*o+1]]))
					continue
				}
				taps, w := m.idx[o*n:(o+1)*n], m.w[o*n:(o+1)*n]
				sum := 0.0
				for t, i := range taps {
					sum += w[t] * float64(src[i])
				}
				dst[row] = F(sum)
				continue
			}
			res := dst[row*inner : (row+1)*inner]
			if m.extrap[o] {
				for i := range res {
					res[i] = extrap
				}
				continue
			}
			base := ob * in * inner
			taps, w := m.idx[o*n:(o+1)*n], m.w[o*n:(o+1)*n]
			src, w0 := data[base+taps[0]*inner:][:len(res)], F(w[0])
			for i, v := range src {
				res[i] = w0 * v
			}
			for t := 1; t < len(taps); t++ {
				src := data[base+taps[t]*inner:][:len(res)]
				wt := F(w[t])
				for i, v := range src {
					res[i] += wt * v
				}
			}
		}
	})
	return dst
}
