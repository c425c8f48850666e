package ops

import (
	"math"

	"github.com/x448/float16"

	"github.com/onnxvk/onnxvk/graph"
)

// maxValueElems bounds the tensors whose values inference computes at plan
// time: shapes, indices and the small arithmetic around them.
const maxValueElems = 4096

// small reports whether t is known and small enough to compute with.
func small(t *graph.Tensor) bool {
	return t != nil && t.NumElements() <= maxValueElems && (t.DType == graph.String || t.DType.Bits() >= 8)
}

// nvals is a small numeric tensor decoded for plan-time arithmetic: integer
// and bool elements in i, floating-point ones in f.
type nvals struct {
	dt    graph.DType
	shape []int64
	i     []int64
	f     []float64
}

// computable reports whether plan-time arithmetic supports dt.
func computable(dt graph.DType) bool {
	switch dt {
	case graph.Float, graph.Double, graph.Float16, graph.BFloat16, graph.Bool:
		return true
	}
	return dt.IsInt() && dt.Bits() >= 8
}

// decode reads a small numeric tensor; ok is false for other tensors.
func decode(t *graph.Tensor) (*nvals, bool) {
	if !small(t) || !computable(t.DType) {
		return nil, false
	}
	n := int(t.NumElements())
	if int64(len(t.Data)) < t.DType.ByteSize(int64(n)) {
		return nil, false
	}
	v := &nvals{dt: t.DType, shape: append([]int64{}, t.Shape...)}
	switch {
	case t.DType.IsFloat():
		v.f = make([]float64, n)
		for k := range v.f {
			v.f[k] = t.Float64At(int64(k))
		}
	case t.DType == graph.Uint64:
		v.i = make([]int64, n)
		for k, x := range graph.View[uint64](t)[:n] {
			v.i[k] = int64(x)
		}
	case t.DType == graph.Int64:
		v.i = append([]int64{}, graph.View[int64](t)[:n]...)
	default:
		v.i = make([]int64, n)
		for k := range v.i {
			v.i[k] = int64(t.Float64At(int64(k)))
		}
	}
	return v, true
}

// newVals returns a zero nvals of the given type and shape.
func newVals(dt graph.DType, shape []int64) *nvals {
	n := graph.NumElements(shape)
	v := &nvals{dt: dt, shape: shape}
	if dt.IsFloat() {
		v.f = make([]float64, n)
	} else {
		v.i = make([]int64, n)
	}
	return v
}

func (v *nvals) isFloat() bool { return v.f != nil || v.dt.IsFloat() }

func (v *nvals) len() int { return int(graph.NumElements(v.shape)) }

// float returns element k as a float64.
func (v *nvals) float(k int) float64 {
	if v.isFloat() {
		return v.f[k]
	}
	if v.dt == graph.Uint64 {
		return float64(uint64(v.i[k]))
	}
	return float64(v.i[k])
}

// int returns element k as an int64, truncating floats toward zero.
func (v *nvals) int(k int) int64 {
	if v.isFloat() {
		return floatToInt(v.f[k])
	}
	return v.i[k]
}

// floatToInt truncates toward zero, saturating at the int64 range and
// mapping NaN to 0.
func floatToInt(x float64) int64 {
	switch {
	case math.IsNaN(x):
		return 0
	case x >= math.MaxInt64:
		return math.MaxInt64
	case x <= math.MinInt64:
		return math.MinInt64
	}
	return int64(x)
}

// setInt stores x as element k, converting to the element type.
func (v *nvals) setInt(k int, x int64) {
	if v.isFloat() {
		v.f[k] = float64(x)
		return
	}
	v.i[k] = x
}

// setFloat stores x as element k, converting to the element type.
func (v *nvals) setFloat(k int, x float64) {
	if v.isFloat() {
		v.f[k] = x
		return
	}
	if v.dt == graph.Bool {
		if x != 0 {
			v.i[k] = 1
		} else {
			v.i[k] = 0
		}
		return
	}
	v.i[k] = floatToInt(x)
}

// tensor encodes v as a tensor of its element type.
func (v *nvals) tensor() *graph.Tensor {
	t := graph.NewTensor(v.dt, v.shape)
	n := v.len()
	switch v.dt {
	case graph.Float:
		d := graph.View[float32](t)
		for k := range n {
			d[k] = float32(v.f[k])
		}
	case graph.Double:
		copy(graph.View[float64](t), v.f)
	case graph.Float16:
		d := graph.View[uint16](t)
		for k := range n {
			d[k] = float16.Fromfloat32(float32(v.f[k])).Bits()
		}
	case graph.BFloat16:
		d := graph.View[uint16](t)
		for k := range n {
			d[k] = bfloat16Bits(float32(v.f[k]))
		}
	case graph.Bool, graph.Uint8:
		for k := range n {
			x := v.i[k]
			if v.dt == graph.Bool && x != 0 {
				x = 1
			}
			t.Data[k] = uint8(x)
		}
	case graph.Int8:
		d := graph.View[int8](t)
		for k := range n {
			d[k] = int8(v.i[k])
		}
	case graph.Int16:
		d := graph.View[int16](t)
		for k := range n {
			d[k] = int16(v.i[k])
		}
	case graph.Uint16:
		d := graph.View[uint16](t)
		for k := range n {
			d[k] = uint16(v.i[k])
		}
	case graph.Int32:
		d := graph.View[int32](t)
		for k := range n {
			d[k] = int32(v.i[k])
		}
	case graph.Uint32:
		d := graph.View[uint32](t)
		for k := range n {
			d[k] = uint32(v.i[k])
		}
	case graph.Int64:
		copy(graph.View[int64](t), v.i)
	case graph.Uint64:
		d := graph.View[uint64](t)
		for k := range n {
			d[k] = uint64(v.i[k])
		}
	}
	return t
}

