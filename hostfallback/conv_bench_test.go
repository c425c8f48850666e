package hostfallback

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// BenchmarkConv3x3 times the 3×3, stride-1, padded convolutions of
// ResNet-18's four stages, at batch 1 and 8.
func BenchmarkConv3x3(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, s := range [][3]int64{{1, 64, 56}, {1, 128, 28}, {1, 256, 14}, {1, 512, 7}, {8, 64, 56}, {8, 128, 28}, {8, 256, 14}, {8, 512, 7}} {
		n, ch, hw := s[0], s[1], s[2]
		x, w, bias := nnRand(r, n, ch, hw, hw), nnRand(r, ch, ch, 3, 3), nnRand(r, ch)
		attrs := nnAttrs{"kernel_shape": []int64{3, 3}, "pads": []int64{1, 1, 1, 1}}
		b.Run(fmt.Sprintf("n%d_%dx%dx%d", n, ch, hw, hw), func(b *testing.B) {
			for b.Loop() {
				if _, err := nnRun("Conv", 13, attrs, x, w, bias); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkConvIm2colPacked times the packing of ResNet-18's patch
// matrices into the GEMM's panel layout, one whole convolution's tiles a
// run: the 7×7 stride-2 stem, a 3×3 stride-1 and a 3×3 stride-2 layer.
func BenchmarkConvIm2colPacked(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct {
		name              string
		cg, in, k, s, pad int
	}{{"stem", 3, 224, 7, 2, 3}, {"64x56x56", 64, 56, 3, 1, 1}, {"256x14x14", 256, 14, 3, 1, 1}, {"128x56s2", 128, 56, 3, 2, 1}} {
		out := (c.in+2*c.pad-c.k)/c.s + 1
		g := &convGeom{rank: 2, in: []int{c.in, c.in}, out: []int{out, out}, kernel: []int{c.k, c.k},
			stride: []int{c.s, c.s}, dil: []int{1, 1}, padBegin: []int{c.pad, c.pad}, padEnd: []int{c.pad, c.pad}}
		g.inSize, g.outSize, g.kernelSize = c.in*c.in, out*out, c.k*c.k
		x := make([]float32, c.cg*g.inSize)
		for i := range x {
			x[i] = r.Float32()
		}
		rows := c.cg * g.kernelSize
		tile := min(g.outSize, max(convIm2colBudget/rows, 16))
		p := &convPanel{buf: make([]float32, rows*gemmCeil(tile, 16)*16), rows: rows, shift: 4}
		taps := g.taps()
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				for s0 := 0; s0 < g.outSize; s0 += tile {
					s1 := min(s0+tile, g.outSize)
					p.width = s1 - s0
					convIm2colPacked(g, taps, x, c.cg, s0, s1, p)
				}
			}
		})
	}
}

// BenchmarkDepthwise times the depthwise convolutions of MobileNet v2/v3,
// EfficientNet and ConvNeXt (batch 1): 3×3, 5×5 and 7×7, strides 1 and 2,
// on one goroutine, the kernel alone (no planning). It reports GFLOP/s.
func BenchmarkDepthwise(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, c := range []struct{ ch, hw, k, s int }{
		{32, 112, 3, 1}, {96, 112, 3, 2}, {144, 56, 3, 1}, {144, 56, 3, 2}, {72, 56, 3, 2}, {192, 28, 3, 1}, {384, 14, 3, 1},
		{960, 7, 3, 1}, {96, 28, 5, 2}, {288, 14, 5, 2}, {240, 14, 5, 1}, {576, 7, 5, 1}, {96, 56, 7, 1}, {384, 14, 7, 1}, {768, 7, 7, 1},
	} {
		p := c.k / 2
		out := (c.hw+2*p-c.k)/c.s + 1
		g := &convGeom{rank: 2, in: []int{c.hw, c.hw}, out: []int{out, out}, kernel: []int{c.k, c.k}, stride: []int{c.s, c.s}, dil: []int{1, 1},
			padBegin: []int{p, p}, padEnd: []int{p, p}, inSize: c.hw * c.hw, outSize: out * out, kernelSize: c.k * c.k}
		l := &convLayout{convGeom: g, n: 1, cin: c.ch, m: c.ch, group: c.ch, cg: 1, mg: 1}
		x, w, bias := nnRandFloats(r, c.ch*c.hw*c.hw), nnRandFloats(r, c.ch*c.k*c.k), nnRandFloats(r, c.ch)
		y := make([]float32, c.ch*out*out)
		th := NewThreads(1)
		b.Run(fmt.Sprintf("%dx%dx%d_k%ds%d", c.ch, c.hw, c.hw, c.k, c.s), func(b *testing.B) {
			for b.Loop() {
				l.depthwise2D(th, x, w, bias, y, nil)
			}
			b.ReportMetric(2*float64(c.ch*out*out*c.k*c.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkPointwiseSwish times the 1×1 expansions of EfficientNet-B0
// with their fused Swish (batch 1), on the planes of one column tile or
// two.
func BenchmarkPointwiseSwish(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, c := range []struct{ cin, cout, hw int64 }{{40, 240, 28}, {80, 480, 14}, {112, 672, 14}, {192, 1152, 7}} {
		x, w, bias := nnRand(r, 1, c.cin, c.hw, c.hw), nnRand(r, c.cout, c.cin, 1, 1), nnRand(r, c.cout)
		n := &graph.Node{Name: "f", OpType: "FusedConv", Domain: ops.FusedDomain, Outputs: []string{"y"},
			Attrs: ewWith(ewString("activation", ops.ActSwish))}
		b.Run(fmt.Sprintf("%dto%dx%dx%d", c.cin, c.cout, c.hw, c.hw), func(b *testing.B) {
			for b.Loop() {
				call := &Call{Node: n, Opset: 1, In: []graph.Value{x, w, bias}, Out: make([]graph.Value, 1)}
				if err := Lookup(ops.FusedDomain, "FusedConv")(call); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkConvShift times convolutions by the im2col product
// (convPackedF32) and without the copy (shiftF32 with each tile kernel
// the CPU has, the filters packed once, as for a model's constant
// filters; none on a CPU without one), on one goroutine: DenseNet's
// 3×3 128→32 layers on each stage's planes, ResNet's 3×3 layers, a 5×5
// one, and the stride-2 stems of MobileNet and ResNet. It reports
// GFLOP/s.
func BenchmarkConvShift(b *testing.B) {
	kernels := convShiftKernels()
	saved := convShiftTile
	b.Cleanup(func() { convShiftTile = saved })
	r := rand.New(rand.NewPCG(9, 10))
	for _, s := range [][5]int{{128, 32, 56, 3, 1}, {128, 32, 28, 3, 1}, {128, 32, 14, 3, 1}, {128, 32, 7, 3, 1},
		{64, 64, 56, 3, 1}, {128, 128, 28, 3, 1}, {256, 256, 14, 3, 1}, {512, 512, 7, 3, 1}, {16, 32, 28, 5, 1},
		{3, 16, 224, 3, 2}, {3, 64, 224, 7, 2}} {
		ci, co, hw, k, st := s[0], s[1], s[2], s[3], s[4]
		p := k / 2
		out := (hw+2*p-k)/st + 1
		g := &convGeom{rank: 2, in: []int{hw, hw}, out: []int{out, out}, kernel: []int{k, k}, stride: []int{st, st}, dil: []int{1, 1},
			padBegin: []int{p, p}, padEnd: []int{p, p}, inSize: hw * hw, outSize: out * out, kernelSize: k * k}
		l := &convLayout{convGeom: g, n: 1, cin: ci, m: co, group: 1, cg: ci, mg: co}
		x, w, bias := nnRandFloats(r, ci*hw*hw), nnRandFloats(r, co*ci*k*k), nnRandFloats(r, co)
		y := make([]float32, co*out*out)
		th := NewThreads(1)
		flops := 2 * float64(ci*co*out*out*k*k)
		b.Run(fmt.Sprintf("%dx%dx%d_%d_k%ds%d/im2col", ci, hw, hw, co, k, st), func(b *testing.B) {
			for b.Loop() {
				convPackedF32(th, l, x, w, bias, y, nil, nil)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		for _, kn := range kernels {
			convShiftTile = kn
			ls := &convLayout{convGeom: g, n: 1, cin: ci, m: co, group: 1, cg: ci, mg: co}
			b.Run(fmt.Sprintf("%dx%dx%d_%d_k%ds%d/shift-%s", ci, hw, hw, co, k, st, kn.name), func(b *testing.B) {
				for b.Loop() {
					ls.shiftF32(th, x, w, bias, y, nil, true)
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
