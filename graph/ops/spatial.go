package ops

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/onnxvk/onnxvk/graph"
)

// Resampling, sampling and assorted ops: Resize, Upsample, CenterCropPad,
// Col2Im, GridSample, AffineGrid, RoiAlign, NonMaxSuppression, random
// generators, windows, Det, Einsum, DFT.

func init() {
	setRule(inferResize, "Resize")
	setRule(inferCenterCropPad, "CenterCropPad")
	setRule(inferCol2Im, "Col2Im")
	setRule(inferGridSample, "GridSample")
	setRule(inferAffineGrid, "AffineGrid")
	setRule(inferRoiAlign, "RoiAlign")
	setRule(inferNMS, "NonMaxSuppression")
	setRule(inferRandom, "RandomNormal", "RandomUniform")
	setRule(inferRandomLike, "RandomNormalLike", "RandomUniformLike", "Bernoulli")
	setRule(inferMultinomial, "Multinomial")
	setProps(Nondeterministic, "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike",
		"Bernoulli", "Multinomial")
	setRule(inferWindow, "HannWindow", "HammingWindow", "BlackmanWindow")
	setRule(inferDet, "Det")
	setRule(inferEinsum, "Einsum")
	setRule(inferDFT, "DFT")
}

// floatsIn returns the value of input i as float64s when it is known.
func (c *InferContext) floatsIn(i int) ([]float64, bool) {
	v, ok := decode(c.val(i))
	if !ok {
		return nil, false
	}
	out := make([]float64, v.len())
	for k := range out {
		out[k] = v.float(k)
	}
	return out, true
}

// scaledDim is floor(d·scale) computed in float64, as the kernels do (see
// ResizeSpec).
func scaledDim(d graph.Dim, scale float64) graph.Dim {
	if !d.Known() {
		if scale == 1 {
			return d
		}
		return graph.UnknownDim()
	}
	return graph.DimOf(int64(math.Floor(float64(d.Value) * scale)))
}

// inferResize is Resize: the output size comes from sizes or from scales
// (inputs X, roi, scales, sizes; Resize-10, which Canonicalize leaves in
// nearest mode with scales not known at load: X, scales), for the axes
// attribute's axes, under the keep_aspect_ratio_policy.
func inferResize(c *InferContext) error {
	dt := c.inElem(0)
	xs := c.inShape(0)
	if xs == nil {
		c.setTensor(0, dt, nil)
		return nil
	}
	scalesIdx, sizesIdx := 2, 3
	if c.Opset < 11 {
		scalesIdx, sizesIdx = 1, -1
	}
	r := len(xs)
	axes := make([]int, r)
	for i := range axes {
		axes[i] = i
	}
	if a := Params[ResizeParams](c.Node, c.Opset).Axes; a != nil {
		norm, err := normAxes(a, r)
		if err != nil {
			return err
		}
		axes = norm
	}
	out := xs.Clone()
	if sizesIdx > 0 && c.has(sizesIdx) && c.lenOf1D(sizesIdx) != 0 {
		sizes, ok := c.intsIn(sizesIdx)
		if !ok {
			for _, a := range axes {
				out[a] = graph.UnknownDim()
			}
			c.setTensor(0, dt, out)
			return nil
		}
		if len(sizes) != len(axes) {
			return fmt.Errorf("sizes %v for %d axes", sizes, len(axes))
		}
		policy := Params[ResizeParams](c.Node, c.Opset).KeepAspectRatioPolicy
		if policy == "stretch" {
			for i, a := range axes {
				out[a] = graph.DimOf(sizes[i])
			}
			c.setTensor(0, dt, out)
			return nil
		}
		scale := math.Inf(1)
		if policy == "not_smaller" {
			scale = math.Inf(-1)
		}
		for i, a := range axes {
			if !xs[a].Known() {
				for _, a := range axes {
					out[a] = graph.UnknownDim()
				}
				c.setTensor(0, dt, out)
				return nil
			}
			s := float64(sizes[i]) / float64(xs[a].Value)
			if policy == "not_smaller" {
				scale = math.Max(scale, s)
			} else {
				scale = math.Min(scale, s)
			}
		}
		for _, a := range axes {
			out[a] = graph.DimOf(int64(scale*float64(xs[a].Value) + 0.5))
		}
		c.setTensor(0, dt, out)
		return nil
	}
	if !c.has(scalesIdx) {
		return fmt.Errorf("neither scales nor sizes given")
	}
	scales, ok := c.floatsIn(scalesIdx)
	if !ok {
		for _, a := range axes {
			out[a] = graph.UnknownDim()
		}
		c.setTensor(0, dt, out)
		return nil
	}
	if len(scales) != len(axes) {
		return fmt.Errorf("scales %v for %d axes", scales, len(axes))
	}
	for i, a := range axes {
		out[a] = scaledDim(xs[a], scales[i])
	}
	c.setTensor(0, dt, out)
	return nil
}

