package ops

import (
	"fmt"
	"math"

	"github.com/onnxvk/onnxvk/graph"
)

// Data-movement ops: Transpose, Squeeze, Unsqueeze, Concat, Split, Slice,
// the Gathers, Tile, Pad and friends. The ones that shape computations use
// propagate small values.

func init() {
	setRule(inferTranspose, "Transpose")
	setRule(inferSqueeze, "Squeeze")
	setRule(inferUnsqueeze, "Unsqueeze")
	setProps(View, "Squeeze", "Unsqueeze")
	setRule(inferConcat, "Concat")
	setRule(inferSplit, "Split")
	setRule(inferSlice, "Slice")
	setRule(inferGather, "Gather")
	setRule(inferGatherElements, "GatherElements")
	setRule(inferGatherND, "GatherND")
	setRule(inferTile, "Tile")
	setRule(inferPad, "Pad")
	setRule(inferNonZero, "NonZero")
	setRule(inferOneHot, "OneHot")
	setRule(inferDepthToSpace, "DepthToSpace")
	setRule(inferSpaceToDepth, "SpaceToDepth")
	setRule(inferEyeLike, "EyeLike")
	setRule(inferCompress, "Compress")
	setRule(inferUnique, "Unique")
	setRule(passThrough, "Trilu", "CumSum", "ReverseSequence", "Scatter", "ScatterElements", "ScatterND")
}

// transposeIndex maps each element of the transposed shape to its source.
func transposeIndex(in []int64, perm []int) ([]int64, []int) {
	out := make([]int64, len(perm))
	for i, p := range perm {
		out[i] = in[p]
	}
	st := graph.Strides(in)
	idx := make([]int, 0, graph.NumElements(out))
	forEachIndex(out, func(coord []int64) {
		var off int64
		for i, p := range perm {
			off += coord[i] * st[p]
		}
		idx = append(idx, int(off))
	})
	return out, idx
}

// inferTranspose permutes the dimensions (reversing them without perm).
func inferTranspose(c *InferContext) error {
	dt := c.inElem(0)
	xs := c.inShape(0)
	perm64 := Params[TransposeParams](c.Node, c.Opset).Perm
	if xs == nil {
		if perm64 != nil {
			c.setTensor(0, dt, unknownShape(len(perm64)))
		} else {
			c.setTensor(0, dt, nil)
		}
		return nil
	}
	r := len(xs)
	perm := make([]int, r)
	if perm64 == nil {
		for i := range perm {
			perm[i] = r - 1 - i
		}
	} else {
		if len(perm64) != r {
			return fmt.Errorf("perm %v for rank %d", perm64, r)
		}
		p, err := normAxes(perm64, r)
		if err != nil {
			return fmt.Errorf("perm: %w", err)
		}
		perm = p
	}
	out := make(graph.Shape, r)
	for i, p := range perm {
		out[i] = xs[p]
	}
	c.setTensor(0, dt, out)
	if v := c.val(0); small(v) && len(v.Shape) == r {
		shape, idx := transposeIndex(v.Shape, perm)
		c.setValue(0, takeElems(v, shape, idx))
	}
	return nil
}

// axesArg reads the axes list of input idx. present says whether the node
// gives axes at all, ok whether their values are known.
func axesArg(c *InferContext, idx int) (axes []int64, present, ok bool) {
	if !c.has(idx) {
		return nil, false, true
	}
	axes, ok = c.intsIn(idx)
	return axes, true, ok
}

// inferSqueeze removes the given axes of size 1, or every axis known to be 1.
func inferSqueeze(c *InferContext) error {
	dt := c.inElem(0)
	xs := c.inShape(0)
	axes, present, ok := axesArg(c, 1)
	if xs == nil || !ok {
		if n := c.lenOf1D(1); xs != nil && n >= 0 && n <= len(xs) {
			c.setTensor(0, dt, unknownShape(len(xs)-n))
		} else {
			c.setTensor(0, dt, nil)
		}
		return nil
	}
	drop := make([]bool, len(xs))
	if present && len(axes) > 0 {
		norm, err := normAxes(axes, len(xs))
		if err != nil {
			return err
		}
		for _, a := range norm {
			if xs[a].Known() && xs[a].Value != 1 {
				return fmt.Errorf("cannot squeeze axis %d of size %d", a, xs[a].Value)
			}
			drop[a] = true
		}
	} else {
		for i, d := range xs {
			if !d.Known() {
				c.setTensor(0, dt, nil)
				return nil
			}
			drop[i] = d.Value == 1
		}
	}
	out := graph.Shape{}
	for i, d := range xs {
		if !drop[i] {
			out = append(out, d)
		}
	}
	c.setTensor(0, dt, out)
	reshapeValue(c, dt, out)
	return nil
}

