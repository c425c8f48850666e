package hostfallback

import (
	"fmt"
	"unsafe"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// Sequences and optionals: SequenceEmpty, SequenceConstruct, SequenceInsert,
// SequenceAt, SequenceErase, SequenceLength, SplitToSequence,
// ConcatFromSequence, SequenceMap, Optional, OptionalHasElement and
// OptionalGetElement.
//
// Invariant: every tensor held by a sequence or an optional made here is a
// heap tensor of its own (inputs are cloned on the way in, since they may
// live in an executor arena whose slot is reused), and sequences are never
// changed in place, so kernels may share items between sequences.

func init() {
	Register("SequenceEmpty", sequenceEmptyKernel)
	Register("SequenceConstruct", sequenceConstructKernel)
	Register("SequenceInsert", sequenceInsertKernel)
	Register("SequenceAt", sequenceAtKernel)
	Register("SequenceErase", sequenceEraseKernel)
	Register("SequenceLength", sequenceLengthKernel)
	Register("SplitToSequence", splitToSequenceKernel)
	Register("ConcatFromSequence", concatFromSequenceKernel)
	Register("SequenceMap", sequenceMapKernel)
	Register("Optional", optionalKernel)
	Register("OptionalHasElement", optionalHasElementKernel)
	Register("OptionalGetElement", optionalGetElementKernel)
}

// heapValue returns v with every tensor at its top level copied to the heap
// (sequences and optionals made by kernels already hold heap tensors).
func heapValue(v graph.Value) graph.Value {
	if t, ok := v.(*graph.Tensor); ok {
		return t.Clone()
	}
	return v
}

// inputSequence returns input i as a sequence.
func inputSequence(c *Call, i int) (*graph.Sequence, error) {
	if i < len(c.In) {
		if s, ok := c.In[i].(*graph.Sequence); ok {
			return s, nil
		}
	}
	return nil, c.Errorf("input %d missing or not a sequence", i)
}

// tensorElem returns the element type of a sequence of tensors of dtype dt.
func tensorElem(dt graph.DType) *graph.Type { return graph.TensorType(dt, nil) }

// checkElem refuses a tensor whose element type differs from the
// sequence's.
func checkElem(c *Call, s *graph.Sequence, t *graph.Tensor) error {
	if s.Elem != nil && s.Elem.Kind == graph.TensorKind && s.Elem.Elem != graph.Undefined && s.Elem.Elem != t.DType {
		return c.Errorf("a %s tensor in a sequence of %s", t.DType, s.Elem)
	}
	return nil
}

// position reads the optional position input i, a scalar integer; def is
// used when it is absent. The result is normalised against length n and
// must lie in [0, n] (inclusive when end is true) or [0, n).
func position(c *Call, i int, n, def int64, end bool) (int64, error) {
	vals, ok, err := intsInput(c, i)
	if err != nil {
		return 0, err
	}
	if !ok {
		return def, nil
	}
	if len(vals) != 1 {
		return 0, c.Errorf("position has %d values, want 1", len(vals))
	}
	p, hi := vals[0], n-1
	if end {
		hi = n
	}
	if p < -n || p > hi {
		return 0, c.Errorf("position %d out of range for a sequence of length %d", p, n)
	}
	if p < 0 {
		p += n
	}
	return p, nil
}

func sequenceEmptyKernel(c *Call) error {
	dt := graph.DType(ops.Params[ops.SequenceEmptyParams](c.Node, c.Opset).Dtype)
	if !dt.Valid() {
		return c.Errorf("dtype %d is not a tensor element type", int64(dt))
	}
	c.Out[0] = &graph.Sequence{Elem: tensorElem(dt)}
	return nil
}

func sequenceConstructKernel(c *Call) error {
	if len(c.In) == 0 {
		return c.Errorf("no inputs")
	}
	s := &graph.Sequence{Items: make([]graph.Value, len(c.In))}
	for i := range c.In {
		t, err := inputTensor(c, i)
		if err != nil {
			return err
		}
		if i == 0 {
			s.Elem = tensorElem(t.DType)
		}
		if err := checkElem(c, s, t); err != nil {
			return err
		}
		s.Items[i] = t.Clone()
	}
	c.Out[0] = s
	return nil
}

func sequenceInsertKernel(c *Call) error {
	s, err := inputSequence(c, 0)
	if err != nil {
		return err
	}
	t, err := inputTensor(c, 1)
	if err != nil {
		return err
	}
	if err := checkElem(c, s, t); err != nil {
		return err
	}
	n := int64(len(s.Items))
	p, err := position(c, 2, n, n, true)
	if err != nil {
		return err
	}
	size := tensorBytes(t)
	for _, v := range s.Items {
		if x, ok := v.(*graph.Tensor); ok {
			size += tensorBytes(x)
		}
	}
	if err := c.CheckBytes(size, fmt.Sprintf("a sequence of %d tensors", n+1)); err != nil {
		return err
	}
	items := make([]graph.Value, 0, n+1)
	items = append(append(append(items, s.Items[:p]...), t.Clone()), s.Items[p:]...)
	elem := s.Elem
	if elem == nil || elem.Elem == graph.Undefined {
		elem = tensorElem(t.DType)
	}
	c.Out[0] = &graph.Sequence{Elem: elem, Items: items}
	return nil
}

// tensorBytes is the memory t holds: its header and shape, and its data
// or its strings' headers and bytes. A sequence or a scan output of many
// small tensors takes several times their data.
func tensorBytes(t *graph.Tensor) int64 {
	n := int64(unsafe.Sizeof(*t)) + 8*int64(len(t.Shape)) + int64(len(t.Data))
	for _, s := range t.Strings {
		n += 16 + int64(len(s))
	}
	return n
}

func sequenceAtKernel(c *Call) error {
	s, err := inputSequence(c, 0)
	if err != nil {
		return err
	}
	if c.Tensor(1) == nil {
		return c.Errorf("input 1 (position) missing")
	}
	p, err := position(c, 1, int64(len(s.Items)), 0, false)
	if err != nil {
		return err
	}
	c.Out[0] = s.Items[p]
	return nil
}

func sequenceEraseKernel(c *Call) error {
	s, err := inputSequence(c, 0)
	if err != nil {
		return err
	}
	n := int64(len(s.Items))
	if n == 0 {
		return c.Errorf("erasing from an empty sequence")
	}
	p, err := position(c, 1, n, n-1, false)
	if err != nil {
		return err
	}
	items := make([]graph.Value, 0, n-1)
	items = append(append(items, s.Items[:p]...), s.Items[p+1:]...)
	c.Out[0] = &graph.Sequence{Elem: s.Elem, Items: items}
	return nil
}

func sequenceLengthKernel(c *Call) error {
	s, err := inputSequence(c, 0)
	if err != nil {
		return err
	}
	out := c.Output(0, graph.Int64, nil)
	graph.View[int64](out)[0] = int64(len(s.Items))
	return nil
}

// sliceAxis returns the part [lo, hi) of x along axis as a new heap tensor.
func sliceAxis(x *graph.Tensor, axis int, lo, hi int64) *graph.Tensor {
	shape := append([]int64{}, x.Shape...)
	shape[axis] = hi - lo
	out := graph.NewTensor(x.DType, shape)
	outer, inner := graph.NumElements(x.Shape[:axis]), graph.NumElements(x.Shape[axis+1:])
	dim, block := x.Shape[axis], (hi-lo)*inner
	src, dst := inCells(x), outCells(out)
	for o := range outer {
		copyCells(dst, o*block, src, (o*dim+lo)*inner, block)
	}
	storeCells(out, dst)
	return out
}

func splitToSequenceKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	if x.Rank() == 0 {
		return c.Errorf("cannot split a scalar")
	}
	axis, err := resolveAxis(c, ops.AxisParamOf(c.Node, c.Opset).Axis, x.Rank())
	if err != nil {
		return err
	}
	dim := x.Shape[axis]
	var sizes []int64
	split := c.Tensor(1)
	switch {
	case split == nil:
		sizes = make([]int64, dim)
		for i := range sizes {
			sizes[i] = 1
		}
	case split.Rank() == 0:
		v, err := indexValues(c, split)
		if err != nil {
			return err
		}
		if v[0] <= 0 {
			return c.Errorf("split size %d is not positive", v[0])
		}
		for off := int64(0); off < dim; off += v[0] {
			sizes = append(sizes, min(v[0], dim-off))
		}
	default:
		v, err := indexValues(c, split)
		if err != nil {
			return err
		}
		sum := int64(0)
		for _, n := range v {
			if n < 0 {
				return c.Errorf("negative split size in %v", v)
			}
			sum += n
		}
		if sum != dim {
			return c.Errorf("split %v does not add up to the axis length %d", v, dim)
		}
		sizes = v
	}
	squeeze := split == nil && ops.Params[ops.SplitToSequenceParams](c.Node, c.Opset).Keepdims == 0
	s := &graph.Sequence{Elem: tensorElem(x.DType), Items: make([]graph.Value, len(sizes))}
	off := int64(0)
	for i, n := range sizes {
		part := sliceAxis(x, axis, off, off+n)
		if squeeze {
			part.Shape = append(part.Shape[:axis], part.Shape[axis+1:]...)
		}
		s.Items[i] = part
		off += n
	}
	c.Out[0] = s
	return nil
}

