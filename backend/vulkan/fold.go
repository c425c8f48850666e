package vulkan

import (
	"slices"
	"strings"

	"github.com/x448/float16"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/planner"
)

// readCounts counts, for each value of p, the steps that read it.
func readCounts(p *planner.Plan) map[int]int {
	reads := make(map[int]int, len(p.Values))
	for _, st := range p.Steps {
		for _, v := range st.In {
			reads[v]++
		}
		for _, v := range st.Captured {
			reads[v]++
		}
	}
	return reads
}

// foldTransposes lets each MatMul and FusedMatMul of the segment that
// reads the output of a Transpose of the segment, which nothing else reads
// and which does not leave it, read the Transpose's input through permuted
// strides instead (matmul.comp takes any strides): compiled[j] becomes a
// copy of the product's step reading that input, launches[j] its launch,
// compiled[i] of the Transpose nil and fusedInto[i] the product's node. It
// does not where a step between the two, or the product itself, writes
// memory that the input shares: the planner let that happen, as the input
// was dead unfused (the product's invocations would overwrite the input
// that others still read). A product whose batch became rows of a
// (matmulGeom.foldBatch) reads a contiguously: its a stays unfolded.
func foldTransposes(p *planner.Plan, steps []planner.Step, launches []*launch, compiled []*planner.Step, fusedInto []*graph.Node, escapes map[int]bool, reads map[int]int) {
	producer := map[int]int{}
	for i, st := range steps {
		for _, v := range st.Out {
			producer[v] = i
		}
	}
	for j, st := range steps {
		n, l := st.Node, launches[j]
		if !ops.StridedProduct(n) || compiled[j] == nil || !l.runs("matmul") || len(l.then) > 0 {
			continue
		}
		for k := range 2 {
			v := st.In[k]
			i, ok := producer[v]
			if !ok || compiled[i] == nil || reads[v] != 1 || escapes[v] || l.halfInput(k) || k == 0 && l.rowsOfBatch {
				continue
			}
			tn := steps[i].Node
			x := steps[i].In[0]
			if tn.Domain != graph.DefaultDomain || tn.OpType != "Transpose" || !launches[i].runs("transpose") || p.Types[x] == nil || p.Types[v] == nil {
				continue
			}
			xs, shape := p.Types[x].Shape.Ints(), p.Types[v].Shape.Ints()
			perm := transposePerm(tn, p.Model.OpsetOf(tn), len(xs))
			if len(shape) < 2 || len(perm) != len(xs) || overwritten(p, steps[i+1:j+1], x) {
				continue
			}
			xst := graph.Strides(xs)
			st := make([]int64, len(perm))
			for d, from := range perm {
				st[d] = xst[from]
			}
			folded := *compiled[j]
			folded.In = slices.Clone(folded.In)
			folded.In[k] = x
			fl := *l
			fl.readThrough(k, shape, st)
			compiled[j], launches[j], compiled[i], fusedInto[i] = &folded, &fl, nil, n
			l = &fl
		}
	}
}

// overwritten reports whether one of steps writes memory value v shares.
func overwritten(p *planner.Plan, steps []planner.Step, v int) bool {
	for _, st := range steps {
		for _, o := range st.Out {
			if o >= 0 && sharesArena(p, v, o) {
				return true
			}
		}
	}
	return false
}

// runs tells whether l runs shader, in float32 or as its HALF variant on
// float16 tensors.
func (l *launch) runs(shader string) bool {
	return l.shader == shader || l.shader == shader+halfSuffix
}

// floatType is the element type of the float tensors l binds: float16 on
// a HALF variant, else float32.
func (l *launch) floatType() graph.DType {
	if strings.HasSuffix(l.shader, halfSuffix) {
		return graph.Float16
	}
	return graph.Float
}

// floatScalar returns the value of c when it is one element of type dt,
// float32 or float16.
func floatScalar(c *graph.Tensor, dt graph.DType) (float32, bool) {
	if c == nil || c.DType != dt || c.NumElements() != 1 {
		return 0, false
	}
	switch dt {
	case graph.Float:
		return graph.View[float32](c)[0], true
	case graph.Float16:
		return float16.Frombits(graph.View[uint16](c)[0]).Float32(), true
	}
	return 0, false
}

// foldProductTails lets each MatMul and FusedMatMul of the segment absorb
// the steps right after it that scale its result by a scalar constant
// (Mul) or add a value of the result's shape (Add, a residual):
// matmul.comp scales by alpha and beta and adds the residual in its
// store. The result must be read by nothing else and not leave the
// segment; the tail's output must not share memory with the product's
// inputs, which other invocations still read while one writes; a scale
// after a residual is not folded (it would scale the residual too).
func foldProductTails(p *planner.Plan, steps []planner.Step, launches []*launch, compiled []*planner.Step, fusedInto []*graph.Node, escapes map[int]bool, reads map[int]int) {
	for j := range steps {
		if !ops.StridedProduct(steps[j].Node) || compiled[j] == nil || !launches[j].runs("matmul") {
			continue
		}
		for cur := j; cur+1 < len(steps) && compiled[cur+1] != nil; cur++ {
			folded, l, ok := foldTail(p, compiled[cur], launches[cur], &steps[cur+1], reads, escapes)
			if !ok {
				break
			}
			compiled[cur+1], launches[cur+1] = folded, l
			compiled[cur], fusedInto[cur] = nil, steps[cur+1].Node
		}
	}
}

