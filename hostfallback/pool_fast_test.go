package hostfallback

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

// poolSpecials draws float32 values with many NaNs (of several payloads),
// infinities, signed zeros and ties, and some ordinary values.
func poolSpecials(r *rand.Rand, n int) []float32 {
	specials := []float32{
		float32(math.NaN()), math.Float32frombits(0x7fc00123), math.Float32frombits(0xffc00456),
		float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)), 1, -1,
		math.MaxFloat32, -math.MaxFloat32,
	}
	out := make([]float32, n)
	for i := range out {
		if r.IntN(2) == 0 {
			out[i] = specials[r.IntN(len(specials))]
		} else {
			out[i] = r.Float32()*4 - 2
		}
	}
	return out
}

// f32Bits is vals as bit patterns, for bit-exact comparisons.
func f32Bits(vals []float32) []uint32 {
	out := make([]uint32, len(vals))
	for i, v := range vals {
		out[i] = math.Float32bits(v)
	}
	return out
}

// TestPoolRowsMatchGo checks maxRows and meanRows bit for bit against
// their portable loops, on values full of NaNs, infinities and signed
// zeros, over lengths around the vector widths, meanRows with divisors of
// one to a few taps.
func TestPoolRowsMatchGo(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, k := range []struct {
		name     string
		vec, ref func(dst, src []float32, offs []int, d float32)
	}{
		{"maxRows", func(dst, src []float32, offs []int, _ float32) { maxRows(dst, src, offs) },
			func(dst, src []float32, offs []int, _ float32) { maxRowsGo(dst, src, offs) }},
		{"meanRows", meanRows, meanRowsGo},
	} {
		for range 300 {
			n, taps := 1+r.IntN(80), 1+r.IntN(12)
			src := poolSpecials(r, n+40)
			offs := make([]int, taps)
			for i := range offs {
				offs[i] = r.IntN(41)
			}
			d := float32(1 + r.IntN(taps))
			got, want := make([]float32, n+1), make([]float32, n+1)
			got[n], want[n] = 7, 7
			k.vec(got[:n], src, offs, d)
			k.ref(want[:n], src, offs, d)
			if !slices.Equal(f32Bits(got), f32Bits(want)) {
				t.Fatalf("%s n %d offs %v d %v: got %v, want %v", k.name, n, offs, d, got, want)
			}
		}
	}
}

// TestMaxPoolFastPath checks 2-D float32 MaxPool without Indices (the
// vectorised paths over padded planes and for the interior columns) bit
// for bit, but for NaN payloads, against the general path that MaxPool
// takes with Indices, on random geometries and inputs full of NaNs,
// infinities and signed zeros.
func TestMaxPoolFastPath(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	cases := []poolCase{
		{x: []int64{1, 4, 112, 112}, kernel: []int64{3, 3}, stride: []int64{2, 2}, pads: []int64{1, 1, 1, 1}},
		{x: []int64{1, 2, 30, 41}, kernel: []int64{3, 3}, stride: []int64{1, 1}, pads: []int64{1, 1, 1, 1}},
		{x: []int64{2, 1, 20, 70}, kernel: []int64{2, 2}, stride: []int64{2, 2}},
	}
	for i := range 90 {
		// A third on planes small enough that few columns are interior.
		cases = append(cases, randomPool2D(r, int64(3+5*min(i%3, 1))))
	}
	for _, tc := range cases {
		x := nnF32(tc.x, poolSpecials(r, int(graph.NumElements(tc.x)))...)
		ref, err := nnRunOuts("MaxPool", 12, tc.attrs(), []string{"y", "i"}, x)
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		got, err := nnRun("MaxPool", 12, tc.attrs(), x)
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		g, w := nanBits(f32Bits(graph.View[float32](got))), nanBits(f32Bits(graph.View[float32](ref[0])))
		if !slices.Equal(got.Shape, ref[0].Shape) || !slices.Equal(g, w) {
			t.Fatalf("%+v: shape %v, want %v; bits differ: %s", tc, got.Shape, ref[0].Shape, firstDiff(g, w))
		}
	}
}

// nanBits sets every NaN among bit patterns bits to the one of math.NaN
// and returns bits.
func nanBits(bits []uint32) []uint32 {
	for i, b := range bits {
		if b&0x7fffffff > 0x7f800000 {
			bits[i] = math.Float32bits(float32(math.NaN()))
		}
	}
	return bits
}

// randomPool2D draws a 2-D pooling of kernels up to 4×4, strides up to 3,
// dilations up to 2, pads under the kernel and either ceil mode, on planes
// of at least least rows and columns.
func randomPool2D(r *rand.Rand, least int64) poolCase {
	k := []int64{1 + r.Int64N(4), 1 + r.Int64N(4)}
	return poolCase{
		x:      []int64{1 + r.Int64N(2), 1 + r.Int64N(3), least + r.Int64N(30), least + r.Int64N(60)},
		kernel: k,
		stride: []int64{1 + r.Int64N(3), 1 + r.Int64N(3)},
		dil:    []int64{1 + r.Int64N(2), 1 + r.Int64N(2)},
		pads:   []int64{r.Int64N(k[0]), r.Int64N(k[1]), r.Int64N(k[0]), r.Int64N(k[1])},
		ceil:   r.IntN(2) == 0,
	}
}

