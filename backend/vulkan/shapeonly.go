package vulkan

import (
	"fmt"
	"maps"
	"slices"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/planner"
)

// shapeOnly reports whether the node q describes computes values that
// depend on the graph inputs through their types only (see
// planner.Plan.ShapeOnly): a Shape or Size of a tensor, or a deterministic
// node without subgraphs whose inputs are all shape-only values or
// constants. A program computes such a node on the host, once for the
// sizes it is compiled for (see evaluateShapes), instead of lowering it:
// the position Ranges and masks of a decoder's class plan cost no
// dispatch and no submission of their own, and their sizes are known to
// the nodes after them.
func shapeOnly(q planner.Query) bool {
	n := q.Node
	if ops.Has(n.Domain, n.OpType, ops.TypeOnly) {
		return len(q.Inputs) > 0 && q.Inputs[0] != nil && q.Inputs[0].Kind == graph.TensorKind
	}
	if q.ShapeOnly == nil || ops.Has(n.Domain, n.OpType, ops.Nondeterministic) || len(graph.NodeSubgraphs(n)) > 0 {
		return false
	}
	for k, name := range n.Inputs {
		if name != "" && !q.ShapeOnly[k] && (k >= len(q.Consts) || q.Consts[k] == nil) {
			return false
		}
	}
	return true
}

// evaluated is what evaluateShapes computed for one compile of a segment.
type evaluated struct {
	// plan is a copy of the plan in which the computed values are
	// constants and their steps are gone; steps are the segment's other
	// steps, in plan.Steps.
	plan  *planner.Plan
	steps []planner.Step
	// escaping are the computed values that a step outside the segment or
	// the caller reads: a Run hands them over as host tensors.
	escaping map[int]*graph.Tensor
	// computed holds the values computed here and those known by the
	// binding, which the program binds as weights of its own (see
	// makeResident).
	computed map[*graph.Tensor]bool
	// lowered holds, by node, the launches that the caller's propagate
	// made of the steps left for compile (a class program lowers every
	// step to learn its output sizes), which compile takes instead of
	// lowering them again; nil where there are none.
	lowered map[*graph.Node]*launch
}

// evaluateShapes computes on the host, with p.Evaluate, the steps of the
// segment steps whose node is shape-only (see shapeOnly) and whose inputs
// are known by then: constants, values it computed before, and for Shape
// and Size their input's type; known gives the values of shape-only
// inputs the segment reads from outside (see classProgram.program). Each
// other step goes to propagate, when not nil, which may give the types of
// its outputs in the copy of the plan (a class program's binding).
// queries, when not nil, are the steps' queries as p.Query gives them.
func evaluateShapes(p *planner.Plan, steps []planner.Step, queries []planner.Query, known map[int]*graph.Tensor, propagate func(cp *planner.Plan, st *planner.Step, q planner.Query) error) (*evaluated, error) {
	cp := *p
	cp.Constants = maps.Clone(p.Constants)
	cp.Types = slices.Clone(p.Types)
	set := func(v int, t *graph.Tensor) {
		cp.Constants[v] = t
		cp.Types[v] = t.ValueType()
	}
	for v, t := range known {
		set(v, t)
	}
	var done []int
	for i := range steps {
		st := &steps[i]
		var q planner.Query
		if queries != nil {
			q = boundQuery(&cp, st, queries[i])
		} else {
			q = queryOf(&cp, st)
		}
		if shapeOnly(q) {
			ok, err := evaluateStep(&cp, st, set)
			if err != nil {
				return nil, err
			}
			if ok {
				done = append(done, i)
				continue
			}
		}
		if propagate != nil {
			if err := propagate(&cp, st, q); err != nil {
				return nil, err
			}
		}
	}
	first := stepIndex(p, &steps[0])
	if first < 0 {
		if len(done) > 0 {
			return nil, fmt.Errorf("vulkan: the segment of %s is not part of its plan", steps[0].Node)
		}
		return &evaluated{plan: &cp, steps: steps}, nil
	}
	// The plan's steps without those computed: the segment's others keep
	// their place, so that compile tells them from the plan's others.
	var release []int
	cp.Steps = make([]planner.Step, 0, len(p.Steps)-len(done))
	cp.Steps = append(cp.Steps, p.Steps[:first]...)
	for i := range steps {
		if slices.Contains(done, i) {
			release = append(release, steps[i].Release...)
			continue
		}
		cp.Steps = append(cp.Steps, steps[i])
	}
	kept := len(cp.Steps) - first
	cp.Steps = append(cp.Steps, p.Steps[first+len(steps):]...)
	e := &evaluated{plan: &cp, steps: cp.Steps[first : first+kept : first+kept], escaping: map[int]*graph.Tensor{}, computed: map[*graph.Tensor]bool{}}
	for v, t := range cp.Constants {
		if p.Constants[v] != t {
			e.computed[t] = true
		}
	}
	if kept > 0 && len(release) > 0 {
		last := &e.steps[kept-1]
		last.Release = slices.Concat(last.Release, release)
	}
	readers := map[int]bool{}
	for _, v := range p.Outputs {
		readers[v] = true
	}
	for i := range p.Steps {
		if i < first || i >= first+len(steps) {
			for _, v := range slices.Concat(p.Steps[i].In, p.Steps[i].Captured) {
				readers[v] = true
			}
		}
	}
	for _, i := range done {
		for _, v := range steps[i].Out {
			if v >= 0 && readers[v] {
				e.escaping[v] = cp.Constants[v]
			}
		}
	}
	return e, nil
}

// evaluateStep computes shape-only step st of cp with cp.Evaluate when its
// inputs are known, and gives its outputs to set; it reports whether it
// did.
func evaluateStep(cp *planner.Plan, st *planner.Step, set func(v int, t *graph.Tensor)) (bool, error) {
	typeOnly := ops.Has(st.Node.Domain, st.Node.OpType, ops.TypeOnly)
	in := make([]*graph.Tensor, len(st.In))
	for k, v := range st.In {
		switch {
		case v < 0:
		case typeOnly && k == 0:
			if v >= len(cp.Types) {
				return false, nil
			}
			t := cp.Types[v]
			if !known(t) {
				return false, nil
			}
			in[k] = &graph.Tensor{DType: t.Elem, Shape: t.Shape.Ints()}
		default:
			if in[k] = cp.Fixed(v); in[k] == nil {
				return false, nil
			}
		}
	}
	if cp.Evaluate == nil {
		return false, fmt.Errorf("vulkan: %s: no device computes shape values on the host", st.Node)
	}
	out, err := cp.Evaluate(st.Node, st.Opset, in)
	if err != nil {
		return false, fmt.Errorf("vulkan: %s: computing its value from the sizes: %w", st.Node, err)
	}
	for k, v := range st.Out {
		if v < 0 {
			continue
		}
		if k >= len(out) || out[k] == nil {
			return false, fmt.Errorf("vulkan: %s: computing its value from the sizes gave no output %d", st.Node, k)
		}
		set(v, out[k])
	}
	return true, nil
}

// stepIndex returns the index in p.Steps of st, a pointer into it, or -1.
func stepIndex(p *planner.Plan, st *planner.Step) int {
	for i := range p.Steps {
		if &p.Steps[i] == st {
			return i
		}
	}
	return -1
}
