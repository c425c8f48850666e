package ops

import (
	"strings"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

// shp builds a shape from ints and strings: a string is a symbol, "?" an
// unknown dimension.
func shp(dims ...any) graph.Shape {
	s := graph.Shape{}
	for _, d := range dims {
		switch v := d.(type) {
		case int:
			s = append(s, graph.DimOf(int64(v)))
		case string:
			if v == "?" {
				s = append(s, graph.UnknownDim())
			} else {
				s = append(s, graph.SymDim(v))
			}
		}
	}
	return s
}

func f32(dims ...any) *graph.Type { return graph.TensorType(graph.Float, shp(dims...)) }

func i64s(v ...int64) *graph.Tensor { return int64Tensor([]int64{int64(len(v))}, v) }

func ints(name string, v ...int64) *graph.Attribute {
	return &graph.Attribute{Name: name, Type: graph.AttrInts, Ints: v}
}

func intAttr(name string, v int64) *graph.Attribute {
	return &graph.Attribute{Name: name, Type: graph.AttrInt, I: v}
}

func strAttr(name, v string) *graph.Attribute {
	return &graph.Attribute{Name: name, Type: graph.AttrString, S: []byte(v)}
}

// ruleCase runs one op's rule on input types and values.
type ruleCase struct {
	name   string
	op     string
	opset  int64
	attrs  []*graph.Attribute
	in     []*graph.Type
	vals   []*graph.Tensor
	nOut   int
	want   []string // output types as Type.String prints them
	errHas string
}

func runCase(t *testing.T, tc ruleCase) {
	t.Helper()
	opset := tc.opset
	if opset == 0 {
		opset = latestOpset
	}
	n := &graph.Node{Name: tc.name, OpType: tc.op, Attrs: map[string]*graph.Attribute{}}
	for i := range tc.in {
		n.Inputs = append(n.Inputs, "in"+string(rune('0'+i)))
	}
	nOut := max(tc.nOut, len(tc.want), 1)
	for i := range nOut {
		n.Outputs = append(n.Outputs, "out"+string(rune('0'+i)))
	}
	for _, a := range tc.attrs {
		n.Attrs[a.Name] = a
	}
	vals := make([]*graph.Tensor, len(tc.in))
	copy(vals, tc.vals)
	c := &InferContext{Node: n, Opset: opset, InTypes: tc.in, InValues: vals,
		OutTypes: make([]*graph.Type, nOut), OutValues: make([]*graph.Tensor, nOut)}
	s := Lookup("", tc.op, opset)
	if s == nil || s.Infer == nil {
		t.Fatalf("%s: no rule for %s-%d", tc.name, tc.op, opset)
	}
	err := s.Infer(c)
	if tc.errHas != "" {
		if err == nil || !strings.Contains(err.Error(), tc.errHas) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.errHas)
		}
		return
	}
	if err != nil {
		t.Errorf("%s: %v", tc.name, err)
		return
	}
	for i, w := range tc.want {
		if got := c.OutTypes[i].String(); got != w {
			t.Errorf("%s: output %d = %s, want %s", tc.name, i, got, w)
		}
	}
}