// inferUnsqueeze inserts axes of size 1 at the given output positions.
func inferUnsqueeze(c *InferContext) error {
	dt := c.inElem(0)
	xs := c.inShape(0)
	axes, _, ok := axesArg(c, 1)
	if xs == nil || !ok {
		if n := c.lenOf1D(1); xs != nil && n >= 0 {
			c.setTensor(0, dt, unknownShape(len(xs)+n))
		} else {
			c.setTensor(0, dt, nil)
		}
		return nil
	}
	r := len(xs) + len(axes)
	norm, err := normAxes(axes, r)
	if err != nil {
		return err
	}
	ones := make([]bool, r)
	for _, a := range norm {
		ones[a] = true
	}
	out := make(graph.Shape, 0, r)
	j := 0
	for i := range r {
		if ones[i] {
			out = append(out, graph.DimOf(1))
		} else {
			out = append(out, xs[j])
			j++
		}
	}
	c.setTensor(0, dt, out)
	reshapeValue(c, dt, out)
	return nil
}

// joinTensors lays the elements of ts end to end in one 1-D tensor and
// returns each one's offset in it.
func joinTensors(ts []*graph.Tensor) (*graph.Tensor, []int) {
	all := &graph.Tensor{DType: ts[0].DType}
	base := make([]int, len(ts))
	n := 0
	for i, t := range ts {
		base[i] = n
		n += int(t.NumElements())
		if t.DType == graph.String {
			all.Strings = append(all.Strings, t.Strings...)
		} else {
			all.Data = append(all.Data, t.Data[:t.DType.ByteSize(t.NumElements())]...)
		}
	}
	all.Shape = []int64{int64(n)}
	return all, base
}

// inferConcat joins its inputs along axis; the other dimensions must agree.
func inferConcat(c *InferContext) error {
	dt := graph.Undefined
	var shapes []graph.Shape
	var vals []*graph.Tensor
	rank := -1
	for i := range c.Node.Inputs {
		if !c.has(i) {
			continue
		}
		if dt == graph.Undefined {
			dt = c.inElem(i)
		}
		s := c.inShape(i)
		shapes = append(shapes, s)
		vals = append(vals, c.val(i))
		if s != nil {
			if rank >= 0 && len(s) != rank {
				return fmt.Errorf("inputs of ranks %d and %d", rank, len(s))
			}
			rank = len(s)
		}
	}
	if rank < 0 {
		c.setTensor(0, dt, nil)
		return nil
	}
	axis, err := normAxis(Params[ConcatParams](c.Node, c.Opset).Axis, rank)
	if err != nil {
		return err
	}
	out := unknownShape(rank)
	sum := graph.DimOf(0)
	first := true
	for _, s := range shapes {
		if s == nil {
			sum = graph.UnknownDim()
			continue
		}
		sum = dimAdd(sum, s[axis])
		for i, d := range s {
			if i == axis {
				continue
			}
			if first {
				out[i] = d
				continue
			}
			if out[i], err = unifyDim(out[i], d); err != nil {
				return fmt.Errorf("axis %d: %w", i, err)
			}
		}
		first = false
	}
	out[axis] = sum
	c.setTensor(0, dt, out)
	for _, v := range vals {
		if !small(v) || v.DType != vals[0].DType || len(v.Shape) != rank {
			if rank == 1 {
				parts := make([]*symTensor, 0, len(vals))
				for i := range c.Node.Inputs {
					if c.has(i) {
						parts = append(parts, c.symIn(i))
					}
				}
				c.setSym(0, dt, symConcat(parts))
			}
			return nil
		}
	}
	if !out.Known() || graph.NumElements(out.Ints()) > maxValueElems {
		return nil
	}
	all, base := joinTensors(vals)
	outShape := out.Ints()
	outer := graph.NumElements(outShape[:axis])
	idx := make([]int, 0, graph.NumElements(outShape))
	for o := range outer {
		for i, v := range vals {
			chunk := graph.NumElements(v.Shape[axis:])
			for j := range chunk {
				idx = append(idx, base[i]+int(o*chunk+j))
			}
		}
	}
	c.setValue(0, takeElems(all, outShape, idx))
	return nil
}

