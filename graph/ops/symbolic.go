package ops

import "github.com/onnxvk/onnxvk/graph"

// Symbolic data propagation: shape computations over inputs with symbolic
// dimensions (Shape → Gather → Unsqueeze → Concat → Reshape) carry their
// elements as dimensions, so that a Reshape target such as [batch, seq, 4,
// -1] resolves to symbols and known sizes, and an element that is known
// (the 64 of [batch, seq, 64]) becomes a plain known value again.

// symElem is one element of a symTensor: a literal integer (possibly
// negative, like Reshape's -1), a symbolic dimension, or unknown.
type symElem struct {
	v       int64
	sym     string
	unknown bool
}

// known reports whether the element is a literal integer.
func (e symElem) known() bool { return e.sym == "" && !e.unknown }

// dim is the element as a dimension.
func (e symElem) dim() graph.Dim {
	switch {
	case e.sym != "":
		return graph.SymDim(e.sym)
	case e.unknown || e.v < 0:
		return graph.UnknownDim()
	}
	return graph.DimOf(e.v)
}

// elemOfDim turns a dimension into an element.
func elemOfDim(d graph.Dim) symElem {
	switch {
	case d.Known():
		return symElem{v: d.Value}
	case d.Param != "":
		return symElem{sym: d.Param}
	}
	return symElem{unknown: true}
}

// symTensor is a small integer tensor some of whose elements are symbolic.
type symTensor struct {
	shape []int64
	elems []symElem
}

// symIn returns input i as a symTensor: from its known integer value, or
// from the symbolic elements an earlier rule computed.
func (c *InferContext) symIn(i int) *symTensor {
	if v, ok := c.intsIn(i); ok && len(v) <= maxValueElems {
		st := &symTensor{shape: c.val(i).Shape, elems: make([]symElem, len(v))}
		for k, x := range v {
			st.elems[k] = symElem{v: x}
		}
		return st
	}
	if i < len(c.inSyms) {
		return c.inSyms[i]
	}
	return nil
}

// setSym records output i as a symTensor of element type dt, or as a plain
// value when every element is known.
func (c *InferContext) setSym(i int, dt graph.DType, st *symTensor) {
	if st == nil || i >= len(c.OutTypes) || !computable(dt) || dt.IsFloat() {
		return
	}
	allKnown := true
	for _, e := range st.elems {
		allKnown = allKnown && e.known()
	}
	if allKnown {
		v := newVals(dt, st.shape)
		for k, e := range st.elems {
			v.setInt(k, e.v)
		}
		c.setValue(i, v.tensor())
		return
	}
	if c.outSyms == nil {
		c.outSyms = make([]*symTensor, len(c.OutTypes))
	}
	c.outSyms[i] = st
	c.set(i, graph.TensorType(dt, graph.ShapeOf(st.shape...)))
}

// dimsOf returns the elements of a 1-D symTensor as dimensions, or false.
func (st *symTensor) dims() (graph.Shape, bool) {
	if st == nil || len(st.shape) != 1 {
		return nil, false
	}
	out := make(graph.Shape, len(st.elems))
	for k, e := range st.elems {
		out[k] = e.dim()
	}
	return out, true
}

// take builds a symTensor of the given shape from elements idx of st, or
// returns nil when an index falls outside st.
func (st *symTensor) take(shape []int64, idx []int) *symTensor {
	out := &symTensor{shape: shape, elems: make([]symElem, len(idx))}
	for k, j := range idx {
		if j < 0 || j >= len(st.elems) {
			return nil
		}
		out.elems[k] = st.elems[j]
	}
	return out
}

// symShape is the symbolic form of Shape's output.
func symShape(dims graph.Shape) *symTensor {
	st := &symTensor{shape: []int64{int64(len(dims))}, elems: make([]symElem, len(dims))}
	for k, d := range dims {
		st.elems[k] = elemOfDim(d)
	}
	return st
}