func TestBroadcastRules(t *testing.T) {
	for _, tc := range []ruleCase{
		{name: "same", op: "Add", in: []*graph.Type{f32(2, 3), f32(2, 3)}, want: []string{"float32[2 3]"}},
		{name: "scalar", op: "Mul", in: []*graph.Type{f32(2, 3), f32()}, want: []string{"float32[2 3]"}},
		{name: "ones", op: "Sub", in: []*graph.Type{f32(4, 1, 5), f32(3, 1)}, want: []string{"float32[4 3 5]"}},
		{name: "symbols", op: "Add", in: []*graph.Type{f32("N", 1, 64), f32(1, "S", 64)}, want: []string{"float32[N S 64]"}},
		{name: "equal symbols", op: "Div", in: []*graph.Type{f32("N", "S"), f32("N", "S")}, want: []string{"float32[N S]"}},
		{name: "different symbols", op: "Add", in: []*graph.Type{f32("A"), f32("B")}, want: []string{"float32[?]"}},
		{name: "symbol and number", op: "Add", in: []*graph.Type{f32("A"), f32(7)}, want: []string{"float32[7]"}},
		{name: "unknown rank", op: "Add", in: []*graph.Type{f32(3), graph.TensorType(graph.Float, nil)}, want: []string{"float32[?*]"}},
		{name: "mismatch", op: "Add", in: []*graph.Type{f32(3), f32(4)}, errHas: "broadcast"},
		{name: "legacy", op: "Add", opset: 6, attrs: []*graph.Attribute{intAttr("broadcast", 1)},
			in: []*graph.Type{f32(2, 3, 4), f32(3)}, want: []string{"float32[2 3 4]"}},
		{name: "compare", op: "Less", in: []*graph.Type{f32(2, 1), f32(5)}, want: []string{"bool[2 5]"}},
		{name: "where", op: "Where", in: []*graph.Type{graph.TensorType(graph.Bool, shp(1, 4)), f32(3, 1), f32()},
			want: []string{"float32[3 4]"}},
		{name: "sum", op: "Sum", in: []*graph.Type{f32(3, 1), f32(1, 2), f32(2)}, want: []string{"float32[3 2]"}},
		{name: "cast", op: "Cast", attrs: []*graph.Attribute{intAttr("to", int64(graph.Int64))},
			in: []*graph.Type{f32("N", 3)}, want: []string{"int64[N 3]"}},
		{name: "cast1", op: "Cast", opset: 1, attrs: []*graph.Attribute{strAttr("to", "INT32")},
			in: []*graph.Type{f32(3)}, want: []string{"int32[3]"}},
		{name: "dropout", op: "Dropout", in: []*graph.Type{f32(2, 3)}, want: []string{"float32[2 3]", "bool[2 3]"}},
	} {
		runCase(t, tc)
	}
}