// inferSplit cuts the input along axis into the outputs: by the split sizes
// (input 1), else into equal parts, the last one smaller when the axis
// does not divide evenly.
func inferSplit(c *InferContext) error {
	dt := c.inElem(0)
	xs := c.inShape(0)
	n := len(c.Node.Outputs)
	if xs == nil {
		for i := range n {
			c.setTensor(i, dt, nil)
		}
		return nil
	}
	axis, err := normAxis(Params[SplitParams](c.Node, c.Opset).Axis, len(xs))
	if err != nil {
		return err
	}
	var split []int64
	known := true
	if c.has(1) {
		split, known = c.intsIn(1)
	}
	d := xs[axis]
	sizes := make([]graph.Dim, n)
	switch {
	case !known:
		for i := range sizes {
			sizes[i] = graph.UnknownDim()
		}
	case split != nil:
		if len(split) != n {
			return fmt.Errorf("split %v for %d outputs", split, n)
		}
		var total int64
		for i, v := range split {
			if v < 0 {
				return fmt.Errorf("negative split size in %v", split)
			}
			sizes[i] = graph.DimOf(v)
			total += v
		}
		if d.Known() && total != d.Value {
			return fmt.Errorf("split %v does not add up to dimension %d", split, d.Value)
		}
	case d.Known():
		if num := Params[SplitParams](c.Node, c.Opset).NumOutputs; num != nil && *num != int64(n) {
			return fmt.Errorf("num_outputs %d but %d outputs", *num, n)
		}
		chunk := d.Value / int64(n)
		if d.Value%int64(n) != 0 {
			chunk = (d.Value + int64(n) - 1) / int64(n)
		}
		for i := range sizes {
			sizes[i] = graph.DimOf(min(chunk, max(d.Value-chunk*int64(i), 0)))
		}
	default:
		for i := range sizes {
			sizes[i] = graph.UnknownDim()
		}
	}
	for i := range n {
		s := xs.Clone()
		s[axis] = sizes[i]
		c.setTensor(i, dt, s)
	}
	return nil
}

// SliceRange resolves one axis of a Slice as ONNX specifies (negative
// indices count from the back, then clamp to the axis of length dim) and
// returns the first index and the number of elements taken; step must not
// be 0. The counts cannot overflow, whatever the step.
func SliceRange(start, end, step, dim int64) (first, count int64) {
	if start < 0 {
		start += dim
	}
	if end < 0 {
		end += dim
	}
	if step > 0 {
		start, end = min(max(start, 0), dim), min(max(end, 0), dim)
		if end <= start {
			return start, 0
		}
		return start, (end-start-1)/step + 1
	}
	start, end = min(max(start, 0), dim-1), min(max(end, -1), dim-1)
	if start <= end {
		return max(start, 0), 0
	}
	if step == math.MinInt64 {
		return start, 1
	}
	return start, (start-end-1)/-step + 1
}

// inferSlice is Slice with starts, ends, axes and steps as inputs.
func inferSlice(c *InferContext) error {
	dt := c.inElem(0)
	xs := c.inShape(0)
	var axes, steps []int64
	starts, ok1 := c.intsIn(1)
	ends, ok2 := c.intsIn(2)
	ok := ok1 && ok2
	if c.has(3) {
		var ok3 bool
		axes, ok3 = c.intsIn(3)
		ok = ok && ok3
		if !ok3 && xs != nil {
			c.setTensor(0, dt, unknownShape(len(xs)))
			return nil
		}
	}
	if c.has(4) {
		var ok4 bool
		steps, ok4 = c.intsIn(4)
		ok = ok && ok4
	}
	if xs == nil {
		c.setTensor(0, dt, nil)
		return nil
	}
	if axes == nil && ok {
		for i := range starts {
			axes = append(axes, int64(i))
		}
	}
	norm, err := normAxes(axes, len(xs))
	if err != nil {
		return err
	}
	out := xs.Clone()
	if !ok {
		for _, a := range norm {
			out[a] = graph.UnknownDim()
		}
		if axes == nil {
			out = unknownShape(len(xs))
		}
		c.setTensor(0, dt, out)
		return nil
	}
	if len(starts) != len(norm) || len(ends) != len(norm) || (steps != nil && len(steps) != len(norm)) {
		return fmt.Errorf("starts %v, ends %v, axes %v and steps %v differ in length", starts, ends, axes, steps)
	}
	first := make([]int64, len(xs))
	step := make([]int64, len(xs))
	for i := range step {
		step[i] = 1
	}
	for i, a := range norm {
		st := int64(1)
		if steps != nil {
			st = steps[i]
		}
		if st == 0 {
			return fmt.Errorf("slice step 0")
		}
		step[a] = st
		d := xs[a]
		if !d.Known() {
			if !(starts[i] == 0 && st == 1 && ends[i] >= math.MaxInt32) {
				out[a] = graph.UnknownDim()
			}
			continue
		}
		var n int64
		first[a], n = SliceRange(starts[i], ends[i], st, d.Value)
		out[a] = graph.DimOf(n)
	}
	c.setTensor(0, dt, out)
	if !out.Known() {
		return nil
	}
	if v := c.val(0); small(v) && len(v.Shape) == len(xs) {
		c.setValue(0, takeElems(v, out.Ints(), sliceIndex(v.Shape, out.Ints(), first, step)))
	} else if st := c.symIn(0); st != nil && len(st.shape) == len(xs) {
		c.setSym(0, dt, st.take(out.Ints(), sliceIndex(st.shape, out.Ints(), first, step)))
	}
	return nil
}