// foldTail returns product step st, lowered to l, with the elementwise
// step tail folded into it (see foldProductTails); ok is false when tail
// does not fold.
func foldTail(p *planner.Plan, st *planner.Step, l *launch, tail *planner.Step, reads map[int]int, escapes map[int]bool) (*planner.Step, *launch, bool) {
	v := st.Out[0]
	n := tail.Node
	if reads[v] != 1 || escapes[v] || n.Domain != graph.DefaultDomain || len(tail.In) != 2 || len(tail.Out) != 1 || tail.Out[0] < 0 || l.sums() {
		return nil, nil, false
	}
	other := tail.In[0]
	if other == v {
		other = tail.In[1]
	} else if tail.In[1] != v {
		return nil, nil, false
	}
	if other == v || other < 0 {
		return nil, nil, false
	}
	for _, u := range st.In {
		if u >= 0 && sharesArena(p, tail.Out[0], u) {
			return nil, nil, false
		}
	}
	folded, fl := *st, *l
	folded.Node, folded.Opset, folded.Out, folded.Release = n, tail.Opset, tail.Out, tail.Release
	switch n.OpType {
	case "Mul":
		c := p.Fixed(other)
		f, ok := floatScalar(c, l.floatType())
		if !ok {
			return nil, nil, false
		}
		fl.scaled(f)
	case "Add":
		t := p.Types[other]
		if t == nil || t.Elem != l.floatType() || !slices.Equal(t.Shape.Ints(), l.outShapes[0]) {
			return nil, nil, false
		}
		folded.In = append(slices.Clone(st.In), other)
		fl.summing(len(folded.In) - 1)
	default:
		return nil, nil, false
	}
	return &folded, &fl, true
}

// foldSplits drops each Split of the segment whose every output reaches,
// through views alone (Reshape, Flatten, Squeeze, Unsqueeze, Identity),
// one Transpose read by the Split's output alone: each Transpose then
// copies its part straight from the Split's input, through the strides the
// slice, the views and the permutation compose to (copy.comp), and the
// Split and the views record nothing. Attention's query, key and value
// heads come out of one product that way. It does not when a step in
// between writes memory the Split's input shares, when a view does not
// keep its elements at a fixed stride, or when an output has another
// reader or leaves the segment. The Transposes' outputs go in io slots of
// their own (private), so that they do not overwrite the Split's input,
// which the planner let them do, while another part still reads it.
func foldSplits(p *planner.Plan, steps []planner.Step, launches []*launch, compiled []*planner.Step, fusedInto []*graph.Node, escapes map[int]bool, reads map[int]int, private map[int]bool, c caps) {
	reader := map[int]int{}
	for i, st := range steps {
		for _, v := range st.In {
			reader[v] = i
		}
	}
	for s, st := range steps {
		n := st.Node
		if compiled[s] == nil || n.Domain != graph.DefaultDomain || n.OpType != "Split" || p.Types[st.In[0]] == nil {
			continue
		}
		x := st.In[0]
		xt := p.Types[x]
		xs := xt.Shape.Ints()
		w := int32(xt.Elem.Bits() / 32)
		axis := ops.Params[ops.SplitParams](n, p.Model.OpsetOf(n)).Axis
		if axis < 0 {
			axis += int64(len(xs))
		}
		if xt.Elem.Bits()%32 != 0 || w < 1 || w > 2 || axis < 0 || axis >= int64(len(xs)) {
			continue
		}
		type part struct {
			views []int
			tr    int
			l     *launch
		}
		var parts []part
		xst := graph.Strides(xs)
		base := int64(0)
		for _, o := range st.Out {
			pt, ok := part{tr: -1}, o >= 0 && p.Types[o] != nil
			shape, strides := []int64(nil), slices.Clone(xst)
			if ok {
				shape = p.Types[o].Shape.Ints()
			}
			for cur := o; ok; {
				r, read := reader[cur]
				if !read || reads[cur] != 1 || escapes[cur] || compiled[r] == nil || r <= s {
					ok = false
					break
				}
				rn := steps[r].Node
				if rn.Domain != graph.DefaultDomain || steps[r].In[0] != cur || len(steps[r].Out) != 1 || p.Types[steps[r].Out[0]] == nil {
					ok = false
					break
				}
				next := p.Types[steps[r].Out[0]].Shape.Ints()
				if isView(rn) {
					strides, ok = restride(shape, strides, next)
					shape, cur = next, steps[r].Out[0]
					pt.views = append(pt.views, r)
					continue
				}
				if rn.OpType != "Transpose" {
					ok = false
					break
				}
				perm := transposePerm(rn, p.Model.OpsetOf(rn), len(shape))
				if len(perm) != len(shape) {
					ok = false
					break
				}
				sst := make([]int64, len(perm))
				for d, from := range perm {
					sst[d] = strides[from]
				}
				l, fits := copyLaunch(&query{caps: c}, 0, 0, w, view{dims: next, sst: sst, dst: graph.Strides(next), sbase: base})
				if !fits {
					ok = false
					break
				}
				l.outShapes, l.rawInputs, l.outTypes = [][]int64{next}, []int{0}, []graph.DType{xt.Elem}
				pt.tr, pt.l = r, l
				break
			}
			if !ok {
				parts = nil
				break
			}
			parts = append(parts, pt)
			base += p.Types[o].Shape.Ints()[axis] * xst[axis]
		}
		if parts == nil {
			continue
		}
		last, mine := s, map[int]bool{}
		for _, pt := range parts {
			last = max(last, pt.tr)
			mine[pt.tr] = true
		}
		var between []planner.Step
		for i := s + 1; i < last; i++ {
			if !mine[i] {
				between = append(between, steps[i])
			}
		}
		if overwritten(p, between, x) {
			continue
		}
		compiled[s], fusedInto[s] = nil, steps[parts[0].tr].Node
		for _, pt := range parts {
			for _, v := range pt.views {
				compiled[v], fusedInto[v] = nil, steps[pt.tr].Node
			}
			folded := steps[pt.tr]
			folded.In = []int{x}
			compiled[pt.tr], launches[pt.tr] = &folded, pt.l
			private[folded.Out[0]] = true
		}
	}
}