func TestConvPoolRules(t *testing.T) {
	k3 := ints("kernel_shape", 3, 3)
	for _, tc := range []ruleCase{
		{name: "resnet stem", op: "Conv", attrs: []*graph.Attribute{ints("strides", 2, 2), ints("pads", 3, 3, 3, 3)},
			in: []*graph.Type{f32(1, 3, 224, 224), f32(64, 3, 7, 7), f32(64)}, want: []string{"float32[1 64 112 112]"}},
		{name: "no pads", op: "Conv", in: []*graph.Type{f32("N", 3, 32, 32), f32(8, 3, 3, 3)}, want: []string{"float32[N 8 30 30]"}},
		{name: "dilated", op: "Conv", attrs: []*graph.Attribute{ints("dilations", 2, 2)},
			in: []*graph.Type{f32(1, 3, 32, 32), f32(8, 3, 3, 3)}, want: []string{"float32[1 8 28 28]"}},
		{name: "same upper", op: "Conv", attrs: []*graph.Attribute{strAttr("auto_pad", "SAME_UPPER"), ints("strides", 2, 2)},
			in: []*graph.Type{f32(1, 3, 225, 224), f32(8, 3, 3, 3)}, want: []string{"float32[1 8 113 112]"}},
		{name: "valid", op: "Conv", attrs: []*graph.Attribute{strAttr("auto_pad", "VALID"), ints("strides", 2, 2)},
			in: []*graph.Type{f32(1, 3, 10, 9), f32(8, 3, 3, 3)}, want: []string{"float32[1 8 4 4]"}},
		{name: "depthwise", op: "Conv", attrs: []*graph.Attribute{intAttr("group", 32), ints("pads", 1, 1, 1, 1)},
			in: []*graph.Type{f32(1, 32, 56, 56), f32(32, 1, 3, 3)}, want: []string{"float32[1 32 56 56]"}},
		{name: "symbolic spatial 1x1", op: "Conv", in: []*graph.Type{f32(1, 3, "H", "W"), f32(8, 3, 1, 1)},
			want: []string{"float32[1 8 H W]"}},
		{name: "symbolic spatial 3x3", op: "Conv", in: []*graph.Type{f32(1, 3, "H", "W"), f32(8, 3, 3, 3)},
			want: []string{"float32[1 8 ? ?]"}},
		{name: "group mismatch", op: "Conv", in: []*graph.Type{f32(1, 4, 8, 8), f32(8, 3, 3, 3)}, errHas: "channels"},
		{name: "conv1d", op: "Conv", in: []*graph.Type{f32(2, 4, 100), f32(6, 4, 5)}, want: []string{"float32[2 6 96]"}},
		{name: "transpose", op: "ConvTranspose", attrs: []*graph.Attribute{ints("strides", 2, 2), ints("pads", 1, 1, 1, 1),
			ints("output_padding", 1, 1)}, in: []*graph.Type{f32(1, 16, 7, 7), f32(16, 8, 3, 3)},
			want: []string{"float32[1 8 14 14]"}},
		{name: "transpose groups", op: "ConvTranspose", attrs: []*graph.Attribute{intAttr("group", 2)},
			in: []*graph.Type{f32(1, 4, 5, 5), f32(4, 3, 3, 3)}, want: []string{"float32[1 6 7 7]"}},
		{name: "transpose output_shape", op: "ConvTranspose", attrs: []*graph.Attribute{ints("strides", 2, 2),
			ints("output_shape", 15, 15)}, in: []*graph.Type{f32(1, 4, 7, 7), f32(4, 2, 3, 3)},
			want: []string{"float32[1 2 15 15]"}},
		{name: "maxpool", op: "MaxPool", attrs: []*graph.Attribute{k3, ints("strides", 2, 2), ints("pads", 1, 1, 1, 1)},
			in: []*graph.Type{f32(1, 64, 112, 112)}, nOut: 2, want: []string{"float32[1 64 56 56]", "int64[1 64 56 56]"}},
		{name: "ceil mode", op: "MaxPool", attrs: []*graph.Attribute{k3, ints("strides", 2, 2), intAttr("ceil_mode", 1)},
			in: []*graph.Type{f32(1, 96, 111, 111)}, want: []string{"float32[1 96 55 55]"}},
		{name: "ceil mode rounds up", op: "MaxPool", attrs: []*graph.Attribute{ints("kernel_shape", 2, 2),
			ints("strides", 2, 2), intAttr("ceil_mode", 1)}, in: []*graph.Type{f32(1, 1, 5, 5)},
			want: []string{"float32[1 1 3 3]"}},
		{name: "ceil mode last window in padding", op: "AveragePool", attrs: []*graph.Attribute{ints("kernel_shape", 2),
			ints("strides", 2), ints("pads", 1, 1), intAttr("ceil_mode", 1)}, in: []*graph.Type{f32(1, 1, 4)},
			want: []string{"float32[1 1 3]"}},
		{name: "lppool", op: "LpPool", attrs: []*graph.Attribute{k3}, in: []*graph.Type{f32(1, 2, 5, 5)},
			want: []string{"float32[1 2 3 3]"}},
		{name: "global", op: "GlobalAveragePool", in: []*graph.Type{f32("N", 2048, 7, 7)}, want: []string{"float32[N 2048 1 1]"}},
		{name: "window too large", op: "MaxPool", attrs: []*graph.Attribute{ints("kernel_shape", 5, 5)},
			in: []*graph.Type{f32(1, 1, 3, 3)}, errHas: "larger"},
	} {
		runCase(t, tc)
	}
}

