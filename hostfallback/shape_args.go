package hostfallback

import (
	"github.com/onnxvk/onnxvk/graph"
)

// resolveAxis maps axis from [-rank, rank) to [0, rank), or fails naming
// the node.
func resolveAxis(c *Call, axis int64, rank int) (int, error) {
	if axis < -int64(rank) || axis >= int64(rank) {
		return 0, c.Errorf("axis %d out of range for rank %d", axis, rank)
	}
	if axis < 0 {
		axis += int64(rank)
	}
	return int(axis), nil
}

// resolveAxes maps each axis from [-rank, rank) to [0, rank) and refuses
// repeated axes.
func resolveAxes(c *Call, axes []int64, rank int) ([]int, error) {
	out := make([]int, len(axes))
	seen := make([]bool, rank)
	for i, a := range axes {
		ax, err := resolveAxis(c, a, rank)
		if err != nil {
			return nil, err
		}
		if seen[ax] {
			return nil, c.Errorf("axis %d repeated", a)
		}
		seen[ax] = true
		out[i] = ax
	}
	return out, nil
}

// inputTensor returns input i as a tensor, or an error when it is absent or
// not a tensor.
func inputTensor(c *Call, i int) (*graph.Tensor, error) {
	if t := c.Tensor(i); t != nil {
		return t, nil
	}
	return nil, c.Errorf("input %d missing or not a tensor", i)
}

// intsInput returns optional input i, an integer tensor, as int64s; ok is
// false when the input is absent.
func intsInput(c *Call, i int) (vals []int64, ok bool, err error) {
	t := c.Tensor(i)
	if t == nil {
		return nil, false, nil
	}
	vals, err = t.Int64s()
	if err != nil {
		return nil, true, c.Errorf("input %d: %w", i, err)
	}
	return vals, true, nil
}

// indexValues returns an integer index tensor's values as int64s. Int64
// data is returned without copying and must not be modified.
func indexValues(c *Call, t *graph.Tensor) ([]int64, error) {
	switch t.DType {
	case graph.Int64:
		return graph.View[int64](t)[:t.NumElements()], nil
	case graph.Int32:
		src := graph.View[int32](t)
		out := make([]int64, t.NumElements())
		for i := range out {
			out[i] = int64(src[i])
		}
		return out, nil
	}
	vals, err := t.Int64s()
	if err != nil {
		return nil, c.Errorf("indices: %w", err)
	}
	return vals, nil
}

// wantOutput reports whether the node asks for output i.
func wantOutput(c *Call, i int) bool {
	return i < len(c.Out) && (i >= len(c.Node.Outputs) || c.Node.Outputs[i] != "")
}

// copyTensor copies src's elements into dst, a tensor of the same type and
// element count.
func copyTensor(dst, src *graph.Tensor) {
	if src.DType == graph.String {
		copy(dst.Strings, src.Strings)
		return
	}
	copy(dst.Data, src.Data)
}
