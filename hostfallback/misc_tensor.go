package hostfallback

import (
	"math"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// Assorted data-movement ops: OneHot, Trilu, NonZero, Compress,
// ReverseSequence.

func init() {
	Register("OneHot", oneHotKernel)
	Register("Trilu", triluKernel)
	Register("NonZero", nonZeroKernel)
	Register("Compress", compressKernel)
	Register("ReverseSequence", reverseSequenceKernel)
}

// truncatedInts returns the elements of a numeric tensor as int64s,
// truncating floats toward zero; NaN and out-of-range values become
// math.MinInt64.
func truncatedInts(c *Call, t *graph.Tensor) ([]int64, error) {
	if t.DType.IsInt() {
		return indexValues(c, t)
	}
	f, ok := toFloat64s(t)
	if !ok {
		return nil, c.Unsupported("%s indices", t.DType)
	}
	out := make([]int64, len(f))
	for i, v := range f {
		out[i] = math.MinInt64
		if v > math.MinInt64 && v < math.MaxInt64 {
			out[i] = int64(v)
		}
	}
	return out, nil
}

func oneHotKernel(c *Call) error {
	indices, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	depthT, err := inputTensor(c, 1)
	if err != nil {
		return err
	}
	values, err := inputTensor(c, 2)
	if err != nil {
		return err
	}
	if values.NumElements() != 2 {
		return c.Errorf("values must hold [off, on], has shape %v", values.Shape)
	}
	ds, err := truncatedInts(c, depthT)
	if err != nil {
		return err
	}
	if len(ds) != 1 || ds[0] < 1 {
		return c.Errorf("depth %v must be one positive number", ds)
	}
	depth := ds[0]
	idx, err := truncatedInts(c, indices)
	if err != nil {
		return err
	}
	r := indices.Rank()
	axis, err := resolveAxis(c, ops.AxisParamOf(c.Node, c.Opset).Axis, r+1)
	if err != nil {
		return err
	}
	shape := append(append(append([]int64{}, indices.Shape[:axis]...), depth), indices.Shape[axis:]...)
	if err := c.Check(values.DType, shape); err != nil {
		return err
	}
	out := c.Output(0, values.DType, shape)
	dst, val := outCells(out), inCells(values)
	fillCells(dst, 0, graph.NumElements(shape), val, 0)
	inner := graph.NumElements(indices.Shape[axis:])
	for p, v := range idx {
		if v < 0 && v >= -depth {
			v += depth
		}
		if v >= 0 && v < depth {
			o, n := int64(p)/inner, int64(p)%inner
			copyCells(dst, (o*depth+v)*inner+n, val, 1, 1)
		}
	}
	storeCells(out, dst)
	return nil
}

func triluKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	if x.Rank() < 2 {
		return c.Errorf("input must have rank >= 2, has shape %v", x.Shape)
	}
	k := int64(0)
	if c.Tensor(1) != nil {
		if k, err = scalarInt(c, 1); err != nil {
			return err
		}
	}
	upper := ops.Params[ops.TriluParams](c.Node, c.Opset).Upper != 0
	r := x.Rank()
	rows, cols := x.Shape[r-2], x.Shape[r-1]
	k = min(max(k, -rows-1), cols+1)
	out := c.Output(0, x.DType, x.Shape)
	dst, src, zero := outCells(out), inCells(x), zeroCell(x.DType)
	mats := graph.NumElements(x.Shape[:r-2])
	for m := range mats {
		for i := range rows {
			row := (m*rows + i) * cols
			// Columns [lo, hi) are kept.
			lo, hi := int64(0), cols
			if upper {
				lo = min(max(i+k, 0), cols)
			} else {
				hi = min(max(i+k+1, 0), cols)
			}
			fillCells(dst, row, lo, zero, 0)
			if hi > lo {
				copyCells(dst, row+lo, src, row+lo, hi-lo)
			}
			fillCells(dst, row+max(hi, lo), cols-max(hi, lo), zero, 0)
		}
	}
	storeCells(out, dst)
	return nil
}

