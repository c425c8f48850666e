package ops

import (
	"errors"
	"fmt"

	"github.com/onnxvk/onnxvk/graph"
)

// Control flow (If, Loop, Scan), sequences and optionals.

func init() {
	setRule(inferIf, "If")
	setRule(inferLoop, "Loop")
	SetInfer("", "Scan", 9, 0, inferScan)
	setRule(inferSequenceEmpty, "SequenceEmpty")
	setRule(inferSequenceConstruct, "SequenceConstruct")
	setRule(inferSequenceInsert, "SequenceInsert")
	setRule(inferSequenceAt, "SequenceAt")
	setRule(inferSequenceErase, "SequenceErase")
	setRule(inferSequenceLength, "SequenceLength")
	setRule(inferSplitToSequence, "SplitToSequence")
	setRule(inferConcatFromSequence, "ConcatFromSequence")
	setRule(inferSequenceMap, "SequenceMap")
	setRule(inferOptional, "Optional")
	setRule(inferOptionalHasElement, "OptionalHasElement")
	setRule(inferOptionalGetElement, "OptionalGetElement")
}

// unionType is the most specific type that covers both a and b: differing
// dimensions become unknown, differing ranks an unknown rank. It is nil when
// either is unknown or the two cannot be the same value's type.
func unionType(a, b *graph.Type) *graph.Type {
	if a == nil || b == nil || a.Kind != b.Kind {
		return nil
	}
	out := &graph.Type{Kind: a.Kind, Elem: a.Elem}
	if a.Elem != b.Elem {
		out.Elem = graph.Undefined
	}
	if a.Shape != nil && b.Shape != nil && len(a.Shape) == len(b.Shape) {
		out.Shape = make(graph.Shape, len(a.Shape))
		for i := range a.Shape {
			if SameDim(a.Shape[i], b.Shape[i]) {
				out.Shape[i] = a.Shape[i]
			} else {
				out.Shape[i] = graph.UnknownDim()
			}
		}
	}
	if a.Inner != nil || b.Inner != nil {
		out.Inner = unionType(a.Inner, b.Inner)
	}
	return out
}

// sameType reports whether two types are known to be identical.
func sameType(a, b *graph.Type) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Kind != b.Kind || a.Elem != b.Elem || (a.Shape == nil) != (b.Shape == nil) || len(a.Shape) != len(b.Shape) {
		return false
	}
	for i := range a.Shape {
		if a.Shape[i] != b.Shape[i] {
			return false
		}
	}
	return sameType(a.Inner, b.Inner)
}