func concatFromSequenceKernel(c *Call) error {
	s, err := inputSequence(c, 0)
	if err != nil {
		return err
	}
	if len(s.Items) == 0 {
		return c.Errorf("concatenating an empty sequence")
	}
	ts := make([]*graph.Tensor, len(s.Items))
	for i, v := range s.Items {
		t, ok := v.(*graph.Tensor)
		if !ok {
			return c.Errorf("sequence element %d is a %s, not a tensor", i, v.ValueType())
		}
		ts[i] = t
	}
	first := ts[0]
	newAxis := ops.Params[ops.ConcatFromSequenceParams](c.Node, c.Opset).NewAxis != 0
	rank := first.Rank()
	if newAxis {
		rank++
	}
	if c.Node.Attr("axis") == nil {
		return c.Errorf("axis attribute missing")
	}
	axis, err := resolveAxis(c, ops.AxisParamOf(c.Node, c.Opset).Axis, rank)
	if err != nil {
		return err
	}
	if !newAxis && first.Rank() == 0 {
		return c.Errorf("cannot concatenate scalars without new_axis")
	}
	// With new_axis each element is seen as having a size-1 axis there.
	view := func(t *graph.Tensor) []int64 {
		if !newAxis {
			return t.Shape
		}
		return append(append(append([]int64{}, t.Shape[:axis]...), 1), t.Shape[axis:]...)
	}
	shape := append([]int64{}, view(first)...)
	shape[axis] = 0
	for i, t := range ts {
		ext := view(t)
		if t.DType != first.DType || len(ext) != len(shape) {
			return c.Errorf("sequence element %d (%s) does not match element 0 (%s)", i, t.ValueType(), first.ValueType())
		}
		for d := range shape {
			if d != axis && ext[d] != shape[d] {
				return c.Errorf("sequence element %d has shape %v, element 0 %v", i, t.Shape, first.Shape)
			}
		}
		shape[axis] += ext[axis]
	}
	if err := c.Check(first.DType, shape); err != nil {
		return err
	}
	out := c.Output(0, first.DType, shape)
	dst := outCells(out)
	outer, inner := graph.NumElements(shape[:axis]), graph.NumElements(shape[axis+1:])
	row, off := shape[axis]*inner, int64(0)
	for _, t := range ts {
		block := view(t)[axis] * inner
		src := inCells(t)
		for o := range outer {
			copyCells(dst, o*row+off, src, o*block, block)
		}
		off += block
	}
	storeCells(out, dst)
	return nil
}

