package hostfallback

import (
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// Joining and splitting along an axis: Concat and Split.

func init() {
	Register("Concat", concatKernel)
	Register("Split", splitKernel)
}

func concatKernel(c *Call) error {
	if len(c.In) == 0 {
		return c.Errorf("no inputs")
	}
	ins := make([]*graph.Tensor, len(c.In))
	for i := range ins {
		t, err := inputTensor(c, i)
		if err != nil {
			return err
		}
		ins[i] = t
	}
	first := ins[0]
	if c.Opset >= 4 && c.Node.Attr("axis") == nil {
		return c.Errorf("axis attribute missing")
	}
	axis, err := resolveAxis(c, ops.AxisParamOf(c.Node, c.Opset).Axis, first.Rank())
	if err != nil {
		return err
	}
	shape := append([]int64{}, first.Shape...)
	shape[axis] = 0
	for _, t := range ins {
		if t.DType != first.DType || t.Rank() != first.Rank() {
			return c.Errorf("input %s does not match %s", t.ValueType(), first.ValueType())
		}
		for d := range shape {
			if d != axis && t.Shape[d] != first.Shape[d] {
				return c.Errorf("input shape %v does not match %v off axis %d", t.Shape, first.Shape, axis)
			}
		}
		shape[axis] += t.Shape[axis]
	}
	// Every element is copied from an input: byte-sized ones need no
	// zero-fill first (sub-byte ones are packed into whole bytes).
	var out *graph.Tensor
	if first.DType == graph.String || first.DType.Bits() < 8 {
		out = c.Output(0, first.DType, shape)
	} else {
		out = c.OutputUninit(0, first.DType, shape)
	}
	dst := outCells(out)
	outer, inner := graph.NumElements(shape[:axis]), graph.NumElements(shape[axis+1:])
	row := shape[axis] * inner
	off := int64(0)
	for _, t := range ins {
		block := t.Shape[axis] * inner
		if outer == 1 && inPlace(out, t, off) {
			// Its producer wrote it where the output holds it (see
			// planner.BufferPart).
			off += block
			continue
		}
		src := inCells(t)
		o := off
		c.Threads.For(int(outer), int(max(1, 16384/max(block, 1))), func(lo, hi int) {
			for i := int64(lo); i < int64(hi); i++ {
				copyCells(dst, i*row+o, src, i*block, block)
			}
		})
		off += block
	}
	storeCells(out, dst)
	return nil
}

// inPlace reports whether input t of a Concat already lies in output out
// from element at on.
func inPlace(out, t *graph.Tensor, at int64) bool {
	if out.DType == graph.String || out.DType.Bits() < 8 || len(t.Data) == 0 {
		return false
	}
	b := at * int64(out.DType.Size())
	return b+int64(len(t.Data)) <= int64(len(out.Data)) && &out.Data[b] == &t.Data[0]
}

func splitKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	axis, err := resolveAxis(c, ops.AxisParamOf(c.Node, c.Opset).Axis, x.Rank())
	if err != nil {
		return err
	}
	dim := x.Shape[axis]
	sizes, err := splitSizes(c, dim)
	if err != nil {
		return err
	}
	outer, inner := graph.NumElements(x.Shape[:axis]), graph.NumElements(x.Shape[axis+1:])
	src := inCells(x)
	off := int64(0)
	for i, n := range sizes {
		if !wantOutput(c, i) {
			off += n * inner
			continue
		}
		shape := append([]int64{}, x.Shape...)
		shape[axis] = n
		out := c.Output(i, x.DType, shape)
		dst := outCells(out)
		block := n * inner
		for j := range outer {
			copyCells(dst, j*block, src, j*dim*inner+off, block)
		}
		storeCells(out, dst)
		off += block
	}
	return nil
}

// splitSizes returns the size of each of Split's outputs along an axis of
// length dim: given by the split input, else equal parts, the last one
// smaller when dim does not divide evenly.
func splitSizes(c *Call, dim int64) ([]int64, error) {
	split, _, err := intsInput(c, 1)
	if err != nil {
		return nil, err
	}
	if len(split) > 0 {
		if len(split) != len(c.Out) {
			return nil, c.Errorf("split %v for %d outputs", split, len(c.Out))
		}
		sum := int64(0)
		for _, s := range split {
			if s < 0 || s > dim {
				return nil, c.Errorf("split size out of range in %v", split)
			}
			sum += s
		}
		if sum != dim {
			return nil, c.Errorf("split %v does not add up to the axis length %d", split, dim)
		}
		return split, nil
	}
	n := int64(len(c.Out))
	if a := c.Node.Attr("num_outputs"); a != nil && a.I != n {
		return nil, c.Errorf("num_outputs %d but %d outputs", a.I, n)
	}
	if n == 0 {
		return nil, c.Errorf("no outputs")
	}
	chunk := (dim + n - 1) / n
	last := dim - chunk*(n-1)
	if last < 0 {
		return nil, c.Errorf("cannot split an axis of length %d into %d parts", dim, n)
	}
	sizes := make([]int64, n)
	for i := range sizes {
		sizes[i] = chunk
	}
	sizes[n-1] = last
	return sizes, nil
}