func TestLinearAndNormRules(t *testing.T) {
	for _, tc := range []ruleCase{
		{name: "gemm", op: "Gemm", attrs: []*graph.Attribute{intAttr("transB", 1)},
			in: []*graph.Type{f32("N", 2048), f32(1000, 2048), f32(1000)}, want: []string{"float32[N 1000]"}},
		{name: "gemm mismatch", op: "Gemm", in: []*graph.Type{f32(2, 3), f32(4, 5)}, errHas: "inner"},
		{name: "matmul batch", op: "MatMul", in: []*graph.Type{f32("B", 12, "S", 64), f32("B", 12, 64, "S")},
			want: []string{"float32[B 12 S S]"}},
		{name: "matmul broadcast", op: "MatMul", in: []*graph.Type{f32(2, 1, 3, 4), f32(5, 4, 6)}, want: []string{"float32[2 5 3 6]"}},
		{name: "matmul vec right", op: "MatMul", in: []*graph.Type{f32(2, 3, 4), f32(4)}, want: []string{"float32[2 3]"}},
		{name: "matmul vec left", op: "MatMul", in: []*graph.Type{f32(4), f32(2, 4, 5)}, want: []string{"float32[2 5]"}},
		{name: "matmul dot", op: "MatMul", in: []*graph.Type{f32(4), f32(4)}, want: []string{"float32[]"}},
		{name: "matmul mismatch", op: "MatMul", in: []*graph.Type{f32(2, 3), f32(4, 5)}, errHas: "inner"},
		{name: "batchnorm", op: "BatchNormalization", in: []*graph.Type{f32(1, 8, 4, 4), f32(8), f32(8), f32(8), f32(8)},
			want: []string{"float32[1 8 4 4]"}},
		{name: "batchnorm training", op: "BatchNormalization", opset: 9,
			in:   []*graph.Type{f32(2, 8, 4, 4), f32(8), f32(8), f32(8), f32(8)},
			want: []string{"float32[2 8 4 4]", "float32[8]", "float32[8]", "float32[8]", "float32[8]"}},
		{name: "layernorm", op: "LayerNormalization", in: []*graph.Type{f32("B", "S", 768), f32(768), f32(768)},
			want: []string{"float32[B S 768]", "float32[B S 1]", "float32[B S 1]"}},
		{name: "softmax", op: "Softmax", in: []*graph.Type{f32("B", 12, "S", "S")}, want: []string{"float32[B 12 S S]"}},
		{name: "lstm", op: "LSTM", attrs: []*graph.Attribute{intAttr("hidden_size", 20), strAttr("direction", "bidirectional")},
			in:   []*graph.Type{f32(7, 3, 10), f32(2, 80, 10), f32(2, 80, 20)},
			want: []string{"float32[7 2 3 20]", "float32[2 3 20]", "float32[2 3 20]"}},
		{name: "gru layout", op: "GRU", attrs: []*graph.Attribute{intAttr("layout", 1)},
			in:   []*graph.Type{f32(3, 7, 10), f32(1, 60, 10), f32(1, 60, 20)},
			want: []string{"float32[3 7 1 20]", "float32[3 1 20]"}},
		{name: "einsum", op: "Einsum", attrs: []*graph.Attribute{strAttr("equation", "bhqd,bhkd->bhqk")},
			in: []*graph.Type{f32(2, 4, 5, 8), f32(2, 4, 6, 8)}, want: []string{"float32[2 4 5 6]"}},
		{name: "einsum implicit", op: "Einsum", attrs: []*graph.Attribute{strAttr("equation", "...ij,...jk")},
			in: []*graph.Type{f32(3, 2, 5), f32(5, 4)}, want: []string{"float32[3 2 4]"}},
	} {
		runCase(t, tc)
	}
}

func TestReduceRules(t *testing.T) {
	for _, tc := range []ruleCase{
		{name: "mean input", op: "ReduceMean", in: []*graph.Type{f32(2, 3, 4), graph.TensorType(graph.Int64, shp(2))},
			vals: []*graph.Tensor{nil, i64s(1, 2)}, attrs: []*graph.Attribute{intAttr("keepdims", 0)},
			want: []string{"float32[2]"}},
		{name: "sum all", op: "ReduceSum", in: []*graph.Type{f32(2, 3)}, want: []string{"float32[1 1]"}},
		{name: "sum noop", op: "ReduceSum", attrs: []*graph.Attribute{intAttr("noop_with_empty_axes", 1)},
			in: []*graph.Type{f32(2, 3)}, want: []string{"float32[2 3]"}},
		{name: "unknown axes", op: "ReduceMax", attrs: []*graph.Attribute{intAttr("keepdims", 0)},
			in: []*graph.Type{f32(2, 3, 4), graph.TensorType(graph.Int64, shp(1))}, want: []string{"float32[? ?]"}},
		{name: "argmax", op: "ArgMax", attrs: []*graph.Attribute{intAttr("axis", 1), intAttr("keepdims", 0)},
			in: []*graph.Type{f32(2, 3, 4)}, want: []string{"int64[2 4]"}},
		{name: "topk", op: "TopK", in: []*graph.Type{f32(2, 10), graph.TensorType(graph.Int64, shp(1))},
			vals: []*graph.Tensor{nil, i64s(3)}, want: []string{"float32[2 3]", "int64[2 3]"}},
	} {
		runCase(t, tc)
	}
}