// isZero returns a test for the zero value of dt over flat element
// indices of t: -0 counts as zero for the float types that have it, and
// the empty string is the zero string.
func isZero(t *graph.Tensor) func(i int64) bool {
	switch t.DType {
	case graph.String:
		return func(i int64) bool { return t.Strings[i] == "" }
	case graph.Float, graph.Complex64:
		v := typedView[uint32](t.Data)
		if t.DType == graph.Complex64 {
			return func(i int64) bool { return v[2*i]<<1 == 0 && v[2*i+1]<<1 == 0 }
		}
		return func(i int64) bool { return v[i]<<1 == 0 }
	case graph.Double, graph.Complex128:
		v := typedView[uint64](t.Data)
		if t.DType == graph.Complex128 {
			return func(i int64) bool { return v[2*i]<<1 == 0 && v[2*i+1]<<1 == 0 }
		}
		return func(i int64) bool { return v[i]<<1 == 0 }
	case graph.Float16, graph.BFloat16:
		v := typedView[uint16](t.Data)
		return func(i int64) bool { return v[i]<<1 == 0 }
	case graph.Float8E4M3FN, graph.Float8E5M2:
		return func(i int64) bool { return t.Data[i]<<1 == 0 }
	case graph.Float8E8M0:
		return func(int64) bool { return false }
	case graph.Float4E2M1:
		v := inCells(t).b
		return func(i int64) bool { return v[i]&7 == 0 }
	}
	v := inCells(t)
	size := int64(v.size)
	return func(i int64) bool {
		for _, b := range v.b[i*size : (i+1)*size] {
			if b != 0 {
				return false
			}
		}
		return true
	}
}

func nonZeroKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	zero := isZero(x)
	n := x.NumElements()
	var hits []int64
	for i := range n {
		if !zero(i) {
			hits = append(hits, i)
		}
	}
	shape := x.Shape
	if len(shape) == 0 {
		shape = []int64{1}
	}
	r := int64(len(shape))
	nnz := int64(len(hits))
	if err := c.Check(graph.Int64, []int64{r, nnz}); err != nil {
		return err
	}
	out := graph.View[int64](c.Output(0, graph.Int64, []int64{r, nnz}))
	for j, flat := range hits {
		for d := r - 1; d >= 0; d-- {
			out[d*nnz+int64(j)] = flat % shape[d]
			flat /= shape[d]
		}
	}
	return nil
}

func compressKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	cond, err := inputTensor(c, 1)
	if err != nil {
		return err
	}
	if cond.DType != graph.Bool || cond.Rank() != 1 {
		return c.Errorf("condition must be a 1-D bool tensor, is %s", cond.ValueType())
	}
	shape := []int64{x.NumElements()}
	axis := 0
	if a := c.Node.Attr("axis"); a != nil {
		if axis, err = resolveAxis(c, a.I, x.Rank()); err != nil {
			return err
		}
		shape = append([]int64{}, x.Shape...)
	}
	dim := shape[axis]
	var keep []int64
	for i, b := range cond.Data {
		if b != 0 {
			if int64(i) >= dim {
				return c.Errorf("condition selects index %d of an axis of size %d", i, dim)
			}
			keep = append(keep, int64(i))
		}
	}
	outer, inner := graph.NumElements(shape[:axis]), graph.NumElements(shape[axis+1:])
	tab := make([]int64, len(keep))
	for j, i := range keep {
		tab[j] = i * inner
	}
	shape[axis] = int64(len(keep))
	out := c.Output(0, x.DType, shape)
	dst := outCells(out)
	gatherTables(c.Threads, dst, inCells(x), []int64{outer, int64(len(keep)), inner},
		[][]int64{rangeTable(outer, 0, dim*inner), tab, rangeTable(inner, 0, 1)}, cells{})
	storeCells(out, dst)
	return nil
}

func reverseSequenceKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	lensT, err := inputTensor(c, 1)
	if err != nil {
		return err
	}
	lens, err := lensT.Int64s()
	if err != nil {
		return c.Errorf("sequence_lens: %w", err)
	}
	p := ops.Params[ops.ReverseSequenceParams](c.Node, c.Opset)
	timeAxis, batchAxis := p.TimeAxis, p.BatchAxis
	if x.Rank() < 2 || timeAxis+batchAxis != 1 || timeAxis*batchAxis != 0 {
		return c.Errorf("time_axis %d and batch_axis %d must be 0 and 1 of an input of rank >= 2, has shape %v",
			timeAxis, batchAxis, x.Shape)
	}
	steps, batch := x.Shape[timeAxis], x.Shape[batchAxis]
	if int64(len(lens)) != batch {
		return c.Errorf("%d sequence lengths for a batch of %d", len(lens), batch)
	}
	inner := graph.NumElements(x.Shape[2:])
	at := func(t, b int64) int64 {
		if timeAxis == 0 {
			return (t*batch + b) * inner
		}
		return (b*steps + t) * inner
	}
	out := c.Output(0, x.DType, x.Shape)
	dst, src := outCells(out), inCells(x)
	for b, n := range lens {
		if n < 0 || n > steps {
			return c.Errorf("sequence length %d outside [0, %d]", n, steps)
		}
		for t := range steps {
			from := t
			if t < n {
				from = n - 1 - t
			}
			copyCells(dst, at(t, int64(b)), src, at(from, int64(b)), inner)
		}
	}
	storeCells(out, dst)
	return nil
}