// inferCenterCropPad sets the listed axes to the sizes its shape input holds.
func inferCenterCropPad(c *InferContext) error {
	dt := c.inElem(0)
	xs := c.inShape(0)
	if xs == nil {
		c.setTensor(0, dt, nil)
		return nil
	}
	axes := Params[CenterCropPadParams](c.Node, c.Opset).Axes
	if axes == nil {
		for i := range xs {
			axes = append(axes, int64(i))
		}
	}
	norm, err := normAxes(axes, len(xs))
	if err != nil {
		return err
	}
	out := xs.Clone()
	sizes, ok := c.intsIn(1)
	if ok && len(sizes) != len(norm) {
		return fmt.Errorf("shape %v for %d axes", sizes, len(norm))
	}
	for i, a := range norm {
		if ok {
			out[a] = graph.DimOf(sizes[i])
		} else {
			out[a] = graph.UnknownDim()
		}
	}
	c.setTensor(0, dt, out)
	return nil
}

// inferCol2Im is [N, C, image_shape...] with C the input's second dimension
// divided by the block size.
func inferCol2Im(c *InferContext) error {
	dt := c.inElem(0)
	xs := c.inShape(0)
	image, ok1 := c.intsIn(1)
	block, ok2 := c.intsIn(2)
	n := c.lenOf1D(1)
	if ok1 {
		n = len(image)
	}
	if n < 0 {
		c.setTensor(0, dt, nil)
		return nil
	}
	out := graph.Shape{graph.UnknownDim(), graph.UnknownDim()}
	if len(xs) == 3 {
		out[0] = xs[0]
		if ok2 && xs[1].Known() {
			p := graph.NumElements(block)
			if p <= 0 || xs[1].Value%p != 0 {
				return fmt.Errorf("channels %d not divisible by block %v", xs[1].Value, block)
			}
			out[1] = graph.DimOf(xs[1].Value / p)
		}
	}
	if ok1 {
		out = append(out, dimsFromInts(image)...)
	} else {
		out = append(out, unknownShape(n)...)
	}
	c.setTensor(0, dt, out)
	return nil
}

// inferGridSample is [N, C, grid spatial dims...].
func inferGridSample(c *InferContext) error {
	dt := c.inElem(0)
	xs, gs := c.inShape(0), c.inShape(1)
	if len(gs) < 3 {
		c.setTensor(0, dt, nil)
		return nil
	}
	out := graph.Shape{gs[0], graph.UnknownDim()}
	if len(xs) >= 2 {
		out[1] = xs[1]
	}
	c.setTensor(0, dt, append(out, gs[1:len(gs)-1]...))
	return nil
}

// inferAffineGrid is [N, H, W, 2] or [N, D, H, W, 3] from the size input.
func inferAffineGrid(c *InferContext) error {
	dt := c.inElem(0)
	size, ok := c.intsIn(1)
	if !ok || (len(size) != 4 && len(size) != 5) {
		if n := c.lenOf1D(1); n == 4 || n == 5 {
			c.setTensor(0, dt, unknownShape(n))
		} else {
			c.setTensor(0, dt, nil)
		}
		return nil
	}
	out := append(graph.ShapeOf(size[0]), dimsFromInts(size[2:])...)
	c.setTensor(0, dt, append(out, graph.DimOf(int64(len(size)-2))))
	return nil
}

// inferRoiAlign is [num_rois, C, output_height, output_width].
func inferRoiAlign(c *InferContext) error {
	xs, rs := c.inShape(0), c.inShape(1)
	p := Params[RoiAlignParams](c.Node, c.Opset)
	out := graph.Shape{graph.UnknownDim(), graph.UnknownDim(), graph.DimOf(p.OutputHeight), graph.DimOf(p.OutputWidth)}
	if len(rs) == 2 {
		out[0] = rs[0]
	}
	if len(xs) == 4 {
		out[1] = xs[1]
	}
	c.setTensor(0, c.inElem(0), out)
	return nil
}

