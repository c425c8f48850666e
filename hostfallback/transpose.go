package hostfallback

import (
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// Axis permutations: Transpose, and DepthToSpace/SpaceToDepth, which are
// a transpose between two reshapes.

func init() {
	Register("Transpose", transposeKernel)
	Register("DepthToSpace", depthToSpaceKernel)
	Register("SpaceToDepth", spaceToDepthKernel)
}

func transposeKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	p, err := Memo(c, c.ShapeKey(), func() (*transposePlan, error) {
		r := x.Rank()
		perm := make([]int, r)
		if p := ops.Params[ops.TransposeParams](c.Node, c.Opset).Perm; p != nil {
			if len(p) != r {
				return nil, c.Errorf("perm %v for a rank-%d input", p, r)
			}
			seen := make([]bool, r)
			for i, a := range p {
				if a < 0 || a >= int64(r) || seen[a] {
					return nil, c.Errorf("perm %v is not a permutation of 0..%d", p, r-1)
				}
				seen[a] = true
				perm[i] = int(a)
			}
		} else {
			for i := range perm {
				perm[i] = r - 1 - i
			}
		}
		return newTransposePlan(x.Shape, perm), nil
	})
	if err != nil {
		return err
	}
	// Whole-byte elements are each written once; packed 4-bit ones are
	// merged into zeroed bytes.
	var out *graph.Tensor
	if x.DType.Bits() >= 8 {
		out = c.OutputUninit(0, x.DType, p.out)
	} else {
		out = c.Output(0, x.DType, p.out)
	}
	dst := outCells(out)
	p.run(c.Threads, dst, inCells(x))
	storeCells(out, dst)
	return nil
}

// transposeCells writes into dst the elements of src, a tensor of the given
// shape, with its axes permuted: axis k of dst is axis perm[k] of src.
func transposeCells(threads *Threads, dst, src cells, shape []int64, perm []int) {
	newTransposePlan(shape, perm).run(threads, dst, src)
}

// transposePlan is how a transpose moves its cells: a plain copy, a
// batched 2-D transpose in tiles, or a table gather.
type transposePlan struct {
	// out is the output shape.
	out []int64
	// copy is set when the permutation keeps the order of the cells.
	copy bool
	// batch matrices of rows×cols cells are transposed when tiled is set.
	tiled             bool
	batch, rows, cols int64
	// gather is the table gather of anything else (nil when the tensor
	// is empty).
	gather *tableGather
}

// newTransposePlan plans the transpose of a tensor of the given shape by
// perm, a permutation of its axes. Axes of size 1 are dropped and axes
// that stay neighbours are merged first; what remains as a (batched) 2-D
// transpose is done in cache-sized tiles, anything else by a table
// gather, which copies whole runs when the innermost axes keep their
// order.
func newTransposePlan(shape []int64, perm []int) *transposePlan {
	p := &transposePlan{out: make([]int64, len(shape))}
	for i, a := range perm {
		p.out[i] = shape[a]
	}
	if graph.NumElements(shape) == 0 {
		p.copy = true
		return p
	}
	// Renumber the source axes that are kept (size > 1), in source order.
	id := make([]int, len(shape))
	var kept []int64
	for a, d := range shape {
		id[a] = -1
		if d > 1 {
			id[a] = len(kept)
			kept = append(kept, d)
		}
	}
	// Merge runs of consecutive source axes in output order into groups.
	var groups [][2]int // first and last kept source axis of each group
	for _, a := range perm {
		k := id[a]
		if k < 0 {
			continue
		}
		if n := len(groups); n > 0 && groups[n-1][1] == k-1 {
			groups[n-1][1] = k
		} else {
			groups = append(groups, [2]int{k, k})
		}
	}
	if len(groups) <= 1 {
		p.copy = true
		return p
	}
	// Coalesced source shape: groups in source order.
	order := make([]int, len(groups)) // order[j] = the group holding the j-th source block
	for g := range groups {
		rank := 0
		for h := range groups {
			if groups[h][0] < groups[g][0] {
				rank++
			}
		}
		order[rank] = g
	}
	srcShape := make([]int64, len(groups))
	srcAxis := make([]int, len(groups)) // srcAxis[g] = coalesced source axis of group g
	for j, g := range order {
		srcShape[j] = graph.NumElements(kept[groups[g][0] : groups[g][1]+1])
		srcAxis[g] = j
	}
	switch {
	case len(groups) == 2:
		p.tiled, p.batch, p.rows, p.cols = true, 1, srcShape[0], srcShape[1]
		return p
	case len(groups) == 3 && srcAxis[0] == 0 && srcAxis[1] == 2:
		p.tiled, p.batch, p.rows, p.cols = true, srcShape[0], srcShape[1], srcShape[2]
		return p
	}
	strides := graph.Strides(srcShape)
	outShape := make([]int64, len(groups))
	tabs := make([][]int64, len(groups))
	for g := range groups {
		outShape[g] = srcShape[srcAxis[g]]
		tabs[g] = rangeTable(outShape[g], 0, strides[srcAxis[g]])
	}
	p.gather = newTableGather(outShape, tabs)
	return p
}

