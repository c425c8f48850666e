package hostfallback

import (
	"fmt"

	"github.com/onnxvk/onnxvk/graph"
)

// Control flow: If and Loop (Scan is in control_scan.go). Their bodies run
// through Call.RunGraph, so a body sees the values of enclosing graphs.

func init() {
	Register("If", ifKernel)
	Register("Loop", loopKernel)
}

// scalarBool reads a one-element tensor as a condition.
func scalarBool(c *Call, v graph.Value, what string) (bool, error) {
	t, ok := v.(*graph.Tensor)
	if !ok || t.NumElements() != 1 || t.DType == graph.String {
		return false, c.Errorf("%s must be a one-element tensor, got %v", what, valueTypeOf(v))
	}
	return t.Float64At(0) != 0, nil
}

// valueTypeOf describes v for error messages, nil included.
func valueTypeOf(v graph.Value) *graph.Type {
	if v == nil {
		return nil
	}
	return v.ValueType()
}

func ifKernel(c *Call) error {
	if len(c.In) == 0 || c.In[0] == nil {
		return c.Errorf("input 0 (cond) missing")
	}
	cond, err := scalarBool(c, c.In[0], "cond")
	if err != nil {
		return err
	}
	name := "else_branch"
	if cond {
		name = "then_branch"
	}
	g := c.Node.AttrGraph(name)
	if g == nil {
		return c.Errorf("%s attribute missing", name)
	}
	outs, err := c.RunGraph(g, nil)
	if err != nil {
		return c.Errorf("%s: %w", name, err)
	}
	if len(outs) != len(c.Out) {
		return c.Errorf("%s has %d outputs, the node %d", name, len(outs), len(c.Out))
	}
	copy(c.Out, outs)
	return nil
}

// stackAxis stacks items, tensors of one type and shape, along a new axis
// at position axis (in [0, rank]) into a new heap tensor. elem describes the
// items when there are none (unknown dimensions count as 0).
func stackAxis(items []*graph.Tensor, axis int, elem *graph.Type) (*graph.Tensor, error) {
	if len(items) == 0 {
		if elem == nil || elem.Kind != graph.TensorKind || !elem.Elem.Valid() {
			return nil, fmt.Errorf("no iterations and no known element type to stack")
		}
		var shape []int64
		for _, d := range elem.Shape {
			shape = append(shape, max(d.Value, 0))
		}
		if axis > len(shape) {
			return nil, fmt.Errorf("axis %d out of range for rank %d", axis, len(shape)+1)
		}
		shape = append(append(append([]int64{}, shape[:axis]...), 0), shape[axis:]...)
		return graph.NewTensor(elem.Elem, shape), nil
	}
	first := items[0]
	if axis > first.Rank() {
		return nil, fmt.Errorf("axis %d out of range for rank %d", axis, first.Rank()+1)
	}
	for k, t := range items {
		if t.DType != first.DType || !equalShapes(t.Shape, first.Shape) {
			return nil, fmt.Errorf("iteration %d gives %s, iteration 0 %s", k, t.ValueType(), first.ValueType())
		}
	}
	l := int64(len(items))
	shape := append(append(append([]int64{}, first.Shape[:axis]...), l), first.Shape[axis:]...)
	out := graph.NewTensor(first.DType, shape)
	dst := outCells(out)
	outer, inner := graph.NumElements(first.Shape[:axis]), graph.NumElements(first.Shape[axis:])
	for k, t := range items {
		src := inCells(t)
		for o := range outer {
			copyCells(dst, (o*l+int64(k))*inner, src, o*inner, inner)
		}
	}
	storeCells(out, dst)
	return out, nil
}

// equalShapes reports whether two shapes are the same.
func equalShapes(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// loopKernel runs the body while the iteration count is below M (when
// given) and the condition holds (when given), passing the loop-carried
// values (tensors, sequences or optionals) from one iteration to the next
// and stacking the scan outputs along a new leading axis.
func loopKernel(c *Call) error {
	body := c.Node.AttrGraph("body")
	if body == nil {
		return c.Errorf("body attribute missing")
	}
	trips, hasTrips := int64(0), false
	if len(c.In) > 0 && c.In[0] != nil {
		m, ok := c.In[0].(*graph.Tensor)
		if !ok || m.NumElements() != 1 || !m.DType.IsInt() {
			return c.Errorf("M must be a one-element integer tensor, got %v", valueTypeOf(c.In[0]))
		}
		trips, hasTrips = int64(m.Float64At(0)), true
		if m.DType == graph.Int64 {
			trips = graph.View[int64](m)[0]
		}
	}
	cond := true
	if len(c.In) > 1 && c.In[1] != nil {
		var err error
		if cond, err = scalarBool(c, c.In[1], "cond"); err != nil {
			return err
		}
	}
	var carried []graph.Value
	if len(c.In) > 2 {
		carried = append(carried, c.In[2:]...)
	}
	n := len(carried)
	if len(c.Out) < n {
		return c.Errorf("%d outputs for %d loop-carried values", len(c.Out), n)
	}
	if len(body.Outputs) != 1+len(c.Out) {
		return c.Errorf("body has %d outputs, want %d (cond, %d loop-carried, %d scan)", len(body.Outputs), 1+len(c.Out), n, len(c.Out)-n)
	}
	scans := make([][]*graph.Tensor, len(c.Out)-n)
	scanBytes := make([]int64, len(scans))
	args := make([]graph.Value, 2+n)
	for it := int64(0); cond && (!hasTrips || it < trips); it++ {
		args[0] = graph.Scalar(graph.Int64, it)
		args[1] = graph.Scalar(graph.Bool, cond)
		copy(args[2:], carried)
		outs, err := c.RunGraph(body, args)
		if err != nil {
			return c.Errorf("body, iteration %d: %w", it, err)
		}
		if cond, err = scalarBool(c, outs[0], "the body's cond output"); err != nil {
			return err
		}
		copy(carried, outs[1:1+n])
		for j, v := range outs[1+n:] {
			t, ok := v.(*graph.Tensor)
			if !ok {
				return c.Errorf("scan output %d is a %v, not a tensor", j, valueTypeOf(v))
			}
			scanBytes[j] += tensorBytes(t)
			if err := c.CheckBytes(scanBytes[j], fmt.Sprintf("scan output %d after %d iterations", j, it+1)); err != nil {
				return err
			}
			scans[j] = append(scans[j], t)
		}
	}
	for i, v := range carried {
		if v == nil {
			return c.Errorf("loop-carried value %d is missing", i)
		}
		c.Out[i] = v
	}
	for j, items := range scans {
		t, err := stackAxis(items, 0, body.Outputs[1+n+j].Type)
		if err != nil {
			return c.Errorf("scan output %d: %w", j, err)
		}
		c.Out[n+j] = t
	}
	return nil
}