func TestShapeRules(t *testing.T) {
	i64 := func(n int) *graph.Type { return graph.TensorType(graph.Int64, shp(n)) }
	for _, tc := range []ruleCase{
		{name: "reshape 0 and -1", op: "Reshape", in: []*graph.Type{f32(2, 3, 4), i64(2)}, vals: []*graph.Tensor{nil, i64s(0, -1)},
			want: []string{"float32[2 12]"}},
		{name: "reshape -1 first", op: "Reshape", in: []*graph.Type{f32(2, 3, 4), i64(2)}, vals: []*graph.Tensor{nil, i64s(-1, 6)},
			want: []string{"float32[4 6]"}},
		{name: "reshape allowzero", op: "Reshape", attrs: []*graph.Attribute{intAttr("allowzero", 1)},
			in: []*graph.Type{f32(0, 3), i64(2)}, vals: []*graph.Tensor{nil, i64s(3, 0)}, want: []string{"float32[3 0]"}},
		{name: "reshape symbolic", op: "Reshape", in: []*graph.Type{f32("B", "S", 768), i64(4)},
			vals: []*graph.Tensor{nil, i64s(0, 0, 12, -1)}, want: []string{"float32[B S 12 64]"}},
		{name: "reshape symbolic cancel", op: "Reshape", in: []*graph.Type{f32("B", 12, 64), i64(2)},
			vals: []*graph.Tensor{nil, i64s(-1, 64)}, want: []string{"float32[? 64]"}},
		{name: "reshape symbol left", op: "Reshape", in: []*graph.Type{f32("B", 12, 64), i64(2)},
			vals: []*graph.Tensor{nil, i64s(-1, 768)}, want: []string{"float32[B 768]"}},
		{name: "reshape bad", op: "Reshape", in: []*graph.Type{f32(2, 3), i64(1)}, vals: []*graph.Tensor{nil, i64s(5)},
			errHas: "cannot reshape"},
		{name: "reshape unknown", op: "Reshape", in: []*graph.Type{f32(2, 3), i64(3)}, want: []string{"float32[? ? ?]"}},
		{name: "flatten", op: "Flatten", in: []*graph.Type{f32("N", 512, 7, 7)}, want: []string{"float32[N 25088]"}},
		{name: "flatten 0", op: "Flatten", attrs: []*graph.Attribute{intAttr("axis", 0)}, in: []*graph.Type{f32(2, 3)},
			want: []string{"float32[1 6]"}},
		{name: "transpose", op: "Transpose", attrs: []*graph.Attribute{ints("perm", 0, 2, 1, 3)},
			in: []*graph.Type{f32("B", "S", 12, 64)}, want: []string{"float32[B 12 S 64]"}},
		{name: "transpose default", op: "Transpose", in: []*graph.Type{f32(2, 3, 4)}, want: []string{"float32[4 3 2]"}},
		{name: "squeeze input", op: "Squeeze", in: []*graph.Type{f32(1, 3, 1, 4), i64(1)}, vals: []*graph.Tensor{nil, i64s(-2)},
			want: []string{"float32[1 3 4]"}},
		{name: "squeeze attr", op: "Squeeze", opset: 11, attrs: []*graph.Attribute{ints("axes", 0)},
			in: []*graph.Type{f32(1, 3)}, want: []string{"float32[3]"}},
		{name: "squeeze all", op: "Squeeze", in: []*graph.Type{f32(1, 3, 1)}, want: []string{"float32[3]"}},
		{name: "squeeze not one", op: "Squeeze", in: []*graph.Type{f32(2, 3), i64(1)}, vals: []*graph.Tensor{nil, i64s(0)},
			errHas: "cannot squeeze"},
		{name: "unsqueeze", op: "Unsqueeze", in: []*graph.Type{f32(3, 4), i64(2)}, vals: []*graph.Tensor{nil, i64s(0, -1)},
			want: []string{"float32[1 3 4 1]"}},
		{name: "concat", op: "Concat", attrs: []*graph.Attribute{intAttr("axis", 1)},
			in: []*graph.Type{f32("N", 64, 56, 56), f32("N", 32, 56, 56)}, want: []string{"float32[N 96 56 56]"}},
		{name: "concat mismatch", op: "Concat", attrs: []*graph.Attribute{intAttr("axis", 1)},
			in: []*graph.Type{f32(1, 2, 3), f32(1, 2, 4)}, errHas: "axis 2"},
		{name: "split equal", op: "Split", attrs: []*graph.Attribute{intAttr("axis", -1)}, in: []*graph.Type{f32(2, 9)},
			nOut: 3, want: []string{"float32[2 3]", "float32[2 3]", "float32[2 3]"}},
		{name: "split input", op: "Split", in: []*graph.Type{f32(6, 2), i64(2)}, vals: []*graph.Tensor{nil, i64s(2, 4)},
			want: []string{"float32[2 2]", "float32[4 2]"}},
		{name: "split num_outputs", op: "Split", attrs: []*graph.Attribute{intAttr("num_outputs", 3)},
			in: []*graph.Type{f32(7)}, want: []string{"float32[3]", "float32[3]", "float32[1]"}},
		{name: "gather", op: "Gather", attrs: []*graph.Attribute{intAttr("axis", 1)},
			in: []*graph.Type{f32(5, 6, 7), graph.TensorType(graph.Int64, shp(2, 3))}, want: []string{"float32[5 2 3 7]"}},
		{name: "gather scalar", op: "Gather", in: []*graph.Type{f32(5, 6), graph.TensorType(graph.Int64, shp())},
			want: []string{"float32[6]"}},
		{name: "gather elements", op: "GatherElements", in: []*graph.Type{f32(5, 6), graph.TensorType(graph.Int64, shp(5, 2))},
			want: []string{"float32[5 2]"}},
		{name: "gathernd", op: "GatherND", attrs: []*graph.Attribute{intAttr("batch_dims", 1)},
			in: []*graph.Type{f32(2, 3, 4, 5), graph.TensorType(graph.Int64, shp(2, 7, 2))}, want: []string{"float32[2 7 5]"}},
		{name: "expand", op: "Expand", in: []*graph.Type{f32(3, 1), i64(3)}, vals: []*graph.Tensor{nil, i64s(2, 1, 6)},
			want: []string{"float32[2 3 6]"}},
		{name: "tile", op: "Tile", in: []*graph.Type{f32(2, "N"), i64(2)}, vals: []*graph.Tensor{nil, i64s(3, 1)},
			want: []string{"float32[6 N]"}},
		{name: "pad", op: "Pad", in: []*graph.Type{f32(1, 3, 4, 4), i64(8)}, vals: []*graph.Tensor{nil, i64s(0, 0, 1, 2, 0, 0, 3, 4)},
			want: []string{"float32[1 3 8 10]"}},
		{name: "pad axes", op: "Pad", in: []*graph.Type{f32(1, 3, 4, 4), i64(4), f32(), i64(2)},
			vals: []*graph.Tensor{nil, i64s(1, 1, 1, 1), nil, i64s(-2, -1)}, want: []string{"float32[1 3 6 6]"}},
		{name: "resize scales", op: "Resize", in: []*graph.Type{f32(1, 3, 10, 10), f32(0), f32(4)},
			vals: []*graph.Tensor{nil, nil, mustFloats(1, 1, 2, 1.5)}, want: []string{"float32[1 3 20 15]"}},
		{name: "resize scales rounded as the kernels do", op: "Resize", in: []*graph.Type{f32(1, 3, 10, 10), f32(0), f32(4)},
			vals: []*graph.Tensor{nil, nil, mustFloats(1, 1, 0.7, 1)}, want: []string{"float32[1 3 6 10]"}},
		{name: "resize sizes", op: "Resize", in: []*graph.Type{f32(1, 3, 10, 10), nil, nil, i64(4)},
			vals: []*graph.Tensor{nil, nil, nil, i64s(1, 3, 32, 32)}, want: []string{"float32[1 3 32 32]"}},
		{name: "resize axes", op: "Resize", attrs: []*graph.Attribute{ints("axes", 2, 3), strAttr("keep_aspect_ratio_policy", "not_larger")},
			in: []*graph.Type{f32(1, 3, 10, 20), nil, nil, i64(2)}, vals: []*graph.Tensor{nil, nil, nil, i64s(5, 5)},
			want: []string{"float32[1 3 3 5]"}},
		{name: "depth to space", op: "DepthToSpace", attrs: []*graph.Attribute{intAttr("blocksize", 2)},
			in: []*graph.Type{f32(1, 8, 3, 3)}, want: []string{"float32[1 2 6 6]"}},
		{name: "onehot", op: "OneHot", in: []*graph.Type{graph.TensorType(graph.Int64, shp(2, 3)), graph.TensorType(graph.Int64, shp()), f32(2)},
			vals: []*graph.Tensor{nil, int64Tensor(nil, []int64{10})}, want: []string{"float32[2 3 10]"}},
		{name: "nonzero", op: "NonZero", in: []*graph.Type{f32(2, 3)}, want: []string{"int64[2 ?]"}},
		{name: "shape", op: "Shape", in: []*graph.Type{f32("N", 3, 224, 224)}, want: []string{"int64[4]"}},
		{name: "shape slice", op: "Shape", attrs: []*graph.Attribute{intAttr("start", -2)},
			in: []*graph.Type{f32("N", 3, 224, 224)}, want: []string{"int64[2]"}},
		{name: "size", op: "Size", in: []*graph.Type{f32("N", 3)}, want: []string{"int64[]"}},
		{name: "constant of shape", op: "ConstantOfShape", in: []*graph.Type{i64(2)}, vals: []*graph.Tensor{i64s(2, 5)},
			want: []string{"float32[2 5]"}},
		{name: "quantize", op: "QuantizeLinear", in: []*graph.Type{f32(2, 3), f32(), graph.TensorType(graph.Int8, shp())},
			want: []string{"int8[2 3]"}},
		{name: "dequantize", op: "DequantizeLinear", in: []*graph.Type{graph.TensorType(graph.Int8, shp(2, 3)), f32()},
			want: []string{"float32[2 3]"}},
	} {
		runCase(t, tc)
	}
}

