package hostfallback

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

// naiveMatMul is numpy.matmul for float32 by definition: it walks the
// broadcast batch index of the output directly.
func naiveMatMul(a, b *graph.Tensor) ([]int64, []float32) {
	sa, sb := a.Shape, b.Shape
	if len(sa) == 1 {
		sa = []int64{1, sa[0]}
	}
	if len(sb) == 1 {
		sb = []int64{sb[0], 1}
	}
	m, k, n := sa[len(sa)-2], sa[len(sa)-1], sb[len(sb)-1]
	ba, bb := sa[:len(sa)-2], sb[:len(sb)-2]
	rank := max(len(ba), len(bb))
	pad := func(s []int64) []int64 {
		out := make([]int64, rank)
		for i := range out {
			out[i] = 1
		}
		copy(out[rank-len(s):], s)
		return out
	}
	ba, bb = pad(ba), pad(bb)
	batch := make([]int64, rank)
	for i := range batch {
		batch[i] = max(ba[i], bb[i])
	}
	av, bv := graph.View[float32](a), graph.View[float32](b)
	out := make([]float32, graph.NumElements(batch)*m*n)
	idx := make([]int64, rank)
	for o := range graph.NumElements(batch) {
		rem := o
		for i := rank - 1; i >= 0; i-- {
			idx[i] = rem % batch[i]
			rem /= batch[i]
		}
		var ia, ib int64
		for i := range rank {
			ia = ia*ba[i] + idx[i]%ba[i]
			ib = ib*bb[i] + idx[i]%bb[i]
		}
		for i := range m {
			for j := range n {
				var s float64
				for p := range k {
					s += float64(av[ia*m*k+i*k+p]) * float64(bv[ib*k*n+p*n+j])
				}
				out[o*m*n+i*n+j] = float32(s)
			}
		}
	}
	shape := append([]int64{}, batch...)
	if len(a.Shape) > 1 {
		shape = append(shape, m)
	}
	if len(b.Shape) > 1 {
		shape = append(shape, n)
	}
	return shape, out
}

func TestMatMulHandComputed(t *testing.T) {
	y, err := nnRun("MatMul", 13, nil, nnF32([]int64{3}, 1, 2, 3), nnF32([]int64{3}, 4, 5, 6))
	if err != nil {
		t.Fatal(err)
	}
	nnCheck(t, "vector·vector", y, []int64{}, []float32{32}, 0, 0)
	y, err = nnRun("MatMul", 13, nil, nnF32([]int64{2, 3}, 1, 2, 3, 4, 5, 6), nnF32([]int64{3}, 1, 0, -1))
	if err != nil {
		t.Fatal(err)
	}
	nnCheck(t, "matrix·vector", y, []int64{2}, []float32{-2, -2}, 0, 0)
	y, err = nnRun("MatMul", 13, nil, nnF32([]int64{2}, 1, 2), nnF32([]int64{2, 1, 2, 2}, 1, 0, 0, 1, 2, 0, 0, 2))
	if err != nil {
		t.Fatal(err)
	}
	nnCheck(t, "vector·batch", y, []int64{2, 1, 2}, []float32{1, 2, 2, 4}, 0, 0)
	for _, bad := range [][2][]int64{{{2, 3}, {2, 3}}, {{2, 2, 3}, {3, 3, 1}}, {{}, {3}}} {
		a := graph.NewTensor(graph.Float, bad[0])
		b := graph.NewTensor(graph.Float, bad[1])
		if _, err := nnRun("MatMul", 13, nil, a, b); err == nil {
			t.Errorf("MatMul %v·%v: no error", bad[0], bad[1])
		}
	}
}

func TestMatMulRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	cases := [][2][]int64{
		{{13}, {13, 7}},
		{{5, 13}, {13}},
		{{1, 1}, {1, 1}},
		{{3, 5, 7}, {7, 4}},
		{{3, 1, 5, 7}, {2, 7, 4}},
		{{1, 7}, {4, 3, 7, 9}},
		{{2, 3, 127, 13}, {2, 3, 13, 33}},
		{{4, 1, 13}, {1, 13, 1}},
		{{2, 0, 3}, {3, 2}},
		{{2, 65, 130}, {1, 130, 70}},
	}
	for _, tc := range cases {
		a, b := nnRand(r, tc[0]...), nnRand(r, tc[1]...)
		y, err := nnRun("MatMul", 13, nil, a, b)
		if err != nil {
			t.Fatalf("%v·%v: %v", tc[0], tc[1], err)
		}
		shape, want := naiveMatMul(a, b)
		tol := opTol("MatMul")
		nnCheck(t, fmt.Sprint(tc[0], "·", tc[1]), y, shape, want, tol.Abs, tol.Rel)
	}
}

