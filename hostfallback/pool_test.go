package hostfallback

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

// poolCase is a pooling configuration for the reference tests.
type poolCase struct {
	x                         []int64
	kernel, stride, dil, pads []int64
	ceil, includePad          bool
}

// naivePool is the window sweep by definition: kind "max" (with row-major
// indices), "avg" or "lp2".
func naivePool(x *graph.Tensor, tc poolCase, kind string) (shape []int64, vals []float32, idx []int64) {
	r := len(tc.x) - 2
	in, out := make([]int, r), make([]int, r)
	kern, stride, dil, pb, pe := make([]int, r), make([]int, r), make([]int, r), make([]int, r), make([]int, r)
	shape = append(shape, tc.x[:2]...)
	for d := range r {
		in[d], kern[d], stride[d], dil[d] = int(tc.x[d+2]), int(tc.kernel[d]), 1, 1
		if tc.stride != nil {
			stride[d] = int(tc.stride[d])
		}
		if tc.dil != nil {
			dil[d] = int(tc.dil[d])
		}
		if tc.pads != nil {
			pb[d], pe[d] = int(tc.pads[d]), int(tc.pads[d+r])
		}
		span := (kern[d]-1)*dil[d] + 1
		room := in[d] + pb[d] + pe[d] - span
		out[d] = room/stride[d] + 1
		if tc.ceil && room%stride[d] != 0 {
			out[d]++
			if (out[d]-1)*stride[d] >= in[d]+pb[d] {
				out[d]--
			}
		}
		shape = append(shape, int64(out[d]))
	}
	xv := graph.View[float32](x)
	inSize := convProd(in)
	for plane := range int(tc.x[0] * tc.x[1]) {
		o := make([]int, r)
		for {
			best, at := float32(math.Inf(-1)), -1
			var sum, sq float64
			inside, padded := 0, 0
			k := make([]int, r)
			for {
				flat, ok, okPad := 0, true, true
				for d := range r {
					i := o[d]*stride[d] + k[d]*dil[d] - pb[d]
					ok = ok && i >= 0 && i < in[d]
					okPad = okPad && i < in[d]+pe[d]
					flat = flat*in[d] + i
				}
				if okPad {
					padded++
				}
				if ok {
					v := xv[plane*inSize+flat]
					inside++
					sum += float64(v)
					sq += float64(v) * float64(v)
					if at < 0 || v > best {
						best, at = v, plane*inSize+flat
					}
				}
				if !nnIndex(k, kern) {
					break
				}
			}
			switch kind {
			case "max":
				vals, idx = append(vals, best), append(idx, int64(at))
			case "avg":
				n := inside
				if tc.includePad {
					n = padded
				}
				vals = append(vals, float32(sum/float64(n)))
			case "lp2":
				vals = append(vals, float32(math.Sqrt(sq)))
			}
			if !nnIndex(o, out) {
				break
			}
		}
	}
	return shape, vals, idx
}

func (tc poolCase) attrs() nnAttrs {
	a := nnAttrs{"kernel_shape": tc.kernel}
	if tc.stride != nil {
		a["strides"] = tc.stride
	}
	if tc.dil != nil {
		a["dilations"] = tc.dil
	}
	if tc.pads != nil {
		a["pads"] = tc.pads
	}
	if tc.ceil {
		a["ceil_mode"] = 1
	}
	if tc.includePad {
		a["count_include_pad"] = 1
	}
	return a
}

