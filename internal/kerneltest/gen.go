package kerneltest

import (
	"math"
	"math/rand/v2"

	"github.com/onnxvk/onnxvk/graph"
)

// Node returns a node of op reading inputs, with output "y" and the
// attributes.
func Node(op string, inputs []string, attrs ...*graph.Attribute) *graph.Node {
	n := &graph.Node{OpType: op, Inputs: inputs, Outputs: []string{"y"}, Attrs: map[string]*graph.Attribute{}}
	for _, a := range attrs {
		n.Attrs[a.Name] = a
	}
	return n
}

// IntAttr returns an int attribute.
func IntAttr(name string, v int64) *graph.Attribute {
	return &graph.Attribute{Name: name, Type: graph.AttrInt, I: v}
}

// IntsAttr returns an ints attribute.
func IntsAttr(name string, v ...int64) *graph.Attribute {
	return &graph.Attribute{Name: name, Type: graph.AttrInts, Ints: v}
}

// FloatAttr returns a float attribute.
func FloatAttr(name string, v float32) *graph.Attribute {
	return &graph.Attribute{Name: name, Type: graph.AttrFloat, F: v}
}

// StringAttr returns a string attribute.
func StringAttr(name, v string) *graph.Attribute {
	return &graph.Attribute{Name: name, Type: graph.AttrString, S: []byte(v)}
}

// ResizeNode returns a Resize node with roi, scales and sizes named when
// wanted and the given string, int, float and ints attributes.
func ResizeNode(roi, scales, sizes bool, attrs map[string]any) *graph.Node {
	n := &graph.Node{OpType: "Resize", Inputs: []string{"x", "", "", ""}, Outputs: []string{"y"}, Attrs: map[string]*graph.Attribute{}}
	for k, on := range []bool{roi, scales, sizes} {
		if on {
			n.Inputs[k+1] = []string{"roi", "scales", "sizes"}[k]
		}
	}
	for k, v := range attrs {
		switch v := v.(type) {
		case string:
			n.Attrs[k] = StringAttr(k, v)
		case int:
			n.Attrs[k] = IntAttr(k, int64(v))
		case float32:
			n.Attrs[k] = FloatAttr(k, v)
		case []int64:
			n.Attrs[k] = IntsAttr(k, v...)
		default:
			panic("ResizeNode: attribute " + k)
		}
	}
	return n
}

// ConstInts returns a constant int64 input holding v.
func ConstInts(v ...int64) Arg {
	t, err := graph.FromSlice(graph.Int64, []int64{int64(len(v))}, v)
	if err != nil {
		panic(err)
	}
	return Arg{T: t, Const: true}
}

// ConstFloats returns a constant float32 input holding v.
func ConstFloats(v ...float32) Arg {
	t, err := graph.FromSlice(graph.Float, []int64{int64(len(v))}, v)
	if err != nil {
		panic(err)
	}
	return Arg{T: t, Const: true}
}

// RandFloats returns a float32 tensor of the shape with values uniform in
// [lo, hi).
func RandFloats(r *rand.Rand, shape []int64, lo, hi float32) *graph.Tensor {
	x := graph.NewTensor(graph.Float, shape)
	for i, xs := 0, graph.View[float32](x); i < len(xs); i++ {
		xs[i] = lo + (hi-lo)*r.Float32()
	}
	return x
}

// RandInts returns an int32 or int64 tensor of the shape with values
// uniform in [lo, hi).
func RandInts(r *rand.Rand, dt graph.DType, shape []int64, lo, hi int64) *graph.Tensor {
	x := graph.NewTensor(dt, shape)
	switch dt {
	case graph.Int32:
		for i, xs := 0, graph.View[int32](x); i < len(xs); i++ {
			xs[i] = int32(lo + r.Int64N(hi-lo))
		}
	case graph.Int64:
		for i, xs := 0, graph.View[int64](x); i < len(xs); i++ {
			xs[i] = lo + r.Int64N(hi-lo)
		}
	default:
		panic("RandInts: " + dt.String())
	}
	return x
}

// RandomTensor returns a tensor of dt and shape with seeded random values:
// float32 and float64 uniform in [-10, 10), random bytes for other types.
func RandomTensor(dt graph.DType, shape []int64, seed uint64) *graph.Tensor {
	r := rand.New(rand.NewPCG(seed, 11))
	t := graph.NewTensor(dt, shape)
	switch dt {
	case graph.Float:
		for i := range graph.View[float32](t) {
			graph.View[float32](t)[i] = r.Float32()*20 - 10
		}
	case graph.Double:
		for i := range graph.View[float64](t) {
			graph.View[float64](t)[i] = r.Float64()*20 - 10
		}
	default:
		for i := range t.Data {
			t.Data[i] = byte(r.Uint32())
		}
	}
	return t
}

// EdgeValues returns a tensor of dt and shape mixing small values (so that
// comparisons find equal pairs) with the type's edge values: extremes,
// int64 values that differ in one 32-bit word only, and for float32 -0,
// ±inf and NaN.
func EdgeValues(r *rand.Rand, dt graph.DType, shape []int64) *graph.Tensor {
	x := graph.NewTensor(dt, shape)
	n := int(graph.NumElements(shape))
	pick := func(edges []int64) int64 {
		if r.IntN(4) == 0 {
			return edges[r.IntN(len(edges))]
		}
		return r.Int64N(7) - 3
	}
	for i := range n {
		switch dt {
		case graph.Float:
			edges := []float32{float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 0.5, -1e30, 3e38}
			v := float32(r.IntN(7) - 3)
			if r.IntN(4) == 0 {
				v = edges[r.IntN(len(edges))]
			}
			graph.View[float32](x)[i] = v
		case graph.Int32:
			graph.View[int32](x)[i] = int32(pick([]int64{math.MinInt32, math.MaxInt32, math.MinInt32 + 1, 1 << 20}))
		case graph.Int64:
			graph.View[int64](x)[i] = pick([]int64{math.MinInt64, math.MaxInt64, 1 << 32, -(1 << 32), 1<<32 + 5, -(1<<32 + 5), math.MaxUint32, -math.MaxUint32, math.MinInt64 + 1})
		case graph.Uint32:
			graph.View[uint32](x)[i] = uint32(pick([]int64{math.MaxUint32, 1 << 31, 1<<31 - 1, 40}) + 3)
		case graph.Uint64:
			graph.View[uint64](x)[i] = uint64(pick([]int64{-1, math.MinInt64, 1 << 32, math.MaxUint32, 64, 63, 31, 33}) + 3)
		case graph.Bool:
			x.Data[i] = byte(r.IntN(2))
		case graph.Uint8, graph.Int8:
			x.Data[i] = byte(pick([]int64{0, 127, 128, 255, 1}))
		default:
			panic("EdgeValues: " + dt.String())
		}
	}
	return x
}

// NonZero returns x with its zeros replaced by 1: divisors, as the CPU
// kernels fail on a zero integer divisor.
func NonZero(x *graph.Tensor) *graph.Tensor {
	size := int64(x.DType.Size())
	for i := range x.NumElements() {
		z := true
		for _, b := range x.Data[size*i : size*(i+1)] {
			z = z && b == 0
		}
		if z {
			x.Data[size*i] = 1
		}
	}
	return x
}
