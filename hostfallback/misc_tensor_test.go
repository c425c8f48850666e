package hostfallback

import (
	"math"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

func TestOneHot(t *testing.T) {
	idx := mvI64(mvShape(4), 0, 2, -1, 5)
	depth := mvI64(nil, 3)
	vals := mvF32(mvShape(2), 0, 1)
	mvRun(t, []mvCase{
		{name: "last axis", op: "OneHot", opset: 11, in: []*graph.Tensor{idx, depth, vals},
			want: []*graph.Tensor{mvF32(mvShape(4, 3), 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0)}},
		{name: "axis 0", op: "OneHot", opset: 11, attrs: []*graph.Attribute{mvInt("axis", 0)}, in: []*graph.Tensor{idx, depth, vals},
			want: []*graph.Tensor{mvF32(mvShape(3, 4), 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0)}},
		{name: "float indices and depth, string values", op: "OneHot", opset: 9,
			in:   []*graph.Tensor{mvF32(mvShape(2), 1.7, 0), mvF32(mvShape(1), 2), mvStrs(mvShape(2), "off", "on")},
			want: []*graph.Tensor{mvStrs(mvShape(2, 2), "off", "on", "on", "off")}},
		{name: "2-D indices, middle axis", op: "OneHot", opset: 11, attrs: []*graph.Attribute{mvInt("axis", -2)},
			in:   []*graph.Tensor{mvI32(mvShape(2, 1), 1, 0), mvI32(nil, 2), mvI64(mvShape(2), 5, 9)},
			want: []*graph.Tensor{mvI64(mvShape(2, 2, 1), 5, 9, 9, 5)}},
		{name: "depth 0", op: "OneHot", opset: 11, in: []*graph.Tensor{idx, mvI64(nil, 0), vals}, err: true},
		{name: "values length", op: "OneHot", opset: 11, in: []*graph.Tensor{idx, depth, mvF32(mvShape(1), 0)}, err: true},
		{name: "axis", op: "OneHot", opset: 11, attrs: []*graph.Attribute{mvInt("axis", 2)}, in: []*graph.Tensor{idx, depth, vals}, err: true},
	})
}

func TestTrilu(t *testing.T) {
	x := mvIota(3, 4)
	k := func(v int64) *graph.Tensor { return mvI64(nil, v) }
	lower := []*graph.Attribute{mvInt("upper", 0)}
	mvRun(t, []mvCase{
		{name: "upper", op: "Trilu", opset: 14, in: []*graph.Tensor{x},
			want: []*graph.Tensor{mvF32(mvShape(3, 4), 0, 1, 2, 3, 0, 5, 6, 7, 0, 0, 10, 11)}},
		{name: "upper k 1", op: "Trilu", opset: 14, in: []*graph.Tensor{x, k(1)},
			want: []*graph.Tensor{mvF32(mvShape(3, 4), 0, 1, 2, 3, 0, 0, 6, 7, 0, 0, 0, 11)}},
		{name: "upper k -5", op: "Trilu", opset: 14, in: []*graph.Tensor{x, k(-5)}, want: []*graph.Tensor{x}},
		{name: "lower", op: "Trilu", opset: 14, attrs: lower, in: []*graph.Tensor{x},
			want: []*graph.Tensor{mvF32(mvShape(3, 4), 0, 0, 0, 0, 4, 5, 0, 0, 8, 9, 10, 0)}},
		{name: "lower k -1", op: "Trilu", opset: 14, attrs: lower, in: []*graph.Tensor{x, k(-1)},
			want: []*graph.Tensor{mvF32(mvShape(3, 4), 0, 0, 0, 0, 4, 0, 0, 0, 8, 9, 0, 0)}},
		{name: "lower k 9", op: "Trilu", opset: 14, attrs: lower, in: []*graph.Tensor{x, k(9)}, want: []*graph.Tensor{x}},
		{name: "batched strings", op: "Trilu", opset: 14, attrs: lower,
			in:   []*graph.Tensor{mvStrs(mvShape(2, 2, 2), "a", "b", "c", "d", "e", "f", "g", "h")},
			want: []*graph.Tensor{mvStrs(mvShape(2, 2, 2), "a", "", "c", "d", "e", "", "g", "h")}},
		{name: "empty", op: "Trilu", opset: 14, in: []*graph.Tensor{graph.NewTensor(graph.Float, mvShape(0, 3))},
			want: []*graph.Tensor{graph.NewTensor(graph.Float, mvShape(0, 3))}},
		{name: "rank 1", op: "Trilu", opset: 14, in: []*graph.Tensor{mvIota(3)}, err: true},
		{name: "k not scalar", op: "Trilu", opset: 14, in: []*graph.Tensor{x, mvI64(mvShape(2), 1, 1)}, err: true},
	})
}

func TestNonZero(t *testing.T) {
	nan := float32(math.NaN())
	negZero := float32(math.Copysign(0, -1))
	mvRun(t, []mvCase{
		{name: "2-D", op: "NonZero", opset: 13, in: []*graph.Tensor{mvI32(mvShape(2, 2), 1, 0, 1, 1)},
			want: []*graph.Tensor{mvI64(mvShape(2, 3), 0, 1, 1, 0, 0, 1)}},
		{name: "floats", op: "NonZero", opset: 13, in: []*graph.Tensor{mvF32(mvShape(4), negZero, nan, 2, 0)},
			want: []*graph.Tensor{mvI64(mvShape(1, 2), 1, 2)}},
		{name: "float16 negative zero", op: "NonZero", opset: 13, in: []*graph.Tensor{mvF16(mvShape(2), negZero, 1)},
			want: []*graph.Tensor{mvI64(mvShape(1, 1), 1)}},
		{name: "scalar", op: "NonZero", opset: 13, in: []*graph.Tensor{mvBool(nil, true)}, want: []*graph.Tensor{mvI64(mvShape(1, 1), 0)}},
		{name: "none", op: "NonZero", opset: 9, in: []*graph.Tensor{graph.NewTensor(graph.Uint8, mvShape(2, 3))},
			want: []*graph.Tensor{mvI64(mvShape(2, 0))}},
		{name: "strings", op: "NonZero", opset: 13, in: []*graph.Tensor{mvStrs(mvShape(2), "", "a")},
			want: []*graph.Tensor{mvI64(mvShape(1, 1), 1)}},
	})
}

func TestCompress(t *testing.T) {
	x := mvIota(3, 2)
	cond := func(v ...bool) *graph.Tensor { return mvBool(mvShape(int64(len(v))), v...) }
	mvRun(t, []mvCase{
		{name: "axis 0", op: "Compress", opset: 11, attrs: []*graph.Attribute{mvInt("axis", 0)}, in: []*graph.Tensor{x, cond(false, true, true)},
			want: []*graph.Tensor{mvF32(mvShape(2, 2), 2, 3, 4, 5)}},
		{name: "axis -1", op: "Compress", opset: 11, attrs: []*graph.Attribute{mvInt("axis", -1)}, in: []*graph.Tensor{x, cond(false, true)},
			want: []*graph.Tensor{mvF32(mvShape(3, 1), 1, 3, 5)}},
		{name: "flattened, short condition", op: "Compress", opset: 9, in: []*graph.Tensor{x, cond(false, true, true, false, true)},
			want: []*graph.Tensor{mvF32(mvShape(3), 1, 2, 4)}},
		{name: "long condition, false beyond", op: "Compress", opset: 11, attrs: []*graph.Attribute{mvInt("axis", 1)},
			in: []*graph.Tensor{x, cond(true, false, false)}, want: []*graph.Tensor{mvF32(mvShape(3, 1), 0, 2, 4)}},
		{name: "none kept", op: "Compress", opset: 11, attrs: []*graph.Attribute{mvInt("axis", 0)}, in: []*graph.Tensor{x, cond()},
			want: []*graph.Tensor{graph.NewTensor(graph.Float, mvShape(0, 2))}},
		{name: "true beyond", op: "Compress", opset: 11, attrs: []*graph.Attribute{mvInt("axis", 1)}, in: []*graph.Tensor{x, cond(true, false, true)}, err: true},
		{name: "not bool", op: "Compress", opset: 11, in: []*graph.Tensor{x, mvI64(mvShape(1), 1)}, err: true},
		{name: "bad axis", op: "Compress", opset: 11, attrs: []*graph.Attribute{mvInt("axis", 2)}, in: []*graph.Tensor{x, cond(true)}, err: true},
	})
}

func TestReverseSequence(t *testing.T) {
	mvRun(t, []mvCase{
		{name: "time major", op: "ReverseSequence", opset: 10,
			in:   []*graph.Tensor{mvF32(mvShape(4, 4), 0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), mvI64(mvShape(4), 4, 3, 2, 1)},
			want: []*graph.Tensor{mvF32(mvShape(4, 4), 3, 6, 9, 12, 2, 5, 8, 13, 1, 4, 10, 14, 0, 7, 11, 15)}},
		{name: "batch major", op: "ReverseSequence", opset: 10, attrs: []*graph.Attribute{mvInt("batch_axis", 0), mvInt("time_axis", 1)},
			in:   []*graph.Tensor{mvIota(4, 4), mvI64(mvShape(4), 1, 2, 3, 4)},
			want: []*graph.Tensor{mvF32(mvShape(4, 4), 0, 1, 2, 3, 5, 4, 6, 7, 10, 9, 8, 11, 15, 14, 13, 12)}},
		{name: "inner axes", op: "ReverseSequence", opset: 10, in: []*graph.Tensor{mvIota(2, 1, 2), mvI64(mvShape(1), 2)},
			want: []*graph.Tensor{mvF32(mvShape(2, 1, 2), 2, 3, 0, 1)}},
		{name: "length too long", op: "ReverseSequence", opset: 10, in: []*graph.Tensor{mvIota(2, 2), mvI64(mvShape(2), 3, 1)}, err: true},
		{name: "lengths count", op: "ReverseSequence", opset: 10, in: []*graph.Tensor{mvIota(2, 2), mvI64(mvShape(1), 1)}, err: true},
		{name: "axes", op: "ReverseSequence", opset: 10, attrs: []*graph.Attribute{mvInt("batch_axis", 0)},
			in: []*graph.Tensor{mvIota(2, 2), mvI64(mvShape(2), 1, 1)}, err: true},
		{name: "rank", op: "ReverseSequence", opset: 10, in: []*graph.Tensor{mvIota(2), mvI64(mvShape(1), 1)}, err: true},
	})
}
