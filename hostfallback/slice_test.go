package hostfallback

import (
	"math"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

func TestSlice(t *testing.T) {
	x := mvIota(3, 4)
	ints := func(v ...int64) *graph.Tensor { return mvI64(mvShape(int64(len(v))), v...) }
	mvRun(t, []mvCase{
		{name: "basic", op: "Slice", opset: 13, in: []*graph.Tensor{x, ints(1, 0), ints(3, 3), ints(0, 1)},
			want: []*graph.Tensor{mvF32(mvShape(2, 3), 4, 5, 6, 8, 9, 10)}},
		{name: "axes omitted", op: "Slice", opset: 13, in: []*graph.Tensor{x, ints(2), ints(3)},
			want: []*graph.Tensor{mvF32(mvShape(1, 4), 8, 9, 10, 11)}},
		{name: "negative indices and axes", op: "Slice", opset: 13, in: []*graph.Tensor{x, ints(-3), ints(-1), ints(-1)},
			want: []*graph.Tensor{mvF32(mvShape(3, 2), 1, 2, 5, 6, 9, 10)}},
		{name: "steps", op: "Slice", opset: 13, in: []*graph.Tensor{x, ints(0, 3), ints(3, 0), ints(0, 1), ints(2, -2)},
			want: []*graph.Tensor{mvF32(mvShape(2, 2), 3, 1, 11, 9)}},
		{name: "reverse all", op: "Slice", opset: 13,
			in:   []*graph.Tensor{x, ints(-1), ints(math.MinInt64), ints(1), ints(-1)},
			want: []*graph.Tensor{mvF32(mvShape(3, 4), 3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8)}},
		{name: "clamped", op: "Slice", opset: 13, in: []*graph.Tensor{x, ints(-100, 2), ints(math.MaxInt64, 100)},
			want: []*graph.Tensor{mvF32(mvShape(3, 2), 2, 3, 6, 7, 10, 11)}},
		{name: "negative step start past end", op: "Slice", opset: 13, in: []*graph.Tensor{x, ints(100), ints(-100), ints(1), ints(-3)},
			want: []*graph.Tensor{mvF32(mvShape(3, 2), 3, 0, 7, 4, 11, 8)}},
		{name: "empty", op: "Slice", opset: 13, in: []*graph.Tensor{x, ints(2), ints(1), ints(1)},
			want: []*graph.Tensor{graph.NewTensor(graph.Float, mvShape(3, 0))}},
		{name: "int32 arguments", op: "Slice", opset: 13,
			in:   []*graph.Tensor{x, mvI32(mvShape(1), 1), mvI32(mvShape(1), 2), mvI32(mvShape(1), 0)},
			want: []*graph.Tensor{mvF32(mvShape(1, 4), 4, 5, 6, 7)}},
		{name: "strings", op: "Slice", opset: 13, in: []*graph.Tensor{mvStrs(mvShape(3), "a", "b", "c"), ints(0), ints(3), ints(0), ints(2)},
			want: []*graph.Tensor{mvStrs(mvShape(2), "a", "c")}},
		{name: "step 0", op: "Slice", opset: 13, in: []*graph.Tensor{x, ints(0), ints(1), ints(0), ints(0)}, err: true},
		{name: "repeated axis", op: "Slice", opset: 13, in: []*graph.Tensor{x, ints(0, 0), ints(1, 1), ints(1, -1)}, err: true},
		{name: "axis out of range", op: "Slice", opset: 13, in: []*graph.Tensor{x, ints(0), ints(1), ints(2)}, err: true},
		{name: "length mismatch", op: "Slice", opset: 13, in: []*graph.Tensor{x, ints(0, 0), ints(1)}, err: true},
		{name: "too many starts", op: "Slice", opset: 13, in: []*graph.Tensor{x, ints(0, 0, 0), ints(1, 1, 1)}, err: true},
		{name: "missing ends", op: "Slice", opset: 13, in: []*graph.Tensor{x, ints(0)}, err: true},
		{name: "float starts", op: "Slice", opset: 13, in: []*graph.Tensor{x, mvF32(mvShape(1), 0), ints(1)}, err: true},
	})
}