func TestMatMulTypes(t *testing.T) {
	a64, _ := graph.FromSlice(graph.Int64, []int64{2, 2, 2}, []int64{1, 2, 3, 4, 5, 6, 7, 8})
	b64, _ := graph.FromSlice(graph.Int64, []int64{2, 1}, []int64{1, -1})
	y, err := nnRun("MatMul", 13, nil, a64, b64)
	if err != nil {
		t.Fatal(err)
	}
	if y.DType != graph.Int64 {
		t.Fatalf("int64 MatMul gave %s", y.DType)
	}
	nnCheck(t, "int64", y, []int64{2, 2, 1}, []float32{-1, -1, -1, -1}, 0, 0)
	ad, _ := graph.FromSlice(graph.Double, []int64{1, 2}, []float64{1e-9, 1})
	bd, _ := graph.FromSlice(graph.Double, []int64{2, 1}, []float64{1, 1})
	y, err = nnRun("MatMul", 13, nil, ad, bd)
	if err != nil {
		t.Fatal(err)
	}
	if v := graph.View[float64](y)[0]; v != 1+1e-9 {
		t.Fatalf("float64 MatMul lost precision: %v", v)
	}
	h := graph.NewTensor(graph.Float16, []int64{2, 2})
	f32Commit(h, []float32{1, 2, 3, 4})
	y, err = nnRun("MatMul", 13, nil, h, h)
	if err != nil {
		t.Fatal(err)
	}
	nnCheck(t, "float16", y, []int64{2, 2}, []float32{7, 10, 15, 22}, 0, 0)
	s, _ := graph.FromSlice(graph.Int8, []int64{1}, []int8{1})
	if _, err := nnRun("MatMul", 13, nil, s, s); err == nil {
		t.Fatal("int8 MatMul: no error")
	}
}

func TestMatMulInteger(t *testing.T) {
	// The example of the ONNX MatMulInteger test.
	a, _ := graph.FromSlice(graph.Uint8, []int64{4, 3}, []uint8{11, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0})
	azp, _ := graph.FromSlice(graph.Uint8, nil, []uint8{12})
	b, _ := graph.FromSlice(graph.Uint8, []int64{3, 2}, []uint8{1, 4, 2, 5, 3, 6})
	bzp, _ := graph.FromSlice(graph.Uint8, nil, []uint8{0})
	y, err := nnRun("MatMulInteger", 10, nil, a, b, azp, bzp)
	if err != nil {
		t.Fatal(err)
	}
	if y.DType != graph.Int32 {
		t.Fatalf("MatMulInteger gave %s", y.DType)
	}
	nnCheck(t, "scalar zero points", y, []int64{4, 2}, []float32{-38, -83, -44, -98, -50, -113, -56, -128}, 0, 0)

	ai, _ := graph.FromSlice(graph.Int8, []int64{2, 2}, []int8{-1, 2, 3, -4})
	bi, _ := graph.FromSlice(graph.Int8, []int64{2, 2}, []int8{5, 6, 7, 8})
	azr, _ := graph.FromSlice(graph.Int8, []int64{2}, []int8{1, -1})
	bzc, _ := graph.FromSlice(graph.Int8, []int64{2}, []int8{5, 0})
	y, err = nnRun("MatMulInteger", 10, nil, ai, bi, azr, bzc)
	if err != nil {
		t.Fatal(err)
	}
	// A−zp = [[-2 1] [4 -3]], B−zp = [[0 6] [2 8]].
	nnCheck(t, "per-row and per-column zero points", y, []int64{2, 2}, []float32{2, -4, -6, 0}, 0, 0)
	bad, _ := graph.FromSlice(graph.Int8, []int64{3}, []int8{1, 2, 3})
	if _, err := nnRun("MatMulInteger", 10, nil, ai, bi, bad); err == nil {
		t.Fatal("mismatched zero point: no error")
	}
}
