package hostfallback

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

// convCase is a convolution configuration for the reference tests.
type convCase struct {
	x, w              []int64
	group             int
	stride, dil, pads []int64
	autoPad           string
	bias              bool
}

// nnIndex walks a row-major multi-index over sizes; it returns false after
// the last one.
func nnIndex(idx []int, sizes []int) bool {
	for d := len(idx) - 1; d >= 0; d-- {
		if idx[d]++; idx[d] < sizes[d] {
			return true
		}
		idx[d] = 0
	}
	return false
}

// naiveConv is the direct convolution by definition (batch, output
// channel, output position, input channel of the group, kernel tap).
func naiveConv(x, w, b *graph.Tensor, group int, stride, dil, padB, out []int) []float32 {
	xs, ws := x.Shape, w.Shape
	r := len(xs) - 2
	n, cin, m := int(xs[0]), int(xs[1]), int(ws[0])
	cg, mg := cin/group, m/group
	in, kern := make([]int, r), make([]int, r)
	for d := range r {
		in[d], kern[d] = int(xs[d+2]), int(ws[d+2])
	}
	xv, wv := graph.View[float32](x), graph.View[float32](w)
	var res []float32
	for b0 := range n {
		for mo := range m {
			grp := mo / mg
			o := make([]int, r)
			for {
				var s float64
				if b != nil {
					s = float64(graph.View[float32](b)[mo])
				}
				for ci := range cg {
					k := make([]int, r)
					for {
						xi, wi, inside := b0*cin+grp*cg+ci, mo*cg+ci, true
						for d := range r {
							i := o[d]*stride[d] + k[d]*dil[d] - padB[d]
							inside = inside && i >= 0 && i < in[d]
							xi = xi*in[d] + i
							wi = wi*kern[d] + k[d]
						}
						if inside {
							s += float64(xv[xi]) * float64(wv[wi])
						}
						if !nnIndex(k, kern) {
							break
						}
					}
				}
				res = append(res, float32(s))
				if !nnIndex(o, out) {
					break
				}
			}
		}
	}
	return res
}

