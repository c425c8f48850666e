package hostfallback

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// nnAttrs are test node attributes: int, int64, float32, float64, string,
// []int64, []float32 and []string values.
type nnAttrs map[string]any

func (a nnAttrs) node(op string, nIn int, outs []string) *graph.Node {
	n := &graph.Node{Name: "test", OpType: op, Attrs: map[string]*graph.Attribute{}, Outputs: outs}
	for i := range nIn {
		n.Inputs = append(n.Inputs, fmt.Sprint("x", i))
	}
	for k, v := range a {
		at := &graph.Attribute{Name: k}
		switch v := v.(type) {
		case int:
			at.Type, at.I = graph.AttrInt, int64(v)
		case int64:
			at.Type, at.I = graph.AttrInt, v
		case float32:
			at.Type, at.F = graph.AttrFloat, v
		case float64:
			at.Type, at.F = graph.AttrFloat, float32(v)
		case string:
			at.Type, at.S = graph.AttrString, []byte(v)
		case []int64:
			at.Type, at.Ints = graph.AttrInts, v
		case []float32:
			at.Type, at.Floats = graph.AttrFloats, v
		case []string:
			at.Type = graph.AttrStrings
			for _, s := range v {
				at.Strings = append(at.Strings, []byte(s))
			}
		default:
			panic(fmt.Sprintf("nnAttrs: %T", v))
		}
		n.Attrs[k] = at
	}
	return n
}

// nnRunOuts runs op's kernel; outs names the node's outputs, "" for an
// omitted one. Absent (nil) inputs are passed as nil.
func nnRunOuts(op string, opset int64, attrs nnAttrs, outs []string, ins ...*graph.Tensor) ([]*graph.Tensor, error) {
	k := Lookup("", op)
	if k == nil {
		return nil, fmt.Errorf("no kernel for %s", op)
	}
	c := &Call{Node: attrs.node(op, len(ins), outs), Opset: opset, Out: make([]graph.Value, len(outs))}
	for _, t := range ins {
		if t == nil {
			c.In = append(c.In, nil)
		} else {
			c.In = append(c.In, t)
		}
	}
	if err := k(c); err != nil {
		return nil, err
	}
	res := make([]*graph.Tensor, len(outs))
	for i, v := range c.Out {
		if outs[i] == "" {
			continue
		}
		if v == nil {
			return nil, fmt.Errorf("%s: output %d not set", op, i)
		}
		res[i] = v.(*graph.Tensor)
	}
	return res, nil
}