// inferNMS gives int64 [?, 3] selected indices.
func inferNMS(c *InferContext) error {
	c.setTensor(0, graph.Int64, graph.Shape{graph.UnknownDim(), graph.DimOf(3)})
	return nil
}

// inferRandom gives the shape attribute in dtype.
func inferRandom(c *InferContext) error {
	var dtype int64
	var shape []int64
	switch p := ParamsOf(c.Node, c.Opset).(type) {
	case *RandomNormalParams:
		dtype, shape = p.Dtype, p.Shape
	case *RandomUniformParams:
		dtype, shape = p.Dtype, p.Shape
	}
	c.setTensor(0, graph.DType(dtype), dimsFromInts(shape))
	return nil
}

// inferRandomLike keeps the input's shape, in dtype or, without one, the
// input's type.
func inferRandomLike(c *InferContext) error {
	var dtype *int64
	switch p := ParamsOf(c.Node, c.Opset).(type) {
	case *RandomNormalLikeParams:
		dtype = p.Dtype
	case *RandomUniformLikeParams:
		dtype = p.Dtype
	case *BernoulliParams:
		dtype = p.Dtype
	}
	dt := c.inElem(0)
	if dtype != nil {
		dt = graph.DType(*dtype)
	}
	c.setTensor(0, dt, c.inShape(0).Clone())
	return nil
}

// inferMultinomial is [batch, sample_size] in dtype (int32 by default).
func inferMultinomial(c *InferContext) error {
	batch := graph.UnknownDim()
	if xs := c.inShape(0); len(xs) == 2 {
		batch = xs[0]
	}
	p := Params[MultinomialParams](c.Node, c.Opset)
	c.setTensor(0, graph.DType(p.Dtype), graph.Shape{batch, graph.DimOf(p.SampleSize)})
	return nil
}

// inferWindow is a 1-D window of the length its scalar input holds.
func inferWindow(c *InferContext) error {
	dt := graph.DType(SignalWindowOf(c.Node, c.Opset).OutputDatatype)
	n := graph.UnknownDim()
	if v, ok := c.intsIn(0); ok && len(v) == 1 {
		n = graph.DimOf(v[0])
	}
	c.setTensor(0, dt, graph.Shape{n})
	return nil
}

// inferDet drops the two trailing (square) axes.
func inferDet(c *InferContext) error {
	xs := c.inShape(0)
	if xs == nil {
		c.setTensor(0, c.inElem(0), nil)
		return nil
	}
	if len(xs) < 2 {
		return fmt.Errorf("input of rank %d", len(xs))
	}
	c.setTensor(0, c.inElem(0), xs[:len(xs)-2].Clone())
	return nil
}

// inferDFT keeps the input's shape with a last axis of 2 (complex); the
// transformed axis takes dft_length, or half of it plus one when onesided.
func inferDFT(c *InferContext) error {
	dt := c.inElem(0)
	xs := c.inShape(0)
	if len(xs) < 2 {
		c.setTensor(0, dt, nil)
		return nil
	}
	p := Params[DFTParams](c.Node, c.Opset)
	axis := p.Axis
	if c.Opset >= 20 {
		axis = -2
		if c.has(2) {
			v, ok := c.intsIn(2)
			if !ok || len(v) != 1 {
				c.setTensor(0, dt, unknownShape(len(xs)))
				return nil
			}
			axis = v[0]
		}
	}
	a, err := normAxis(axis, len(xs)-1)
	if err != nil {
		return err
	}
	out := xs.Clone()
	out[len(out)-1] = graph.DimOf(2)
	if c.has(1) {
		v, ok := c.intsIn(1)
		if !ok || len(v) != 1 {
			out[a] = graph.UnknownDim()
			c.setTensor(0, dt, out)
			return nil
		}
		out[a] = graph.DimOf(v[0])
	}
	if p.Onesided != 0 && p.Inverse == 0 {
		if out[a].Known() {
			out[a] = graph.DimOf(out[a].Value/2 + 1)
		} else {
			out[a] = graph.UnknownDim()
		}
	}
	c.setTensor(0, dt, out)
	return nil
}

