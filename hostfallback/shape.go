package hostfallback

import (
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// Shape-only ops: the output holds the input's elements unchanged, under a
// new shape (Reshape, Flatten, Squeeze, Unsqueeze), or describes the shape
// (Shape, Size).

func init() {
	Register("Reshape", reshapeKernel)
	Register("Flatten", flattenKernel)
	Register("Squeeze", squeezeKernel)
	Register("Unsqueeze", unsqueezeKernel)
	Register("Shape", shapeKernel)
	Register("Size", sizeKernel)
}

// reshaped sets output 0 to x's elements under the given shape: a view
// sharing x's storage, as kernels never modify their inputs (the executor
// copies a view of an arena slot the output does not own).
func reshaped(c *Call, x *graph.Tensor, shape []int64) error {
	if err := c.Check(x.DType, shape); err != nil {
		return err
	}
	if graph.NumElements(shape) != x.NumElements() {
		return c.Errorf("cannot reshape %v (%d elements) to %v", x.Shape, x.NumElements(), shape)
	}
	c.Out[0] = &graph.Tensor{DType: x.DType, Shape: shape, Data: x.Data, Strings: x.Strings}
	return nil
}

func reshapeKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	var spec []int64
	if c.Opset < 5 {
		spec = ops.Params[ops.ReshapeParams](c.Node, c.Opset).Shape
	} else {
		s, err := inputTensor(c, 1)
		if err != nil {
			return err
		}
		if spec, err = s.Int64s(); err != nil {
			return c.Errorf("shape: %w", err)
		}
	}
	shape, err := reshapeTarget(c, x.Shape, spec, c.Opset >= 14 && ops.Params[ops.ReshapeParams](c.Node, c.Opset).Allowzero != 0)
	if err != nil {
		return err
	}
	return reshaped(c, x, shape)
}

// reshapeTarget resolves Reshape's shape argument against the input shape:
// 0 copies the input dimension (unless allowZero), -1 is inferred.
func reshapeTarget(c *Call, in, spec []int64, allowZero bool) ([]int64, error) {
	shape := make([]int64, len(spec))
	infer, known := -1, int64(1)
	for i, d := range spec {
		switch {
		case d == -1:
			if infer >= 0 {
				return nil, c.Errorf("shape %v has more than one -1", spec)
			}
			infer = i
			continue
		case d == 0 && !allowZero:
			if i >= len(in) {
				return nil, c.Errorf("shape %v copies dimension %d of a rank-%d input", spec, i, len(in))
			}
			d = in[i]
		case d < 0:
			return nil, c.Errorf("invalid dimension %d in shape %v", d, spec)
		}
		shape[i] = d
		if d > graph.NumElements(in) && graph.NumElements(in) > 0 {
			return nil, c.Errorf("shape %v does not fit input %v", spec, in)
		}
		known *= d
	}
	if infer >= 0 {
		total := graph.NumElements(in)
		if known == 0 || total%known != 0 {
			return nil, c.Errorf("cannot infer the -1 of shape %v for input %v", spec, in)
		}
		shape[infer] = total / known
	}
	return shape, nil
}

func flattenKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	axis := ops.AxisParamOf(c.Node, c.Opset).Axis
	r := int64(x.Rank())
	if axis < -r || axis > r {
		return c.Errorf("axis %d out of range for rank %d", axis, r)
	}
	if axis < 0 {
		axis += r
	}
	return reshaped(c, x, []int64{graph.NumElements(x.Shape[:axis]), graph.NumElements(x.Shape[axis:])})
}

func squeezeKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	axes, _, err := intsInput(c, 1)
	if err != nil {
		return err
	}
	// No axes, or an empty list, squeezes every axis of size 1.
	drop := make([]bool, x.Rank())
	if len(axes) > 0 {
		ax, err := resolveAxes(c, axes, x.Rank())
		if err != nil {
			return err
		}
		for _, a := range ax {
			if x.Shape[a] != 1 {
				return c.Errorf("cannot squeeze axis %d of size %d", a, x.Shape[a])
			}
			drop[a] = true
		}
	} else {
		for i, d := range x.Shape {
			drop[i] = d == 1
		}
	}
	shape := make([]int64, 0, x.Rank())
	for i, d := range x.Shape {
		if !drop[i] {
			shape = append(shape, d)
		}
	}
	return reshaped(c, x, shape)
}

func unsqueezeKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	axes, ok, err := intsInput(c, 1)
	if err != nil {
		return err
	}
	if !ok {
		return c.Errorf("axes missing")
	}
	r := x.Rank() + len(axes)
	ax, err := resolveAxes(c, axes, r)
	if err != nil {
		return err
	}
	inserted := make([]bool, r)
	for _, a := range ax {
		inserted[a] = true
	}
	shape := make([]int64, r)
	src := x.Shape
	for i := range shape {
		if inserted[i] {
			shape[i] = 1
		} else {
			shape[i], src = src[0], src[1:]
		}
	}
	return reshaped(c, x, shape)
}

func shapeKernel(c *Call) error {
	shape, err := inputShape(c, 0)
	if err != nil {
		return err
	}
	r := int64(len(shape))
	start, end := int64(0), r
	if c.Opset >= 15 {
		p := ops.Params[ops.ShapeParams](c.Node, c.Opset)
		start = clampShapeBound(p.Start, r)
		if p.End != nil {
			end = clampShapeBound(*p.End, r)
		}
	}
	n := max(end-start, 0)
	out := c.Output(0, graph.Int64, []int64{n})
	if n > 0 {
		copy(graph.View[int64](out), shape[start:end])
	}
	return nil
}

// clampShapeBound resolves a Shape start or end: negative counts from the
// back, then clamp to [0, r].
func clampShapeBound(v, r int64) int64 {
	if v < 0 {
		v += r
	}
	return min(max(v, 0), r)
}

func sizeKernel(c *Call) error {
	shape, err := inputShape(c, 0)
	if err != nil {
		return err
	}
	graph.View[int64](c.Output(0, graph.Int64, nil))[0] = graph.NumElements(shape)
	return nil
}

// inputShape returns the shape of input i, a tensor on the host or one a
// device holds (a Resident value that a Run keeps there): Shape and Size
// read no element (ops.TypeOnly).
func inputShape(c *Call, i int) ([]int64, error) {
	if i < len(c.In) && c.In[i] != nil {
		if t := c.In[i].ValueType(); t != nil && t.Kind == graph.TensorKind && t.Shape.Known() {
			return t.Shape.Ints(), nil
		}
	}
	return nil, c.Errorf("input %d missing or not a tensor", i)
}
