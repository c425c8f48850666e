package hostfallback

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

// naiveConvTranspose scatters every input value times every tap of its
// filters to the output position it reaches, by definition.
func naiveConvTranspose(x, w, b *graph.Tensor, group int, stride, dil, padB, out []int) []float32 {
	xs, ws := x.Shape, w.Shape
	r := len(xs) - 2
	n, cin, mg := int(xs[0]), int(xs[1]), int(ws[1])
	cg, m := cin/group, mg*group
	in, kern := make([]int, r), make([]int, r)
	for d := range r {
		in[d], kern[d] = int(xs[d+2]), int(ws[d+2])
	}
	outSize, kSize, inSize := convProd(out), convProd(kern), convProd(in)
	res := make([]float64, n*m*outSize)
	if b != nil {
		for i := range res {
			res[i] = float64(graph.View[float32](b)[(i/outSize)%m])
		}
	}
	xv, wv := graph.View[float32](x), graph.View[float32](w)
	for b0 := range n {
		for ci := range cin {
			grp := ci / cg
			i := make([]int, r)
			for s := range inSize {
				for mo := range mg {
					k := make([]int, r)
					for t := range kSize {
						oi, inside := 0, true
						for d := range r {
							o := i[d]*stride[d] + k[d]*dil[d] - padB[d]
							inside = inside && o >= 0 && o < out[d]
							oi = oi*out[d] + o
						}
						if inside {
							res[(b0*m+grp*mg+mo)*outSize+oi] += float64(xv[(b0*cin+ci)*inSize+s]) * float64(wv[(ci*mg+mo)*kSize+t])
						}
						nnIndex(k, kern)
					}
				}
				nnIndex(i, in)
			}
		}
	}
	out32 := make([]float32, len(res))
	for i, v := range res {
		out32[i] = float32(v)
	}
	return out32
}

