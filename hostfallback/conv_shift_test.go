package hostfallback

import (
	"math/rand/v2"
	"testing"

	"github.com/onnxvk/onnxvk/graph/ops"
)

// TestConvShift checks shiftF32, with the filters packed per call and
// packed once (twice over the same layout), against the im2col
// convolution (convGeneral) on random geometries: kernels of 2 to 25
// taps, strides and dilations up to 3 and 2, pads on either side up to
// past the kernel, output channels around the tiles' six and eight, one to two
// images, planes down to a single row or column, and a fused residual sum
// with a clamp; with each tile kernel the CPU has. Without one (other
// CPUs, the noasm build) it checks that no convolution is shiftable.
func TestConvShift(t *testing.T) {
	kernels := convShiftKernels()
	saved := convShiftTile
	t.Cleanup(func() { convShiftTile = saved })
	r := rand.New(rand.NewPCG(31, 32))
	for i := range 400 {
		kernel := [2]int{1 + r.IntN(5), 1 + r.IntN(5)}
		dil := [2]int{1 + r.IntN(2), 1 + r.IntN(2)}
		stride := [2]int{1 + r.IntN(3), 1 + r.IntN(3)}
		var in, out, pb, pe [2]int
		for d := range 2 {
			span := (kernel[d]-1)*dil[d] + 1
			pb[d], pe[d] = r.IntN(span+1), r.IntN(span+1)
			in[d] = max(1, span-pb[d]-pe[d]) + r.IntN(20)
			out[d] = (in[d]+pb[d]+pe[d]-span)/stride[d] + 1
		}
		g := &convGeom{rank: 2, in: in[:], out: out[:], kernel: kernel[:], stride: stride[:], dil: dil[:],
			padBegin: pb[:], padEnd: pe[:], inSize: in[0] * in[1], outSize: out[0] * out[1], kernelSize: kernel[0] * kernel[1]}
		n, C, M := 1+r.IntN(2), 1+r.IntN(20), []int{1, 5, 6, 7, 8, 9, 13, 16, 23, 40}[r.IntN(10)]
		l := &convLayout{convGeom: g, n: n, cin: C, m: M, group: 1, cg: C, mg: M}
		if g.kernelSize == 1 || stride[0] > (kernel[0]-1)*dil[0]+1 || stride[1] > (kernel[1]-1)*dil[1]+1 {
			continue
		}
		x, w, b := nnRandFloats(r, n*C*g.inSize), nnRandFloats(r, M*C*g.kernelSize), nnRandFloats(r, M)
		var act *convAct
		if i%3 == 0 {
			act = &convAct{name: ops.ActClip, lo: -0.5, hi: 0.5, sum: nnRandFloats(r, n*M*g.outSize)}
		}
		want := make([]float32, n*M*g.outSize)
		convGeneral(NewThreads(1), l, x, w, want, func(row0, m, cols, k int, a []float32, lda int, col []float32, ldb int, c []float32, at, ldc int, serial bool) {
			naiveGemm(false, false, m, cols, k, 1, a, lda, col, ldb, 0, c[at:], ldc)
			for i := range m {
				for j := range cols {
					c[at+i*ldc+j] += b[row0+i]
				}
			}
		}, false)
		act.apply(want, 0, 1, len(want), len(want))
		if len(kernels) == 0 && l.shiftable() {
			t.Fatalf("case %d: %+v shiftable without a tile kernel", i, g)
		}
		for _, kn := range kernels {
			convShiftTile = kn
			// A layout of its own: the filters packed once are packed
			// for the kernel.
			l := &convLayout{convGeom: g, n: n, cin: C, m: M, group: 1, cg: C, mg: M}
			if !l.shiftable() && !(kn.narrow && M > 32 && C > 4) {
				t.Fatalf("case %d: %+v not shiftable by %s", i, g, kn.name)
			}
			for _, call := range []struct {
				threads int
				constW  bool
			}{{1, false}, {3, false}, {2, true}, {1, true}} {
				got := nnRandFloats(r, len(want))
				l.shiftF32(NewThreads(call.threads), x, w, b, got, act, call.constW)
				if j := nnClose(got, want, 1e-4, 1e-4); j >= 0 {
					t.Fatalf("case %d, %s (%+v, n %d, C %d, M %d, act %v, threads %d, constW %v): y[%d] = %v, want %v",
						i, kn.name, *g, n, C, M, act != nil, call.threads, call.constW, j, got[j], want[j])
				}
			}
		}
	}
}