func sequenceMapKernel(c *Call) error {
	body := c.Node.AttrGraph("body")
	if body == nil {
		return c.Errorf("body attribute missing")
	}
	n := -1
	for i, v := range c.In {
		s, ok := v.(*graph.Sequence)
		if !ok {
			continue
		}
		if n >= 0 && len(s.Items) != n {
			return c.Errorf("input %d has %d elements, an earlier sequence %d", i, len(s.Items), n)
		}
		n = len(s.Items)
	}
	if _, err := inputSequence(c, 0); err != nil {
		return err
	}
	outs := make([]*graph.Sequence, len(c.Out))
	for j := range outs {
		outs[j] = &graph.Sequence{Items: make([]graph.Value, 0, n)}
		if j < len(body.Outputs) && body.Outputs[j].Type != nil {
			outs[j].Elem = body.Outputs[j].Type.Clone()
		}
	}
	args := make([]graph.Value, len(c.In))
	for k := range n {
		for i, v := range c.In {
			if s, ok := v.(*graph.Sequence); ok {
				args[i] = s.Items[k]
			} else {
				args[i] = v
			}
		}
		res, err := c.RunGraph(body, args)
		if err != nil {
			return c.Errorf("body, element %d: %w", k, err)
		}
		if len(res) != len(outs) {
			return c.Errorf("body has %d outputs for %d", len(res), len(outs))
		}
		for j, v := range res {
			outs[j].Items = append(outs[j].Items, heapValue(v))
		}
	}
	for j, s := range outs {
		if s.Elem == nil || s.Elem.Kind == graph.UnknownKind {
			s.Elem = &graph.Type{Kind: graph.TensorKind}
			if len(s.Items) > 0 {
				s.Elem = s.Items[0].ValueType()
			}
		}
		c.Out[j] = s
	}
	return nil
}

func optionalKernel(c *Call) error {
	if len(c.In) > 0 && c.In[0] != nil {
		v := heapValue(c.In[0])
		c.Out[0] = &graph.Optional{Elem: v.ValueType(), V: v}
		return nil
	}
	a := c.Node.Attr("type")
	if a == nil || a.TP == nil {
		return c.Errorf("an empty Optional needs the type attribute")
	}
	c.Out[0] = &graph.Optional{Elem: a.TP.Clone()}
	return nil
}

func optionalHasElementKernel(c *Call) error {
	has := false
	if len(c.In) > 0 && c.In[0] != nil {
		o, ok := c.In[0].(*graph.Optional)
		has = !ok || o.V != nil
	}
	out := c.Output(0, graph.Bool, nil)
	if has {
		out.Data[0] = 1
	}
	return nil
}

func optionalGetElementKernel(c *Call) error {
	if len(c.In) == 0 || c.In[0] == nil {
		return c.Errorf("input 0 missing")
	}
	o, ok := c.In[0].(*graph.Optional)
	if !ok {
		c.Out[0] = c.In[0]
		return nil
	}
	if o.V == nil {
		return c.Errorf("the optional input holds no value")
	}
	c.Out[0] = o.V
	return nil
}
