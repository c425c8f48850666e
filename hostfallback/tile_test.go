package hostfallback

import (
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

func TestTile(t *testing.T) {
	x := mvF32(mvShape(2, 2), 1, 2, 3, 4)
	mvRun(t, []mvCase{
		{name: "both axes", op: "Tile", opset: 13, in: []*graph.Tensor{x, mvI64(mvShape(2), 2, 3)},
			want: []*graph.Tensor{mvF32(mvShape(4, 6),
				1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4)}},
		{name: "outer axis", op: "Tile", opset: 13, in: []*graph.Tensor{x, mvI64(mvShape(2), 2, 1)},
			want: []*graph.Tensor{mvF32(mvShape(4, 2), 1, 2, 3, 4, 1, 2, 3, 4)}},
		{name: "zero repeats", op: "Tile", opset: 13, in: []*graph.Tensor{x, mvI64(mvShape(2), 0, 2)},
			want: []*graph.Tensor{graph.NewTensor(graph.Float, mvShape(0, 4))}},
		{name: "scalar", op: "Tile", opset: 13, in: []*graph.Tensor{mvF32(nil, 7), mvI64(mvShape(0))}, want: []*graph.Tensor{mvF32(nil, 7)}},
		{name: "strings", op: "Tile", opset: 13, in: []*graph.Tensor{mvStrs(mvShape(2), "a", "b"), mvI64(mvShape(1), 2)},
			want: []*graph.Tensor{mvStrs(mvShape(4), "a", "b", "a", "b")}},
		{name: "tile-1", op: "Tile", opset: 1, in: []*graph.Tensor{x, mvI64(nil, 2), mvI64(nil, -1)},
			want: []*graph.Tensor{mvF32(mvShape(2, 4), 1, 2, 1, 2, 3, 4, 3, 4)}},
		{name: "repeats length", op: "Tile", opset: 13, in: []*graph.Tensor{x, mvI64(mvShape(1), 2)}, err: true},
		{name: "negative repeat", op: "Tile", opset: 13, in: []*graph.Tensor{x, mvI64(mvShape(2), 1, -1)}, err: true},
		{name: "tile-1 bad axis", op: "Tile", opset: 1, in: []*graph.Tensor{x, mvI64(nil, 2), mvI64(nil, 2)}, err: true},
	})
}
