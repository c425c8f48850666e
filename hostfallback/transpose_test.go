package hostfallback

import (
	"fmt"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

func TestTranspose(t *testing.T) {
	x := mvIota(2, 3)
	mvRun(t, []mvCase{
		{name: "default reverses", op: "Transpose", opset: 13, in: []*graph.Tensor{x},
			want: []*graph.Tensor{mvF32(mvShape(3, 2), 0, 3, 1, 4, 2, 5)}},
		{name: "identity", op: "Transpose", opset: 13, attrs: []*graph.Attribute{mvInts("perm", 0, 1)},
			in: []*graph.Tensor{x}, want: []*graph.Tensor{x}},
		{name: "3-D", op: "Transpose", opset: 1, attrs: []*graph.Attribute{mvInts("perm", 1, 2, 0)},
			in:   []*graph.Tensor{mvIota(2, 2, 3)},
			want: []*graph.Tensor{mvF32(mvShape(2, 3, 2), 0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11)}},
		{name: "inner block kept", op: "Transpose", opset: 13, attrs: []*graph.Attribute{mvInts("perm", 1, 0, 2)},
			in:   []*graph.Tensor{mvIota(2, 2, 2)},
			want: []*graph.Tensor{mvF32(mvShape(2, 2, 2), 0, 1, 4, 5, 2, 3, 6, 7)}},
		{name: "size-1 axes", op: "Transpose", opset: 13, attrs: []*graph.Attribute{mvInts("perm", 2, 1, 0)},
			in: []*graph.Tensor{mvIota(1, 3, 1)}, want: []*graph.Tensor{mvIota(1, 3, 1)}},
		{name: "scalar", op: "Transpose", opset: 13, in: []*graph.Tensor{mvF32(nil, 3)}, want: []*graph.Tensor{mvF32(nil, 3)}},
		{name: "empty", op: "Transpose", opset: 13, in: []*graph.Tensor{graph.NewTensor(graph.Float, mvShape(0, 3))},
			want: []*graph.Tensor{graph.NewTensor(graph.Float, mvShape(3, 0))}},
		{name: "strings", op: "Transpose", opset: 13, in: []*graph.Tensor{mvStrs(mvShape(2, 2), "a", "b", "c", "d")},
			want: []*graph.Tensor{mvStrs(mvShape(2, 2), "a", "c", "b", "d")}},
		{name: "int4", op: "Transpose", opset: 21, in: []*graph.Tensor{mvInt4(mvShape(2, 3), 1, 2, 3, -4, -5, -6)},
			want: []*graph.Tensor{mvInt4(mvShape(3, 2), 1, -4, 2, -5, 3, -6)}},
		{name: "perm too short", op: "Transpose", opset: 13, attrs: []*graph.Attribute{mvInts("perm", 0)}, in: []*graph.Tensor{x}, err: true},
		{name: "perm repeated", op: "Transpose", opset: 13, attrs: []*graph.Attribute{mvInts("perm", 0, 0)}, in: []*graph.Tensor{x}, err: true},
		{name: "perm out of range", op: "Transpose", opset: 13, attrs: []*graph.Attribute{mvInts("perm", 0, 2)}, in: []*graph.Tensor{x}, err: true},
	})
}

// TestTransposeAgainstNaive checks every permutation of odd-sized 4-D
// tensors, large enough to use the tiled and parallel paths, for each cell
// size, against an element-by-element transpose.
func TestTransposeAgainstNaive(t *testing.T) {
	shape := mvShape(3, 37, 1, 45)
	for _, dt := range []graph.DType{graph.Uint8, graph.Float16, graph.Float, graph.Int64, graph.Complex128, graph.String} {
		x := graph.NewTensor(dt, shape)
		n := x.NumElements()
		if dt == graph.String {
			for i := range x.Strings {
				x.Strings[i] = fmt.Sprint(i)
			}
		} else {
			for i := range x.Data {
				x.Data[i] = byte(i*7 + i/251)
			}
		}
		for _, perm := range permutations(4) {
			c, err := mvCall("Transpose", 13, []*graph.Attribute{mvInts("perm", perm...)}, []*graph.Tensor{x}, []string{"y"})
			if err != nil {
				t.Fatal(err)
			}
			got := c.Out[0].(*graph.Tensor)
			want := naiveTranspose(x, perm)
			if n > 0 && fmt.Sprint(got.Shape) != fmt.Sprint(want.Shape) {
				t.Fatalf("%s %v: shape %v, want %v", dt, perm, got.Shape, want.Shape)
			}
			mvCheck(t, fmt.Sprint(dt, perm), got, want, 0)
		}
	}
}

func permutations(n int) [][]int64 {
	if n == 0 {
		return [][]int64{{}}
	}
	var out [][]int64
	for _, p := range permutations(n - 1) {
		for i := 0; i <= len(p); i++ {
			q := append(append(append([]int64{}, p[:i]...), int64(n-1)), p[i:]...)
			out = append(out, q)
		}
	}
	return out
}

func naiveTranspose(x *graph.Tensor, perm []int64) *graph.Tensor {
	r := len(perm)
	shape := make([]int64, r)
	for i, a := range perm {
		shape[i] = x.Shape[a]
	}
	y := graph.NewTensor(x.DType, shape)
	in := graph.Strides(x.Shape)
	size := int64(x.DType.Size())
	idx := make([]int64, r)
	for o := range y.NumElements() {
		rem := o
		for d := r - 1; d >= 0; d-- {
			idx[d] = rem % shape[d]
			rem /= shape[d]
		}
		src := int64(0)
		for d, a := range perm {
			src += idx[d] * in[a]
		}
		if x.DType == graph.String {
			y.Strings[o] = x.Strings[src]
		} else {
			copy(y.Data[o*size:(o+1)*size], x.Data[src*size:])
		}
	}
	return y
}

func TestDepthSpace(t *testing.T) {
	// Blocks of 2x2 over 2 output channels: DCR takes output channel c,
	// block (i, j) from input channel (i*2+j)*2+c, CRD from c*4+i*2+j.
	x := mvIota(1, 8, 2, 3)
	dcr := mvF32(mvShape(1, 2, 4, 6),
		0, 12, 1, 13, 2, 14, 24, 36, 25, 37, 26, 38, 3, 15, 4, 16, 5, 17, 27, 39, 28, 40, 29, 41,
		6, 18, 7, 19, 8, 20, 30, 42, 31, 43, 32, 44, 9, 21, 10, 22, 11, 23, 33, 45, 34, 46, 35, 47)
	crd := mvF32(mvShape(1, 2, 4, 6),
		0, 6, 1, 7, 2, 8, 12, 18, 13, 19, 14, 20, 3, 9, 4, 10, 5, 11, 15, 21, 16, 22, 17, 23,
		24, 30, 25, 31, 26, 32, 36, 42, 37, 43, 38, 44, 27, 33, 28, 34, 29, 35, 39, 45, 40, 46, 41, 47)
	bs := mvInt("blocksize", 2)
	mvRun(t, []mvCase{
		{name: "DCR", op: "DepthToSpace", opset: 13, attrs: []*graph.Attribute{bs, mvStr("mode", "DCR")},
			in: []*graph.Tensor{x}, want: []*graph.Tensor{dcr}},
		{name: "default mode", op: "DepthToSpace", opset: 13, attrs: []*graph.Attribute{bs},
			in: []*graph.Tensor{x}, want: []*graph.Tensor{dcr}},
		{name: "CRD", op: "DepthToSpace", opset: 13, attrs: []*graph.Attribute{bs, mvStr("mode", "CRD")},
			in: []*graph.Tensor{x}, want: []*graph.Tensor{crd}},
		{name: "opset 1 is DCR", op: "DepthToSpace", opset: 1, attrs: []*graph.Attribute{bs},
			in: []*graph.Tensor{x}, want: []*graph.Tensor{dcr}},
		{name: "space to depth inverts DCR", op: "SpaceToDepth", opset: 13, attrs: []*graph.Attribute{bs},
			in: []*graph.Tensor{dcr}, want: []*graph.Tensor{x}},
		{name: "bad mode", op: "DepthToSpace", opset: 13, attrs: []*graph.Attribute{bs, mvStr("mode", "XYZ")}, in: []*graph.Tensor{x}, err: true},
		{name: "channels", op: "DepthToSpace", opset: 13, attrs: []*graph.Attribute{mvInt("blocksize", 3)}, in: []*graph.Tensor{x}, err: true},
		{name: "blocksize 0", op: "DepthToSpace", opset: 13, attrs: []*graph.Attribute{mvInt("blocksize", 0)}, in: []*graph.Tensor{x}, err: true},
		{name: "rank", op: "DepthToSpace", opset: 13, attrs: []*graph.Attribute{bs}, in: []*graph.Tensor{mvIota(8, 2, 3)}, err: true},
		{name: "spatial", op: "SpaceToDepth", opset: 13, attrs: []*graph.Attribute{bs}, in: []*graph.Tensor{x}, err: true},
	})
}
