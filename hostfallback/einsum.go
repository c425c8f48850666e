package hostfallback

import (
	"slices"
	"strings"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// Einsum, with numpy's semantics: repeated labels in a term take
// diagonals, labels absent from the output are summed, "..." stands for
// broadcast leading axes, and without "->" the output lists the ellipsis
// axes and then the labels used once, in alphabetical order. A float32
// contraction of two operands runs as batched sgemm; everything else runs
// a strided loop over every label combination.

func init() {
	Register("Einsum", einsumKernel)
}

// einsumOperand is one input: its labels by axis (ellipsis axes have
// negative labels) and its shape.
type einsumOperand struct {
	labels []int
	shape  []int64
}

// einsumSpec is a parsed equation bound to the inputs' shapes.
type einsumSpec struct {
	ops  []einsumOperand
	out  []int
	size map[int]int64
}

// parseEinsum parses the equation for the input shapes.
func parseEinsum(c *Call, eq string, shapes [][]int64) (*einsumSpec, error) {
	eq = strings.Join(strings.Fields(eq), "")
	lhs, rhs, explicit := strings.Cut(eq, "->")
	terms := strings.Split(lhs, ",")
	if len(terms) != len(shapes) {
		return nil, c.Errorf("equation %q has %d operands for %d inputs", eq, len(terms), len(shapes))
	}
	s := &einsumSpec{size: map[int]int64{}}
	ell := 0
	for i, t := range terms {
		named := len(strings.ReplaceAll(t, "...", ""))
		if strings.Contains(t, "...") {
			ell = max(ell, len(shapes[i])-named)
		}
	}
	count := map[int]int{}
	for i, t := range terms {
		labels, err := einsumLabels(c, t, len(shapes[i]), ell)
		if err != nil {
			return nil, err
		}
		for j, l := range labels {
			d := shapes[i][j]
			if old, ok := s.size[l]; ok && old != d {
				switch {
				case l < 0 && old == 1:
				case l < 0 && d == 1:
					d = old
				default:
					return nil, c.Errorf("label %s has sizes %d and %d", einsumName(l), old, d)
				}
			}
			s.size[l] = d
			count[l]++
		}
		s.ops = append(s.ops, einsumOperand{labels: labels, shape: shapes[i]})
	}
	if explicit {
		out, err := einsumLabels(c, rhs, -1, ell)
		if err != nil {
			return nil, err
		}
		for i, l := range out {
			if _, ok := s.size[l]; !ok && l >= 0 {
				return nil, c.Errorf("output label %s is in no input", einsumName(l))
			}
			if slices.Contains(out[:i], l) {
				return nil, c.Errorf("output label %s repeated", einsumName(l))
			}
			if _, ok := s.size[l]; !ok {
				s.size[l] = 1
			}
		}
		s.out = out
		return s, nil
	}
	for i := range ell {
		s.out = append(s.out, -ell+i)
	}
	var once []int
	for l, n := range count {
		if l >= 0 && n == 1 {
			once = append(once, l)
		}
	}
	slices.Sort(once)
	s.out = append(s.out, once...)
	return s, nil
}

// einsumLabels reads a term's labels for an operand of the given rank (-1
// for the output, whose ellipsis spans all ell axes). Ellipsis axis i of
// ell is labelled i-ell, so that the axes of operands with fewer of them
// line up at the right.
func einsumLabels(c *Call, t string, rank, ell int) ([]int, error) {
	before, after, hasEll := strings.Cut(t, "...")
	if strings.Contains(after, "...") {
		return nil, c.Errorf("term %q has two ellipses", t)
	}
	var labels []int
	for _, r := range before {
		labels = append(labels, int(r))
	}
	if hasEll {
		e := ell
		if rank >= 0 {
			e = rank - len(before) - len(after)
		}
		if e < 0 {
			return nil, c.Errorf("term %q for rank %d", t, rank)
		}
		for i := range e {
			labels = append(labels, i-e)
		}
	}
	for _, r := range after {
		labels = append(labels, int(r))
	}
	for _, l := range labels {
		if l >= 0 && !('a' <= l && l <= 'z' || 'A' <= l && l <= 'Z') {
			return nil, c.Errorf("term %q has label %q", t, rune(l))
		}
	}
	if rank >= 0 && len(labels) != rank {
		return nil, c.Errorf("term %q for an input of rank %d", t, rank)
	}
	return labels, nil
}

// einsumName spells a label for error messages.
func einsumName(l int) string {
	if l < 0 {
		return "..."
	}
	return string(rune(l))
}

// strides returns the element stride of each label in order along the
// operand: the sum over the axes it labels (a diagonal), 0 along
// broadcast axes of size 1.
func (o *einsumOperand) strides(order []int) []int {
	st := make([]int, len(order))
	step := 1
	for j := len(o.labels) - 1; j >= 0; j-- {
		if o.shape[j] != 1 {
			if k := slices.Index(order, o.labels[j]); k >= 0 {
				st[k] += step
			}
		}
		step *= int(o.shape[j])
	}
	return st
}

func einsumKernel(c *Call) error {
	ts := make([]*graph.Tensor, len(c.In))
	shapes := make([][]int64, len(c.In))
	for i := range c.In {
		t, err := inputTensor(c, i)
		if err != nil {
			return err
		}
		if i > 0 && t.DType != ts[0].DType {
			return c.Errorf("inputs of types %s and %s", ts[0].DType, t.DType)
		}
		ts[i], shapes[i] = t, t.Shape
	}
	if len(ts) == 0 {
		return c.Errorf("no inputs")
	}
	dt := ts[0].DType
	if isHalf(dt) {
		return viaFloat32(c, dt, einsumKernel)
	}
	s, err := parseEinsum(c, ops.Params[ops.EinsumParams](c.Node, c.Opset).Equation, shapes)
	if err != nil {
		return err
	}
	shape := make([]int64, len(s.out))
	for i, l := range s.out {
		shape[i] = s.size[l]
	}
	y := c.Output(0, dt, shape)
	switch dt {
	case graph.Float:
		ins := make([][]float32, len(ts))
		for i, t := range ts {
			ins[i] = graph.View[float32](t)
		}
		if len(ins) == 2 && s.gemm(c.Threads, ins[0], ins[1], graph.View[float32](y)) {
			return nil
		}
		einsumRun(c.Threads, s, ins, graph.View[float32](y))
	case graph.Double:
		einsumRun(c.Threads, s, einsumViews[float64](ts), graph.View[float64](y))
	case graph.Int32:
		einsumRun(c.Threads, s, einsumViews[int32](ts), graph.View[int32](y))
	case graph.Int64:
		einsumRun(c.Threads, s, einsumViews[int64](ts), graph.View[int64](y))
	case graph.Uint32:
		einsumRun(c.Threads, s, einsumViews[uint32](ts), graph.View[uint32](y))
	case graph.Uint64:
		einsumRun(c.Threads, s, einsumViews[uint64](ts), graph.View[uint64](y))
	case graph.Int8:
		einsumRun(c.Threads, s, einsumViews[int8](ts), graph.View[int8](y))
	case graph.Uint8:
		einsumRun(c.Threads, s, einsumViews[uint8](ts), graph.View[uint8](y))
	case graph.Int16:
		einsumRun(c.Threads, s, einsumViews[int16](ts), graph.View[int16](y))
	case graph.Uint16:
		einsumRun(c.Threads, s, einsumViews[uint16](ts), graph.View[uint16](y))
	default:
		return c.Unsupported("type %s", dt)
	}
	return nil
}

// einsumViews returns the tensors' data as []T.
func einsumViews[T graph.Elem](ts []*graph.Tensor) [][]T {
	v := make([][]T, len(ts))
	for i, t := range ts {
		v[i] = graph.View[T](t)
	}
	return v
}

// einsumRun evaluates the spec into y by a strided loop over the output
// labels and, inside, the summed ones.
func einsumRun[T number](threads *Threads, s *einsumSpec, ins [][]T, y []T) {
	var sum []int
	for _, o := range s.ops {
		for _, l := range o.labels {
			if !slices.Contains(s.out, l) && !slices.Contains(sum, l) {
				sum = append(sum, l)
			}
		}
	}
	einsumLoop(threads, s, s.out, sum, s.ops, ins, y)
}

// einsumLoop sets y, laid out by the labels out, to the sum over the
// labels sum of the product of the operands.
func einsumLoop[T number](threads *Threads, s *einsumSpec, out, sum []int, ops []einsumOperand, ins [][]T, y []T) {
	outSize, sumSize := einsumSizes(s, out), einsumSizes(s, sum)
	outSt, sumSt := make([][]int, len(ops)), make([][]int, len(ops))
	for k := range ops {
		outSt[k], sumSt[k] = ops[k].strides(out), ops[k].strides(sum)
	}
	n := int(graph.NumElements(einsumInt64s(outSize)))
	inner := int(graph.NumElements(einsumInt64s(sumSize)))
	if inner == 0 {
		clear(y[:n])
		return
	}
	threads.For(n, max(1, parallelGrain/max(inner, 1)), func(lo, hi int) {
		base := make([]int, len(ops))
		off := make([]int, len(ops))
		idx := make([]int, len(sum))
		for o := lo; o < hi; o++ {
			clear(base)
			rem := o
			for d := len(out) - 1; d >= 0; d-- {
				i := rem % outSize[d]
				rem /= outSize[d]
				for k := range ops {
					base[k] += i * outSt[k][d]
				}
			}
			copy(off, base)
			clear(idx)
			var acc T
			for range inner {
				p := ins[0][off[0]]
				for k := 1; k < len(ops); k++ {
					p *= ins[k][off[k]]
				}
				acc += p
				for d := len(sum) - 1; d >= 0; d-- {
					idx[d]++
					for k := range ops {
						off[k] += sumSt[k][d]
					}
					if idx[d] < sumSize[d] {
						break
					}
					for k := range ops {
						off[k] -= sumSize[d] * sumSt[k][d]
					}
					idx[d] = 0
				}
			}
			y[o] = acc
		}
	})
}

// einsumSizes returns the sizes of the labels.
func einsumSizes(s *einsumSpec, labels []int) []int {
	sz := make([]int, len(labels))
	for i, l := range labels {
		sz[i] = int(s.size[l])
	}
	return sz
}

// einsumInt64s widens ints.
func einsumInt64s(v []int) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

// gemm evaluates a two-operand float32 spec as a batched matrix product
// when some label is contracted between the operands: each operand is
// first reduced and laid out as [batch, m, k] and [batch, k, n]. It
// reports false, doing nothing, for other specs.
func (s *einsumSpec) gemm(threads *Threads, a, b []float32, y []float32) bool {
	la, lb := s.ops[0].labels, s.ops[1].labels
	var batch, ms, ns, ks []int
	for _, l := range uniqueLabels(la) {
		inB, inOut := slices.Contains(lb, l), slices.Contains(s.out, l)
		switch {
		case inB && inOut:
			batch = append(batch, l)
		case inB:
			ks = append(ks, l)
		case inOut:
			ms = append(ms, l)
		}
	}
	for _, l := range uniqueLabels(lb) {
		if !slices.Contains(la, l) && slices.Contains(s.out, l) {
			ns = append(ns, l)
		}
	}
	if len(ks) == 0 {
		return false
	}
	sumOnly := func(l []int, other []int) []int {
		var r []int
		for _, x := range uniqueLabels(l) {
			if !slices.Contains(other, x) && !slices.Contains(s.out, x) {
				r = append(r, x)
			}
		}
		return r
	}
	nb := int(graph.NumElements(einsumInt64s(einsumSizes(s, batch))))
	m := int(graph.NumElements(einsumInt64s(einsumSizes(s, ms))))
	n := int(graph.NumElements(einsumInt64s(einsumSizes(s, ns))))
	k := int(graph.NumElements(einsumInt64s(einsumSizes(s, ks))))
	// Each operand is used in place when it already is [batch, m, k] or
	// [batch, k, m] (B: [batch, k, n] or [batch, n, k]), else laid out.
	pa, transA := a, false
	switch {
	case s.dense(s.ops[0], slices.Concat(batch, ms, ks)):
	case s.dense(s.ops[0], slices.Concat(batch, ks, ms)):
		transA = true
	default:
		pa = make([]float32, nb*m*k)
		einsumLoop(threads, s, slices.Concat(batch, ms, ks), sumOnly(la, lb), s.ops[:1], [][]float32{a}, pa)
	}
	pb, transB := b, false
	switch {
	case s.dense(s.ops[1], slices.Concat(batch, ks, ns)):
	case s.dense(s.ops[1], slices.Concat(batch, ns, ks)):
		transB = true
	default:
		pb = make([]float32, nb*k*n)
		einsumLoop(threads, s, slices.Concat(batch, ks, ns), sumOnly(lb, la), s.ops[1:], [][]float32{b}, pb)
	}
	orderC := slices.Concat(batch, ms, ns)
	pc := y
	if !slices.Equal(orderC, s.out) {
		pc = make([]float32, nb*m*n)
	}
	lda, ldb := k, n
	if transA {
		lda = m
	}
	if transB {
		ldb = k
	}
	for i := range nb {
		sgemm(threads, transA, transB, m, n, k, 1, pa[i*m*k:], lda, pb[i*k*n:], ldb, 0, pc[i*m*n:], n)
	}
	if !slices.Equal(orderC, s.out) {
		cop := einsumOperand{labels: orderC, shape: einsumInt64s(einsumSizes(s, orderC))}
		einsumLoop(threads, s, s.out, nil, []einsumOperand{cop}, [][]float32{pc}, y)
	}
	return true
}

// dense reports whether the operand's data is already laid out by the
// labels order: one axis per label, in that order, none broadcast.
func (s *einsumSpec) dense(o einsumOperand, order []int) bool {
	if !slices.Equal(o.labels, order) {
		return false
	}
	for j, l := range o.labels {
		if o.shape[j] != s.size[l] {
			return false
		}
	}
	return true
}

// uniqueLabels returns the labels without repeats, in first-seen order.
func uniqueLabels(l []int) []int {
	var u []int
	for _, x := range l {
		if !slices.Contains(u, x) {
			u = append(u, x)
		}
	}
	return u
}
