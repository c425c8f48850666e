package hostfallback

import (
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

func TestScatterElements(t *testing.T) {
	row := mvF32(mvShape(1, 5), 1, 2, 3, 4, 5)
	dup := mvI64(mvShape(1, 2), 1, 1)
	upd := mvF32(mvShape(1, 2), 1.1, 2.1)
	red := func(r string) []*graph.Attribute { return []*graph.Attribute{mvInt("axis", 1), mvStr("reduction", r)} }
	mvRun(t, []mvCase{
		{name: "axis 0", op: "ScatterElements", opset: 11,
			in: []*graph.Tensor{graph.NewTensor(graph.Float, mvShape(3, 3)), mvI64(mvShape(2, 3), 1, 0, 2, 0, 2, 1),
				mvF32(mvShape(2, 3), 1, 1.1, 1.2, 2, 2.1, 2.2)},
			want: []*graph.Tensor{mvF32(mvShape(3, 3), 2, 1.1, 0, 1, 0, 2.2, 0, 2.1, 1.2)}},
		{name: "axis 1", op: "ScatterElements", opset: 13, attrs: []*graph.Attribute{mvInt("axis", 1)},
			in: []*graph.Tensor{row, mvI64(mvShape(1, 2), 1, 3), upd}, want: []*graph.Tensor{mvF32(mvShape(1, 5), 1, 1.1, 3, 2.1, 5)}},
		{name: "negative index", op: "ScatterElements", opset: 13, attrs: []*graph.Attribute{mvInt("axis", -1)},
			in: []*graph.Tensor{row, mvI32(mvShape(1, 2), -1, -5), upd}, want: []*graph.Tensor{mvF32(mvShape(1, 5), 2.1, 2, 3, 4, 1.1)}},
		{name: "duplicates: last wins", op: "ScatterElements", opset: 13, attrs: []*graph.Attribute{mvInt("axis", 1)},
			in: []*graph.Tensor{row, dup, upd}, want: []*graph.Tensor{mvF32(mvShape(1, 5), 1, 2.1, 3, 4, 5)}},
		{name: "add", op: "ScatterElements", opset: 16, attrs: red("add"), in: []*graph.Tensor{row, dup, upd},
			want: []*graph.Tensor{mvF32(mvShape(1, 5), 1, 2+float32(1.1)+float32(2.1), 3, 4, 5)}},
		{name: "mul", op: "ScatterElements", opset: 16, attrs: red("mul"), in: []*graph.Tensor{row, dup, upd},
			want: []*graph.Tensor{mvF32(mvShape(1, 5), 1, 2*float32(1.1)*float32(2.1), 3, 4, 5)}},
		{name: "max", op: "ScatterElements", opset: 18, attrs: red("max"), in: []*graph.Tensor{row, dup, upd},
			want: []*graph.Tensor{mvF32(mvShape(1, 5), 1, 2.1, 3, 4, 5)}},
		{name: "min", op: "ScatterElements", opset: 18, attrs: red("min"), in: []*graph.Tensor{row, dup, upd},
			want: []*graph.Tensor{mvF32(mvShape(1, 5), 1, 1.1, 3, 4, 5)}},
		{name: "float16 add", op: "ScatterElements", opset: 16, attrs: red("add"),
			in:   []*graph.Tensor{mvF16(mvShape(1, 2), 1, 2), mvI64(mvShape(1, 2), 0, 0), mvF16(mvShape(1, 2), 0.5, 0.25)},
			want: []*graph.Tensor{mvF16(mvShape(1, 2), 1.75, 2)}},
		{name: "legacy Scatter", op: "Scatter", opset: 9, attrs: []*graph.Attribute{mvInt("axis", 1)},
			in: []*graph.Tensor{row, mvI64(mvShape(1, 2), 1, 3), upd}, want: []*graph.Tensor{mvF32(mvShape(1, 5), 1, 1.1, 3, 2.1, 5)}},
		{name: "strings", op: "ScatterElements", opset: 13,
			in:   []*graph.Tensor{mvStrs(mvShape(3), "a", "b", "c"), mvI64(mvShape(1), 1), mvStrs(mvShape(1), "z")},
			want: []*graph.Tensor{mvStrs(mvShape(3), "a", "z", "c")}},
		{name: "out of range", op: "ScatterElements", opset: 13, attrs: []*graph.Attribute{mvInt("axis", 1)},
			in: []*graph.Tensor{row, mvI64(mvShape(1, 2), 1, 5), upd}, err: true},
		{name: "shape mismatch", op: "ScatterElements", opset: 13, attrs: []*graph.Attribute{mvInt("axis", 1)},
			in: []*graph.Tensor{row, mvI64(mvShape(1, 1), 1), upd}, err: true},
		{name: "type mismatch", op: "ScatterElements", opset: 13, attrs: []*graph.Attribute{mvInt("axis", 1)},
			in: []*graph.Tensor{row, dup, mvI64(mvShape(1, 2), 1, 2)}, err: true},
		{name: "unknown reduction", op: "ScatterElements", opset: 18, attrs: red("avg"), in: []*graph.Tensor{row, dup, upd}, err: true},
		{name: "reduction on strings", op: "ScatterElements", opset: 18, attrs: []*graph.Attribute{mvStr("reduction", "add")},
			in: []*graph.Tensor{mvStrs(mvShape(1), "a"), mvI64(mvShape(1), 0), mvStrs(mvShape(1), "b")}, unsupported: true},
	})
}

func TestScatterND(t *testing.T) {
	data := mvI64(mvShape(8), 1, 2, 3, 4, 5, 6, 7, 8)
	dup := mvI64(mvShape(2, 1), 1, -7)
	upd := mvI64(mvShape(2), 10, 20)
	red := func(r string) []*graph.Attribute { return []*graph.Attribute{mvStr("reduction", r)} }
	mvRun(t, []mvCase{
		{name: "elements", op: "ScatterND", opset: 11, in: []*graph.Tensor{data, mvI64(mvShape(4, 1), 4, 3, 1, 7), mvI64(mvShape(4), 9, 10, 11, 12)},
			want: []*graph.Tensor{mvI64(mvShape(8), 1, 11, 3, 10, 9, 6, 7, 12)}},
		{name: "slices", op: "ScatterND", opset: 13,
			in:   []*graph.Tensor{mvIota(2, 2, 2), mvI64(mvShape(1, 1), 1), mvF32(mvShape(1, 2, 2), 9, 8, 7, 6)},
			want: []*graph.Tensor{mvF32(mvShape(2, 2, 2), 0, 1, 2, 3, 9, 8, 7, 6)}},
		{name: "add", op: "ScatterND", opset: 16, attrs: red("add"), in: []*graph.Tensor{data, dup, upd},
			want: []*graph.Tensor{mvI64(mvShape(8), 1, 32, 3, 4, 5, 6, 7, 8)}},
		{name: "mul", op: "ScatterND", opset: 16, attrs: red("mul"), in: []*graph.Tensor{data, dup, upd},
			want: []*graph.Tensor{mvI64(mvShape(8), 1, 400, 3, 4, 5, 6, 7, 8)}},
		{name: "max", op: "ScatterND", opset: 18, attrs: red("max"), in: []*graph.Tensor{data, dup, upd},
			want: []*graph.Tensor{mvI64(mvShape(8), 1, 20, 3, 4, 5, 6, 7, 8)}},
		{name: "min", op: "ScatterND", opset: 18, attrs: red("min"), in: []*graph.Tensor{data, dup, upd},
			want: []*graph.Tensor{data}},
		{name: "out of range", op: "ScatterND", opset: 13, in: []*graph.Tensor{data, mvI64(mvShape(1, 1), 8), mvI64(mvShape(1), 0)}, err: true},
		{name: "updates shape", op: "ScatterND", opset: 13, in: []*graph.Tensor{data, mvI64(mvShape(1, 1), 0), mvI64(mvShape(2), 0, 0)}, err: true},
		{name: "index too long", op: "ScatterND", opset: 13, in: []*graph.Tensor{data, mvI64(mvShape(1, 2), 0, 0), mvI64(mvShape(1), 0)}, err: true},
	})
}
