package hostfallback

import (
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// Generated tensors: Constant, ConstantOfShape, Range, EyeLike.

func init() {
	Register("Constant", constantKernel)
	Register("ConstantOfShape", constantOfShapeKernel)
	Register("Range", rangeKernel)
	Register("EyeLike", eyeLikeKernel)
}

func constantKernel(c *Call) error {
	if len(c.Node.Attrs) != 1 {
		return c.Errorf("exactly one value attribute expected, got %d", len(c.Node.Attrs))
	}
	var a *graph.Attribute
	for _, v := range c.Node.Attrs {
		a = v
	}
	switch {
	case a.Name == "value" && a.Type == graph.AttrTensor && a.T != nil:
		copyTensor(c.Output(0, a.T.DType, a.T.Shape), a.T)
	case a.Name == "sparse_value" && a.Type == graph.AttrSparseTensor && a.Sparse != nil:
		return densify(c, a.Sparse)
	case a.Name == "value_float" && a.Type == graph.AttrFloat:
		graph.View[float32](c.Output(0, graph.Float, nil))[0] = a.F
	case a.Name == "value_floats" && a.Type == graph.AttrFloats:
		copy(graph.View[float32](c.Output(0, graph.Float, []int64{int64(len(a.Floats))})), a.Floats)
	case a.Name == "value_int" && a.Type == graph.AttrInt:
		graph.View[int64](c.Output(0, graph.Int64, nil))[0] = a.I
	case a.Name == "value_ints" && a.Type == graph.AttrInts:
		copy(graph.View[int64](c.Output(0, graph.Int64, []int64{int64(len(a.Ints))})), a.Ints)
	case a.Name == "value_string" && a.Type == graph.AttrString:
		c.Output(0, graph.String, nil).Strings[0] = string(a.S)
	case a.Name == "value_strings" && a.Type == graph.AttrStrings:
		out := c.Output(0, graph.String, []int64{int64(len(a.Strings))})
		for i, s := range a.Strings {
			out.Strings[i] = string(s)
		}
	default:
		return c.Errorf("unknown value attribute %q of type %s", a.Name, a.Type)
	}
	return nil
}

// densify writes the sparse tensor sp as a dense output 0.
func densify(c *Call, sp *graph.SparseTensor) error {
	vals, ind := sp.Values, sp.Indices
	if vals == nil || ind == nil {
		return c.Errorf("sparse_value lacks values or indices")
	}
	nnz := vals.NumElements()
	idx, err := indexValues(c, ind)
	if err != nil {
		return err
	}
	offs := make([]int64, nnz)
	total := graph.NumElements(sp.Dims)
	switch {
	case ind.Rank() == 1 && int64(len(idx)) == nnz:
		for i, v := range idx {
			if v < 0 || v >= total {
				return c.Errorf("sparse index %d out of range for shape %v", v, sp.Dims)
			}
			offs[i] = v
		}
	case ind.Rank() == 2 && ind.Shape[0] == nnz && ind.Shape[1] == int64(len(sp.Dims)):
		strides := graph.Strides(sp.Dims)
		r := int64(len(sp.Dims))
		for i := range offs {
			for k, v := range idx[int64(i)*r : int64(i+1)*r] {
				if v < 0 || v >= sp.Dims[k] {
					return c.Errorf("sparse index %v out of range for shape %v", idx[int64(i)*r:int64(i+1)*r], sp.Dims)
				}
				offs[i] += v * strides[k]
			}
		}
	default:
		return c.Errorf("sparse indices %v do not fit %d values of shape %v", ind.Shape, nnz, sp.Dims)
	}
	if err := c.Check(vals.DType, sp.Dims); err != nil {
		return err
	}
	out := c.Output(0, vals.DType, sp.Dims)
	dst := outCells(out)
	scatterCells(dst, inCells(vals), offs, 1)
	storeCells(out, dst)
	return nil
}

func constantOfShapeKernel(c *Call) error {
	s, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	shape, err := s.Int64s()
	if err != nil {
		return c.Errorf("shape: %w", err)
	}
	value := graph.Scalar(graph.Float, float32(0))
	if v := c.Node.AttrTensor("value"); v != nil {
		if v.NumElements() != 1 {
			return c.Errorf("value must hold one element, has shape %v", v.Shape)
		}
		value = v
	}
	if err := c.Check(value.DType, shape); err != nil {
		return err
	}
	out := c.Output(0, value.DType, shape)
	dst := outCells(out)
	fillCells(dst, 0, graph.NumElements(shape), inCells(value), 0)
	storeCells(out, dst)
	return nil
}

func rangeKernel(c *Call) error {
	var in [3]*graph.Tensor
	for i := range in {
		t, err := inputTensor(c, i)
		if err != nil {
			return err
		}
		if t.NumElements() != 1 || t.DType != c.Tensor(0).DType {
			return c.Errorf("start, limit and delta must be single values of one type")
		}
		in[i] = t
	}
	dt := in[0].DType
	if dt.IsInt() {
		var v [3]int64
		for i, t := range in {
			x, err := t.Int64s()
			if err != nil {
				return c.Errorf("%w", err)
			}
			v[i] = x[0]
		}
		start, limit, delta := v[0], v[1], v[2]
		n, err := ops.RangeLength(start, limit, delta)
		if err != nil {
			return c.Errorf("%w", err)
		}
		if err := c.Check(dt, []int64{n}); err != nil {
			return err
		}
		out := c.Output(0, dt, []int64{n})
		if dt == graph.Int64 {
			o := graph.View[int64](out)[:n]
			for i := range o {
				o[i] = start + int64(i)*delta
			}
			return nil
		}
		vals := make([]float64, n)
		for i := range vals {
			vals[i] = float64(start + int64(i)*delta)
		}
		fromFloat64s(out, vals)
		return nil
	}
	if dt != graph.Float && dt != graph.Double {
		return c.Unsupported("Range on %s", dt)
	}
	start, limit, delta := in[0].Float64At(0), in[1].Float64At(0), in[2].Float64At(0)
	n, err := ops.RangeLengthFloat(start, limit, delta)
	if err != nil {
		return c.Errorf("%w", err)
	}
	if err := c.Check(dt, []int64{n}); err != nil {
		return err
	}
	if dt == graph.Float {
		o := graph.View[float32](c.Output(0, dt, []int64{n}))[:n]
		s, d := float32(start), float32(delta)
		for i := range o {
			o[i] = s + float32(i)*d
		}
		return nil
	}
	o := graph.View[float64](c.Output(0, dt, []int64{n}))[:n]
	for i := range o {
		o[i] = start + float64(i)*delta
	}
	return nil
}

func eyeLikeKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	if x.Rank() != 2 {
		return c.Errorf("input must be 2-D, has shape %v", x.Shape)
	}
	dt := x.DType
	if a := c.Node.Attr("dtype"); a != nil && a.Type == graph.AttrInt {
		dt = graph.DType(a.I)
	}
	one, ok := scalarBytes(dt, 1)
	if !ok {
		return c.Unsupported("EyeLike of %s", dt)
	}
	rows, cols := x.Shape[0], x.Shape[1]
	k := ops.Params[ops.EyeLikeParams](c.Node, c.Opset).K
	out := c.Output(0, dt, x.Shape)
	clear(out.Data)
	size := int64(len(one))
	for i := max(0, -k); i < rows && i+k < cols; i++ {
		copy(out.Data[(i*cols+i+k)*size:], one)
	}
	return nil
}
