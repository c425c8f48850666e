package vulkan

import (
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// pool.comp's OP constant.
const (
	poolMax     = 0
	poolAverage = 1
)

func init() {
	register("MaxPool", func(q *query) (*launch, bool) { return lowerPool(q, poolMax) })
	register("AveragePool", func(q *query) (*launch, bool) { return lowerPool(q, poolAverage) })
	register("GlobalMaxPool", lowerGlobalMaxPool)
	register("GlobalAveragePool", lowerGlobalAveragePool)
}

// lowerPool lowers MaxPool (its Values output only: a node that names
// Indices goes to the CPU) and AveragePool on float32 X [N, C, D...] with
// one to three spatial axes: strides, dilations, pads, auto_pad,
// ceil_mode and count_include_pad.
func lowerPool(q *query, op int32) (*launch, bool) {
	n, x := q.n, q.shapes[0]
	if len(q.shapes) != 1 || len(x) < 3 {
		return nil, false
	}
	var ceil bool
	var flags uint32
	if op == poolAverage {
		p := ops.Params[ops.AveragePoolParams](n, q.opset)
		ceil = p.CeilMode != 0
		if p.CountIncludePad != 0 {
			flags = 1
		}
	} else {
		ceil = ops.Params[ops.MaxPoolParams](n, q.opset).CeilMode != 0
	}
	w, ok := newWindow(ops.WindowOf(n, q.opset), x[2:], nil, ceil)
	if !ok {
		return nil, false
	}
	return poolLaunch(op, w, w.outShape(x[:2], len(x)-2), flags), true
}

// lowerGlobalMaxPool lowers GlobalMaxPool on float32 X [N, C, D...] with
// one to three spatial axes as a MaxPool whose window is the whole plane.
func lowerGlobalMaxPool(q *query) (*launch, bool) {
	x := q.shapes[0]
	if len(q.shapes) != 1 || len(x) < 3 || len(x)-2 > maxSpatial {
		return nil, false
	}
	w := &window{}
	out := x[:2:2]
	for d := range maxSpatial {
		w.in[d], w.out[d], w.kernel[d], w.stride[d], w.dil[d] = 1, 1, 1, 1, 1
		if i := d - (maxSpatial - (len(x) - 2)); i >= 0 {
			w.in[d], w.kernel[d] = x[2+i], x[2+i]
			out = append(out, 1)
		}
	}
	return poolLaunch(poolMax, w, out, 0), true
}

// lowerGlobalAveragePool lowers GlobalAveragePool on float32 X [N, C,
// D...] (any number of spatial axes) as the mean of each plane by
// reduce.comp.
func lowerGlobalAveragePool(q *query) (*launch, bool) {
	x := q.shapes[0]
	if len(q.shapes) != 1 || len(x) < 3 {
		return nil, false
	}
	out := x[:2:2]
	for range x[2:] {
		out = append(out, 1)
	}
	rows, length := x[0]*x[1], graph.NumElements(x[2:])
	groups, serial := q.rowGroups(rows, length)
	return &launch{shader: "reduce", op: reduceOps["ReduceMean"], bindings: []slot{{false, 0}, {true, 0}},
		push: words(uint32(rows), uint32(length), 1, serial), elems: rows, outShapes: [][]int64{out}, groups: groups}, true
}

// poolLaunch returns the dispatch of pool.comp for the window sweep w
// with output shape out.
func poolLaunch(op int32, w *window, out []int64, flags uint32) *launch {
	elems := graph.NumElements(out)
	vals := append([]uint32{uint32(elems)}, w.words()...)
	for _, p := range w.padEnd {
		vals = append(vals, uint32(p))
	}
	vals = append(vals, flags)
	return &launch{shader: "pool", op: op, bindings: []slot{{false, 0}, {true, 0}}, push: words(vals...),
		elems: elems, outShapes: [][]int64{out}}
}