// restride returns the strides that read shape to, of as many elements,
// from memory that holds shape from at strides st; ok is false when a run
// of dimensions to merges or splits is not at one stride in memory.
func restride(from, st, to []int64) ([]int64, bool) {
	var fs, fst []int64
	for i, d := range from {
		if d != 1 {
			fs, fst = append(fs, d), append(fst, st[i])
		}
	}
	out := make([]int64, len(to))
	fi := 0
	for ti := 0; ti < len(to); {
		if to[ti] == 1 {
			ti++
			continue
		}
		if fi >= len(fs) {
			return nil, false
		}
		tp, fp := to[ti], fs[fi]
		tj, fj := ti+1, fi+1
		for tp != fp {
			if tp < fp {
				if tj >= len(to) {
					return nil, false
				}
				tp *= to[tj]
				tj++
			} else {
				if fj >= len(fs) {
					return nil, false
				}
				fp *= fs[fj]
				fj++
			}
		}
		for k := fi; k < fj-1; k++ {
			if fst[k] != fst[k+1]*fs[k+1] {
				return nil, false
			}
		}
		last := fst[fj-1]
		for k := tj - 1; k >= ti; k-- {
			out[k] = last
			last *= to[k]
		}
		ti, fi = tj, fj
	}
	return out, fi == len(fs)
}

// foldMaskedSoftmax lets each Softmax or LogSoftmax of the segment that
// reads, alone, the step right before it, a Where of a constant bool cond
// between x and a scalar constant fill (attention's mask: Where(cond,
// -inf, x)), read x instead and pick fill where cond says (softmax.comp's
// mask): the same values, one dispatch less. x and fill are of the
// Softmax's float type: float32, or float16 on softmax.comp's HALF
// variant, which widens fill exactly as the unfused Where's output would
// be. x must have the output's shape and not share memory with the
// Softmax's output, which other workgroups write while one reads.
func foldMaskedSoftmax(p *planner.Plan, steps []planner.Step, launches []*launch, compiled []*planner.Step, fusedInto []*graph.Node, escapes map[int]bool, reads map[int]int) {
	for s := 1; s < len(steps); s++ {
		st, w := &steps[s], &steps[s-1]
		if compiled[s] == nil || compiled[s-1] == nil || !launches[s].runs("softmax") || launches[s].params != nil ||
			w.Node.Domain != graph.DefaultDomain || w.Node.OpType != "Where" || len(w.In) != 3 || len(w.Out) != 1 {
			continue
		}
		v := w.Out[0]
		if st.In[0] != v || reads[v] != 1 || escapes[v] {
			continue
		}
		cond := p.Fixed(w.In[0])
		if cond == nil || cond.DType != graph.Bool {
			continue
		}
		x, fill, fillWhen := w.In[2], p.Fixed(w.In[1]), true
		if fill == nil {
			x, fill, fillWhen = w.In[1], p.Fixed(w.In[2]), false
		}
		shape, float := launches[s].outShapes[0], launches[s].floatType()
		f, ok := floatScalar(fill, float)
		if !ok || x < 0 || p.Types[x] == nil || p.Types[x].Elem != float || !slices.Equal(p.Types[x].Shape.Ints(), shape) ||
			sharesArena(p, x, st.Out[0]) {
			continue
		}
		if _, ok := broadcast(cond.Shape, shape); !ok || len(shape) > maxRank {
			continue
		}
		folded, l := *st, *launches[s]
		folded.In = []int{x}
		l.masked(shape, cond, f, fillWhen)
		compiled[s], launches[s] = &folded, &l
		compiled[s-1], fusedInto[s-1] = nil, st.Node
	}
}
