package hostfallback

import (
	"slices"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// Ordering ops: TopK and Unique. Both order elements with orderOf (NaN
// above every number) and break ties by index.

func init() {
	Register("TopK", topKKernel)
	Register("Unique", uniqueKernel)
}

func topKKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	k, err := scalarInt(c, 1)
	if err != nil {
		return err
	}
	axis, err := resolveAxis(c, ops.AxisParamOf(c.Node, c.Opset).Axis, x.Rank())
	if err != nil {
		return err
	}
	largest := ops.Params[ops.TopKParams](c.Node, c.Opset).Largest != 0
	dim := x.Shape[axis]
	if k < 0 || k > dim {
		return c.Errorf("k %d outside [0, %d]", k, dim)
	}
	cmp, ok := orderOf(x)
	if !ok || x.DType == graph.String || x.DType == graph.Bool || x.DType == graph.Complex64 || x.DType == graph.Complex128 {
		return c.Unsupported("TopK on %s", x.DType)
	}
	shape := append([]int64{}, x.Shape...)
	shape[axis] = k
	outer, inner := graph.NumElements(x.Shape[:axis]), graph.NumElements(x.Shape[axis+1:])
	// offs[p] is the source offset of output element p; idx its index.
	offs := make([]int64, outer*k*inner)
	var idx []int64
	if wantOutput(c, 1) {
		idx = graph.View[int64](c.Output(1, graph.Int64, shape))
	}
	c.Threads.For(int(outer*inner), int(max(1, 4096/max(dim, 1))), func(lo, hi int) {
		line := make([]int64, dim)
		for l := int64(lo); l < int64(hi); l++ {
			o, n := l/inner, l%inner
			base := o*dim*inner + n
			for a := range line {
				line[a] = int64(a)
			}
			order := func(a, b int64) int {
				r := cmp(base+a*inner, base+b*inner)
				if largest {
					r = -r
				}
				if r == 0 {
					r = int(a - b)
				}
				return r
			}
			sorted := line
			if k*4 < dim {
				selectFirst(line, k, order)
				sorted = line[:k]
			}
			slices.SortFunc(sorted, order)
			for j, a := range line[:k] {
				p := (o*k+int64(j))*inner + n
				offs[p] = base + a*inner
				if idx != nil {
					idx[p] = a
				}
			}
		}
	})
	if wantOutput(c, 0) {
		out := c.Output(0, x.DType, shape)
		dst := outCells(out)
		gatherTables(c.Threads, dst, inCells(x), []int64{int64(len(offs))}, [][]int64{offs}, cells{})
		storeCells(out, dst)
	}
	return nil
}

func uniqueKernel(c *Call) error {
	x, err := inputTensor(c, 0)
	if err != nil {
		return err
	}
	cmp, ok := orderOf(x)
	if !ok {
		return c.Unsupported("Unique on %s", x.DType)
	}
	// Items are elements (no axis) or slices along the axis, compared
	// lexicographically.
	shape := []int64{x.NumElements()}
	axis := 0
	if a := c.Node.Attr("axis"); a != nil {
		if axis, err = resolveAxis(c, a.I, x.Rank()); err != nil {
			return err
		}
		shape = append([]int64{}, x.Shape...)
	}
	dim := shape[axis]
	outer, inner := graph.NumElements(shape[:axis]), graph.NumElements(shape[axis+1:])
	order := make([]int64, dim)
	for i := range order {
		order[i] = int64(i)
	}
	cmpItems := func(a, b int64) int {
		for o := range outer {
			base := o * dim * inner
			for n := range inner {
				if r := cmp(base+a*inner+n, base+b*inner+n); r != 0 {
					return r
				}
			}
		}
		return 0
	}
	slices.SortStableFunc(order, cmpItems)
	// Groups of equal items, in sorted order: first is the lowest index.
	var first, counts []int64
	group := make([]int64, dim) // group of each item
	for j, it := range order {
		if j == 0 || cmpItems(order[j-1], it) != 0 {
			first = append(first, it)
			counts = append(counts, 0)
		}
		g := int64(len(first) - 1)
		group[it] = g
		counts[g]++
	}
	u := int64(len(first))
	// pos[g] is group g's place in the output.
	pos := make([]int64, u)
	for g := range pos {
		pos[g] = int64(g)
	}
	if ops.Params[ops.UniqueParams](c.Node, c.Opset).Sorted == 0 {
		byFirst := make([]int64, u)
		copy(byFirst, pos)
		slices.SortFunc(byFirst, func(a, b int64) int { return int(first[a] - first[b]) })
		for p, g := range byFirst {
			pos[g] = int64(p)
		}
	}
	if wantOutput(c, 0) {
		tab := make([]int64, u)
		for g, f := range first {
			tab[pos[g]] = f * inner
		}
		yShape := append([]int64{}, shape...)
		yShape[axis] = u
		out := c.Output(0, x.DType, yShape)
		dst := outCells(out)
		gatherTables(c.Threads, dst, inCells(x), []int64{outer, u, inner},
			[][]int64{rangeTable(outer, 0, dim*inner), tab, rangeTable(inner, 0, 1)}, cells{})
		storeCells(out, dst)
	}
	if wantOutput(c, 1) {
		v := graph.View[int64](c.Output(1, graph.Int64, []int64{u}))
		for g, f := range first {
			v[pos[g]] = f
		}
	}
	if wantOutput(c, 2) {
		v := graph.View[int64](c.Output(2, graph.Int64, []int64{dim}))
		for it, g := range group {
			v[it] = pos[g]
		}
	}
	if wantOutput(c, 3) {
		v := graph.View[int64](c.Output(3, graph.Int64, []int64{u}))
		for g, n := range counts {
			v[pos[g]] = n
		}
	}
	return nil
}

// selectFirst moves the k items that order puts first to the front of
// items (in no particular order), keeping them in a heap whose root is the
// last of them: O(len(items) log k).
func selectFirst(items []int64, k int64, order func(a, b int64) int) {
	h := items[:k]
	down := func(i int) {
		for {
			l, worst := 2*i+1, i
			if l < len(h) && order(h[l], h[worst]) > 0 {
				worst = l
			}
			if r := l + 1; r < len(h) && order(h[r], h[worst]) > 0 {
				worst = r
			}
			if worst == i {
				return
			}
			h[i], h[worst] = h[worst], h[i]
			i = worst
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	for _, it := range items[k:] {
		if len(h) > 0 && order(it, h[0]) < 0 {
			h[0] = it
			down(0)
		}
	}
}