// run transposes src into dst.
func (p *transposePlan) run(threads *Threads, dst, src cells) {
	switch {
	case p.copy:
		copyCells(dst, 0, src, 0, graph.NumElements(p.out))
	case p.tiled:
		transposeTiled(threads, dst, src, p.batch, p.rows, p.cols)
	default:
		p.gather.gather(threads, dst, src, cells{})
	}
}

// transposeTiled transposes batch matrices of rows×cols cells of src into
// cols×rows matrices in dst.
func transposeTiled(threads *Threads, dst, src cells, batch, rows, cols int64) {
	switch dst.size {
	case 0:
		transposeTiledT(threads, dst.s, src.s, batch, rows, cols)
	case 1:
		transposeTiledT(threads, dst.b, src.b, batch, rows, cols)
	case 2:
		transposeTiledT(threads, cellsAs[[2]byte](dst.b), cellsAs[[2]byte](src.b), batch, rows, cols)
	case 4:
		transposeTiledT(threads, cellsAs[[4]byte](dst.b), cellsAs[[4]byte](src.b), batch, rows, cols)
	case 8:
		transposeTiledT(threads, cellsAs[[8]byte](dst.b), cellsAs[[8]byte](src.b), batch, rows, cols)
	default:
		transposeTiledT(threads, cellsAs[[16]byte](dst.b), cellsAs[[16]byte](src.b), batch, rows, cols)
	}
}

const transposeTile = 32

func transposeTiledT[T any](threads *Threads, dst, src []T, batch, rows, cols int64) {
	colTiles := (cols + transposeTile - 1) / transposeTile
	grain := int(max(1, 16384/(rows*transposeTile)))
	threads.For(int(batch*colTiles), grain, func(lo, hi int) {
		for t := int64(lo); t < int64(hi); t++ {
			b, c0 := t/colTiles, t%colTiles*transposeTile
			c1 := min(c0+transposeTile, cols)
			s := src[b*rows*cols : (b+1)*rows*cols]
			d := dst[b*rows*cols : (b+1)*rows*cols]
			for r0 := int64(0); r0 < rows; r0 += transposeTile {
				r1 := min(r0+transposeTile, rows)
				for c := c0; c < c1; c++ {
					drow := d[c*rows : (c+1)*rows]
					for r := r0; r < r1; r++ {
						drow[r] = s[r*cols+c]
					}
				}
			}
		}
	})
}

// blockSize returns the blocksize attribute, which must be positive.
func blockSize(c *Call) (int64, error) {
	bs := ops.Params[ops.SpaceToDepthParams](c.Node, c.Opset).Blocksize
	if c.Node.OpType == "DepthToSpace" {
		bs = ops.Params[ops.DepthToSpaceParams](c.Node, c.Opset).Blocksize
	}
	if bs <= 0 {
		return 0, c.Errorf("blocksize %d must be positive", bs)
	}
	return bs, nil
}

// rank4 returns input 0, which must have rank 4.
func rank4(c *Call) (*graph.Tensor, error) {
	x, err := inputTensor(c, 0)
	if err != nil {
		return nil, err
	}
	if x.Rank() != 4 {
		return nil, c.Errorf("input must have rank 4, has shape %v", x.Shape)
	}
	return x, nil
}

func depthToSpaceKernel(c *Call) error {
	x, err := rank4(c)
	if err != nil {
		return err
	}
	bs, err := blockSize(c)
	if err != nil {
		return err
	}
	n, ch, h, w := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	if ch%bs != 0 || ch/bs%bs != 0 {
		return c.Errorf("channels %d not divisible by blocksize %d squared", ch, bs)
	}
	oc := ch / bs / bs
	if err := c.Check(x.DType, []int64{n, oc, h, bs, w, bs}); err != nil {
		return err
	}
	var shape6 []int64
	var perm []int
	switch mode := ops.Params[ops.DepthToSpaceParams](c.Node, c.Opset).Mode; {
	case mode == "DCR" || c.Opset < 11:
		shape6, perm = []int64{n, bs, bs, oc, h, w}, []int{0, 3, 4, 1, 5, 2}
	case mode == "CRD":
		shape6, perm = []int64{n, oc, bs, bs, h, w}, []int{0, 1, 4, 2, 5, 3}
	default:
		return c.Errorf("unknown mode %q", mode)
	}
	out := c.Output(0, x.DType, []int64{n, oc, h * bs, w * bs})
	dst := outCells(out)
	transposeCells(c.Threads, dst, inCells(x), shape6, perm)
	storeCells(out, dst)
	return nil
}

func spaceToDepthKernel(c *Call) error {
	x, err := rank4(c)
	if err != nil {
		return err
	}
	bs, err := blockSize(c)
	if err != nil {
		return err
	}
	n, ch, h, w := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	if h%bs != 0 || w%bs != 0 {
		return c.Errorf("spatial size %dx%d not divisible by blocksize %d", h, w, bs)
	}
	if err := c.Check(x.DType, []int64{ch, bs, bs}); err != nil {
		return err
	}
	out := c.Output(0, x.DType, []int64{n, ch * bs * bs, h / bs, w / bs})
	dst := outCells(out)
	transposeCells(c.Threads, dst, inCells(x), []int64{n, ch, h / bs, bs, w / bs, bs}, []int{0, 3, 5, 1, 2, 4})
	storeCells(out, dst)
	return nil
}
