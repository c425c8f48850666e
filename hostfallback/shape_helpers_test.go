package hostfallback

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

// Helpers for the data-movement kernel tests (prefixed mv to stay clear of
// other kernel families' test helpers).

// mvCase is one kernel invocation and its expected outputs.
type mvCase struct {
	name  string
	op    string
	opset int64
	attrs []*graph.Attribute
	// in holds the inputs; nil entries are omitted optional inputs.
	in []*graph.Tensor
	// want holds the expected outputs; a nil entry is an output the node
	// does not ask for.
	want []*graph.Tensor
	// tol, when positive, compares element values within tol instead of
	// bytes.
	tol float64
	// err expects the kernel to fail; unsupported expects ErrUnsupported.
	err, unsupported bool
	// nout is the output count for failing cases (default 1).
	nout int
}

// mvPrinted is the relative tolerance for expected values written as
// decimals with 7 or 8 significant digits.
const mvPrinted = 1e-6

func mvShape(d ...int64) []int64 { return d }

func mvF32(shape []int64, v ...float32) *graph.Tensor {
	return mvMust(graph.FromSlice(graph.Float, shape, v))
}
func mvF64(shape []int64, v ...float64) *graph.Tensor {
	return mvMust(graph.FromSlice(graph.Double, shape, v))
}
func mvI64(shape []int64, v ...int64) *graph.Tensor {
	return mvMust(graph.FromSlice(graph.Int64, shape, v))
}
func mvI32(shape []int64, v ...int32) *graph.Tensor {
	return mvMust(graph.FromSlice(graph.Int32, shape, v))
}
func mvU8(shape []int64, v ...uint8) *graph.Tensor {
	return mvMust(graph.FromSlice(graph.Uint8, shape, v))
}
func mvBool(shape []int64, v ...bool) *graph.Tensor {
	return mvMust(graph.FromSlice(graph.Bool, shape, v))
}

// mvF16 builds a float16 tensor from float32 values.
func mvF16(shape []int64, v ...float32) *graph.Tensor {
	bits := make([]uint16, len(v))
	for i, f := range v {
		bits[i] = f32ToF16(f)
	}
	return mvMust(graph.FromSlice(graph.Float16, shape, bits))
}

// mvStrs builds a string tensor.
func mvStrs(shape []int64, v ...string) *graph.Tensor {
	t := graph.NewTensor(graph.String, shape)
	copy(t.Strings, v)
	return t
}

// mvInt4 builds an int4 tensor from values in [-8, 7].
func mvInt4(shape []int64, v ...int8) *graph.Tensor {
	t := graph.NewTensor(graph.Int4, shape)
	raw := make([]byte, len(v))
	for i, x := range v {
		raw[i] = byte(x) & 15
	}
	packSubByte(t.Data, raw, 4)
	return t
}

func mvMust(t *graph.Tensor, err error) *graph.Tensor {
	if err != nil {
		panic(err)
	}
	return t
}

func mvInt(name string, v int64) *graph.Attribute {
	return &graph.Attribute{Name: name, Type: graph.AttrInt, I: v}
}
func mvInts(name string, v ...int64) *graph.Attribute {
	return &graph.Attribute{Name: name, Type: graph.AttrInts, Ints: v}
}
func mvFloat(name string, v float32) *graph.Attribute {
	return &graph.Attribute{Name: name, Type: graph.AttrFloat, F: v}
}
func mvFloats(name string, v ...float32) *graph.Attribute {
	return &graph.Attribute{Name: name, Type: graph.AttrFloats, Floats: v}
}
func mvStr(name, v string) *graph.Attribute {
	return &graph.Attribute{Name: name, Type: graph.AttrString, S: []byte(v)}
}

// mvCall runs op on the inputs and returns the call.
func mvCall(op string, opset int64, attrs []*graph.Attribute, in []*graph.Tensor, outputs []string) (*Call, error) {
	n := &graph.Node{Name: "n", OpType: op, Attrs: map[string]*graph.Attribute{}, Outputs: outputs}
	for _, a := range attrs {
		n.Attrs[a.Name] = a
	}
	c := &Call{Node: n, Opset: opset, Out: make([]graph.Value, len(outputs))}
	for i, t := range in {
		n.Inputs = append(n.Inputs, fmt.Sprint("x", i))
		if t == nil {
			n.Inputs[i] = ""
			c.In = append(c.In, nil)
		} else {
			c.In = append(c.In, t)
		}
	}
	k := Lookup(graph.DefaultDomain, op)
	if k == nil {
		return nil, fmt.Errorf("no kernel for %s", op)
	}
	return c, k(c)
}

func mvRun(t *testing.T, cases []mvCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := max(len(tc.want), tc.nout, 1)
			outputs := make([]string, n)
			for i := range outputs {
				if i >= len(tc.want) || tc.want[i] != nil {
					outputs[i] = fmt.Sprint("y", i)
				}
			}
			c, err := mvCall(tc.op, tc.opset, tc.attrs, tc.in, outputs)
			switch {
			case tc.err || tc.unsupported:
				if err == nil {
					t.Fatalf("no error; outputs %v", c.Out)
				}
				if tc.unsupported != errors.Is(err, ErrUnsupported) {
					t.Fatalf("error %v: unsupported is %v", err, errors.Is(err, ErrUnsupported))
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			for i, w := range tc.want {
				if w == nil {
					continue
				}
				got, _ := c.Out[i].(*graph.Tensor)
				if got == nil {
					t.Fatalf("output %d missing", i)
				}
				mvCheck(t, fmt.Sprint("output ", i), got, w, tc.tol)
			}
		})
	}
}

// mvCheck compares got with want: type, shape and bytes (or strings), or
// values within tol.
func mvCheck(t *testing.T, what string, got, want *graph.Tensor, tol float64) {
	t.Helper()
	if got.DType != want.DType || !slices.Equal(got.Shape, want.Shape) {
		t.Fatalf("%s: got %s, want %s", what, got.ValueType(), want.ValueType())
	}
	if want.DType == graph.String {
		if !slices.Equal(got.Strings, want.Strings) {
			t.Fatalf("%s: got %q, want %q", what, got.Strings, want.Strings)
		}
		return
	}
	if tol <= 0 {
		if !bytes.Equal(got.Data, want.Data) {
			t.Fatalf("%s: got %v, want %v", what, mvValues(got), mvValues(want))
		}
		return
	}
	for i := range want.NumElements() {
		g, w := got.Float64At(i), want.Float64At(i)
		if !(math.Abs(g-w) <= tol*(1+math.Abs(w))) {
			t.Fatalf("%s: element %d is %v, want %v\ngot  %v\nwant %v", what, i, g, w, mvValues(got), mvValues(want))
		}
	}
}

// mvValues lists a tensor's elements for failure messages.
func mvValues(t *graph.Tensor) []float64 {
	if t.DType.Bits() < 8 {
		v := inCells(t).b
		out := make([]float64, len(v))
		for i, b := range v {
			out[i] = float64(b)
		}
		return out
	}
	out := make([]float64, t.NumElements())
	for i := range out {
		out[i] = t.Float64At(int64(i))
	}
	return out
}

// mvIota returns a float32 tensor of the shape holding 0, 1, 2, ...
func mvIota(shape ...int64) *graph.Tensor {
	v := make([]float32, graph.NumElements(shape))
	for i := range v {
		v[i] = float32(i)
	}
	return mvF32(shape, v...)
}