// sliceIndex maps each element of a slice of shape out, starting at first
// with the given steps, to its source element in shape in.
func sliceIndex(in, out, first, step []int64) []int {
	st := graph.Strides(in)
	idx := make([]int, 0, graph.NumElements(out))
	forEachIndex(out, func(coord []int64) {
		var off int64
		for i, x := range coord {
			off += (first[i] + x*step[i]) * st[i]
		}
		idx = append(idx, int(off))
	})
	return idx
}

// inferGather is Gather: data[:axis] + indices + data[axis+1:].
func inferGather(c *InferContext) error {
	dt := c.inElem(0)
	xs, is := c.inShape(0), c.inShape(1)
	if xs == nil || is == nil {
		c.setTensor(0, dt, nil)
		return nil
	}
	axis, err := normAxis(Params[GatherParams](c.Node, c.Opset).Axis, len(xs))
	if err != nil {
		return err
	}
	out := append(append(xs[:axis].Clone(), is...), xs[axis+1:]...)
	c.setTensor(0, dt, out)
	indices, ok := c.intsIn(1)
	if !ok || !out.Known() {
		return nil
	}
	if data := c.val(0); small(data) && len(data.Shape) == len(xs) {
		idx, err := gatherIndex(data.Shape, axis, indices)
		if err != nil {
			return err
		}
		c.setValue(0, takeElems(data, out.Ints(), idx))
	} else if st := c.symIn(0); st != nil && len(st.shape) == len(xs) {
		idx, err := gatherIndex(st.shape, axis, indices)
		if err != nil {
			return err
		}
		c.setSym(0, dt, st.take(out.Ints(), idx))
	}
	return nil
}

// gatherIndex maps each element of Gather's output to its source element
// in data of the given shape.
func gatherIndex(shape []int64, axis int, indices []int64) ([]int, error) {
	dim := shape[axis]
	outer := graph.NumElements(shape[:axis])
	inner := graph.NumElements(shape[axis+1:])
	idx := make([]int, 0, outer*int64(len(indices))*inner)
	for o := range outer {
		for _, v := range indices {
			if v < -dim || v >= dim {
				return nil, fmt.Errorf("index %d out of range for dimension %d", v, dim)
			}
			if v < 0 {
				v += dim
			}
			for j := range inner {
				idx = append(idx, int((o*dim+v)*inner+j))
			}
		}
	}
	return idx, nil
}

// inferGatherElements gives the indices' shape with the data's type.
func inferGatherElements(c *InferContext) error {
	c.setTensor(0, c.inElem(0), c.inShape(1).Clone())
	return nil
}

// inferGatherND is GatherND: indices[:-1] + data[batch_dims+m:], m being
// the last dimension of indices.
func inferGatherND(c *InferContext) error {
	dt := c.inElem(0)
	xs, is := c.inShape(0), c.inShape(1)
	if xs == nil || len(is) == 0 || !is[len(is)-1].Known() {
		c.setTensor(0, dt, nil)
		return nil
	}
	b, m, r := Params[GatherNDParams](c.Node, c.Opset).BatchDims, is[len(is)-1].Value, int64(len(xs))
	if b < 0 || b > r || m > r-b {
		return fmt.Errorf("index depth %d with batch_dims %d for data of rank %d", m, b, len(xs))
	}
	c.setTensor(0, dt, append(is[:len(is)-1].Clone(), xs[b+m:]...))
	return nil
}