func mustFloats(v ...float32) *graph.Tensor {
	t, err := graph.FromSlice(graph.Float, []int64{int64(len(v))}, v)
	if err != nil {
		panic(err)
	}
	return t
}

func TestSliceRule(t *testing.T) {
	i64 := func(n int) *graph.Type { return graph.TensorType(graph.Int64, shp(n)) }
	slice := func(name string, x *graph.Type, starts, ends, axes, steps []int64, want string) ruleCase {
		tc := ruleCase{name: name, op: "Slice", in: []*graph.Type{x, i64(len(starts)), i64(len(ends))},
			vals: []*graph.Tensor{nil, i64s(starts...), i64s(ends...)}, want: []string{want}}
		if axes != nil {
			tc.in = append(tc.in, i64(len(axes)))
			tc.vals = append(tc.vals, i64s(axes...))
		}
		if steps != nil {
			tc.in = append(tc.in, i64(len(steps)))
			tc.vals = append(tc.vals, i64s(steps...))
		}
		return tc
	}
	const big = 1<<63 - 1
	for _, tc := range []ruleCase{
		slice("basic", f32(10, 20), []int64{1, 2}, []int64{5, 12}, nil, nil, "float32[4 10]"),
		slice("clamped end", f32(10), []int64{2}, []int64{big}, nil, nil, "float32[8]"),
		slice("negative", f32(10), []int64{-3}, []int64{-1}, nil, nil, "float32[2]"),
		slice("clamped start", f32(10), []int64{-100}, []int64{3}, nil, nil, "float32[3]"),
		slice("empty", f32(10), []int64{7}, []int64{3}, nil, nil, "float32[0]"),
		slice("axes", f32(4, 10, 6), []int64{1}, []int64{9}, []int64{-2}, nil, "float32[4 8 6]"),
		slice("steps", f32(10), []int64{1}, []int64{10}, []int64{0}, []int64{3}, "float32[3]"),
		slice("reverse", f32(10), []int64{-1}, []int64{-big}, []int64{0}, []int64{-1}, "float32[10]"),
		slice("reverse partial", f32(10), []int64{8}, []int64{2}, []int64{0}, []int64{-2}, "float32[3]"),
		slice("symbolic full", f32("S", 4), []int64{0}, []int64{big}, []int64{0}, nil, "float32[S 4]"),
		slice("symbolic part", f32("S", 4), []int64{1}, []int64{big}, []int64{0}, nil, "float32[? 4]"),
		{name: "unknown starts", op: "Slice", in: []*graph.Type{f32(2, 5), i64(1), i64(1), i64(1)},
			vals: []*graph.Tensor{nil, nil, i64s(3), i64s(1)}, want: []string{"float32[2 ?]"}},
		slice("zero step", f32(10), []int64{0}, []int64{3}, []int64{0}, []int64{0}, ""),
	} {
		if tc.name == "zero step" {
			tc.want, tc.errHas = nil, "step 0"
		}
		runCase(t, tc)
	}
}
