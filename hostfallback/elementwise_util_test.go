package hostfallback

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

// ewAttrs is a node's attributes for the elementwise tests.
type ewAttrs map[string]*graph.Attribute

func ewInt(name string, v int64) *graph.Attribute {
	return &graph.Attribute{Name: name, Type: graph.AttrInt, I: v}
}

func ewFloat(name string, v float32) *graph.Attribute {
	return &graph.Attribute{Name: name, Type: graph.AttrFloat, F: v}
}

func ewString(name, v string) *graph.Attribute {
	return &graph.Attribute{Name: name, Type: graph.AttrString, S: []byte(v)}
}

func ewInts(name string, v ...int64) *graph.Attribute {
	return &graph.Attribute{Name: name, Type: graph.AttrInts, Ints: v}
}

// ewWith returns the attributes as a map keyed by name.
func ewWith(as ...*graph.Attribute) ewAttrs {
	m := ewAttrs{}
	for _, a := range as {
		m[a.Name] = a
	}
	return m
}

// ewNode returns a test node of op with the attributes.
func ewNode(op string, attrs ewAttrs) *graph.Node {
	return &graph.Node{Name: "t", OpType: op, Attrs: attrs}
}

// runElementwiseKernel runs the registered kernel of op at opset on the
// inputs (nil for an omitted one) and returns its nOut outputs.
func runElementwiseKernel(t *testing.T, op string, opset int64, attrs ewAttrs, nOut int, in ...graph.Value) ([]graph.Value, error) {
	t.Helper()
	k := Lookup(graph.DefaultDomain, op)
	if k == nil {
		t.Fatalf("no kernel for %s", op)
	}
	n := ewNode(op, attrs)
	n.Outputs = make([]string, nOut)
	for i := range n.Outputs {
		n.Outputs[i] = "y"
	}
	c := &Call{Node: n, Opset: opset, In: in, Out: make([]graph.Value, nOut)}
	err := k(c)
	return c.Out, err
}

// ewRun is runElementwiseKernel for a single output that must succeed.
func ewRun(t *testing.T, op string, opset int64, attrs ewAttrs, in ...graph.Value) *graph.Tensor {
	t.Helper()
	out, err := runElementwiseKernel(t, op, opset, attrs, 1, in...)
	if err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	y, ok := out[0].(*graph.Tensor)
	if !ok {
		t.Fatalf("%s: output %T, want a tensor", op, out[0])
	}
	return y
}

// ewFails runs op and fails the test unless it returns an error.
func ewFails(t *testing.T, op string, opset int64, attrs ewAttrs, in ...graph.Value) {
	t.Helper()
	if _, err := runElementwiseKernel(t, op, opset, attrs, 1, in...); err == nil {
		t.Errorf("%s: no error", op)
	}
}

// ewT returns a tensor of type dt and shape holding vals.
func ewT[T graph.Elem](dt graph.DType, shape []int64, vals ...T) *graph.Tensor {
	t, err := graph.FromSlice(dt, shape, vals)
	if err != nil {
		panic(err)
	}
	return t
}

// ewStrings returns a string tensor.
func ewStrings(shape []int64, vals ...string) *graph.Tensor {
	return &graph.Tensor{DType: graph.String, Shape: shape, Strings: vals}
}

// ewF32 returns a float32 tensor.
func ewF32(shape []int64, vals ...float32) *graph.Tensor { return ewT(graph.Float, shape, vals...) }

// ewShape is shorthand for a shape literal.
func ewShape(d ...int64) []int64 {
	if d == nil {
		return []int64{}
	}
	return d
}

// ewRandF32 returns a float32 tensor of the shape with seeded values in
// [-4, 4).
func ewRandF32(rng *rand.Rand, shape []int64) *graph.Tensor {
	t := graph.NewTensor(graph.Float, shape)
	d := graph.View[float32](t)
	for i := range d {
		d[i] = float32(rng.Float64()*8 - 4)
	}
	return t
}

// ewValues returns t's elements as float64s.
func ewValues(t *graph.Tensor) []float64 {
	out := make([]float64, t.NumElements())
	for i := range out {
		out[i] = t.Float64At(int64(i))
	}
	return out
}

// ewSame reports whether got matches want within tol (absolute plus
// relative); NaN matches NaN and infinities match exactly.
func ewSame(got, want, tol float64) bool {
	switch {
	case math.IsNaN(want):
		return math.IsNaN(got)
	case math.IsInf(want, 0):
		return got == want
	}
	return math.Abs(got-want) <= tol*(1+math.Abs(want))
}

// ewCheck compares a tensor's type, shape and values.
func ewCheck(t *testing.T, name string, got *graph.Tensor, dt graph.DType, shape []int64, want []float64, tol float64) {
	t.Helper()
	if got.DType != dt {
		t.Errorf("%s: type %s, want %s", name, got.DType, dt)
		return
	}
	if len(got.Shape) != len(shape) {
		t.Errorf("%s: shape %v, want %v", name, got.Shape, shape)
		return
	}
	for i := range shape {
		if got.Shape[i] != shape[i] {
			t.Errorf("%s: shape %v, want %v", name, got.Shape, shape)
			return
		}
	}
	vals := ewValues(got)
	if len(vals) != len(want) {
		t.Errorf("%s: %d values, want %d", name, len(vals), len(want))
		return
	}
	for i := range want {
		if !ewSame(vals[i], want[i], tol) {
			t.Errorf("%s: [%d] = %v, want %v (all: %v)", name, i, vals[i], want[i], vals)
			return
		}
	}
}

// ewIndex returns the offset in a tensor of shape in (broadcast to out) of
// the output element with multi-index idx.
func ewIndex(in, out []int64, idx []int64) int64 {
	off, stride := int64(0), int64(1)
	for i := len(in) - 1; i >= 0; i-- {
		j := i + len(out) - len(in)
		if in[i] != 1 {
			off += idx[j] * stride
		}
		stride *= in[i]
	}
	return off
}

// ewUnravel returns the multi-index of linear offset o in shape.
func ewUnravel(o int64, shape []int64) []int64 {
	idx := make([]int64, len(shape))
	for i := len(shape) - 1; i >= 0; i-- {
		idx[i] = o % shape[i]
		o /= shape[i]
	}
	return idx
}