// inferTile multiplies each dimension by its repeat count.
func inferTile(c *InferContext) error {
	dt := c.inElem(0)
	xs := c.inShape(0)
	if xs == nil {
		c.setTensor(0, dt, nil)
		return nil
	}
	reps, ok := c.intsIn(1)
	if !ok {
		c.setTensor(0, dt, unknownShape(len(xs)))
		return nil
	}
	if len(reps) != len(xs) {
		return fmt.Errorf("repeats %v for rank %d", reps, len(xs))
	}
	out := make(graph.Shape, len(xs))
	for i, d := range xs {
		out[i] = dimMul(d, graph.DimOf(reps[i]))
	}
	c.setTensor(0, dt, out)
	return nil
}

// inferPad adds the begin and end pads (input 1) to each padded axis (all,
// or those of input 3).
func inferPad(c *InferContext) error {
	dt := c.inElem(0)
	xs := c.inShape(0)
	if xs == nil {
		c.setTensor(0, dt, nil)
		return nil
	}
	pads, ok := c.intsIn(1)
	axes := make([]int64, len(xs))
	for i := range axes {
		axes[i] = int64(i)
	}
	if c.has(3) {
		var ok2 bool
		axes, ok2 = c.intsIn(3)
		ok = ok && ok2
	}
	if !ok {
		c.setTensor(0, dt, unknownShape(len(xs)))
		return nil
	}
	norm, err := normAxes(axes, len(xs))
	if err != nil {
		return err
	}
	if len(pads) != 2*len(norm) {
		return fmt.Errorf("pads %v for %d axes", pads, len(norm))
	}
	out := xs.Clone()
	for i, a := range norm {
		out[a] = dimAdd(out[a], graph.DimOf(pads[i]+pads[i+len(norm)]))
		if out[a].Known() && out[a].Value < 0 {
			return fmt.Errorf("pads %v remove more than axis %d holds", pads, a)
		}
	}
	c.setTensor(0, dt, out)
	return nil
}

// inferNonZero gives int64 [rank, ?], and the coordinates themselves when
// the input is a known small tensor.
func inferNonZero(c *InferContext) error {
	rank := graph.UnknownDim()
	if xs := c.inShape(0); xs != nil {
		rank = graph.DimOf(int64(len(xs)))
	}
	c.setTensor(0, graph.Int64, graph.Shape{rank, graph.UnknownDim()})
	x, ok := decode(c.val(0))
	if !ok {
		return nil
	}
	r := len(x.shape)
	var coords [][]int64
	k := 0
	forEachIndex(x.shape, func(coord []int64) {
		if x.float(k) != 0 {
			coords = append(coords, append([]int64{}, coord...))
		}
		k++
	})
	if r == 0 {
		c.setTensor(0, graph.Int64, graph.ShapeOf(0, int64(len(coords))))
		return nil
	}
	out := make([]int64, r*len(coords))
	for j, coord := range coords {
		for i, v := range coord {
			out[i*len(coords)+j] = v
		}
	}
	c.setValue(0, int64Tensor([]int64{int64(r), int64(len(coords))}, out))
	return nil
}

// inferOneHot inserts the depth at axis; the output has the values' type.
func inferOneHot(c *InferContext) error {
	dt := c.inElem(2)
	is := c.inShape(0)
	if is == nil {
		c.setTensor(0, dt, nil)
		return nil
	}
	r := len(is) + 1
	axis, err := normAxis(Params[OneHotParams](c.Node, c.Opset).Axis, r)
	if err != nil {
		return err
	}
	depth := graph.UnknownDim()
	if v, ok := decode(c.val(1)); ok && v.len() == 1 {
		depth = graph.DimOf(v.int(0))
	}
	out := append(append(is[:axis].Clone(), depth), is[axis:]...)
	c.setTensor(0, dt, out)
	return nil
}

// inferDepthToSpace is [N, C/b², H·b, W·b].
func inferDepthToSpace(c *InferContext) error {
	return blockRearrange(c, false)
}