// bfloat16Bits rounds f to bfloat16 (to nearest, ties to even).
func bfloat16Bits(f float32) uint16 {
	b := math.Float32bits(f)
	if f != f {
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// convert returns v's elements in type dt, as Cast does.
func (v *nvals) convert(dt graph.DType) *nvals {
	out := newVals(dt, v.shape)
	for k := range v.len() {
		if v.isFloat() {
			out.setFloat(k, v.f[k])
		} else if out.isFloat() {
			out.setFloat(k, v.float(k))
		} else {
			out.setInt(k, v.i[k])
		}
	}
	return out
}

// int64Tensor returns an int64 tensor of the given shape.
func int64Tensor(shape []int64, data []int64) *graph.Tensor {
	t := graph.NewTensor(graph.Int64, shape)
	copy(graph.View[int64](t), data)
	return t
}

// broadcastInts is numpy broadcasting of known shapes.
func broadcastInts(a, b []int64) ([]int64, bool) {
	r := max(len(a), len(b))
	out := make([]int64, r)
	for i := range r {
		x, y := int64(1), int64(1)
		if j := i - (r - len(a)); j >= 0 {
			x = a[j]
		}
		if j := i - (r - len(b)); j >= 0 {
			y = b[j]
		}
		switch {
		case x == y || y == 1:
			out[i] = x
		case x == 1:
			out[i] = y
		default:
			return nil, false
		}
	}
	return out, true
}

// broadcastIndex maps every linear index of shape out to the linear index of
// the element of shape in that numpy broadcasting reads.
func broadcastIndex(out, in []int64) []int {
	n := int(graph.NumElements(out))
	idx := make([]int, n)
	r := len(out)
	strides := make([]int64, r)
	s := int64(1)
	for i := len(in) - 1; i >= 0; i-- {
		j := i + r - len(in)
		if in[i] != 1 {
			strides[j] = s
		}
		s *= in[i]
	}
	coord := make([]int64, r)
	for k := range n {
		var off int64
		for i := range r {
			off += coord[i] * strides[i]
		}
		idx[k] = int(off)
		for i := r - 1; i >= 0; i-- {
			coord[i]++
			if coord[i] < out[i] {
				break
			}
			coord[i] = 0
		}
	}
	return idx
}

// binaryOp computes element k of out from element ka of x and kb of y; it
// returns false when the value cannot be computed (integer division by zero).
type binaryOp func(out *nvals, k int, x *nvals, ka int, y *nvals, kb int) bool

// binaryValues applies op elementwise with broadcasting; nil when either
// input is unknown or the result would be large.
func binaryValues(a, b *graph.Tensor, outDT graph.DType, op binaryOp) *graph.Tensor {
	x, ok1 := decode(a)
	y, ok2 := decode(b)
	if !ok1 || !ok2 {
		return nil
	}
	shape, ok := broadcastInts(x.shape, y.shape)
	if !ok || graph.NumElements(shape) > maxValueElems {
		return nil
	}
	if outDT == graph.Undefined {
		outDT = x.dt
	}
	out := newVals(outDT, shape)
	ia, ib := broadcastIndex(shape, x.shape), broadcastIndex(shape, y.shape)
	for k := range ia {
		if !op(out, k, x, ia[k], y, ib[k]) {
			return nil
		}
	}
	return out.tensor()
}

// takeElems builds a tensor of the given shape whose element k is element
// idx[k] of src; it works for every type of at least 8 bits and strings.
// It returns nil when an index falls outside src or the counts disagree.
func takeElems(src *graph.Tensor, shape []int64, idx []int) *graph.Tensor {
	n := int(src.NumElements())
	if src.DType == graph.String {
		n = min(n, len(src.Strings))
	} else if es := src.DType.Size(); es > 0 {
		n = min(n, len(src.Data)/es)
	} else {
		return nil
	}
	if int64(len(idx)) != graph.NumElements(shape) {
		return nil
	}
	for _, j := range idx {
		if j < 0 || j >= n {
			return nil
		}
	}
	t := graph.NewTensor(src.DType, shape)
	if src.DType == graph.String {
		for k, j := range idx {
			t.Strings[k] = src.Strings[j]
		}
		return t
	}
	es := src.DType.Size()
	for k, j := range idx {
		copy(t.Data[k*es:(k+1)*es], src.Data[j*es:(j+1)*es])
	}
	return t
}

// reshaped returns src with a new shape and the same elements.
func reshaped(src *graph.Tensor, shape []int64) *graph.Tensor {
	return &graph.Tensor{DType: src.DType, Shape: append([]int64{}, shape...), Data: src.Data, Strings: src.Strings}
}

// forEachIndex calls f with every coordinate of shape in row-major order.
func forEachIndex(shape []int64, f func(coord []int64)) {
	n := graph.NumElements(shape)
	coord := make([]int64, len(shape))
	for range n {
		f(coord)
		for i := len(shape) - 1; i >= 0; i-- {
			coord[i]++
			if coord[i] < shape[i] {
				break
			}
			coord[i] = 0
		}
	}
}
