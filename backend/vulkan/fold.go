package vulkan

import (
	"slices"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/planner"
)

// readCounts counts, for each value of p, the steps that read it.
func readCounts(p *planner.Plan) map[int]int {
	reads := map[int]int{}
	for _, st := range p.Steps {
		for _, v := range append(slices.Clone(st.In), st.Captured...) {
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
// compiled[i] of the Transpose nil and fusedInto[i] the product's node. It does not where a step between
// the two writes memory that the input shares: the planner let that
// happen, as the input was dead unfused.
func foldTransposes(p *planner.Plan, steps []planner.Step, launches []*launch, compiled []*planner.Step, fusedInto []*graph.Node, escapes map[int]bool) {
	reads := readCounts(p)
	producer := map[int]int{}
	for i, st := range steps {
		for _, v := range st.Out {
			producer[v] = i
		}
	}
	for j, st := range steps {
		n, l := st.Node, launches[j]
		product := n.Domain == graph.DefaultDomain && n.OpType == "MatMul" || n.Domain == ops.FusedDomain && n.OpType == "FusedMatMul"
		if !product || compiled[j] == nil || l.shader != "matmul" || len(l.then) > 0 {
			continue
		}
		for k := range 2 {
			v := st.In[k]
			i, ok := producer[v]
			if !ok || compiled[i] == nil || reads[v] != 1 || escapes[v] || l.halfInput(k) {
				continue
			}
			tn := steps[i].Node
			x := steps[i].In[0]
			if tn.Domain != graph.DefaultDomain || tn.OpType != "Transpose" || p.Types[x] == nil || p.Types[v] == nil {
				continue
			}
			xs, shape := p.Types[x].Shape.Ints(), p.Types[v].Shape.Ints()
			perm := tn.AttrInts("perm", nil)
			if perm == nil {
				for d := len(xs) - 1; d >= 0; d-- {
					perm = append(perm, int64(d))
				}
			}
			if len(shape) < 2 || len(perm) != len(xs) || overwritten(p, steps[i+1:j], x) {
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
