package ops

import (
	"fmt"
	"slices"

	"github.com/onnxvk/onnxvk/graph"
)

// Shape-producing and shape-consuming ops: Shape, Size, Constant,
// ConstantOfShape, Range, Reshape, Flatten, Expand. They propagate small
// values so that shape computations resolve at plan time.

func init() {
	setRule(inferShape, "Shape")
	setRule(inferSize, "Size")
	setRule(inferConstant, "Constant")
	setRule(inferConstantOfShape, "ConstantOfShape")
	setRule(inferRange, "Range")
	setRule(inferReshape, "Reshape")
	setRule(inferFlatten, "Flatten")
	setProps(View, "Reshape", "Flatten")
	setProps(TypeOnly, "Shape", "Size")
	setRule(inferExpand, "Expand")
}

// inferShape gives the 1-D int64 shape of its input (from opset 15, the
// dimensions from start to end), with its value when the dimensions are known.
func inferShape(c *InferContext) error {
	xs := c.inShape(0)
	if xs == nil {
		c.setTensor(0, graph.Int64, graph.Shape{graph.UnknownDim()})
		return nil
	}
	r := int64(len(xs))
	clamp := func(v int64) int64 {
		if v < 0 {
			v += r
		}
		return min(max(v, 0), r)
	}
	p := Params[ShapeParams](c.Node, c.Opset)
	start := clamp(p.Start)
	end := r
	if p.End != nil {
		end = clamp(*p.End)
	}
	end = max(end, start)
	dims := xs[start:end]
	c.setTensor(0, graph.Int64, graph.ShapeOf(end-start))
	c.setSym(0, graph.Int64, symShape(dims))
	return nil
}

// inferSize gives the int64 scalar element count.
func inferSize(c *InferContext) error {
	c.setTensor(0, graph.Int64, graph.Shape{})
	if xs := c.inShape(0); xs.Known() {
		c.setValue(0, int64Tensor(nil, []int64{graph.NumElements(xs.Ints())}))
	}
	return nil
}

// inferConstant gives the value of whichever value attribute is set.
func inferConstant(c *InferContext) error {
	for _, a := range c.Node.Attrs {
		if a == nil {
			continue
		}
		var t *graph.Tensor
		switch a.Name {
		case "value":
			if a.T == nil {
				return fmt.Errorf("attribute value holds no tensor")
			}
			t = a.T
		case "sparse_value":
			if a.Sparse == nil || a.Sparse.Values == nil {
				return fmt.Errorf("attribute sparse_value holds no tensor")
			}
			c.setTensor(0, a.Sparse.Values.DType, graph.ShapeOf(a.Sparse.Dims...))
			return nil
		case "value_float":
			t = graph.Scalar(graph.Float, a.F)
		case "value_floats":
			t, _ = graph.FromSlice(graph.Float, []int64{int64(len(a.Floats))}, a.Floats)
		case "value_int":
			t = int64Tensor(nil, []int64{a.I})
		case "value_ints":
			t = int64Tensor([]int64{int64(len(a.Ints))}, a.Ints)
		case "value_string":
			t = &graph.Tensor{DType: graph.String, Shape: []int64{}, Strings: []string{string(a.S)}}
		case "value_strings":
			t = &graph.Tensor{DType: graph.String, Shape: []int64{int64(len(a.Strings))}}
			for _, s := range a.Strings {
				t.Strings = append(t.Strings, string(s))
			}
		default:
			continue
		}
		c.setValue(0, t)
		return nil
	}
	return fmt.Errorf("no value attribute")
}

// inferConstantOfShape gives a tensor of the shape its input holds, filled
// with the value attribute (float32 0 by default).
func inferConstantOfShape(c *InferContext) error {
	fill := c.Node.AttrTensor("value")
	dt := graph.Float
	if fill != nil {
		if fill.NumElements() != 1 {
			return fmt.Errorf("value attribute has %d elements, want 1", fill.NumElements())
		}
		dt = fill.DType
	}
	shape, ok := c.intsIn(0)
	if !ok {
		if dims, ok := c.symIn(0).dims(); ok {
			c.setTensor(0, dt, dims)
		} else if n := c.lenOf1D(0); n >= 0 {
			c.setTensor(0, dt, unknownShape(n))
		} else {
			c.setTensor(0, dt, nil)
		}
		return nil
	}
	for _, d := range shape {
		if d < 0 {
			return fmt.Errorf("negative dimension in shape %v", shape)
		}
	}
	c.setTensor(0, dt, graph.ShapeOf(shape...))
	if n := graph.NumElements(shape); n <= maxValueElems && dt != graph.String && dt.Bits() >= 8 {
		if fill == nil {
			c.setValue(0, graph.NewTensor(dt, shape))
			return nil
		}
		c.setValue(0, takeElems(fill, shape, make([]int, n)))
	}
	return nil
}

