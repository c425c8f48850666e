package hostfallback

import (
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

func TestExpand(t *testing.T) {
	col := mvF32(mvShape(3, 1), 1, 2, 3)
	mvRun(t, []mvCase{
		{name: "broadcast columns", op: "Expand", opset: 13, in: []*graph.Tensor{col, mvI64(mvShape(2), 3, 2)},
			want: []*graph.Tensor{mvF32(mvShape(3, 2), 1, 1, 2, 2, 3, 3)}},
		{name: "new leading axis", op: "Expand", opset: 8, in: []*graph.Tensor{col, mvI64(mvShape(3), 2, 1, 2)},
			want: []*graph.Tensor{mvF32(mvShape(2, 3, 2), 1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3)}},
		{name: "shape shorter than input", op: "Expand", opset: 13, in: []*graph.Tensor{col, mvI64(mvShape(1), 1)},
			want: []*graph.Tensor{col}},
		{name: "scalar", op: "Expand", opset: 13, in: []*graph.Tensor{mvStrs(nil, "s"), mvI64(mvShape(2), 1, 2)},
			want: []*graph.Tensor{mvStrs(mvShape(1, 2), "s", "s")}},
		{name: "to empty", op: "Expand", opset: 13, in: []*graph.Tensor{col, mvI64(mvShape(2), 3, 0)},
			want: []*graph.Tensor{graph.NewTensor(graph.Float, mvShape(3, 0))}},
		{name: "incompatible", op: "Expand", opset: 13, in: []*graph.Tensor{col, mvI64(mvShape(2), 2, 2)}, err: true},
		{name: "negative", op: "Expand", opset: 13, in: []*graph.Tensor{col, mvI64(mvShape(2), 3, -1)}, err: true},
		{name: "missing shape", op: "Expand", opset: 13, in: []*graph.Tensor{col}, err: true},
	})
}