func TestConvHandComputed(t *testing.T) {
	x := make([]float32, 25)
	for i := range x {
		x[i] = float32(i)
	}
	x5 := nnF32([]int64{1, 1, 5, 5}, x...)
	x4 := nnF32([]int64{1, 1, 4, 4}, x[:16]...)
	ones := nnF32([]int64{1, 1, 3, 3}, 1, 1, 1, 1, 1, 1, 1, 1, 1)
	tests := []struct {
		name  string
		x     *graph.Tensor
		attrs nnAttrs
		shape []int64
		want  []float32
	}{
		{"padding", x5, nnAttrs{"kernel_shape": []int64{3, 3}, "pads": []int64{1, 1, 1, 1}}, []int64{1, 1, 5, 5},
			[]float32{12, 21, 27, 33, 24, 33, 54, 63, 72, 51, 63, 99, 108, 117, 81, 93, 144, 153, 162, 111, 72, 111, 117, 123, 84}},
		{"no padding", x5, nil, []int64{1, 1, 3, 3}, []float32{54, 63, 72, 99, 108, 117, 144, 153, 162}},
		{"SAME_LOWER even", x5, nnAttrs{"auto_pad": "SAME_LOWER", "strides": []int64{2, 2}}, []int64{1, 1, 3, 3},
			[]float32{12, 27, 24, 63, 108, 81, 72, 117, 84}},
		{"SAME_UPPER odd", x4, nnAttrs{"auto_pad": "SAME_UPPER", "strides": []int64{2, 2}}, []int64{1, 1, 2, 2},
			[]float32{45, 39, 66, 50}},
		{"SAME_LOWER odd", x4, nnAttrs{"auto_pad": "SAME_LOWER", "strides": []int64{2, 2}}, []int64{1, 1, 2, 2},
			[]float32{10, 24, 51, 90}},
		{"asymmetric pads", x5, nnAttrs{"pads": []int64{1, 0, 1, 0}, "strides": []int64{2, 2}}, []int64{1, 1, 3, 2},
			[]float32{21, 33, 99, 117, 111, 123}},
		{"dilations", x5, nnAttrs{"dilations": []int64{2, 2}}, []int64{1, 1, 1, 1}, []float32{108}},
	}
	for _, tc := range tests {
		y, err := nnRun("Conv", 11, tc.attrs, tc.x, ones)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		nnCheck(t, tc.name, y, tc.shape, tc.want, 0, 0)
	}
	y, err := nnRun("Conv", 11, nnAttrs{"group": 2}, nnF32([]int64{1, 2, 1, 2}, 1, 2, 3, 4), nnF32([]int64{2, 1, 1, 1}, 10, 100), nnF32([]int64{2}, 0.5, -1))
	if err != nil {
		t.Fatal(err)
	}
	nnCheck(t, "depthwise 1×1 with bias", y, []int64{1, 2, 1, 2}, []float32{10.5, 20.5, 299, 399}, 0, 0)
	bad := []struct {
		name  string
		attrs nnAttrs
		x, w  []int64
	}{
		{"channels", nil, []int64{1, 3, 4, 4}, []int64{2, 2, 3, 3}},
		{"group", nnAttrs{"group": 2}, []int64{1, 3, 4, 4}, []int64{2, 1, 3, 3}},
		{"kernel too big", nil, []int64{1, 1, 2, 2}, []int64{1, 1, 3, 3}},
		{"rank", nil, []int64{1, 1, 4}, []int64{1, 1, 3, 3}},
		{"kernel_shape", nnAttrs{"kernel_shape": []int64{2, 2}}, []int64{1, 1, 4, 4}, []int64{1, 1, 3, 3}},
		{"pads length", nnAttrs{"pads": []int64{1, 1}}, []int64{1, 1, 4, 4}, []int64{1, 1, 3, 3}},
		{"strides zero", nnAttrs{"strides": []int64{0, 1}}, []int64{1, 1, 4, 4}, []int64{1, 1, 3, 3}},
		{"auto_pad", nnAttrs{"auto_pad": "SAME"}, []int64{1, 1, 4, 4}, []int64{1, 1, 3, 3}},
	}
	for _, tc := range bad {
		_, err := nnRun("Conv", 11, tc.attrs, graph.NewTensor(graph.Float, tc.x), graph.NewTensor(graph.Float, tc.w))
		if err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// convExpect runs tc through Conv and the naive reference, and reports
// whether an axis splits an odd SAME padding (the begin and end pads
// differ).
func convExpect(t *testing.T, r *rand.Rand, tc convCase) (oddSame bool) {
	t.Helper()
	x, w := nnRand(r, tc.x...), nnRand(r, tc.w...)
	var b *graph.Tensor
	ins := []*graph.Tensor{x, w}
	if tc.bias {
		b = nnRand(r, tc.w[0])
		ins = append(ins, b)
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
		in, span := int(tc.x[d+2]), (int(tc.w[d+2])-1)*dil[d]+1
		pb, pe := 0, 0
		switch {
		case tc.autoPad == "SAME_UPPER" || tc.autoPad == "SAME_LOWER":
			out[d] = (in + stride[d] - 1) / stride[d]
			total := max(0, (out[d]-1)*stride[d]+span-in)
			pb, pe = total/2, total-total/2
			if tc.autoPad == "SAME_LOWER" {
				pb, pe = pe, pb
			}
			oddSame = oddSame || total%2 == 1
			attrs["auto_pad"] = tc.autoPad
		case tc.pads != nil:
			pb, pe = int(tc.pads[d]), int(tc.pads[d+rank])
			attrs["pads"] = tc.pads
		}
		padB[d] = pb
		out[d] = (in+pb+pe-span)/stride[d] + 1
	}
	y, err := nnRun("Conv", 11, attrs, ins...)
	if err != nil {
		t.Fatalf("%+v: %v", tc, err)
	}
	want := naiveConv(x, w, b, tc.group, stride, dil, padB, out)
	shape := convShape([]int64{tc.x[0], tc.w[0]}, out)
	tol := opTol("Conv")
	nnCheck(t, fmt.Sprintf("%+v", tc), y, shape, want, tol.Abs, tol.Rel)
	return oddSame
}

// TestConvRandom checks Conv against the naive reference over ranks 1 to
// 3, groups, strides, dilations, pads and auto_pad, SAME_UPPER and
// SAME_LOWER each with an odd total padding on some axis (the extra pad
// goes at the end for SAME_UPPER, at the beginning for SAME_LOWER).
func TestConvRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	cases := []convCase{
		{x: []int64{1, 1, 13}, w: []int64{1, 1, 3}},
		{x: []int64{2, 3, 127}, w: []int64{4, 3, 5}, stride: []int64{2}, pads: []int64{2, 1}, bias: true},
		{x: []int64{1, 4, 33}, w: []int64{6, 2, 3}, group: 2, dil: []int64{3}, autoPad: "SAME_UPPER"},
		{x: []int64{1, 3, 13, 13}, w: []int64{5, 3, 3, 3}, pads: []int64{1, 0, 2, 1}, bias: true},
		{x: []int64{2, 4, 13, 11}, w: []int64{6, 2, 3, 2}, group: 2, stride: []int64{2, 3}, dil: []int64{2, 1}, pads: []int64{0, 2, 1, 0}},
		{x: []int64{1, 8, 9, 9}, w: []int64{8, 1, 3, 3}, group: 8, pads: []int64{1, 1, 1, 1}, bias: true},
		{x: []int64{2, 6, 13, 13}, w: []int64{12, 1, 5, 5}, group: 6, stride: []int64{2, 2}, dil: []int64{1, 2}, autoPad: "SAME_LOWER"},
		{x: []int64{1, 3, 7, 7}, w: []int64{3, 1, 3, 3}, group: 3, stride: []int64{3, 2}, pads: []int64{3, 0, 0, 2}},
		{x: []int64{1, 1, 13, 13}, w: []int64{4, 1, 3, 3}},
		// Strides far past the plane: the depthwise path's polyphase
		// scratch would take 2^42 floats (the process died of out of
		// memory; found by the hostile sweep), the other paths none.
		{x: []int64{1, 1, 4, 4}, w: []int64{1, 1, 2, 2}, stride: []int64{1 << 20, 1 << 20}},
		{x: []int64{1, 2, 5, 6}, w: []int64{2, 1, 2, 2}, group: 2, stride: []int64{1, 1 << 30}, pads: []int64{1, 0, 0, 1}, bias: true},
		{x: []int64{1, 3, 9, 17}, w: []int64{3, 1, 3, 3}, group: 3, dil: []int64{1, 3}, pads: []int64{0, 4, 2, 1}, bias: true},
		{x: []int64{1, 2, 5, 4}, w: []int64{2, 1, 2, 3}, group: 2, dil: []int64{1, 3}, pads: []int64{1, 3, 0, 3}},
		{x: []int64{3, 16, 13, 7}, w: []int64{24, 16, 1, 1}, bias: true},
		{x: []int64{1, 16, 13, 7}, w: []int64{24, 4, 1, 1}, group: 4},
		{x: []int64{1, 8, 10, 10}, w: []int64{4, 8, 1, 1}, stride: []int64{2, 2}},
		// 1×1 planes (squeeze-and-excitation), grouped or not.
		{x: []int64{2, 40, 1, 1}, w: []int64{24, 40, 1, 1}, bias: true},
		{x: []int64{1, 16, 1, 1}, w: []int64{8, 4, 1, 1}, group: 4},
		{x: []int64{1, 12, 1, 3}, w: []int64{30, 12, 1, 1}, bias: true},
		{x: []int64{1, 32, 40, 40}, w: []int64{16, 32, 3, 3}, pads: []int64{1, 1, 1, 1}, bias: true},
		{x: []int64{1, 2, 5, 6, 7}, w: []int64{3, 2, 3, 2, 3}, pads: []int64{1, 0, 1, 1, 1, 0}, stride: []int64{1, 2, 1}},
		{x: []int64{1, 4, 5, 5, 5}, w: []int64{4, 1, 3, 3, 3}, group: 4, dil: []int64{2, 1, 1}, autoPad: "SAME_UPPER", bias: true},
		{x: []int64{2, 2, 9}, w: []int64{2, 2, 1}, autoPad: "VALID"},
		{x: []int64{0, 2, 9}, w: []int64{2, 2, 1}},
		{x: []int64{1, 3, 12, 13}, w: []int64{4, 3, 4, 2}, autoPad: "SAME_UPPER", bias: true},
		{x: []int64{2, 4, 13, 10}, w: []int64{6, 2, 4, 2}, group: 2, stride: []int64{2, 1}, autoPad: "SAME_LOWER"},
		{x: []int64{1, 2, 12}, w: []int64{3, 2, 2}, autoPad: "SAME_LOWER", bias: true},
		// Depthwise 3×3 rows wide enough for the vector kernels.
		{x: []int64{1, 4, 9, 37}, w: []int64{4, 1, 3, 3}, group: 4, pads: []int64{1, 1, 1, 1}, bias: true},
		{x: []int64{1, 3, 12, 56}, w: []int64{3, 1, 3, 3}, group: 3, stride: []int64{2, 2}, pads: []int64{1, 1, 1, 1}},
		{x: []int64{1, 2, 7, 41}, w: []int64{4, 1, 3, 3}, group: 2, stride: []int64{1, 2}, pads: []int64{0, 2, 1, 0}},
		{x: []int64{1, 2, 5, 30}, w: []int64{2, 1, 3, 3}, group: 2, pads: []int64{0, 3, 0, 3}},
	}
	odd := map[string]bool{}
	for _, tc := range cases {
		if tc.group == 0 {
			tc.group = 1
		}
		if convExpect(t, r, tc) {
			odd[tc.autoPad] = true
		}
	}
	if !odd["SAME_UPPER"] || !odd["SAME_LOWER"] {
		t.Errorf("odd SAME padding splits tested: %v, want SAME_UPPER and SAME_LOWER", odd)
	}
}

// TestConvKernels runs the random and tiled cases with each GEMM kernel
// this CPU has, the packed-panel im2col path included; the log says which
// kernels ran.
func TestConvKernels(t *testing.T) {
	best := gemmBest
	defer func() { gemmBest = best }()
	eachSgemmKernel(t, func(t *testing.T, kn *sgemmKernel) {
		gemmBest = kn
		TestConvRandom(t)
		TestConvTiled(t)
	})
}

func TestConvTiled(t *testing.T) {
	// Enough patch rows and positions that im2col splits the output into
	// several tiles.
	r := rand.New(rand.NewPCG(9, 10))
	convExpect(t, r, convCase{x: []int64{1, 40, 30, 30}, w: []int64{8, 40, 5, 5}, group: 1, pads: []int64{2, 2, 2, 2}})
	convExpect(t, r, convCase{x: []int64{3, 32, 20, 300}, w: []int64{8, 16, 3, 3}, group: 2, stride: []int64{1, 2}})
}

func TestConvTypes(t *testing.T) {
	for _, dt := range []graph.DType{graph.Double, graph.Float16, graph.BFloat16} {
		x := graph.NewTensor(dt, []int64{1, 1, 2, 2})
		w := graph.NewTensor(dt, []int64{1, 1, 2, 2})
		f32Commit(x, []float32{1, 2, 3, 4})
		f32Commit(w, []float32{1, 1, 1, 1})
		y, err := nnRun("Conv", 11, nil, x, w)
		if err != nil {
			t.Fatal(err)
		}
		if y.DType != dt {
			t.Fatalf("%s Conv gave %s", dt, y.DType)
		}
		nnCheck(t, dt.String(), y, []int64{1, 1, 1, 1}, []float32{10}, 0, 0)
	}
	x, _ := graph.FromSlice(graph.Int32, []int64{1, 1, 1}, []int32{1})
	if _, err := nnRun("Conv", 11, nil, x, x); err == nil {
		t.Fatal("int32 Conv: no error")
	}
}

func TestConvInteger(t *testing.T) {
	x, _ := graph.FromSlice(graph.Uint8, []int64{1, 1, 3, 3}, []uint8{2, 3, 4, 5, 6, 7, 8, 9, 10})
	w, _ := graph.FromSlice(graph.Uint8, []int64{1, 1, 2, 2}, []uint8{1, 1, 1, 1})
	zp, _ := graph.FromSlice(graph.Uint8, nil, []uint8{1})
	y, err := nnRun("ConvInteger", 10, nil, x, w, zp)
	if err != nil {
		t.Fatal(err)
	}
	nnCheck(t, "no padding", y, []int64{1, 1, 2, 2}, []float32{12, 16, 24, 28}, 0, 0)
	y, err = nnRun("ConvInteger", 10, nnAttrs{"pads": []int64{1, 1, 1, 1}}, x, w, zp)
	if err != nil {
		t.Fatal(err)
	}
	nnCheck(t, "padding", y, []int64{1, 1, 4, 4}, []float32{1, 3, 5, 3, 5, 12, 16, 9, 11, 24, 28, 15, 7, 15, 17, 9}, 0, 0)
	xi, _ := graph.FromSlice(graph.Int8, []int64{1, 2, 1, 2}, []int8{-1, 2, 3, -4})
	wi, _ := graph.FromSlice(graph.Int8, []int64{2, 2, 1, 1}, []int8{1, 2, 3, 4})
	wzp, _ := graph.FromSlice(graph.Int8, []int64{2}, []int8{1, 3})
	y, err = nnRun("ConvInteger", 10, nil, xi, wi, nil, wzp)
	if err != nil {
		t.Fatal(err)
	}
	// W − zp per output channel: [[0 1] [0 1]].
	nnCheck(t, "per-channel w zero point", y, []int64{1, 2, 1, 2}, []float32{3, -4, 3, -4}, 0, 0)
}