// inferRange gives the 1-D sequence start, start+delta, ... below limit.
func inferRange(c *InferContext) error {
	dt := c.inElem(0)
	start, ok1 := decode(c.val(0))
	limit, ok2 := decode(c.val(1))
	delta, ok3 := decode(c.val(2))
	if !ok1 || !ok2 || !ok3 || start.len() != 1 || limit.len() != 1 || delta.len() != 1 {
		// Range(0, n, 1) of a symbolic n (arange over a dimension, as
		// PyTorch exports a causal mask's rows) has n elements.
		n := graph.UnknownDim()
		if lim := c.symIn(1); ok1 && ok3 && lim != nil && len(lim.elems) == 1 && start.len() == 1 && delta.len() == 1 &&
			!start.isFloat() && start.i[0] == 0 && delta.i[0] == 1 {
			n = lim.elems[0].dim()
		}
		c.setTensor(0, dt, graph.Shape{n})
		return nil
	}
	if limit.dt != start.dt || delta.dt != start.dt {
		return fmt.Errorf("start %s, limit %s and delta %s are not of one type", start.dt, limit.dt, delta.dt)
	}
	var (
		n   int64
		err error
	)
	if start.isFloat() {
		n, err = RangeLengthFloat(start.float(0), limit.float(0), delta.float(0))
	} else {
		n, err = RangeLength(start.i[0], limit.i[0], delta.i[0])
	}
	if err != nil {
		return err
	}
	c.setTensor(0, start.dt, graph.ShapeOf(n))
	if n > maxValueElems {
		return nil
	}
	out := newVals(start.dt, []int64{n})
	for k := range int(n) {
		if start.isFloat() {
			out.setFloat(k, start.float(0)+float64(k)*delta.float(0))
		} else {
			out.setInt(k, start.i[0]+int64(k)*delta.i[0])
		}
	}
	c.setValue(0, out.tensor())
	return nil
}

// reshapeDims resolves a Reshape target against the input shape: 0 copies
// the input dimension (unless allowzero), -1 takes what is left.
func reshapeDims(in graph.Shape, target []symElem, allowZero bool) (graph.Shape, error) {
	out := make(graph.Shape, len(target))
	infer := -1
	for i, e := range target {
		v := e.v
		switch {
		case !e.known():
			out[i] = e.dim()
		case v == -1:
			if infer >= 0 {
				return nil, fmt.Errorf("more than one -1 in shape %v", out)
			}
			infer = i
		case v == 0 && !allowZero:
			if in == nil {
				out[i] = graph.UnknownDim()
			} else if i < len(in) {
				out[i] = in[i]
			} else {
				return nil, fmt.Errorf("0 at axis %d copies beyond input rank %d", i, len(in))
			}
		case v < 0:
			return nil, fmt.Errorf("invalid dimension %d at axis %d", v, i)
		default:
			out[i] = graph.DimOf(v)
		}
	}
	if infer < 0 {
		if in.Known() && out.Known() && graph.NumElements(in.Ints()) != graph.NumElements(out.Ints()) {
			return nil, fmt.Errorf("cannot reshape %v to %v", in, out)
		}
		return out, nil
	}
	out[infer] = graph.UnknownDim()
	if in == nil {
		return out, nil
	}
	// Cancel the dimensions common to input and output; what is left of
	// the input, divided by what is left of the output, is the -1.
	rest := map[string]int{}
	inKnown, unknownIn := int64(1), 0
	for _, d := range in {
		switch {
		case d.Known():
			inKnown *= d.Value
		case d.Param != "":
			rest[d.Param]++
		default:
			unknownIn++
		}
	}
	outKnown := int64(1)
	for i, d := range out {
		switch {
		case i == infer:
		case d.Known():
			outKnown *= d.Value
		case d.Param != "" && rest[d.Param] > 0:
			rest[d.Param]--
		default:
			return out, nil
		}
	}
	var left []string
	for p, n := range rest {
		for range n {
			left = append(left, p)
		}
	}
	switch {
	case unknownIn > 0 || len(left) > 1:
	case len(left) == 0:
		if outKnown == 0 || inKnown%outKnown != 0 {
			return nil, fmt.Errorf("cannot reshape %v to %v with -1 at axis %d", in, out, infer)
		}
		out[infer] = graph.DimOf(inKnown / outKnown)
	case inKnown == outKnown:
		out[infer] = graph.SymDim(left[0])
	}
	return out, nil
}