// inferEinsum follows the equation's labels (and ellipsis) to the output.
func inferEinsum(c *InferContext) error {
	dt := c.inElem(0)
	eq := strings.ReplaceAll(Params[EinsumParams](c.Node, c.Opset).Equation, " ", "")
	lhs, rhs, explicit := strings.Cut(eq, "->")
	terms := strings.Split(lhs, ",")
	if len(terms) != len(c.Node.Inputs) {
		return fmt.Errorf("equation %q has %d operands for %d inputs", eq, len(terms), len(c.Node.Inputs))
	}
	dims := map[rune]graph.Dim{}
	count := map[rune]int{}
	ellipsis := graph.Shape{}
	for i, term := range terms {
		xs := c.inShape(i)
		if xs == nil {
			c.setTensor(0, dt, nil)
			return nil
		}
		before, after, hasEll := strings.Cut(term, "...")
		labels := []rune(before + after)
		if (!hasEll && len(labels) != len(xs)) || len(labels) > len(xs) {
			return fmt.Errorf("operand %d: term %q for rank %d", i, term, len(xs))
		}
		nb := len([]rune(before))
		ne := len(xs) - len(labels)
		if hasEll {
			e, err := broadcast(ellipsis, xs[nb:nb+ne])
			if err != nil {
				return err
			}
			ellipsis = e
		}
		for j, l := range labels {
			d := xs[j]
			if j >= nb {
				d = xs[j+ne]
			}
			count[l]++
			if old, ok := dims[l]; ok {
				if old.Known() && d.Known() && old.Value == 1 {
					dims[l] = d
					continue
				}
				if d.Known() && d.Value == 1 {
					continue
				}
				u, err := unifyDim(old, d)
				if err != nil {
					return fmt.Errorf("label %q: %w", l, err)
				}
				dims[l] = u
			} else {
				dims[l] = d
			}
		}
	}
	if !explicit {
		var once []rune
		for l, n := range count {
			if n == 1 {
				once = append(once, l)
			}
		}
		sort.Slice(once, func(i, j int) bool { return once[i] < once[j] })
		rhs = "..." + string(once)
	}
	before, after, hasEll := strings.Cut(rhs, "...")
	out := graph.Shape{}
	for _, l := range before {
		d, ok := dims[l]
		if !ok {
			return fmt.Errorf("output label %q not among the inputs", l)
		}
		out = append(out, d)
	}
	if hasEll {
		out = append(out, ellipsis...)
	}
	for _, l := range after {
		d, ok := dims[l]
		if !ok {
			return fmt.Errorf("output label %q not among the inputs", l)
		}
		out = append(out, d)
	}
	c.setTensor(0, dt, out)
	return nil
}

// ResizeOrigin maps output coordinate o of an axis that Resize scales by
// scale from in to out elements to the input coordinate, by the
// coordinate_transformation_mode coord (half_pixel for an unknown one);
// roiLo and roiHi are the axis's region of interest for
// tf_crop_and_resize, whose coordinates outside the input extrap reports.
func ResizeOrigin(coord string, o, in, out int64, scale, roiLo, roiHi float64) (x float64, extrap bool) {
	fo, fin := float64(o), float64(in)
	outW := scale * fin
	switch coord {
	case "align_corners":
		if outW == 1 {
			return 0, false
		}
		return fo * (fin - 1) / (outW - 1), false
	case "asymmetric":
		return fo / scale, false
	case "tf_crop_and_resize":
		if outW == 1 {
			x = (roiHi - roiLo) * (fin - 1) / 2
		} else {
			x = fo * (roiHi - roiLo) * (fin - 1) / (outW - 1)
		}
		x += roiLo * (fin - 1)
		return x, x < 0 || x > fin-1
	case "pytorch_half_pixel":
		if outW == 1 {
			return -0.5, false
		}
		return (fo+0.5)/scale - 0.5, false
	case "half_pixel_symmetric":
		adjustment := float64(out) / outW
		offset := fin / 2 * (1 - adjustment)
		return offset + (fo+0.5)/scale - 0.5, false
	case "tf_half_pixel_for_nn":
		return (fo + 0.5) / scale, false
	}
	return (fo+0.5)/scale - 0.5, false
}
