package hostfallback

import (
	"cmp"
	"math"
	"slices"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

func TestTopK(t *testing.T) {
	x := mvIota(3, 4)
	ties := mvI64(mvShape(5), 3, 1, 3, 2, 1)
	k := func(v int64) *graph.Tensor { return mvI64(mvShape(1), v) }
	mvRun(t, []mvCase{
		{name: "largest", op: "TopK", opset: 11, in: []*graph.Tensor{x, k(3)},
			want: []*graph.Tensor{mvF32(mvShape(3, 3), 3, 2, 1, 7, 6, 5, 11, 10, 9), mvI64(mvShape(3, 3), 3, 2, 1, 3, 2, 1, 3, 2, 1)}},
		{name: "smallest axis 0", op: "TopK", opset: 11, attrs: []*graph.Attribute{mvInt("axis", 0), mvInt("largest", 0)},
			in: []*graph.Tensor{x, k(2)}, want: []*graph.Tensor{mvIota(2, 4), mvI64(mvShape(2, 4), 0, 0, 0, 0, 1, 1, 1, 1)}},
		{name: "ties by index, largest", op: "TopK", opset: 11, in: []*graph.Tensor{ties, k(4)},
			want: []*graph.Tensor{mvI64(mvShape(4), 3, 3, 2, 1), mvI64(mvShape(4), 0, 2, 3, 1)}},
		{name: "ties by index, smallest", op: "TopK", opset: 11, attrs: []*graph.Attribute{mvInt("largest", 0)}, in: []*graph.Tensor{ties, k(3)},
			want: []*graph.Tensor{mvI64(mvShape(3), 1, 1, 2), mvI64(mvShape(3), 1, 4, 3)}},
		{name: "NaN is largest", op: "TopK", opset: 11, in: []*graph.Tensor{mvF32(mvShape(3), 1, float32(math.NaN()), 2), k(1)},
			want: []*graph.Tensor{nil, mvI64(mvShape(1), 1)}},
		{name: "float16", op: "TopK", opset: 11, in: []*graph.Tensor{mvF16(mvShape(3), -1, 0.5, 0.25), k(2)},
			want: []*graph.Tensor{mvF16(mvShape(2), 0.5, 0.25), mvI64(mvShape(2), 1, 2)}},
		{name: "k 0", op: "TopK", opset: 11, in: []*graph.Tensor{x, k(0)},
			want: []*graph.Tensor{graph.NewTensor(graph.Float, mvShape(3, 0)), graph.NewTensor(graph.Int64, mvShape(3, 0))}},
		{name: "k too large", op: "TopK", opset: 11, in: []*graph.Tensor{x, k(5)}, nout: 2, err: true},
		{name: "negative k", op: "TopK", opset: 11, in: []*graph.Tensor{x, k(-1)}, nout: 2, err: true},
		{name: "strings", op: "TopK", opset: 11, in: []*graph.Tensor{mvStrs(mvShape(1), "a"), k(1)}, nout: 2, unsupported: true},
	})
}

func TestUnique(t *testing.T) {
	x := mvF32(mvShape(6), 2, 1, 1, 3, 4, 3)
	x2 := mvF32(mvShape(3, 3), 1, 0, 0, 1, 0, 0, 2, 3, 4)
	x3 := mvF32(mvShape(2, 4, 2), 1, 1, 0, 1, 2, 1, 0, 1, 1, 1, 0, 1, 2, 1, 0, 1)
	nan := float32(math.NaN())
	mvRun(t, []mvCase{
		{name: "sorted", op: "Unique", opset: 11, in: []*graph.Tensor{x},
			want: []*graph.Tensor{mvF32(mvShape(4), 1, 2, 3, 4), mvI64(mvShape(4), 1, 0, 3, 4),
				mvI64(mvShape(6), 1, 0, 0, 2, 3, 2), mvI64(mvShape(4), 2, 1, 2, 1)}},
		{name: "first-seen order", op: "Unique", opset: 11, attrs: []*graph.Attribute{mvInt("sorted", 0)}, in: []*graph.Tensor{x},
			want: []*graph.Tensor{mvF32(mvShape(4), 2, 1, 3, 4), mvI64(mvShape(4), 0, 1, 3, 4),
				mvI64(mvShape(6), 0, 1, 1, 2, 3, 2), mvI64(mvShape(4), 1, 2, 2, 1)}},
		{name: "axis 0", op: "Unique", opset: 11, attrs: []*graph.Attribute{mvInt("axis", 0)}, in: []*graph.Tensor{x2},
			want: []*graph.Tensor{mvF32(mvShape(2, 3), 1, 0, 0, 2, 3, 4), mvI64(mvShape(2), 0, 2),
				mvI64(mvShape(3), 0, 0, 1), mvI64(mvShape(2), 2, 1)}},
		{name: "axis 1 of 3-D", op: "Unique", opset: 11, attrs: []*graph.Attribute{mvInt("axis", 1)}, in: []*graph.Tensor{x3},
			want: []*graph.Tensor{mvF32(mvShape(2, 3, 2), 0, 1, 1, 1, 2, 1, 0, 1, 1, 1, 2, 1), mvI64(mvShape(3), 1, 0, 2),
				mvI64(mvShape(4), 1, 0, 2, 0), mvI64(mvShape(3), 2, 1, 1)}},
		{name: "negative axis", op: "Unique", opset: 11, attrs: []*graph.Attribute{mvInt("axis", -1)},
			in:   []*graph.Tensor{mvF32(mvShape(2, 3), 1, 0, 1, 2, 3, 2)},
			want: []*graph.Tensor{mvF32(mvShape(2, 2), 0, 1, 3, 2), nil, mvI64(mvShape(3), 1, 0, 1)}},
		{name: "NaNs and zeros collapse", op: "Unique", opset: 11,
			in:   []*graph.Tensor{mvF32(mvShape(4), nan, float32(math.Copysign(0, -1)), nan, 0)},
			want: []*graph.Tensor{nil, mvI64(mvShape(2), 1, 0), mvI64(mvShape(4), 1, 0, 1, 0), mvI64(mvShape(2), 2, 2)}},
		{name: "strings", op: "Unique", opset: 11, in: []*graph.Tensor{mvStrs(mvShape(3), "b", "a", "b")},
			want: []*graph.Tensor{mvStrs(mvShape(2), "a", "b")}},
		{name: "empty", op: "Unique", opset: 11, in: []*graph.Tensor{graph.NewTensor(graph.Int64, mvShape(0))},
			want: []*graph.Tensor{mvI64(mvShape(0)), mvI64(mvShape(0)), mvI64(mvShape(0)), mvI64(mvShape(0))}},
		{name: "bad axis", op: "Unique", opset: 11, attrs: []*graph.Attribute{mvInt("axis", 1)}, in: []*graph.Tensor{x}, err: true},
	})
}

// TestTopKSelection checks the heap selection used for small k against a
// full stable sort, on many ties.
func TestTopKSelection(t *testing.T) {
	const dim = 1000
	v := make([]int32, 3*dim)
	for i := range v {
		v[i] = int32(i*7919) % 101
	}
	x := mvI32(mvShape(3, dim), v...)
	for _, largest := range []int64{0, 1} {
		c, err := mvCall("TopK", 11, []*graph.Attribute{mvInt("largest", largest)}, []*graph.Tensor{x, mvI64(mvShape(1), 9)}, []string{"v", "i"})
		if err != nil {
			t.Fatal(err)
		}
		got := graph.View[int64](c.Out[1].(*graph.Tensor))
		for row := range 3 {
			idx := make([]int64, dim)
			for i := range idx {
				idx[i] = int64(i)
			}
			line := v[row*dim : (row+1)*dim]
			slices.SortStableFunc(idx, func(a, b int64) int {
				if largest == 1 {
					return cmp.Compare(line[b], line[a])
				}
				return cmp.Compare(line[a], line[b])
			})
			if !slices.Equal(got[row*9:(row+1)*9], idx[:9]) {
				t.Fatalf("largest=%d row %d: indices %v, want %v", largest, row, got[row*9:(row+1)*9], idx[:9])
			}
		}
	}
}