// inferReshape is Reshape with the shape input (or, in opset 1, attribute).
func inferReshape(c *InferContext) error {
	dt := c.inElem(0)
	p := Params[ReshapeParams](c.Node, c.Opset)
	var target *symTensor
	if c.Opset < 5 {
		if shape := p.Shape; c.Node.Attr("shape") != nil {
			target = &symTensor{shape: []int64{int64(len(shape))}}
			for _, v := range shape {
				target.elems = append(target.elems, symElem{v: v})
			}
		}
	} else {
		target = c.symIn(1)
	}
	if target == nil || len(target.shape) != 1 {
		if n := c.lenOf1D(1); n >= 0 {
			c.setTensor(0, dt, unknownShape(n))
		} else {
			c.setTensor(0, dt, nil)
		}
		return nil
	}
	s, err := reshapeDims(c.inShape(0), target.elems, p.Allowzero != 0)
	if err != nil {
		return err
	}
	c.setTensor(0, dt, s)
	reshapeValue(c, dt, s)
	return nil
}

// reshapeValue gives output 0 the known or symbolic value of input 0 in
// the new shape.
func reshapeValue(c *InferContext, dt graph.DType, s graph.Shape) {
	if !s.Known() {
		return
	}
	if v := c.val(0); small(v) {
		if graph.NumElements(s.Ints()) == v.NumElements() {
			c.setValue(0, reshaped(v, s.Ints()))
		}
		return
	}
	c.setSym(0, dt, symReshape(c.symIn(0), s))
}

// inferFlatten gives [prod(d[:axis]), prod(d[axis:])].
func inferFlatten(c *InferContext) error {
	dt := c.inElem(0)
	xs := c.inShape(0)
	if xs == nil {
		c.setTensor(0, dt, unknownShape(2))
		return nil
	}
	given := Params[FlattenParams](c.Node, c.Opset).Axis
	axis := given
	if axis < 0 {
		axis += int64(len(xs))
	}
	if axis < 0 || axis > int64(len(xs)) {
		return fmt.Errorf("axis %d out of range for rank %d", given, len(xs))
	}
	s := graph.Shape{shapeProduct(xs[:axis]), shapeProduct(xs[axis:])}
	c.setTensor(0, dt, s)
	reshapeValue(c, dt, s)
	return nil
}

// inferExpand broadcasts the input to the shape its second input holds.
func inferExpand(c *InferContext) error {
	dt := c.inElem(0)
	if shape, ok := c.intsIn(1); ok && slices.ContainsFunc(shape, func(d int64) bool { return d < 0 }) {
		return fmt.Errorf("shape %v has a negative dimension", shape)
	}
	target, ok := c.symIn(1).dims()
	if !ok {
		n := c.lenOf1D(1)
		if xs := c.inShape(0); n >= 0 && xs != nil {
			c.setTensor(0, dt, unknownShape(max(n, len(xs))))
		} else {
			c.setTensor(0, dt, nil)
		}
		return nil
	}
	s, err := broadcast(c.inShape(0), target)
	if err != nil {
		return err
	}
	c.setTensor(0, dt, s)
	if v := c.val(0); small(v) && s.Known() && graph.NumElements(s.Ints()) <= maxValueElems {
		c.setValue(0, takeElems(v, s.Ints(), broadcastIndex(s.Ints(), v.Shape)))
	}
	return nil
}
