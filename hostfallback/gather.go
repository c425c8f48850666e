package hostfallback

import (
	"sync/atomic"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// Indexed reads: Gather, GatherElements, GatherND. Indices may be negative
// (counting from the back); out-of-range indices are refused.

func init() {
	Register("Gather", gatherKernel)
	Register("GatherElements", gatherElementsKernel)
	Register("GatherND", gatherNDKernel)
}

// resolveIndex maps an index from [-dim, dim) to [0, dim); ok is false
// when it is out of range.
func resolveIndex(i, dim int64) (int64, bool) {
	if i < 0 {
		i += dim
	}
	return i, i >= 0 && i < dim
}

func gatherKernel(c *Call) error {
	data, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	indices, err := inputTensor(c, 1)
	if err != nil {
		return err
	}
	axis, err := resolveAxis(c, ops.AxisParamOf(c.Node, c.Opset).Axis, data.Rank())
	if err != nil {
		return err
	}
	idx, err := indexValues(c, indices)
	if err != nil {
		return err
	}
	dim := data.Shape[axis]
	outer, inner := graph.NumElements(data.Shape[:axis]), graph.NumElements(data.Shape[axis+1:])
	tab := make([]int64, len(idx))
	for j, v := range idx {
		i, ok := resolveIndex(v, dim)
		if !ok {
			return c.Errorf("index %d out of range for axis %d of size %d", v, axis, dim)
		}
		tab[j] = i * inner
	}
	shape := append(append(append([]int64{}, data.Shape[:axis]...), indices.Shape...), data.Shape[axis+1:]...)
	out := c.Output(0, data.DType, shape)
	dst := outCells(out)
	gatherTables(c.Threads, dst, inCells(data), []int64{outer, int64(len(idx)), inner},
		[][]int64{rangeTable(outer, 0, dim*inner), tab, rangeTable(inner, 0, 1)}, cells{})
	storeCells(out, dst)
	return nil
}

func gatherElementsKernel(c *Call) error {
	data, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	indices, err := inputTensor(c, 1)
	if err != nil {
		return err
	}
	axis, err := resolveAxis(c, ops.AxisParamOf(c.Node, c.Opset).Axis, data.Rank())
	if err != nil {
		return err
	}
	offs, err := elementOffsets(c, data.Shape, indices, axis)
	if err != nil {
		return err
	}
	out := c.Output(0, data.DType, indices.Shape)
	dst := outCells(out)
	gatherTables(c.Threads, dst, inCells(data), []int64{int64(len(offs))}, [][]int64{offs}, cells{})
	storeCells(out, dst)
	return nil
}

// elementOffsets returns, for each element of indices (a tensor of the
// data's rank), the offset in data of the element it designates along axis
// in GatherElements and ScatterElements: the element's own position with
// the axis coordinate replaced by the index.
func elementOffsets(c *Call, shape []int64, indices *graph.Tensor, axis int) ([]int64, error) {
	if indices.Rank() != len(shape) {
		return nil, c.Errorf("indices shape %v and data shape %v differ in rank", indices.Shape, shape)
	}
	for k, d := range indices.Shape {
		if k != axis && d > shape[k] {
			return nil, c.Errorf("indices shape %v exceeds data shape %v off axis %d", indices.Shape, shape, axis)
		}
	}
	idx, err := indexValues(c, indices)
	if err != nil {
		return nil, err
	}
	ishape := indices.Shape
	strides := graph.Strides(shape)
	dim, astride := shape[axis], strides[axis]
	offs := make([]int64, len(idx))
	var bad atomic.Int64
	bad.Store(-1)
	c.Threads.For(len(idx), 16384, func(lo, hi int) {
		pos := make([]int64, len(ishape))
		rem := int64(lo)
		for d := len(ishape) - 1; d >= 0; d-- {
			pos[d] = rem % ishape[d]
			rem /= ishape[d]
		}
		base := int64(0)
		for d, p := range pos {
			if d != axis {
				base += p * strides[d]
			}
		}
		for j := lo; j < hi; j++ {
			i, ok := resolveIndex(idx[j], dim)
			if !ok {
				bad.Store(int64(j))
				return
			}
			offs[j] = base + i*astride
			for d := len(ishape) - 1; d >= 0; d-- {
				if d != axis {
					base -= pos[d] * strides[d]
				}
				pos[d]++
				if pos[d] < ishape[d] {
					if d != axis {
						base += pos[d] * strides[d]
					}
					break
				}
				pos[d] = 0
			}
		}
	})
	if j := bad.Load(); j >= 0 {
		return nil, c.Errorf("index %d out of range for axis %d of size %d", idx[j], axis, dim)
	}
	return offs, nil
}

func gatherNDKernel(c *Call) error {
	data, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	indices, err := inputTensor(c, 1)
	if err != nil {
		return err
	}
	b := int64(0)
	if c.Opset >= 12 {
		b = ops.Params[ops.GatherNDParams](c.Node, c.Opset).BatchDims
	}
	offs, slice, err := ndOffsets(c, data.Shape, indices, b)
	if err != nil {
		return err
	}
	q, k := indices.Rank(), indices.Shape[indices.Rank()-1]
	shape := append(append([]int64{}, indices.Shape[:q-1]...), data.Shape[b+k:]...)
	out := c.Output(0, data.DType, shape)
	dst := outCells(out)
	gatherTables(c.Threads, dst, inCells(data), []int64{int64(len(offs)), slice},
		[][]int64{offs, rangeTable(slice, 0, 1)}, cells{})
	storeCells(out, dst)
	return nil
}

// ndOffsets resolves GatherND/ScatterND index tuples: indices has shape
// [batch..., tuples..., k] with the first b dimensions equal to data's,
// and each tuple designates a slice of data of `slice` elements. It
// returns each tuple's offset in data.
func ndOffsets(c *Call, shape []int64, indices *graph.Tensor, b int64) (offs []int64, slice int64, err error) {
	r, q := int64(len(shape)), int64(indices.Rank())
	if q < 1 || r < 1 {
		return nil, 0, c.Errorf("data %v and indices %v must have rank >= 1", shape, indices.Shape)
	}
	k := indices.Shape[q-1]
	if b < 0 || b >= min(q, r) || k > r-b {
		return nil, 0, c.Errorf("batch_dims %d and index length %d do not fit data %v and indices %v", b, k, shape, indices.Shape)
	}
	for d := range b {
		if indices.Shape[d] != shape[d] {
			return nil, 0, c.Errorf("batch dimensions of data %v and indices %v differ", shape, indices.Shape)
		}
	}
	idx, err := indexValues(c, indices)
	if err != nil {
		return nil, 0, err
	}
	strides := graph.Strides(shape)
	slice = graph.NumElements(shape[b+k:])
	batch := graph.NumElements(shape[:b])
	batchStride := graph.NumElements(shape[b:])
	offs = make([]int64, graph.NumElements(indices.Shape[:q-1]))
	perBatch := int64(len(offs)) / max(batch, 1)
	for t := range offs {
		tuple := idx[int64(t)*k : int64(t+1)*k]
		off := int64(t) / max(perBatch, 1) * batchStride
		for j, v := range tuple {
			i, ok := resolveIndex(v, shape[b+int64(j)])
			if !ok {
				return nil, 0, c.Errorf("index %v out of range for data %v", tuple, shape)
			}
			off += i * strides[b+int64(j)]
		}
		offs[t] = off
	}
	return offs, slice, nil
}