// firstDiff describes the first position where a and b differ.
func firstDiff(a, b []uint32) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("at %d: %#x, want %#x", i, a[i], b[i])
		}
	}
	return fmt.Sprintf("lengths %d, %d", len(a), len(b))
}

// BenchmarkMaxPool times ResNet's 3×3, stride-2, padded max pooling,
// SqueezeNet's first, unpadded with ceil mode over odd planes, and the
// 3×3 stride-1 pooling of GoogLeNet's inception branches on 14×14 and
// 7×7 planes.
func BenchmarkMaxPool(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct {
		name           string
		ch, hw, stride int64
		pads           []int64
		ceil           int64
	}{{"resnet", 64, 112, 2, []int64{1, 1, 1, 1}, 0}, {"squeezenet", 64, 111, 2, []int64{0, 0, 0, 0}, 1}, {"googlenet14", 512, 14, 1, []int64{1, 1, 1, 1}, 1}, {"googlenet7", 832, 7, 1, []int64{1, 1, 1, 1}, 1}} {
		x := nnRand(r, 1, c.ch, c.hw, c.hw)
		attrs := nnAttrs{"kernel_shape": []int64{3, 3}, "strides": []int64{c.stride, c.stride}, "pads": c.pads, "ceil_mode": c.ceil}
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := nnRun("MaxPool", 12, attrs, x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSumF64 checks the float64 sum of GlobalAveragePool against the
// portable loop over lengths around the vector widths: the orders differ,
// so within a few float64 roundings of the sum of magnitudes, and equal
// for NaN and infinities.
func TestSumF64(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for n := range 150 {
		x := make([]float32, n)
		var mag float64
		for i := range x {
			x[i] = r.Float32()*200 - 100
			mag += math.Abs(float64(x[i]))
		}
		got, want := sumF64(x), sumF64Go(x)
		if math.Abs(got-want) > 1e-14*mag {
			t.Fatalf("n %d: sum %v, want %v", n, got, want)
		}
		if n > 0 {
			x[r.IntN(n)] = float32(math.Inf(1))
			if got, want := sumF64(x), sumF64Go(x); got != want {
				t.Fatalf("n %d with +Inf: sum %v, want %v", n, got, want)
			}
			x[r.IntN(n)] = float32(math.NaN())
			if got := sumF64(x); !math.IsNaN(got) {
				t.Fatalf("n %d with NaN: sum %v, want NaN", n, got)
			}
		}
	}
}

// TestAveragePool2D checks 2-D AveragePool (the interior columns tap by
// tap over whole rows, the rest window by window) bit for bit against the
// general N-D path, which the same pooling with a leading axis of size 1
// takes, on random geometries with and without count_include_pad and
// inputs with NaNs, infinities and signed zeros.
func TestAveragePool2D(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	cases := []poolCase{
		{x: []int64{1, 3, 56, 56}, kernel: []int64{2, 2}, stride: []int64{2, 2}},
		{x: []int64{1, 2, 30, 41}, kernel: []int64{3, 3}, stride: []int64{1, 1}, pads: []int64{1, 1, 1, 1}, includePad: true},
		{x: []int64{2, 1, 17, 35}, kernel: []int64{3, 3}, stride: []int64{2, 2}, pads: []int64{1, 1, 1, 1}, ceil: true},
	}
	for i := range 50 {
		tc := randomPool2D(r, 4)
		tc.includePad = i%2 == 1
		cases = append(cases, tc)
	}
	for _, tc := range cases {
		vals := poolSpecials(r, int(graph.NumElements(tc.x)))
		got, err := nnRun("AveragePool", 19, tc.attrs(), nnF32(tc.x, vals...))
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		in3 := poolCase{x: []int64{tc.x[0], tc.x[1], 1, tc.x[2], tc.x[3]}, kernel: []int64{1, tc.kernel[0], tc.kernel[1]},
			stride: []int64{1, tc.stride[0], tc.stride[1]}, ceil: tc.ceil, includePad: tc.includePad}
		if tc.dil != nil {
			in3.dil = []int64{1, tc.dil[0], tc.dil[1]}
		}
		if tc.pads != nil {
			in3.pads = []int64{0, tc.pads[0], tc.pads[1], 0, tc.pads[2], tc.pads[3]}
		}
		want, err := nnRun("AveragePool", 19, in3.attrs(), nnF32(in3.x, vals...))
		if err != nil {
			t.Fatalf("%+v: %v", in3, err)
		}
		g, w := f32Bits(graph.View[float32](got)), f32Bits(graph.View[float32](want))
		if !slices.Equal(got.Shape, slices.Delete(slices.Clone(want.Shape), 2, 3)) || !slices.Equal(g, w) {
			t.Fatalf("%+v: shape %v against %v; bits differ: %s", tc, got.Shape, want.Shape, firstDiff(g, w))
		}
	}
}

// BenchmarkAveragePool times DenseNet's 2×2, stride-2 average pooling.
func BenchmarkAveragePool(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	x := nnRand(r, 1, 128, 56, 56)
	attrs := nnAttrs{"kernel_shape": []int64{2, 2}, "strides": []int64{2, 2}}
	for b.Loop() {
		if _, err := nnRun("AveragePool", 19, attrs, x); err != nil {
			b.Fatal(err)
		}
	}
}