// symArith combines two elements: literals exactly, a symbol with the
// neutral literal of op (x+0, x-0, x*1, x/1) stays the symbol.
func symArith(op string, a, b symElem) symElem {
	if a.known() && b.known() {
		switch op {
		case "Add":
			return symElem{v: a.v + b.v}
		case "Sub":
			return symElem{v: a.v - b.v}
		case "Mul":
			return symElem{v: a.v * b.v}
		case "Div":
			if b.v != 0 {
				return symElem{v: a.v / b.v}
			}
		}
		return symElem{unknown: true}
	}
	neutral := int64(0)
	if op == "Mul" || op == "Div" {
		neutral = 1
	}
	switch {
	case b.known() && b.v == neutral:
		return a
	case a.known() && a.v == neutral && (op == "Add" || op == "Mul"):
		return b
	}
	return symElem{unknown: true}
}

// symElementwise applies f to the elements of a and b, broadcasting; nil
// where the shapes do not broadcast, the result is too large, or f
// cannot decide an element.
func symElementwise(a, b *symTensor, f func(x, y symElem) (symElem, bool)) *symTensor {
	shape, ok := broadcastInts(a.shape, b.shape)
	if !ok || graph.NumElements(shape) > maxValueElems {
		return nil
	}
	ia, ib := broadcastIndex(shape, a.shape), broadcastIndex(shape, b.shape)
	out := &symTensor{shape: shape, elems: make([]symElem, len(ia))}
	for k := range ia {
		if out.elems[k], ok = f(a.elems[ia[k]], b.elems[ib[k]]); !ok {
			return nil
		}
	}
	return out
}

// symBinary applies symArith elementwise with broadcasting.
func symBinary(op string, a, b *symTensor) *symTensor {
	return symElementwise(a, b, func(x, y symElem) (symElem, bool) { return symArith(op, x, y), true })
}

// symEqual is Equal of a and b, broadcasting: literals compare exactly, a
// dimension equals itself and never a negative literal (dimensions are
// sizes: the -1 that torch's Expand export compares its target with);
// nil where an element is undecided.
func symEqual(a, b *symTensor) *symTensor {
	return symElementwise(a, b, func(x, y symElem) (symElem, bool) {
		var eq bool
		switch {
		case x.known() && y.known():
			eq = x.v == y.v
		case x.sym != "" && x.sym == y.sym:
			eq = true
		case x.sym != "" && y.known() && y.v < 0, y.sym != "" && x.known() && x.v < 0:
		default:
			return symElem{}, false
		}
		if eq {
			return symElem{v: 1}, true
		}
		return symElem{}, true
	})
}

// symWhere is Where of a known bool condition over symTensors x and y,
// broadcasting to shape.
func symWhere(cond *graph.Tensor, x, y *symTensor, shape []int64) *symTensor {
	ic := broadcastIndex(shape, cond.Shape)
	ix, iy := broadcastIndex(shape, x.shape), broadcastIndex(shape, y.shape)
	out := &symTensor{shape: shape, elems: make([]symElem, len(ic))}
	for k := range ic {
		if cond.Data[ic[k]] != 0 {
			out.elems[k] = x.elems[ix[k]]
		} else {
			out.elems[k] = y.elems[iy[k]]
		}
	}
	return out
}

// symConcat joins 1-D symTensors.
func symConcat(parts []*symTensor) *symTensor {
	out := &symTensor{}
	for _, p := range parts {
		if p == nil || len(p.shape) != 1 {
			return nil
		}
		out.elems = append(out.elems, p.elems...)
	}
	out.shape = []int64{int64(len(out.elems))}
	return out
}

// symReshape returns st with a new shape of the same element count.
func symReshape(st *symTensor, shape graph.Shape) *symTensor {
	if st == nil || !shape.Known() || graph.NumElements(shape.Ints()) != int64(len(st.elems)) {
		return nil
	}
	return &symTensor{shape: shape.Ints(), elems: st.elems}
}