// inferSpaceToDepth is [N, C·b², H/b, W/b].
func inferSpaceToDepth(c *InferContext) error {
	return blockRearrange(c, true)
}

// blocksize is the blocksize of a DepthToSpace or SpaceToDepth node.
func blocksize(c *InferContext) int64 {
	switch p := ParamsOf(c.Node, c.Opset).(type) {
	case *DepthToSpaceParams:
		return p.Blocksize
	case *SpaceToDepthParams:
		return p.Blocksize
	}
	return 0
}

// blockRearrange moves blocks between the channel and spatial axes.
func blockRearrange(c *InferContext, toDepth bool) error {
	dt := c.inElem(0)
	xs := c.inShape(0)
	if xs == nil {
		c.setTensor(0, dt, unknownShape(4))
		return nil
	}
	if len(xs) != 4 {
		return fmt.Errorf("input of rank %d, want 4", len(xs))
	}
	b := blocksize(c)
	bb, ok := graph.MulSize(b, b)
	if b <= 0 || !ok {
		return fmt.Errorf("blocksize %d", b)
	}
	div := func(d graph.Dim, by int64) (graph.Dim, error) {
		if !d.Known() {
			return graph.UnknownDim(), nil
		}
		if d.Value%by != 0 {
			return d, fmt.Errorf("dimension %d not divisible by %d", d.Value, by)
		}
		return graph.DimOf(d.Value / by), nil
	}
	out := graph.Shape{xs[0], xs[1], xs[2], xs[3]}
	var err error
	if toDepth {
		out[1] = dimMul(xs[1], graph.DimOf(bb))
		if out[2], err = div(xs[2], b); err == nil {
			out[3], err = div(xs[3], b)
		}
	} else {
		out[1], err = div(xs[1], bb)
		out[2], out[3] = dimMul(xs[2], graph.DimOf(b)), dimMul(xs[3], graph.DimOf(b))
	}
	if err != nil {
		return err
	}
	c.setTensor(0, dt, out)
	return nil
}

// inferEyeLike keeps the shape; the element type is dtype or the input's.
func inferEyeLike(c *InferContext) error {
	dt := c.inElem(0)
	if p := Params[EyeLikeParams](c.Node, c.Opset).Dtype; p != nil {
		dt = graph.DType(*p)
	}
	c.setTensor(0, dt, c.inShape(0).Clone())
	return nil
}

// inferCompress sizes the compressed axis (or the flattened length) by the
// condition's true count when the condition is known, else leaves it unknown.
func inferCompress(c *InferContext) error {
	dt := c.inElem(0)
	xs := c.inShape(0)
	kept := graph.UnknownDim()
	if cond, ok := decode(c.val(1)); ok {
		n := int64(0)
		for k := range cond.len() {
			if cond.int(k) != 0 {
				n++
			}
		}
		kept = graph.DimOf(n)
	}
	a := Params[CompressParams](c.Node, c.Opset).Axis
	if a == nil {
		c.setTensor(0, dt, graph.Shape{kept})
		return nil
	}
	if xs == nil {
		c.setTensor(0, dt, nil)
		return nil
	}
	axis, err := normAxis(*a, len(xs))
	if err != nil {
		return err
	}
	out := xs.Clone()
	out[axis] = kept
	c.setTensor(0, dt, out)
	return nil
}

// inferUnique gives the unique values (unknown count) and int64 index,
// inverse and count vectors.
func inferUnique(c *InferContext) error {
	dt := c.inElem(0)
	xs := c.inShape(0)
	y := graph.Shape{graph.UnknownDim()}
	a := Params[UniqueParams](c.Node, c.Opset).Axis
	if a != nil {
		if xs == nil {
			y = nil
		} else {
			axis, err := normAxis(*a, len(xs))
			if err != nil {
				return err
			}
			y = xs.Clone()
			y[axis] = graph.UnknownDim()
		}
	}
	inverse := graph.Shape{graph.UnknownDim()}
	switch {
	case xs == nil:
	case a == nil:
		inverse[0] = shapeProduct(xs)
	default:
		axis, _ := normAxis(*a, len(xs))
		inverse[0] = xs[axis]
	}
	c.setTensor(0, dt, y)
	c.setTensor(1, graph.Int64, graph.Shape{graph.UnknownDim()})
	c.setTensor(2, graph.Int64, inverse)
	c.setTensor(3, graph.Int64, graph.Shape{graph.UnknownDim()})
	return nil
}
