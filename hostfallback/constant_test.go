package hostfallback

import (
	"math"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

func TestConstant(t *testing.T) {
	value := mvF32(mvShape(2), 1, 2)
	sparse := func(indices *graph.Tensor, dims ...int64) *graph.Attribute {
		return &graph.Attribute{Name: "sparse_value", Type: graph.AttrSparseTensor,
			Sparse: &graph.SparseTensor{Values: mvI64(mvShape(2), 5, 6), Indices: indices, Dims: dims}}
	}
	mvRun(t, []mvCase{
		{name: "value", op: "Constant", opset: 13, attrs: []*graph.Attribute{{Name: "value", Type: graph.AttrTensor, T: value}},
			want: []*graph.Tensor{value}},
		{name: "value_float", op: "Constant", opset: 13, attrs: []*graph.Attribute{mvFloat("value_float", 2.5)},
			want: []*graph.Tensor{mvF32(nil, 2.5)}},
		{name: "value_floats", op: "Constant", opset: 13, attrs: []*graph.Attribute{mvFloats("value_floats", 1, 2)},
			want: []*graph.Tensor{value}},
		{name: "value_int", op: "Constant", opset: 13, attrs: []*graph.Attribute{mvInt("value_int", -3)},
			want: []*graph.Tensor{mvI64(nil, -3)}},
		{name: "value_ints", op: "Constant", opset: 13, attrs: []*graph.Attribute{mvInts("value_ints")},
			want: []*graph.Tensor{mvI64(mvShape(0))}},
		{name: "value_string", op: "Constant", opset: 13, attrs: []*graph.Attribute{mvStr("value_string", "hi")},
			want: []*graph.Tensor{mvStrs(nil, "hi")}},
		{name: "value_strings", op: "Constant", opset: 13,
			attrs: []*graph.Attribute{{Name: "value_strings", Type: graph.AttrStrings, Strings: [][]byte{[]byte("a"), []byte("b")}}},
			want:  []*graph.Tensor{mvStrs(mvShape(2), "a", "b")}},
		{name: "sparse linear", op: "Constant", opset: 13, attrs: []*graph.Attribute{sparse(mvI64(mvShape(2), 1, 5), 2, 3)},
			want: []*graph.Tensor{mvI64(mvShape(2, 3), 0, 5, 0, 0, 0, 6)}},
		{name: "sparse coordinates", op: "Constant", opset: 13, attrs: []*graph.Attribute{sparse(mvI64(mvShape(2, 2), 0, 2, 1, 0), 2, 3)},
			want: []*graph.Tensor{mvI64(mvShape(2, 3), 0, 0, 5, 6, 0, 0)}},
		{name: "sparse out of range", op: "Constant", opset: 13, attrs: []*graph.Attribute{sparse(mvI64(mvShape(2), 1, 6), 2, 3)}, err: true},
		{name: "sparse coordinate out of range", op: "Constant", opset: 13,
			attrs: []*graph.Attribute{sparse(mvI64(mvShape(2, 2), 0, 3, 1, 0), 2, 3)}, err: true},
		{name: "sparse index shape", op: "Constant", opset: 13, attrs: []*graph.Attribute{sparse(mvI64(mvShape(3), 1, 2, 3), 2, 3)}, err: true},
		{name: "no attribute", op: "Constant", opset: 13, err: true},
		{name: "two attributes", op: "Constant", opset: 13, attrs: []*graph.Attribute{mvInt("value_int", 1), mvFloat("value_float", 1)}, err: true},
		{name: "wrong attribute type", op: "Constant", opset: 13, attrs: []*graph.Attribute{mvInt("value_float", 1)}, err: true},
	})
}

func TestConstantOfShape(t *testing.T) {
	mvRun(t, []mvCase{
		{name: "default zero float", op: "ConstantOfShape", opset: 9, in: []*graph.Tensor{mvI64(mvShape(2), 2, 1)},
			want: []*graph.Tensor{mvF32(mvShape(2, 1), 0, 0)}},
		{name: "int value", op: "ConstantOfShape", opset: 9,
			attrs: []*graph.Attribute{{Name: "value", Type: graph.AttrTensor, T: mvI32(mvShape(1), 7)}},
			in:    []*graph.Tensor{mvI64(mvShape(1), 3)}, want: []*graph.Tensor{mvI32(mvShape(3), 7, 7, 7)}},
		{name: "scalar", op: "ConstantOfShape", opset: 9,
			attrs: []*graph.Attribute{{Name: "value", Type: graph.AttrTensor, T: mvBool(mvShape(1), true)}},
			in:    []*graph.Tensor{mvI64(mvShape(0))}, want: []*graph.Tensor{mvBool(nil, true)}},
		{name: "empty", op: "ConstantOfShape", opset: 9, in: []*graph.Tensor{mvI64(mvShape(2), 0, 4)},
			want: []*graph.Tensor{graph.NewTensor(graph.Float, mvShape(0, 4))}},
		{name: "negative", op: "ConstantOfShape", opset: 9, in: []*graph.Tensor{mvI64(mvShape(1), -1)}, err: true},
		{name: "value not one element", op: "ConstantOfShape", opset: 9,
			attrs: []*graph.Attribute{{Name: "value", Type: graph.AttrTensor, T: mvI32(mvShape(2), 7, 8)}},
			in:    []*graph.Tensor{mvI64(mvShape(1), 3)}, err: true},
	})
}

func TestRange(t *testing.T) {
	mvRun(t, []mvCase{
		{name: "float", op: "Range", opset: 11, in: []*graph.Tensor{mvF32(nil, 1), mvF32(nil, 2), mvF32(nil, 0.25)},
			want: []*graph.Tensor{mvF32(mvShape(4), 1, 1.25, 1.5, 1.75)}},
		{name: "int negative delta", op: "Range", opset: 11, in: []*graph.Tensor{mvI32(nil, 10), mvI32(nil, 4), mvI32(nil, -3)},
			want: []*graph.Tensor{mvI32(mvShape(2), 10, 7)}},
		{name: "int64 inexact", op: "Range", opset: 11, in: []*graph.Tensor{mvI64(nil, 0), mvI64(nil, 7), mvI64(nil, 3)},
			want: []*graph.Tensor{mvI64(mvShape(3), 0, 3, 6)}},
		{name: "empty", op: "Range", opset: 11, in: []*graph.Tensor{mvF64(nil, 3), mvF64(nil, 1), mvF64(nil, 1)},
			want: []*graph.Tensor{mvF64(mvShape(0))}},
		{name: "int empty", op: "Range", opset: 11, in: []*graph.Tensor{mvI64(nil, 3), mvI64(nil, 1), mvI64(nil, 1)},
			want: []*graph.Tensor{mvI64(mvShape(0))}},
		{name: "delta 0", op: "Range", opset: 11, in: []*graph.Tensor{mvI64(nil, 0), mvI64(nil, 1), mvI64(nil, 0)}, err: true},
		{name: "float delta 0", op: "Range", opset: 11, in: []*graph.Tensor{mvF32(nil, 0), mvF32(nil, 1), mvF32(nil, 0)}, err: true},
		{name: "mixed types", op: "Range", opset: 11, in: []*graph.Tensor{mvI64(nil, 0), mvI32(nil, 1), mvI64(nil, 1)}, err: true},
		{name: "not scalars", op: "Range", opset: 11, in: []*graph.Tensor{mvI64(mvShape(2), 0, 0), mvI64(nil, 1), mvI64(nil, 1)}, err: true},
		{name: "float16", op: "Range", opset: 11, in: []*graph.Tensor{mvF16(nil, 0), mvF16(nil, 1), mvF16(nil, 1)}, unsupported: true},
		{name: "strings", op: "Range", opset: 11, in: []*graph.Tensor{mvStrs(nil, "0"), mvStrs(nil, "1"), mvStrs(nil, "1")}, unsupported: true},
		{name: "infinite limit", op: "Range", opset: 11, in: []*graph.Tensor{mvF32(nil, 0), mvF32(nil, float32(math.Inf(1))), mvF32(nil, 1)}, err: true},
		{name: "NaN delta", op: "Range", opset: 11, in: []*graph.Tensor{mvF64(nil, 0), mvF64(nil, 1), mvF64(nil, math.NaN())}, err: true},
	})
}

func TestEyeLike(t *testing.T) {
	x := graph.NewTensor(graph.Int32, mvShape(2, 3))
	mvRun(t, []mvCase{
		{name: "diagonal", op: "EyeLike", opset: 9, in: []*graph.Tensor{x}, want: []*graph.Tensor{mvI32(mvShape(2, 3), 1, 0, 0, 0, 1, 0)}},
		{name: "k 1 as float", op: "EyeLike", opset: 9, attrs: []*graph.Attribute{mvInt("k", 1), mvInt("dtype", int64(graph.Float))},
			in: []*graph.Tensor{x}, want: []*graph.Tensor{mvF32(mvShape(2, 3), 0, 1, 0, 0, 0, 1)}},
		{name: "k -1", op: "EyeLike", opset: 9, attrs: []*graph.Attribute{mvInt("k", -1)},
			in: []*graph.Tensor{x}, want: []*graph.Tensor{mvI32(mvShape(2, 3), 0, 0, 0, 1, 0, 0)}},
		{name: "k past the edge", op: "EyeLike", opset: 9, attrs: []*graph.Attribute{mvInt("k", 5)},
			in: []*graph.Tensor{x}, want: []*graph.Tensor{graph.NewTensor(graph.Int32, mvShape(2, 3))}},
		{name: "float16", op: "EyeLike", opset: 9, in: []*graph.Tensor{mvF16(mvShape(2, 2), 5, 5, 5, 5)},
			want: []*graph.Tensor{mvF16(mvShape(2, 2), 1, 0, 0, 1)}},
		{name: "rank", op: "EyeLike", opset: 9, in: []*graph.Tensor{mvIota(3)}, err: true},
		{name: "strings", op: "EyeLike", opset: 9, in: []*graph.Tensor{mvStrs(mvShape(1, 1), "a")}, unsupported: true},
	})
}
