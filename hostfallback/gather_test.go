package hostfallback

import (
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

func TestGather(t *testing.T) {
	x := mvF32(mvShape(3, 2), 1, 2, 3, 4, 5, 6)
	mvRun(t, []mvCase{
		{name: "axis 0", op: "Gather", opset: 13, in: []*graph.Tensor{x, mvI64(mvShape(2, 2), 0, 1, 1, 2)},
			want: []*graph.Tensor{mvF32(mvShape(2, 2, 2), 1, 2, 3, 4, 3, 4, 5, 6)}},
		{name: "axis 1 negative index", op: "Gather", opset: 13, attrs: []*graph.Attribute{mvInt("axis", -1)},
			in: []*graph.Tensor{x, mvI32(mvShape(3), -1, 0, 1)}, want: []*graph.Tensor{mvF32(mvShape(3, 3), 2, 1, 2, 4, 3, 4, 6, 5, 6)}},
		{name: "scalar index", op: "Gather", opset: 13, in: []*graph.Tensor{x, mvI64(nil, 2)},
			want: []*graph.Tensor{mvF32(mvShape(2), 5, 6)}},
		{name: "no indices", op: "Gather", opset: 13, in: []*graph.Tensor{x, mvI64(mvShape(0))},
			want: []*graph.Tensor{graph.NewTensor(graph.Float, mvShape(0, 2))}},
		{name: "strings", op: "Gather", opset: 13, in: []*graph.Tensor{mvStrs(mvShape(3), "a", "b", "c"), mvI64(mvShape(2), 2, 2)},
			want: []*graph.Tensor{mvStrs(mvShape(2), "c", "c")}},
		{name: "out of range", op: "Gather", opset: 13, in: []*graph.Tensor{x, mvI64(mvShape(1), 3)}, err: true},
		{name: "negative out of range", op: "Gather", opset: 13, in: []*graph.Tensor{x, mvI64(mvShape(1), -4)}, err: true},
		{name: "bad axis", op: "Gather", opset: 13, attrs: []*graph.Attribute{mvInt("axis", 2)}, in: []*graph.Tensor{x, mvI64(nil, 0)}, err: true},
		{name: "float indices", op: "Gather", opset: 13, in: []*graph.Tensor{x, mvF32(nil, 0)}, err: true},
		{name: "scalar data", op: "Gather", opset: 13, in: []*graph.Tensor{mvF32(nil, 1), mvI64(nil, 0)}, err: true},
	})
}

func TestGatherElements(t *testing.T) {
	x := mvIota(3, 3)
	mvRun(t, []mvCase{
		{name: "axis 0", op: "GatherElements", opset: 13, in: []*graph.Tensor{x, mvI64(mvShape(2, 3), 1, 2, 0, 2, 0, 0)},
			want: []*graph.Tensor{mvF32(mvShape(2, 3), 3, 7, 2, 6, 1, 2)}},
		{name: "axis 1 negative", op: "GatherElements", opset: 13, attrs: []*graph.Attribute{mvInt("axis", 1)},
			in: []*graph.Tensor{x, mvI32(mvShape(2, 2), 0, -1, 1, 0)}, want: []*graph.Tensor{mvF32(mvShape(2, 2), 0, 2, 4, 3)}},
		{name: "longer axis", op: "GatherElements", opset: 11, attrs: []*graph.Attribute{mvInt("axis", -1)},
			in: []*graph.Tensor{x, mvI64(mvShape(1, 4), 2, 2, 1, 0)}, want: []*graph.Tensor{mvF32(mvShape(1, 4), 2, 2, 1, 0)}},
		{name: "empty", op: "GatherElements", opset: 13, in: []*graph.Tensor{x, graph.NewTensor(graph.Int64, mvShape(0, 3))},
			want: []*graph.Tensor{graph.NewTensor(graph.Float, mvShape(0, 3))}},
		{name: "out of range", op: "GatherElements", opset: 13, in: []*graph.Tensor{x, mvI64(mvShape(1, 1), 3)}, err: true},
		{name: "rank mismatch", op: "GatherElements", opset: 13, in: []*graph.Tensor{x, mvI64(mvShape(1), 0)}, err: true},
		{name: "indices too wide", op: "GatherElements", opset: 13, in: []*graph.Tensor{x, mvI64(mvShape(1, 4), 0, 0, 0, 0)}, err: true},
	})
}

func TestGatherND(t *testing.T) {
	x2 := mvF32(mvShape(2, 2), 0, 1, 2, 3)
	x3 := mvIota(2, 2, 2)
	mvRun(t, []mvCase{
		{name: "elements", op: "GatherND", opset: 11, in: []*graph.Tensor{x2, mvI64(mvShape(2, 2), 0, 0, 1, 1)},
			want: []*graph.Tensor{mvF32(mvShape(2), 0, 3)}},
		{name: "rows", op: "GatherND", opset: 11, in: []*graph.Tensor{x2, mvI64(mvShape(2, 1), 1, 0)},
			want: []*graph.Tensor{mvF32(mvShape(2, 2), 2, 3, 0, 1)}},
		{name: "3-D", op: "GatherND", opset: 12, in: []*graph.Tensor{x3, mvI64(mvShape(2, 2), 0, 1, 1, 0)},
			want: []*graph.Tensor{mvF32(mvShape(2, 2), 2, 3, 4, 5)}},
		{name: "nested index", op: "GatherND", opset: 12, in: []*graph.Tensor{x3, mvI64(mvShape(2, 1, 2), 0, 1, 1, 0)},
			want: []*graph.Tensor{mvF32(mvShape(2, 1, 2), 2, 3, 4, 5)}},
		{name: "batch_dims 1", op: "GatherND", opset: 12, attrs: []*graph.Attribute{mvInt("batch_dims", 1)},
			in: []*graph.Tensor{x3, mvI64(mvShape(2, 1), 1, 0)}, want: []*graph.Tensor{mvF32(mvShape(2, 2), 2, 3, 4, 5)}},
		{name: "negative index", op: "GatherND", opset: 13, in: []*graph.Tensor{x2, mvI64(mvShape(1, 2), -1, -2)},
			want: []*graph.Tensor{mvF32(mvShape(1), 2)}},
		{name: "out of range", op: "GatherND", opset: 13, in: []*graph.Tensor{x2, mvI64(mvShape(1, 2), 0, 2)}, err: true},
		{name: "index too long", op: "GatherND", opset: 13, in: []*graph.Tensor{x2, mvI64(mvShape(1, 3), 0, 0, 0)}, err: true},
		{name: "batch mismatch", op: "GatherND", opset: 13, attrs: []*graph.Attribute{mvInt("batch_dims", 1)},
			in: []*graph.Tensor{x3, mvI64(mvShape(3, 1), 1, 0, 0)}, err: true},
		{name: "batch_dims too large", op: "GatherND", opset: 13, attrs: []*graph.Attribute{mvInt("batch_dims", 2)},
			in: []*graph.Tensor{x3, mvI64(mvShape(2, 1), 1, 0)}, err: true},
		{name: "scalar indices", op: "GatherND", opset: 13, in: []*graph.Tensor{x2, mvI64(nil, 0)}, err: true},
	})
}