func TestConvTransposeHandComputed(t *testing.T) {
	x := nnF32([]int64{1, 1, 3, 3}, 0, 1, 2, 3, 4, 5, 6, 7, 8)
	w := nnF32([]int64{1, 2, 3, 3}, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)
	twice := func(v ...float32) []float32 { return append(v, v...) }
	tests := []struct {
		name  string
		attrs nnAttrs
		shape []int64
		want  []float32
	}{
		{"plain", nil, []int64{1, 2, 5, 5}, twice(
			0, 1, 3, 3, 2, 3, 8, 15, 12, 7, 9, 21, 36, 27, 15, 9, 20, 33, 24, 13, 6, 13, 21, 15, 8)},
		{"pads", nnAttrs{"strides": []int64{3, 2}, "pads": []int64{1, 2, 1, 2}}, []int64{1, 2, 7, 3}, twice(
			1, 1, 3, 1, 1, 3, 7, 4, 9, 7, 4, 9, 7, 4, 9, 13, 7, 15, 13, 7, 15)},
		{"output_shape", nnAttrs{"strides": []int64{3, 2}, "output_shape": []int64{10, 8}}, []int64{1, 2, 10, 8}, twice(
			0, 0, 1, 1, 3, 2, 2, 0, 0, 0, 1, 1, 3, 2, 2, 0, 0, 0, 1, 1, 3, 2, 2, 0,
			3, 3, 7, 4, 9, 5, 5, 0, 3, 3, 7, 4, 9, 5, 5, 0, 3, 3, 7, 4, 9, 5, 5, 0,
			6, 6, 13, 7, 15, 8, 8, 0, 6, 6, 13, 7, 15, 8, 8, 0, 6, 6, 13, 7, 15, 8, 8, 0,
			0, 0, 0, 0, 0, 0, 0, 0)},
		{"output_padding", nnAttrs{"strides": []int64{3, 2}, "output_padding": []int64{1, 1}}, []int64{1, 2, 10, 8}, nil},
		{"SAME_UPPER", nnAttrs{"auto_pad": "SAME_UPPER", "strides": []int64{2, 2}}, []int64{1, 2, 6, 6}, twice(
			0, 0, 1, 1, 3, 2, 0, 0, 1, 1, 3, 2, 3, 3, 8, 5, 12, 7, 3, 3, 7, 4, 9, 5, 9, 9, 20, 11, 24, 13, 6, 6, 13, 7, 15, 8)},
	}
	for i, tc := range tests {
		if tc.want == nil {
			tc.want = tests[i-1].want
		}
		y, err := nnRun("ConvTranspose", 11, tc.attrs, x, w)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		nnCheck(t, tc.name, y, tc.shape, tc.want, 0, 0)
	}
	xd := nnF32([]int64{1, 1, 3, 3}, 3, 8, 1, 9, 5, 7, 3, 2, 6)
	wd := nnF32([]int64{1, 1, 2, 2}, 7, 2, 1, 9)
	y, err := nnRun("ConvTranspose", 11, nnAttrs{"dilations": []int64{2, 2}}, xd, wd, nnF32([]int64{1}, 0.5))
	if err != nil {
		t.Fatal(err)
	}
	nnCheck(t, "dilations with bias", y, []int64{1, 1, 5, 5}, []float32{
		21.5, 56.5, 13.5, 16.5, 2.5, 63.5, 35.5, 67.5, 10.5, 14.5, 24.5, 22.5, 76.5, 76.5, 21.5,
		9.5, 5.5, 88.5, 45.5, 63.5, 3.5, 2.5, 33.5, 18.5, 54.5}, 0, 0)
	bad := []struct {
		name  string
		attrs nnAttrs
		x, w  []int64
	}{
		{"channels", nil, []int64{1, 2, 3, 3}, []int64{3, 1, 3, 3}},
		{"group", nnAttrs{"group": 2}, []int64{1, 3, 3, 3}, []int64{3, 1, 3, 3}},
		{"output_shape rank", nnAttrs{"output_shape": []int64{5}}, []int64{1, 1, 3, 3}, []int64{1, 1, 3, 3}},
		{"negative output", nnAttrs{"pads": []int64{3, 3, 3, 3}}, []int64{1, 1, 1, 1}, []int64{1, 1, 2, 2}},
	}
	for _, tc := range bad {
		if _, err := nnRun("ConvTranspose", 11, tc.attrs, graph.NewTensor(graph.Float, tc.x), graph.NewTensor(graph.Float, tc.w)); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

func TestConvTransposeRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	type tcase struct {
		x, w              []int64
		group             int
		stride, dil, pads []int64
		outPad            []int64
		bias              bool
	}
	cases := []tcase{
		{x: []int64{1, 1, 13}, w: []int64{1, 1, 3}},
		{x: []int64{2, 3, 13}, w: []int64{3, 2, 4}, stride: []int64{3}, pads: []int64{1, 2}, outPad: []int64{2}, bias: true},
		{x: []int64{1, 4, 7, 9}, w: []int64{4, 3, 3, 2}, group: 2, stride: []int64{2, 1}, dil: []int64{1, 2}, pads: []int64{0, 1, 2, 0}},
		{x: []int64{2, 6, 5, 5}, w: []int64{6, 1, 3, 3}, group: 6, stride: []int64{2, 2}, pads: []int64{1, 1, 1, 1}, outPad: []int64{1, 0}, bias: true},
		{x: []int64{1, 8, 13, 13}, w: []int64{8, 5, 1, 1}},
		{x: []int64{1, 2, 3, 4, 5}, w: []int64{2, 3, 2, 3, 2}, stride: []int64{2, 1, 3}, pads: []int64{1, 0, 0, 0, 1, 1}},
		{x: []int64{1, 64, 40, 40}, w: []int64{64, 4, 4, 4}, stride: []int64{2, 2}, pads: []int64{1, 1, 1, 1}, bias: true},
	}
	for _, tc := range cases {
		if tc.group == 0 {
			tc.group = 1
		}
		rank := len(tc.x) - 2
		attrs := nnAttrs{"group": tc.group}
		stride, dil, padB, out := make([]int, rank), make([]int, rank), make([]int, rank), make([]int, rank)
		for d := range rank {
			stride[d], dil[d] = 1, 1
			if tc.stride != nil {
				stride[d] = int(tc.stride[d])
				attrs["strides"] = tc.stride
			}
			if tc.dil != nil {
				dil[d] = int(tc.dil[d])
				attrs["dilations"] = tc.dil
			}
			op, pe := 0, 0
			if tc.pads != nil {
				padB[d], pe = int(tc.pads[d]), int(tc.pads[d+rank])
				attrs["pads"] = tc.pads
			}
			if tc.outPad != nil {
				op = int(tc.outPad[d])
				attrs["output_padding"] = tc.outPad
			}
			out[d] = stride[d]*(int(tc.x[d+2])-1) + op + (int(tc.w[d+2])-1)*dil[d] + 1 - padB[d] - pe
		}
		x, w := nnRand(r, tc.x...), nnRand(r, tc.w...)
		ins := []*graph.Tensor{x, w}
		var b *graph.Tensor
		if tc.bias {
			b = nnRand(r, tc.w[1]*int64(tc.group))
			ins = append(ins, b)
		}
		y, err := nnRun("ConvTranspose", 11, attrs, ins...)
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		want := naiveConvTranspose(x, w, b, tc.group, stride, dil, padB, out)
		tol := opTol("ConvTranspose")
		nnCheck(t, fmt.Sprintf("%+v", tc), y, convShape([]int64{tc.x[0], tc.w[1] * int64(tc.group)}, out), want, tol.Abs, tol.Rel)
	}
}
