package hostfallback

import (
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

func TestConcat(t *testing.T) {
	a := mvF32(mvShape(2, 2), 1, 2, 3, 4)
	b := mvF32(mvShape(2, 1), 5, 6)
	empty := graph.NewTensor(graph.Float, mvShape(2, 0))
	mvRun(t, []mvCase{
		{name: "axis 1", op: "Concat", opset: 13, attrs: []*graph.Attribute{mvInt("axis", 1)},
			in: []*graph.Tensor{a, b, empty, a}, want: []*graph.Tensor{mvF32(mvShape(2, 5), 1, 2, 5, 1, 2, 3, 4, 6, 3, 4)}},
		{name: "axis 0", op: "Concat", opset: 13, attrs: []*graph.Attribute{mvInt("axis", 0)},
			in: []*graph.Tensor{a, a}, want: []*graph.Tensor{mvF32(mvShape(4, 2), 1, 2, 3, 4, 1, 2, 3, 4)}},
		{name: "negative axis", op: "Concat", opset: 13, attrs: []*graph.Attribute{mvInt("axis", -1)},
			in: []*graph.Tensor{b, b}, want: []*graph.Tensor{mvF32(mvShape(2, 2), 5, 5, 6, 6)}},
		{name: "single input", op: "Concat", opset: 13, attrs: []*graph.Attribute{mvInt("axis", 0)},
			in: []*graph.Tensor{b}, want: []*graph.Tensor{b}},
		{name: "all empty", op: "Concat", opset: 13, attrs: []*graph.Attribute{mvInt("axis", 1)},
			in: []*graph.Tensor{empty, empty}, want: []*graph.Tensor{empty}},
		{name: "opset 1 default axis 1", op: "Concat", opset: 1,
			in: []*graph.Tensor{b, b}, want: []*graph.Tensor{mvF32(mvShape(2, 2), 5, 5, 6, 6)}},
		{name: "strings", op: "Concat", opset: 13, attrs: []*graph.Attribute{mvInt("axis", 0)},
			in:   []*graph.Tensor{mvStrs(mvShape(1), "x"), mvStrs(mvShape(2), "y", "z")},
			want: []*graph.Tensor{mvStrs(mvShape(3), "x", "y", "z")}},
		{name: "int4", op: "Concat", opset: 21, attrs: []*graph.Attribute{mvInt("axis", 0)},
			in:   []*graph.Tensor{mvInt4(mvShape(1), -1), mvInt4(mvShape(2), 2, -3)},
			want: []*graph.Tensor{mvInt4(mvShape(3), -1, 2, -3)}},
		{name: "axis required", op: "Concat", opset: 13, in: []*graph.Tensor{a, a}, err: true},
		{name: "shape mismatch", op: "Concat", opset: 13, attrs: []*graph.Attribute{mvInt("axis", 0)}, in: []*graph.Tensor{a, b}, err: true},
		{name: "rank mismatch", op: "Concat", opset: 13, attrs: []*graph.Attribute{mvInt("axis", 0)}, in: []*graph.Tensor{a, mvIota(2)}, err: true},
		{name: "type mismatch", op: "Concat", opset: 13, attrs: []*graph.Attribute{mvInt("axis", 0)}, in: []*graph.Tensor{a, mvI64(mvShape(1, 2), 1, 2)}, err: true},
		{name: "axis out of range", op: "Concat", opset: 13, attrs: []*graph.Attribute{mvInt("axis", 2)}, in: []*graph.Tensor{a, a}, err: true},
		{name: "scalars", op: "Concat", opset: 13, attrs: []*graph.Attribute{mvInt("axis", 0)}, in: []*graph.Tensor{mvF32(nil, 1)}, err: true},
	})
}

func TestSplit(t *testing.T) {
	x := mvIota(2, 5)
	mvRun(t, []mvCase{
		{name: "split input", op: "Split", opset: 13, attrs: []*graph.Attribute{mvInt("axis", 1)},
			in: []*graph.Tensor{x, mvI64(mvShape(3), 1, 0, 4)},
			want: []*graph.Tensor{mvF32(mvShape(2, 1), 0, 5), graph.NewTensor(graph.Float, mvShape(2, 0)),
				mvF32(mvShape(2, 4), 1, 2, 3, 4, 6, 7, 8, 9)}},
		{name: "split attribute", op: "Split", opset: 11, attrs: []*graph.Attribute{mvInt("axis", -1), mvInts("split", 3, 2)},
			in:   []*graph.Tensor{x},
			want: []*graph.Tensor{mvF32(mvShape(2, 3), 0, 1, 2, 5, 6, 7), mvF32(mvShape(2, 2), 3, 4, 8, 9)}},
		{name: "split-1 input", op: "Split", opset: 1, attrs: []*graph.Attribute{mvInt("axis", 1)},
			in:   []*graph.Tensor{x, mvI64(mvShape(2), 2, 3)},
			want: []*graph.Tensor{mvF32(mvShape(2, 2), 0, 1, 5, 6), mvF32(mvShape(2, 3), 2, 3, 4, 7, 8, 9)}},
		{name: "equal parts", op: "Split", opset: 13,
			in: []*graph.Tensor{x}, want: []*graph.Tensor{mvIota(1, 5), mvF32(mvShape(1, 5), 5, 6, 7, 8, 9)}},
		{name: "empty split is equal parts", op: "Split", opset: 13,
			in: []*graph.Tensor{x, mvI64(mvShape(0))}, want: []*graph.Tensor{mvIota(1, 5), mvF32(mvShape(1, 5), 5, 6, 7, 8, 9)}},
		{name: "last part empty", op: "Split", opset: 18, attrs: []*graph.Attribute{mvInt("num_outputs", 3)},
			in: []*graph.Tensor{x}, want: []*graph.Tensor{mvIota(1, 5), mvF32(mvShape(1, 5), 5, 6, 7, 8, 9), graph.NewTensor(graph.Float, mvShape(0, 5))}},
		{name: "num_outputs uneven", op: "Split", opset: 18, attrs: []*graph.Attribute{mvInt("axis", 1), mvInt("num_outputs", 2)},
			in:   []*graph.Tensor{x},
			want: []*graph.Tensor{mvF32(mvShape(2, 3), 0, 1, 2, 5, 6, 7), mvF32(mvShape(2, 2), 3, 4, 8, 9)}},
		{name: "unused output", op: "Split", opset: 18, attrs: []*graph.Attribute{mvInt("axis", 1), mvInt("num_outputs", 2)},
			in: []*graph.Tensor{x}, want: []*graph.Tensor{nil, mvF32(mvShape(2, 2), 3, 4, 8, 9)}},
		{name: "num_outputs mismatch", op: "Split", opset: 18, attrs: []*graph.Attribute{mvInt("num_outputs", 3)},
			in: []*graph.Tensor{x}, nout: 2, err: true},
		{name: "too many parts", op: "Split", opset: 18, attrs: []*graph.Attribute{mvInt("axis", 1)},
			in: []*graph.Tensor{x}, nout: 4, err: true},
		{name: "bad sum", op: "Split", opset: 13, attrs: []*graph.Attribute{mvInt("axis", 1)},
			in: []*graph.Tensor{x, mvI64(mvShape(2), 2, 2)}, nout: 2, err: true},
		{name: "negative size", op: "Split", opset: 13, attrs: []*graph.Attribute{mvInt("axis", 1)},
			in: []*graph.Tensor{x, mvI64(mvShape(2), 6, -1)}, nout: 2, err: true},
		{name: "count mismatch", op: "Split", opset: 13, attrs: []*graph.Attribute{mvInt("axis", 1)},
			in: []*graph.Tensor{x, mvI64(mvShape(2), 2, 3)}, nout: 3, err: true},
		{name: "bad axis", op: "Split", opset: 13, attrs: []*graph.Attribute{mvInt("axis", 2)}, in: []*graph.Tensor{x}, err: true},
	})
}