// inferIf infers both branches; the outputs are the taken branch's types
// when the condition is known, else the union of both.
func inferIf(c *InferContext) error {
	thenG, elseG := c.Node.AttrGraph("then_branch"), c.Node.AttrGraph("else_branch")
	if thenG == nil || elseG == nil {
		return fmt.Errorf("missing then_branch or else_branch")
	}
	branch := func(name string, g *graph.Graph) ([]*graph.Type, error) {
		ts, err := c.Subgraph(g, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if len(ts) != len(c.OutTypes) {
			return nil, fmt.Errorf("%s has %d outputs for %d", name, len(ts), len(c.OutTypes))
		}
		return ts, nil
	}
	// A known condition takes one branch: the other never runs, and what
	// its inference thinks of the declared shapes does not matter.
	if cond, known := decode(c.val(0)); known && cond.len() == 1 {
		name, g := "then_branch", thenG
		if cond.int(0) == 0 {
			name, g = "else_branch", elseG
		}
		ts, err := branch(name, g)
		if err != nil {
			return err
		}
		for i, t := range ts {
			c.set(i, t)
		}
		return nil
	}
	tt, terr := branch("then_branch", thenG)
	et, eerr := branch("else_branch", elseG)
	switch {
	case terr != nil && eerr != nil:
		return errors.Join(terr, eerr)
	case terr != nil || eerr != nil:
		// One branch cannot be inferred from the types known here (a
		// shape only the run decides, or a branch that never runs): a Run
		// that takes it fails there. The outputs take the other branch's
		// kinds and element types, their shapes unknown.
		good := tt
		if terr != nil {
			good = et
		}
		for i, t := range good {
			if t != nil {
				c.set(i, &graph.Type{Kind: t.Kind, Elem: t.Elem})
			}
		}
	default:
		for i := range tt {
			c.set(i, unionType(tt[i], et[i]))
		}
	}
	return nil
}

// inferLoop infers the body with the loop-carried types, generalising the
// dimensions the body changes and inferring it again; scan outputs gain a
// leading iteration axis.
func inferLoop(c *InferContext) error {
	body := c.Node.AttrGraph("body")
	if body == nil {
		return fmt.Errorf("missing body")
	}
	carried := make([]*graph.Type, 0, len(c.Node.Inputs))
	for i := 2; i < len(c.Node.Inputs); i++ {
		carried = append(carried, c.in(i))
	}
	n := len(carried)
	if len(body.Outputs) < n+1 {
		return fmt.Errorf("body has %d outputs for %d loop-carried values", len(body.Outputs), n)
	}
	bodyIn := func() []*graph.Type {
		return append([]*graph.Type{graph.TensorType(graph.Int64, graph.Shape{}),
			graph.TensorType(graph.Bool, graph.Shape{})}, carried...)
	}
	outs, err := c.Subgraph(body, bodyIn())
	if err != nil {
		return fmt.Errorf("body: %w", err)
	}
	changed := false
	for i := range carried {
		u := unionType(carried[i], outs[i+1])
		if carried[i] != nil && !sameType(u, carried[i]) {
			carried[i], changed = u, true
		}
	}
	if changed {
		if outs, err = c.Subgraph(body, bodyIn()); err != nil {
			return fmt.Errorf("body: %w", err)
		}
	}
	for i := range n {
		t := carried[i]
		if t == nil {
			t = outs[i+1]
		}
		c.set(i, t.Clone())
	}
	trips := graph.UnknownDim()
	if m, ok := c.intsIn(0); ok && len(m) == 1 && !c.has(1) {
		trips = graph.DimOf(m[0])
	}
	for j, t := range outs[1+n:] {
		if t == nil || t.Kind != graph.TensorKind {
			continue
		}
		var s graph.Shape
		if t.Shape != nil {
			s = append(graph.Shape{trips}, t.Shape...)
		}
		c.setTensor(n+j, t.Elem, s)
	}
	return nil
}

// inferScan is Scan from opset 9: the body sees the states and one slice of
// each scan input; scan outputs stack the body's slices along their axis.
func inferScan(c *InferContext) error {
	body := c.Node.AttrGraph("body")
	if body == nil {
		return fmt.Errorf("missing body")
	}
	p := Params[ScanParams](c.Node, c.Opset)
	m := int(p.NumScanInputs)
	nIn := len(c.Node.Inputs)
	if m <= 0 || m > nIn {
		return fmt.Errorf("num_scan_inputs %d for %d inputs", m, nIn)
	}
	n := nIn - m
	inAxes := p.ScanInputAxes
	if inAxes == nil {
		inAxes = make([]int64, m)
	}
	if len(inAxes) != m {
		return fmt.Errorf("scan_input_axes %v for %d scan inputs", inAxes, m)
	}
	bodyIn := make([]*graph.Type, nIn)
	seq := graph.UnknownDim()
	for i := range nIn {
		t := c.in(i)
		if i < n || t == nil || t.Kind != graph.TensorKind || t.Shape == nil {
			bodyIn[i] = t
			continue
		}
		axis, err := normAxis(inAxes[i-n], len(t.Shape))
		if err != nil {
			return fmt.Errorf("scan input %d: %w", i-n, err)
		}
		if seq, err = unifyDim(seq, t.Shape[axis]); err != nil {
			return fmt.Errorf("scan input %d: sequence length: %w", i-n, err)
		}
		s := append(t.Shape[:axis].Clone(), t.Shape[axis+1:]...)
		bodyIn[i] = graph.TensorType(t.Elem, s)
	}
	outs, err := c.Subgraph(body, bodyIn)
	if err != nil {
		return fmt.Errorf("body: %w", err)
	}
	if len(outs) < n {
		return fmt.Errorf("body has %d outputs for %d states", len(outs), n)
	}
	for i := range n {
		c.set(i, outs[i].Clone())
	}
	k := len(outs) - n
	outAxes := p.ScanOutputAxes
	if outAxes == nil {
		outAxes = make([]int64, k)
	}
	if len(outAxes) != k {
		return fmt.Errorf("scan_output_axes %v for %d scan outputs", outAxes, k)
	}
	for j, t := range outs[n:] {
		if t == nil || t.Kind != graph.TensorKind {
			continue
		}
		if t.Shape == nil {
			c.setTensor(n+j, t.Elem, nil)
			continue
		}
		axis, err := normAxis(outAxes[j], len(t.Shape)+1)
		if err != nil {
			return fmt.Errorf("scan output %d: %w", j, err)
		}
		s := append(append(t.Shape[:axis].Clone(), seq), t.Shape[axis:]...)
		c.setTensor(n+j, t.Elem, s)
	}
	return nil
}

// seqOf returns the sequence type holding elements of type t.
func seqOf(t *graph.Type) *graph.Type { return &graph.Type{Kind: graph.SequenceKind, Inner: t} }

// innerOf returns the element type of a sequence or optional input.
func (c *InferContext) innerOf(i int) *graph.Type {
	if t := c.in(i); t != nil && (t.Kind == graph.SequenceKind || t.Kind == graph.OptionalKind) {
		return t.Inner
	}
	return nil
}

// inferSequenceEmpty is an empty sequence of dtype tensors.
func inferSequenceEmpty(c *InferContext) error {
	dt := graph.DType(Params[SequenceEmptyParams](c.Node, c.Opset).Dtype)
	c.set(0, seqOf(graph.TensorType(dt, nil)))
	return nil
}

// inferSequenceConstruct is a sequence of the inputs' common type.
func inferSequenceConstruct(c *InferContext) error {
	var elem *graph.Type
	for i := range c.Node.Inputs {
		t := c.in(i)
		if t == nil {
			return nil
		}
		if t.Kind != graph.TensorKind && t.Kind != graph.UnknownKind {
			return fmt.Errorf("input %d is a %s, not a tensor", i, t)
		}
		if i == 0 {
			elem = t.Clone()
			continue
		}
		if t.Elem != elem.Elem {
			return fmt.Errorf("sequence elements of types %s and %s", elem, t)
		}
		if elem = unionType(elem, t); elem == nil {
			return nil
		}
	}
	if elem != nil {
		c.set(0, seqOf(elem))
	}
	return nil
}

// inferSequenceInsert widens the sequence's element type by the inserted one.
func inferSequenceInsert(c *InferContext) error {
	inner, t := c.innerOf(0), c.in(1)
	switch {
	case inner == nil && t == nil:
	case inner == nil:
		c.set(0, seqOf(graph.TensorType(t.Elem, nil)))
	case t == nil:
		c.set(0, seqOf(inner.Clone()))
	default:
		if inner.Elem != t.Elem {
			return fmt.Errorf("inserting a %s into a sequence of %s", t, inner)
		}
		c.set(0, seqOf(unionType(inner, t)))
	}
	return nil
}

// inferSequenceAt gives the sequence's element type.
func inferSequenceAt(c *InferContext) error {
	c.set(0, c.innerOf(0).Clone())
	return nil
}

// inferSequenceErase keeps the sequence type.
func inferSequenceErase(c *InferContext) error {
	c.set(0, c.in(0).Clone())
	return nil
}

// inferSequenceLength is an int64 scalar.
func inferSequenceLength(c *InferContext) error {
	c.setTensor(0, graph.Int64, graph.Shape{})
	return nil
}

// inferSplitToSequence gives a sequence of the input's pieces along axis.
func inferSplitToSequence(c *InferContext) error {
	dt := c.inElem(0)
	xs := c.inShape(0)
	if xs == nil {
		c.set(0, seqOf(graph.TensorType(dt, nil)))
		return nil
	}
	p := Params[SplitToSequenceParams](c.Node, c.Opset)
	axis, err := normAxis(p.Axis, len(xs))
	if err != nil {
		return err
	}
	elem := xs.Clone()
	switch {
	case !c.has(1) && p.Keepdims == 0:
		elem = append(elem[:axis], elem[axis+1:]...)
	case !c.has(1):
		elem[axis] = graph.DimOf(1)
	default:
		split, ok := c.intsIn(1)
		elem[axis] = graph.UnknownDim()
		if !ok || len(split) != 1 || c.inShape(1) == nil || len(c.inShape(1)) != 0 {
			break
		}
		if split[0] <= 0 {
			return fmt.Errorf("split size %d is not positive", split[0])
		}
		if xs[axis].Known() && xs[axis].Value%split[0] == 0 {
			elem[axis] = graph.DimOf(split[0])
		}
	}
	c.set(0, seqOf(graph.TensorType(dt, elem)))
	return nil
}

// inferConcatFromSequence joins the elements along axis (or stacks them on
// a new axis); the joined length is unknown.
func inferConcatFromSequence(c *InferContext) error {
	inner := c.innerOf(0)
	if inner == nil {
		return nil
	}
	if inner.Shape == nil {
		c.setTensor(0, inner.Elem, nil)
		return nil
	}
	p := Params[ConcatFromSequenceParams](c.Node, c.Opset)
	newAxis := p.NewAxis != 0
	r := len(inner.Shape)
	if newAxis {
		r++
	}
	axis, err := normAxis(p.Axis, r)
	if err != nil {
		return err
	}
	s := inner.Shape.Clone()
	if newAxis {
		s = append(append(s[:axis:axis], graph.UnknownDim()), inner.Shape[axis:]...)
	} else {
		s[axis] = graph.UnknownDim()
	}
	c.setTensor(0, inner.Elem, s)
	return nil
}

// inferSequenceMap infers the body on the sequences' element types; each
// output is a sequence of the body's output type.
func inferSequenceMap(c *InferContext) error {
	body := c.Node.AttrGraph("body")
	if body == nil {
		return fmt.Errorf("missing body")
	}
	in := make([]*graph.Type, len(c.Node.Inputs))
	for i := range in {
		if t := c.in(i); t != nil && t.Kind == graph.SequenceKind {
			in[i] = t.Inner
		} else {
			in[i] = t
		}
	}
	outs, err := c.Subgraph(body, in)
	if err != nil {
		return fmt.Errorf("body: %w", err)
	}
	for i, t := range outs {
		if t != nil {
			c.set(i, seqOf(t.Clone()))
		}
	}
	return nil
}

// inferOptional wraps its input's type, or the type attribute when empty.
func inferOptional(c *InferContext) error {
	inner := c.in(0)
	if !c.has(0) {
		if a := c.Node.Attr("type"); a != nil {
			inner = a.TP
		}
	}
	if inner != nil {
		c.set(0, &graph.Type{Kind: graph.OptionalKind, Inner: inner.Clone()})
	}
	return nil
}

// inferOptionalHasElement is a bool scalar.
func inferOptionalHasElement(c *InferContext) error {
	c.setTensor(0, graph.Bool, graph.Shape{})
	return nil
}

// inferOptionalGetElement unwraps an optional (from opset 18 a plain tensor
// or sequence passes through).
func inferOptionalGetElement(c *InferContext) error {
	t := c.in(0)
	if t != nil && t.Kind == graph.OptionalKind {
		c.set(0, t.Inner.Clone())
		return nil
	}
	c.set(0, t.Clone())
	if v := c.val(0); v != nil {
		c.setValue(0, v)
	}
	return nil
}