// nnRun runs a one-output kernel.
func nnRun(op string, opset int64, attrs nnAttrs, ins ...*graph.Tensor) (*graph.Tensor, error) {
	out, err := nnRunOuts(op, opset, attrs, []string{"y"}, ins...)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// nnF32 is a float32 tensor.
func nnF32(shape []int64, vals ...float32) *graph.Tensor {
	t, err := graph.FromSlice(graph.Float, shape, vals)
	if err != nil {
		panic(err)
	}
	return t
}

// nnRand is a float32 tensor of seeded values in [-1, 1).
func nnRand(r *rand.Rand, shape ...int64) *graph.Tensor {
	return nnF32(shape, nnRandFloats(r, int(graph.NumElements(shape)))...)
}

// nnCheck fails t unless got has the wanted shape and values within
// abs + rel·|want|.
func nnCheck(t *testing.T, what string, got *graph.Tensor, shape []int64, want []float32, abs, rel float64) {
	t.Helper()
	if fmt.Sprint(got.Shape) != fmt.Sprint(shape) {
		t.Fatalf("%s: shape %v, want %v", what, got.Shape, shape)
	}
	vals := make([]float32, got.NumElements())
	for i := range vals {
		vals[i] = float32(got.Float64At(int64(i)))
	}
	if i := nnClose(vals, want, abs, rel); i >= 0 {
		t.Fatalf("%s: element %d = %v, want %v\ngot  %v\nwant %v", what, i, vals[i], want[i], nnHead(vals), nnHead(want))
	}
}

// opTol returns the tolerance graph/ops gives op (of the default domain,
// or of domain when given): what a kernel compared with an independent
// implementation must meet.
func opTol(op string, domain ...string) ops.Tolerance {
	return ops.Lookup(append(domain, "")[0], op, math.MaxInt64).Tolerance()
}

// nnHead is the first values of v, for failure messages.
func nnHead(v []float32) []float32 { return v[:min(len(v), 24)] }

func TestGemm(t *testing.T) {
	a := nnF32([]int64{2, 3}, 1, 2, 3, 4, 5, 6)
	b := nnF32([]int64{3, 2}, 7, 8, 9, 10, 11, 12)
	ab := []float32{58, 64, 139, 154}
	aT := nnF32([]int64{3, 2}, 1, 4, 2, 5, 3, 6)
	bT := nnF32([]int64{2, 3}, 7, 9, 11, 8, 10, 12)
	tests := []struct {
		name  string
		opset int64
		attrs nnAttrs
		in    []*graph.Tensor
		want  []float32
	}{
		{"plain", 13, nil, []*graph.Tensor{a, b}, ab},
		{"transposed", 13, nnAttrs{"transA": 1, "transB": 1}, []*graph.Tensor{aT, bT}, ab},
		{"alpha beta full C", 13, nnAttrs{"alpha": 0.5, "beta": 2.0}, []*graph.Tensor{a, b, nnF32([]int64{2, 2}, 1, 2, 3, 4)}, []float32{31, 36, 75.5, 85}},
		{"scalar C", 13, nil, []*graph.Tensor{a, b, nnF32(nil, 1)}, []float32{59, 65, 140, 155}},
		{"row C", 11, nil, []*graph.Tensor{a, b, nnF32([]int64{2}, 1, 2)}, []float32{59, 66, 140, 156}},
		{"column C", 9, nil, []*graph.Tensor{a, b, nnF32([]int64{2, 1}, 1, 2)}, []float32{59, 65, 141, 156}},
		{"beta 0 ignores C", 13, nnAttrs{"beta": 0.0}, []*graph.Tensor{a, b, nnF32([]int64{1}, float32(math.NaN()))}, ab},
		{"Gemm-6 broadcast", 6, nnAttrs{"broadcast": 1}, []*graph.Tensor{a, b, nnF32([]int64{2}, 1, 2)}, []float32{59, 66, 140, 156}},
	}
	for _, tc := range tests {
		y, err := nnRun("Gemm", tc.opset, tc.attrs, tc.in...)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		nnCheck(t, tc.name, y, []int64{2, 2}, tc.want, 1e-5, 1e-6)
	}
	bad := []struct {
		name  string
		opset int64
		attrs nnAttrs
		in    []*graph.Tensor
	}{
		{"inner mismatch", 13, nil, []*graph.Tensor{a, a}},
		{"C shape", 13, nil, []*graph.Tensor{a, b, nnF32([]int64{3}, 1, 2, 3)}},
		{"Gemm-6 C without broadcast", 6, nil, []*graph.Tensor{a, b, nnF32([]int64{2}, 1, 2)}},
		{"C missing before 11", 9, nil, []*graph.Tensor{a, b}},
		{"rank 3", 13, nil, []*graph.Tensor{nnF32([]int64{1, 2, 3}, 1, 2, 3, 4, 5, 6), b}},
	}
	for _, tc := range bad {
		if _, err := nnRun("Gemm", tc.opset, tc.attrs, tc.in...); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

func TestGemmTypes(t *testing.T) {
	i32a, _ := graph.FromSlice(graph.Int32, []int64{2, 3}, []int32{1, 2, 3, 4, 5, 6})
	i32b, _ := graph.FromSlice(graph.Int32, []int64{3, 2}, []int32{7, 8, 9, 10, 11, 12})
	i32c, _ := graph.FromSlice(graph.Int32, []int64{2}, []int32{1, -1})
	y, err := nnRun("Gemm", 13, nnAttrs{"beta": 2.0}, i32a, i32b, i32c)
	if err != nil {
		t.Fatal(err)
	}
	nnCheck(t, "int32", y, []int64{2, 2}, []float32{60, 62, 141, 152}, 0, 0)

	f64a, _ := graph.FromSlice(graph.Double, []int64{2, 3}, []float64{1, 2, 3, 4, 5, 6})
	f64b, _ := graph.FromSlice(graph.Double, []int64{3, 2}, []float64{7, 8, 9, 10, 11, 12})
	y, err = nnRun("Gemm", 13, nnAttrs{"alpha": 2.0}, f64a, f64b)
	if err != nil {
		t.Fatal(err)
	}
	if y.DType != graph.Double {
		t.Fatalf("float64 Gemm gave %s", y.DType)
	}
	nnCheck(t, "float64", y, []int64{2, 2}, []float32{116, 128, 278, 308}, 0, 0)

	for _, dt := range []graph.DType{graph.Float16, graph.BFloat16} {
		a := graph.NewTensor(dt, []int64{2, 3})
		b := graph.NewTensor(dt, []int64{3, 2})
		f32Commit(a, []float32{1, 2, 3, 4, 5, 6})
		f32Commit(b, []float32{7, 8, 9, 10, 11, 12})
		y, err := nnRun("Gemm", 13, nil, a, b)
		if err != nil {
			t.Fatal(err)
		}
		if y.DType != dt {
			t.Fatalf("%s Gemm gave %s", dt, y.DType)
		}
		nnCheck(t, dt.String(), y, []int64{2, 2}, []float32{58, 64, 139, 154}, 0, 0.01)
	}
}

// TestGemmRandom checks float32 Gemm against naiveGemm over transposes,
// scalings and shapes, with B an input and with B a constant weight, which
// takes the packed-once paths (gemvPacked for a few rows, unscaled).
func TestGemmRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	scales := [][2]float32{{0.75, -0.5}, {1, 1}, {1, 0}}
	for si, s := range [][3]int{{1, 1, 1}, {13, 1, 127}, {127, 13, 1}, {33, 65, 129}, {3, 40, 50}, {1, 33, 300}, {70, 50, 260}} {
		m, n, k := s[0], s[1], s[2]
		for ti, tr := range [][2]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}} {
			alpha, beta := scales[(si+ti)%len(scales)][0], scales[(si+ti)%len(scales)][1]
			sa, sb := []int64{int64(m), int64(k)}, []int64{int64(k), int64(n)}
			if tr[0] == 1 {
				sa = []int64{int64(k), int64(m)}
			}
			if tr[1] == 1 {
				sb = []int64{int64(n), int64(k)}
			}
			a, b, cc := nnRand(r, sa...), nnRand(r, sb...), nnRand(r, int64(m), 1)
			attrs := nnAttrs{"transA": tr[0], "transB": tr[1], "alpha": alpha, "beta": beta}
			want := make([]float32, m*n)
			cv := graph.View[float32](cc)
			for i := range m {
				for j := range n {
					want[i*n+j] = cv[i]
				}
			}
			lda, ldb := int(sa[1]), int(sb[1])
			naiveGemm(tr[0] == 1, tr[1] == 1, m, n, k, alpha, graph.View[float32](a), lda, graph.View[float32](b), ldb, beta, want, n)
			tol := opTol("Gemm")
			y, err := nnRun("Gemm", 13, attrs, a, b, cc)
			if err != nil {
				t.Fatal(err)
			}
			nnCheck(t, fmt.Sprint(s, tr, alpha, beta), y, []int64{int64(m), int64(n)}, want, tol.Abs, tol.Rel)
			c := &Call{Node: attrs.node("Gemm", 3, []string{"y"}), Opset: 13, In: []graph.Value{a, b, cc}, Out: make([]graph.Value, 1),
				memo: new(stepMemo), consts: []bool{false, true, false}}
			for range 2 { // the second run reuses the packed weight
				if err := Lookup("", "Gemm")(c); err != nil {
					t.Fatal(err)
				}
				nnCheck(t, fmt.Sprint("constant B ", s, tr, alpha, beta), c.Out[0].(*graph.Tensor), []int64{int64(m), int64(n)}, want, tol.Abs, tol.Rel)
			}
		}
	}
}