func TestPoolHandComputed(t *testing.T) {
	x := make([]float32, 16)
	for i := range x {
		x[i] = float32(i + 1)
	}
	x4 := nnF32([]int64{1, 1, 4, 4}, x...)
	tests := []struct {
		op    string
		opset int64
		attrs nnAttrs
		shape []int64
		want  []float32
	}{
		{"MaxPool", 12, nnAttrs{"kernel_shape": []int64{3, 3}, "strides": []int64{2, 2}, "ceil_mode": 1}, []int64{1, 1, 2, 2}, []float32{11, 12, 15, 16}},
		{"MaxPool", 12, nnAttrs{"kernel_shape": []int64{2, 2}, "dilations": []int64{2, 2}}, []int64{1, 1, 2, 2}, []float32{11, 12, 15, 16}},
		{"MaxPool", 12, nnAttrs{"kernel_shape": []int64{2, 2}, "auto_pad": "SAME_UPPER"}, []int64{1, 1, 4, 4},
			[]float32{6, 7, 8, 8, 10, 11, 12, 12, 14, 15, 16, 16, 14, 15, 16, 16}},
		{"AveragePool", 11, nnAttrs{"kernel_shape": []int64{3, 3}, "pads": []int64{1, 1, 1, 1}, "strides": []int64{3, 3}}, []int64{1, 1, 2, 2},
			[]float32{3.5, 5.5, 11.5, 13.5}},
		{"AveragePool", 11, nnAttrs{"kernel_shape": []int64{3, 3}, "pads": []int64{1, 1, 1, 1}, "strides": []int64{3, 3}, "count_include_pad": 1}, []int64{1, 1, 2, 2},
			[]float32{14.0 / 9, 22.0 / 9, 46.0 / 9, 54.0 / 9}},
		{"AveragePool", 11, nnAttrs{"kernel_shape": []int64{3, 3}, "strides": []int64{2, 2}, "ceil_mode": 1}, []int64{1, 1, 2, 2}, []float32{6, 7.5, 12, 13.5}},
		{"LpPool", 11, nnAttrs{"kernel_shape": []int64{4, 4}, "p": 1}, []int64{1, 1, 1, 1}, []float32{136}},
		{"LpPool", 1, nnAttrs{"kernel_shape": []int64{1, 2}, "strides": []int64{4, 2}, "p": 2.0}, []int64{1, 1, 1, 2}, []float32{float32(math.Sqrt(5)), 5}},
		{"GlobalMaxPool", 1, nil, []int64{1, 1, 1, 1}, []float32{16}},
		{"GlobalAveragePool", 1, nil, []int64{1, 1, 1, 1}, []float32{8.5}},
		{"GlobalLpPool", 2, nnAttrs{"p": 1}, []int64{1, 1, 1, 1}, []float32{136}},
	}
	for _, tc := range tests {
		y, err := nnRun(tc.op, tc.opset, tc.attrs, x4)
		if err != nil {
			t.Fatalf("%s %v: %v", tc.op, tc.attrs, err)
		}
		nnCheck(t, fmt.Sprint(tc.op, tc.attrs), y, tc.shape, tc.want, 1e-6, 1e-6)
	}
	bad := []struct {
		op    string
		attrs nnAttrs
	}{
		{"MaxPool", nil},
		{"MaxPool", nnAttrs{"kernel_shape": []int64{5, 5}}},
		{"AveragePool", nnAttrs{"kernel_shape": []int64{2}}},
		{"LpPool", nnAttrs{"kernel_shape": []int64{2, 2}, "p": 0}},
	}
	for _, tc := range bad {
		if _, err := nnRun(tc.op, 11, tc.attrs, x4); err == nil {
			t.Errorf("%s %v: no error", tc.op, tc.attrs)
		}
	}
}

func TestMaxPoolIndices(t *testing.T) {
	x := nnF32([]int64{1, 2, 2, 3}, 1, 9, 2, 3, 4, 8, 7, 1, 1, 2, 9, 1)
	for _, tc := range []struct {
		order int
		want  []float32
	}{{0, []float32{1, 1, 10, 10}}, {1, []float32{2, 2, 9, 9}}} {
		out, err := nnRunOuts("MaxPool", 12, nnAttrs{"kernel_shape": []int64{2, 2}, "storage_order": tc.order}, []string{"y", "i"}, x)
		if err != nil {
			t.Fatal(err)
		}
		nnCheck(t, "values", out[0], []int64{1, 2, 1, 2}, []float32{9, 9, 9, 9}, 0, 0)
		nnCheck(t, fmt.Sprint("indices, storage_order ", tc.order), out[1], []int64{1, 2, 1, 2}, tc.want, 0, 0)
	}
	i8, _ := graph.FromSlice(graph.Int8, []int64{1, 1, 1, 4}, []int8{-5, -3, 7, -128})
	y, err := nnRun("MaxPool", 12, nnAttrs{"kernel_shape": []int64{1, 2}, "pads": []int64{0, 1, 0, 1}, "strides": []int64{1, 2}}, i8)
	if err != nil {
		t.Fatal(err)
	}
	nnCheck(t, "int8", y, []int64{1, 1, 1, 3}, []float32{-5, 7, -128}, 0, 0)
	nan := float32(math.NaN())
	y, err = nnRun("MaxPool", 12, nnAttrs{"kernel_shape": []int64{3}}, nnF32([]int64{1, 1, 3}, nan, 2, nan))
	if err != nil {
		t.Fatal(err)
	}
	nnCheck(t, "NaN skipped", y, []int64{1, 1, 1}, []float32{2}, 0, 0)
}

func TestPoolRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	cases := []poolCase{
		{x: []int64{1, 1, 13}, kernel: []int64{3}},
		{x: []int64{2, 3, 13}, kernel: []int64{4}, stride: []int64{3}, pads: []int64{2, 1}, ceil: true},
		{x: []int64{1, 2, 13, 11}, kernel: []int64{3, 2}, stride: []int64{2, 3}, dil: []int64{2, 1}, pads: []int64{1, 0, 2, 1}},
		{x: []int64{1, 3, 12, 12}, kernel: []int64{3, 3}, stride: []int64{2, 2}, pads: []int64{1, 1, 1, 1}, ceil: true, includePad: true},
		{x: []int64{2, 1, 7, 9}, kernel: []int64{2, 3}, stride: []int64{2, 2}, dil: []int64{3, 2}, ceil: true},
		{x: []int64{1, 2, 5, 6, 7}, kernel: []int64{2, 3, 2}, stride: []int64{1, 2, 2}, pads: []int64{1, 0, 1, 0, 1, 1}, includePad: true},
		{x: []int64{1, 1, 127, 1}, kernel: []int64{5, 1}, stride: []int64{4, 1}, pads: []int64{2, 0, 2, 0}},
	}
	for _, tc := range cases {
		x := nnRand(r, tc.x...)
		shape, want, wantIdx := naivePool(x, tc, "max")
		out, err := nnRunOuts("MaxPool", 12, tc.attrs(), []string{"y", "i"}, x)
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		nnCheck(t, fmt.Sprintf("max %+v", tc), out[0], shape, want, 0, 0)
		for i, v := range graph.View[int64](out[1]) {
			if v != wantIdx[i] {
				t.Fatalf("max %+v: index %d = %d, want %d", tc, i, v, wantIdx[i])
			}
		}
		// Without Indices, 2-D pooling takes its own path.
		y, err := nnRun("MaxPool", 12, tc.attrs(), x)
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		nnCheck(t, fmt.Sprintf("max without indices %+v", tc), y, shape, want, 0, 0)
		shape, want, _ = naivePool(x, tc, "avg")
		y, err = nnRun("AveragePool", 19, tc.attrs(), x)
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		avg := opTol("AveragePool")
		nnCheck(t, fmt.Sprintf("avg %+v", tc), y, shape, want, avg.Abs, avg.Rel)
		shape, want, _ = naivePool(x, tc, "lp2")
		a := tc.attrs()
		delete(a, "count_include_pad")
		y, err = nnRun("LpPool", 18, a, x)
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		lp := opTol("LpPool")
		nnCheck(t, fmt.Sprintf("lp %+v", tc), y, shape, want, lp.Abs, lp.Rel)
	}
}

func TestGlobalPoolTypes(t *testing.T) {
	x := graph.NewTensor(graph.Float16, []int64{2, 1, 3})
	f32Commit(x, []float32{1, 2, 3, -4, 5, 0.5})
	y, err := nnRun("GlobalAveragePool", 1, nil, x)
	if err != nil {
		t.Fatal(err)
	}
	if y.DType != graph.Float16 {
		t.Fatalf("got %s", y.DType)
	}
	nnCheck(t, "float16", y, []int64{2, 1, 1}, []float32{2, 0.5}, 0, 0)
	y, err = nnRun("GlobalLpPool", 2, nil, nnF32([]int64{1, 1, 2}, 3, -4))
	if err != nil {
		t.Fatal(err)
	}
	nnCheck(t, "lp default p=2", y, []int64{1, 1, 1}, []float32{5}, 0, 0)
}

func TestMaxUnpool(t *testing.T) {
	x := nnF32([]int64{1, 1, 2, 2}, 5, 6, 7, 8)
	i, _ := graph.FromSlice(graph.Int64, []int64{1, 1, 2, 2}, []int64{5, 7, 13, 15})
	attrs := nnAttrs{"kernel_shape": []int64{2, 2}, "strides": []int64{2, 2}}
	y, err := nnRun("MaxUnpool", 11, attrs, x, i)
	if err != nil {
		t.Fatal(err)
	}
	nnCheck(t, "default shape", y, []int64{1, 1, 4, 4}, []float32{0, 0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 0, 0, 7, 0, 8}, 0, 0)
	shape, _ := graph.FromSlice(graph.Int64, []int64{4}, []int64{1, 1, 5, 5})
	y, err = nnRun("MaxUnpool", 11, attrs, x, i, shape)
	if err != nil {
		t.Fatal(err)
	}
	nnCheck(t, "output_shape", y, []int64{1, 1, 5, 5}, []float32{
		0, 0, 0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 0, 0, 0, 0, 7, 0, 8, 0, 0, 0, 0, 0, 0}, 0, 0)
	bad, _ := graph.FromSlice(graph.Int64, []int64{1, 1, 2, 2}, []int64{5, 7, 13, 16})
	if _, err := nnRun("MaxUnpool", 11, attrs, x, bad); err == nil {
		t.Fatal("index out of range: no error")
	}
}

func TestMaxRoiPool(t *testing.T) {
	x := make([]float32, 2*4*4)
	for i := range x {
		x[i] = float32(i)
	}
	rois := nnF32([]int64{2, 5}, 0, 0, 0, 3, 3, 1, 1, 1, 2, 2)
	y, err := nnRun("MaxRoiPool", 1, nnAttrs{"pooled_shape": []int64{2, 2}}, nnF32([]int64{2, 1, 4, 4}, x...), rois)
	if err != nil {
		t.Fatal(err)
	}
	nnCheck(t, "rois", y, []int64{2, 1, 2, 2}, []float32{5, 7, 13, 15, 21, 22, 25, 26}, 0, 0)
	if _, err := nnRun("MaxRoiPool", 1, nnAttrs{"pooled_shape": []int64{2, 2}}, nnF32([]int64{2, 1, 4, 4}, x...), nnF32([]int64{1, 5}, 2, 0, 0, 1, 1)); err == nil {
		t.Fatal("bad batch index: no error")
	}
}
