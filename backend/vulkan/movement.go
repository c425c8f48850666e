package vulkan

import (
	"math"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// maxCopyRank is the highest rank copy.comp walks after dimensions of
// size 1 are dropped and contiguous runs merged.
const maxCopyRank = 8

// The data-movement ops run on copy.comp (and gather.comp) for any element
// type of 2, 4 or 8 bytes, bound raw.
func init() {
	register("Identity", lowerIdentity)
	register("Reshape", lowerReshape)
	register("Flatten", lowerFlatten)
	register("Squeeze", lowerSqueeze)
	register("Unsqueeze", lowerUnsqueeze)
	register("Slice", lowerSlice)
	register("Concat", lowerConcat)
	register("Split", lowerSplit)
	register("Expand", lowerExpand)
	register("Tile", lowerTile)
	register("DepthToSpace", func(q *query) (*launch, bool) { return lowerDepthSpace(q, true) })
	register("SpaceToDepth", func(q *query) (*launch, bool) { return lowerDepthSpace(q, false) })
	register("Gather", lowerGather)
}

// elemWords returns the number of words of an element of input k: 1 or 2
// 32-bit words, or one 16-bit word for a 2-byte element, which the HALF
// shader variants move (see toHalf); ok is false for other sizes and when
// the input's words do not fit a binding.
func (q *query) elemWords(k int) (int32, bool) {
	w := int32(q.elems[k].Bits() / 32)
	if q.elems[k].Size() == 2 {
		w = 1
	} else if q.elems[k].Bits()%32 != 0 {
		return 0, false
	}
	if w < 1 || w > 2 || int64(w)*graph.NumElements(q.shapes[k]) > q.maxElems {
		return 0, false
	}
	return w, true
}

// view is one strided copy of copy.comp: element c of dims (row-major)
// goes from sbase + Σ c·sst to dbase + Σ c·dst, in elements.
type view struct {
	dims, sst, dst []int64
	sbase, dbase   int64
}

// copyNode lowers a node whose output 0, of shape out and of input 0's
// element type, is input 0's elements read through view v.
func copyNode(q *query, w int32, v view, out []int64) (*launch, bool) {
	l, ok := copyLaunch(q, 0, 0, w, v)
	if !ok {
		return nil, false
	}
	l.outShapes, l.rawInputs, l.outTypes = [][]int64{out}, []int{0}, []graph.DType{q.elems[0]}
	return l, true
}

// copyLaunch returns the dispatch of copy.comp that copies v from input
// in to output out for elements of w words; ok is false when the view has
// too many dimensions or does not fit a binding or the shader's words.
func copyLaunch(q *query, in, out int, w int32, v view) (*launch, bool) {
	dims, st := mergeDims(v.dims, v.sst, v.dst)
	sst, dst := st[0], st[1]
	elems := graph.NumElements(v.dims)
	if len(dims) > maxCopyRank || int64(w)*elems > q.maxElems || v.sbase > math.MaxInt32 || v.dbase > math.MaxInt32 {
		return nil, false
	}
	for _, s := range sst {
		if s > math.MaxInt32 || s < math.MinInt32 {
			return nil, false
		}
	}
	vals := make([]uint32, 4+3*maxCopyRank)
	vals[0], vals[1], vals[2], vals[3] = uint32(elems), uint32(len(dims)), uint32(v.sbase), uint32(v.dbase)
	for i := range dims {
		vals[4+i], vals[4+maxCopyRank+i], vals[4+2*maxCopyRank+i] = uint32(dims[i]), uint32(int32(sst[i])), uint32(dst[i])
	}
	return &launch{shader: "copy", op: w, bindings: []slot{{false, in}, {true, out}}, push: words(vals...), elems: elems}, true
}

// plainCopy lowers a node whose output 0 is input 0's elements in the same
// order with shape out.
func plainCopy(q *query, out []int64) (*launch, bool) {
	w, ok := q.elemWords(0)
	n := graph.NumElements(q.shapes[0])
	if !ok || n != graph.NumElements(out) {
		return nil, false
	}
	return copyNode(q, w, view{dims: []int64{n}, sst: []int64{1}, dst: []int64{1}}, out)
}

func lowerIdentity(q *query) (*launch, bool) {
	if len(q.shapes) != 1 {
		return nil, false
	}
	return plainCopy(q, q.shapes[0])
}

// lowerReshape lowers Reshape with the shape attribute (opset 1 to 4) or
// a constant shape input, 0 (copy the dimension, unless allowzero) and -1.
func lowerReshape(q *query) (*launch, bool) {
	x := q.shapes[0]
	var shape []int64
	if q.opset < 5 {
		if len(q.shapes) != 1 {
			return nil, false
		}
		shape = ops.Params[ops.ReshapeParams](q.n, q.opset).Shape
	} else {
		var ok bool
		if shape, ok = q.constInts(1); !ok || len(q.shapes) != 2 {
			return nil, false
		}
	}
	allowZero := q.opset >= 14 && ops.Params[ops.ReshapeParams](q.n, q.opset).Allowzero != 0
	out := make([]int64, len(shape))
	infer, known := -1, int64(1)
	for i, d := range shape {
		switch {
		case d == 0 && !allowZero:
			if i >= len(x) {
				return nil, false
			}
			out[i] = x[i]
		case d == -1:
			if infer >= 0 {
				return nil, false
			}
			infer = i
			continue
		case d < 0:
			return nil, false
		default:
			out[i] = d
		}
		known *= out[i]
	}
	if infer >= 0 {
		if known == 0 || graph.NumElements(x)%known != 0 {
			return nil, false
		}
		out[infer] = graph.NumElements(x) / known
	}
	return plainCopy(q, out)
}

// lowerFlatten lowers Flatten at any axis, negative ones included.
func lowerFlatten(q *query) (*launch, bool) {
	x := q.shapes[0]
	if len(q.shapes) != 1 {
		return nil, false
	}
	a := ops.Params[ops.FlattenParams](q.n, q.opset).Axis
	if a < 0 {
		a += int64(len(x))
	}
	if a < 0 || a > int64(len(x)) {
		return nil, false
	}
	return plainCopy(q, []int64{graph.NumElements(x[:a]), graph.NumElements(x[a:])})
}

// axesOf returns the axes of Squeeze or Unsqueeze, the constant input 1;
// have is false when there are none, ok false when they are not known.
func axesOf(q *query) (axes []int64, have, ok bool) {
	if len(q.shapes) < 2 || q.shapes[1] == nil {
		return nil, false, len(q.shapes) <= 2
	}
	axes, ok = q.constInts(1)
	return axes, true, ok && len(q.shapes) == 2
}

// lowerSqueeze lowers Squeeze of the given axes (they must have size 1)
// or of every axis of size 1.
func lowerSqueeze(q *query) (*launch, bool) {
	x := q.shapes[0]
	axes, have, ok := axesOf(q)
	if !ok {
		return nil, false
	}
	drop := make([]bool, len(x))
	for _, a := range axes {
		i, ok := normAxis(a, len(x))
		if !ok || x[i] != 1 {
			return nil, false
		}
		drop[i] = true
	}
	out := []int64{}
	for i, d := range x {
		if !drop[i] && (have || d != 1) {
			out = append(out, d)
		}
	}
	return plainCopy(q, out)
}

// lowerUnsqueeze lowers Unsqueeze: axes (negative ones count from the end
// of the output) get size 1.
func lowerUnsqueeze(q *query) (*launch, bool) {
	x := q.shapes[0]
	axes, have, ok := axesOf(q)
	if !ok || !have {
		return nil, false
	}
	r := len(x) + len(axes)
	one := make([]bool, r)
	for _, a := range axes {
		i, ok := normAxis(a, r)
		if !ok || one[i] {
			return nil, false
		}
		one[i] = true
	}
	out := make([]int64, 0, r)
	k := 0
	for i := range r {
		if one[i] {
			out = append(out, 1)
			continue
		}
		out = append(out, x[k])
		k++
	}
	return plainCopy(q, out)
}

// lowerSlice lowers Slice with starts, ends, axes and steps from constant
// inputs, negative steps included. An empty result goes to the CPU.
func lowerSlice(q *query) (*launch, bool) {
	x := q.shapes[0]
	w, ok := q.elemWords(0)
	if !ok {
		return nil, false
	}
	if len(q.shapes) < 3 || len(q.shapes) > 5 {
		return nil, false
	}
	args := make([][]int64, 5)
	for k := 1; k < len(q.shapes); k++ {
		if q.shapes[k] == nil && k >= 3 {
			continue
		}
		if args[k], ok = q.constInts(k); !ok {
			return nil, false
		}
	}
	starts, ends, axes, steps := args[1], args[2], args[3], args[4]
	haveAxes := len(q.shapes) > 3 && q.shapes[3] != nil
	if len(q.shapes) > 4 && q.shapes[4] != nil && len(steps) != len(starts) {
		return nil, false
	}
	if len(ends) != len(starts) || haveAxes && len(axes) != len(starts) || !haveAxes && len(starts) > len(x) {
		return nil, false
	}
	out := append([]int64{}, x...)
	in := graph.Strides(x)
	v := view{dims: out, sst: append([]int64{}, in...)}
	seen := make([]bool, len(x))
	for i := range starts {
		a := i
		if haveAxes {
			if a, ok = normAxis(axes[i], len(x)); !ok {
				return nil, false
			}
		}
		step := int64(1)
		if steps != nil {
			step = steps[i]
		}
		if seen[a] || step == 0 || step == math.MinInt64 {
			return nil, false
		}
		seen[a] = true
		first, count := ops.SliceRange(starts[i], ends[i], step, x[a])
		out[a] = count
		v.sbase += first * in[a]
		v.sst[a] = step * in[a]
	}
	if graph.NumElements(out) == 0 {
		return nil, false
	}
	v.dst = graph.Strides(out)
	return copyNode(q, w, v, out)
}

// lowerConcat lowers Concat of any number of inputs of one element type
// as one copy.comp dispatch per input.
func lowerConcat(q *query) (*launch, bool) {
	x := q.shapes[0]
	w, ok := q.elemWords(0)
	if !ok {
		return nil, false
	}
	a, ok := normAxis(ops.Params[ops.ConcatParams](q.n, q.opset).Axis, len(x))
	if !ok {
		return nil, false
	}
	out := append([]int64{}, x...)
	out[a] = 0
	for k, s := range q.shapes {
		if _, fits := q.elemWords(k); s == nil || len(s) != len(x) || q.elems[k] != q.elems[0] || !fits {
			return nil, false
		}
		for i := range s {
			if i != a && s[i] != x[i] {
				return nil, false
			}
		}
		out[a] += s[a]
	}
	ost := graph.Strides(out)
	var l *launch
	off := int64(0)
	for k, s := range q.shapes {
		base := off * ost[a]
		off += s[a]
		if graph.NumElements(s) == 0 {
			continue
		}
		part, ok := copyLaunch(q, k, 0, w, view{dims: s, sst: graph.Strides(s), dst: ost, dbase: base})
		if !ok {
			return nil, false
		}
		if l == nil {
			l = part
		} else {
			l.then = append(l.then, part)
		}
		l.rawInputs = append(l.rawInputs, k)
	}
	if l == nil {
		return nil, false
	}
	l.elems, l.outShapes, l.outTypes = graph.NumElements(out), [][]int64{out}, []graph.DType{q.elems[0]}
	return l, true
}

// sumInts returns the sum of v.
func sumInts(v []int64) int64 {
	var s int64
	for _, x := range v {
		s += x
	}
	return s
}

// lowerSplit lowers Split along any axis with sizes from a constant input
// or equal parts, as one copy.comp dispatch per named
// output. An empty part goes to the CPU.
func lowerSplit(q *query) (*launch, bool) {
	x := q.shapes[0]
	w, ok := q.elemWords(0)
	a, okAxis := normAxis(ops.Params[ops.SplitParams](q.n, q.opset).Axis, len(x))
	if !ok || !okAxis {
		return nil, false
	}
	outs := len(q.n.Outputs)
	var split []int64
	if len(q.shapes) > 1 && q.shapes[1] != nil {
		if split, ok = q.constInts(1); !ok {
			return nil, false
		}
	}
	if len(split) == 0 {
		chunk := (x[a] + int64(outs) - 1) / int64(outs)
		for i := range outs {
			split = append(split, min(chunk, x[a]-chunk*int64(i)))
		}
	}
	if len(split) != outs || sumInts(split) != x[a] {
		return nil, false
	}
	in := graph.Strides(x)
	var l *launch
	var shapes [][]int64
	types := make([]graph.DType, outs)
	off := int64(0)
	for j, s := range split {
		if s <= 0 {
			return nil, false
		}
		shape := append([]int64{}, x...)
		shape[a] = s
		shapes = append(shapes, shape)
		types[j] = q.elems[0]
		base := off * in[a]
		off += s
		if q.n.Outputs[j] == "" {
			continue
		}
		part, ok := copyLaunch(q, 0, j, w, view{dims: shape, sst: in, dst: graph.Strides(shape), sbase: base})
		if !ok {
			return nil, false
		}
		if l == nil {
			l = part
		} else {
			l.then = append(l.then, part)
		}
	}
	if l == nil {
		return nil, false
	}
	l.outShapes, l.rawInputs, l.outTypes = shapes, []int{0}, types
	return l, true
}

// lowerExpand lowers Expand to a constant shape (broadcast both ways).
func lowerExpand(q *query) (*launch, bool) {
	x := q.shapes[0]
	w, ok := q.elemWords(0)
	shape, okShape := q.constInts(1)
	if !ok || !okShape || len(q.shapes) != 2 {
		return nil, false
	}
	out, ok := broadcast(x, shape)
	if !ok {
		return nil, false
	}
	if graph.NumElements(out) == 0 {
		return nil, false
	}
	return copyNode(q, w, view{dims: out, sst: strides(x, out), dst: graph.Strides(out)}, out)
}

// lowerTile lowers Tile with constant repeats: each axis d is walked as
// (repeat, x_d).
func lowerTile(q *query) (*launch, bool) {
	x := q.shapes[0]
	w, ok := q.elemWords(0)
	reps, okReps := q.constInts(1)
	if !ok || !okReps || len(q.shapes) != 2 || len(reps) != len(x) {
		return nil, false
	}
	out := make([]int64, len(x))
	for i, r := range reps {
		if r <= 0 {
			return nil, false
		}
		out[i] = x[i] * r
	}
	in, ost := graph.Strides(x), graph.Strides(out)
	var v view
	for i := range x {
		v.dims = append(v.dims, reps[i], x[i])
		v.sst = append(v.sst, 0, in[i])
		v.dst = append(v.dst, x[i]*ost[i], ost[i])
	}
	return copyNode(q, w, v, out)
}

// lowerDepthSpace lowers DepthToSpace (both modes) and SpaceToDepth on
// [N, C, H, W] as a rank-6 transpose.
func lowerDepthSpace(q *query, toSpace bool) (*launch, bool) {
	x := q.shapes[0]
	w, ok := q.elemWords(0)
	b := ops.Params[ops.SpaceToDepthParams](q.n, q.opset).Blocksize
	if toSpace {
		b = ops.Params[ops.DepthToSpaceParams](q.n, q.opset).Blocksize
	}
	if !ok || len(q.shapes) != 1 || len(x) != 4 || b <= 0 {
		return nil, false
	}
	n, c, h, wd := x[0], x[1], x[2], x[3]
	var v view
	var out []int64
	if toSpace {
		if c%(b*b) != 0 {
			return nil, false
		}
		cc := c / (b * b)
		out = []int64{n, cc, h * b, wd * b}
		var s []int64
		var perm []int
		if ops.Params[ops.DepthToSpaceParams](q.n, q.opset).Mode == "CRD" {
			s, perm = graph.Strides([]int64{n, cc, b, b, h, wd}), []int{0, 1, 4, 2, 5, 3}
		} else {
			s, perm = graph.Strides([]int64{n, b, b, cc, h, wd}), []int{0, 3, 4, 1, 5, 2}
		}
		v.dims = []int64{n, cc, h, b, wd, b}
		for _, p := range perm {
			v.sst = append(v.sst, s[p])
		}
	} else {
		if h%b != 0 || wd%b != 0 {
			return nil, false
		}
		out = []int64{n, c * b * b, h / b, wd / b}
		s := graph.Strides([]int64{n, c, h / b, b, wd / b, b})
		v.dims = []int64{n, b, b, c, h / b, wd / b}
		for _, p := range []int{0, 3, 5, 1, 2, 4} {
			v.sst = append(v.sst, s[p])
		}
	}
	v.dst = graph.Strides(v.dims)
	return copyNode(q, w, v, out)
}

// lowerGather lowers Gather along any axis with int32 or int64 indices
// (runtime or constant; int64 ones must lie in the int32 range), negative
// indices counting from the end.
func lowerGather(q *query) (*launch, bool) {
	x, ind := q.shapes[0], q.shapes[1]
	w, ok := q.elemWords(0)
	if !ok || len(q.shapes) != 2 || ind == nil || q.elems[1] != graph.Int32 && q.elems[1] != graph.Int64 {
		return nil, false
	}
	a, ok := normAxis(ops.Params[ops.GatherParams](q.n, q.opset).Axis, len(x))
	if !ok || x[a] == 0 {
		return nil, false
	}
	if v, isConst := q.constInts(1); isConst {
		for _, i := range v {
			if i < -x[a] || i >= x[a] {
				return nil, false
			}
		}
	}
	out := append(append(append([]int64{}, x[:a]...), ind...), x[a+1:]...)
	op := w - 1
	if q.elems[1] == graph.Int64 {
		op |= 2
	}
	elems := graph.NumElements(out)
	return &launch{shader: "gather", op: op, bindings: []slot{{false, 0}, {false, 1}, {true, 0}},
		push:  words(uint32(elems), uint32(graph.NumElements(ind)), uint32(graph.NumElements(x[a+1:])), uint32(x[a])),
		elems: elems, outShapes: [][]int64{out}, rawInputs: []int{0, 1}, outTypes: []graph.DType{q.elems[0]}}, true
}
