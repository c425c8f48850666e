package hostfallback

import (
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

func TestPad(t *testing.T) {
	x := mvF32(mvShape(3, 2), 1, 2, 3, 4, 5, 6)
	pads := mvI64(mvShape(4), 0, 2, 0, 0)
	mode := func(m string) []*graph.Attribute { return []*graph.Attribute{mvStr("mode", m)} }
	mvRun(t, []mvCase{
		{name: "constant default", op: "Pad", opset: 13, in: []*graph.Tensor{x, pads},
			want: []*graph.Tensor{mvF32(mvShape(3, 4), 0, 0, 1, 2, 0, 0, 3, 4, 0, 0, 5, 6)}},
		{name: "constant value", op: "Pad", opset: 11, in: []*graph.Tensor{x, mvI64(mvShape(4), 1, 0, 0, 1), mvF32(nil, 9)},
			want: []*graph.Tensor{mvF32(mvShape(4, 3), 9, 9, 9, 1, 2, 9, 3, 4, 9, 5, 6, 9)}},
		{name: "reflect", op: "Pad", opset: 13, attrs: mode("reflect"), in: []*graph.Tensor{x, mvI64(mvShape(4), 2, 1, 0, 0)},
			want: []*graph.Tensor{mvF32(mvShape(5, 3), 6, 5, 6, 4, 3, 4, 2, 1, 2, 4, 3, 4, 6, 5, 6)}},
		{name: "edge", op: "Pad", opset: 13, attrs: mode("edge"), in: []*graph.Tensor{x, pads},
			want: []*graph.Tensor{mvF32(mvShape(3, 4), 1, 1, 1, 2, 3, 3, 3, 4, 5, 5, 5, 6)}},
		{name: "wrap", op: "Pad", opset: 19, attrs: mode("wrap"), in: []*graph.Tensor{x, mvI64(mvShape(4), 2, 1, 1, 1)},
			want: []*graph.Tensor{mvF32(mvShape(6, 4), 4, 3, 4, 3, 6, 5, 6, 5, 2, 1, 2, 1, 4, 3, 4, 3, 6, 5, 6, 5, 2, 1, 2, 1)}},
		{name: "wrap beyond the axis", op: "Pad", opset: 19, attrs: mode("wrap"), in: []*graph.Tensor{mvIota(2), mvI64(mvShape(2), 3, 2)},
			want: []*graph.Tensor{mvF32(mvShape(7), 1, 0, 1, 0, 1, 0, 1)}},
		{name: "reflect beyond the axis", op: "Pad", opset: 13, attrs: mode("reflect"), in: []*graph.Tensor{mvIota(3), mvI64(mvShape(2), 4, 0)},
			want: []*graph.Tensor{mvF32(mvShape(7), 0, 1, 2, 1, 0, 1, 2)}},
		{name: "reflect length 1", op: "Pad", opset: 13, attrs: mode("reflect"), in: []*graph.Tensor{mvIota(1), mvI64(mvShape(2), 1, 1)},
			want: []*graph.Tensor{mvF32(mvShape(3), 0, 0, 0)}},
		{name: "negative pads crop", op: "Pad", opset: 13, in: []*graph.Tensor{x, mvI64(mvShape(4), -1, 1, 0, -1)},
			want: []*graph.Tensor{mvF32(mvShape(2, 2), 0, 3, 0, 5)}},
		{name: "edge after crop", op: "Pad", opset: 13, attrs: mode("edge"), in: []*graph.Tensor{x, mvI64(mvShape(4), -1, 0, 1, 0)},
			want: []*graph.Tensor{mvF32(mvShape(3, 2), 3, 4, 5, 6, 5, 6)}},
		{name: "axes", op: "Pad", opset: 18, in: []*graph.Tensor{x, mvI64(mvShape(2), 1, 0), nil, mvI64(mvShape(1), -1)},
			want: []*graph.Tensor{mvF32(mvShape(3, 3), 0, 1, 2, 0, 3, 4, 0, 5, 6)}},
		{name: "strings", op: "Pad", opset: 13, in: []*graph.Tensor{mvStrs(mvShape(1), "a"), mvI64(mvShape(2), 1, 1), mvStrs(nil, "-")},
			want: []*graph.Tensor{mvStrs(mvShape(3), "-", "a", "-")}},
		{name: "int4", op: "Pad", opset: 21, in: []*graph.Tensor{mvInt4(mvShape(2), -3, 5), mvI64(mvShape(2), 1, 0), mvInt4(nil, -1)},
			want: []*graph.Tensor{mvInt4(mvShape(3), -1, -3, 5)}},
		{name: "scalar", op: "Pad", opset: 13, in: []*graph.Tensor{mvF32(nil, 3), mvI64(mvShape(0))}, want: []*graph.Tensor{mvF32(nil, 3)}},
		{name: "empty axis constant", op: "Pad", opset: 13, in: []*graph.Tensor{graph.NewTensor(graph.Float, mvShape(0)), mvI64(mvShape(2), 1, 1)},
			want: []*graph.Tensor{mvF32(mvShape(2), 0, 0)}},
		{name: "empty axis edge", op: "Pad", opset: 13, attrs: mode("edge"),
			in: []*graph.Tensor{graph.NewTensor(graph.Float, mvShape(0)), mvI64(mvShape(2), 1, 1)}, err: true},
		{name: "unknown mode", op: "Pad", opset: 13, attrs: mode("mirror"), in: []*graph.Tensor{x, pads}, err: true},
		{name: "pads length", op: "Pad", opset: 13, in: []*graph.Tensor{x, mvI64(mvShape(2), 1, 1)}, err: true},
		{name: "over-cropped", op: "Pad", opset: 13, in: []*graph.Tensor{x, mvI64(mvShape(4), -2, 0, -2, 0)}, err: true},
		{name: "value type", op: "Pad", opset: 13, in: []*graph.Tensor{x, pads, mvI64(nil, 1)}, err: true},
		{name: "axes and pads", op: "Pad", opset: 18, in: []*graph.Tensor{x, pads, nil, mvI64(mvShape(1), 0)}, err: true},
		{name: "missing pads", op: "Pad", opset: 13, in: []*graph.Tensor{x}, err: true},
	})
}
