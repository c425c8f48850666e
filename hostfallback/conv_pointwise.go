package hostfallback

import (
	"math"
	"sync/atomic"

	"github.com/onnxvk/onnxvk/graph/ops"
)

// pointwiseCols is the width of the column tiles of pointwiseF32.
const pointwiseCols = 512

// pointwiseF32 is the 1×…×1 convolution: per image and group, the product
// of the filters (mg×cg) by the input planes (cg×S), plus the bias b in
// the GEMM's store, then act (nil: none) as the GEMM's epilogue (see
// convAct.epilogue). With norm, each tile of the input planes is first
// normalized into a scratch tile, which the GEMM reads instead. The
// products are cut into tiles of columns; with tiles enough to keep every
// worker busy, they are handed out one by one (each a serial GEMM), so
// that a worker the OS holds back does not hold up the others; with fewer,
// each tile's GEMM is spread over the workers, which then share its
// packed input (splitting rows instead would pack it once per block).
func (l *convLayout) pointwiseF32(threads *Threads, x, w, b, y []float32, act *convAct, norm *convNorm) {
	S := l.outSize
	workers := threads.Workers()
	cols := l.pointwiseTile()
	tiles := gemmCeil(S, cols)
	units := l.n * l.group * tiles
	run := func(u int, serial bool) {
		img, t := u/tiles, u%tiles
		n, grp := img/l.group, img%l.group
		j0 := t * cols
		c := min(cols, S-j0)
		at := (n*l.m+grp*l.mg)*S + j0
		ep := act.epilogue(at)
		src, ldb := x[(n*l.cin+grp*l.cg)*S+j0:], S
		if norm != nil {
			buf := gemmBuf(l.cg * c)
			defer gemmBufs.Put(buf)
			norm.apply(threads, serial, *buf, src, grp*l.cg, l.cg, c, S)
			src, ldb = *buf, c
		}
		sgemmBias(threads, serial, l.mg, c, l.cg, w[grp*l.mg*l.cg:], l.cg, src, ldb, b[grp*l.mg:], y[at:], S, ep)
	}
	if workers == 1 || units < 2*workers {
		for u := range units {
			run(u, false)
		}
		return
	}
	var next atomic.Int64
	threads.For(workers, 1, func(_, _ int) {
		for u := int(next.Add(1) - 1); u < units; u = int(next.Add(1) - 1) {
			run(u, true)
		}
	})
}

// pointwiseTile is the width of pointwiseF32's column tiles.
func (l *convLayout) pointwiseTile() int {
	return min(l.outSize, pointwiseCols/gemmBest.nr*gemmBest.nr)
}

// pointwisePacked reports whether a pointwise convolution goes to
// convPackedF32 instead of pointwiseF32: where pointwiseF32 would have too
// few column tiles to hand out whole, and would run each tile's GEMM on
// all the workers, which meet twice a k slab (to pack, then to multiply),
// where convPackedF32 packs the panel once and meets them once (a
// 2048-deep product, 16 meetings against 2). Products too thin for the
// GEMM to pack stay with pointwiseF32 (see
// gemmTakesPacked: the 1×1 planes of a squeeze-and-excitation block),
// which it then runs on the calling goroutine alone: a 576→144 one took
// 12 µs there against 28 µs packed.
func (l *convLayout) pointwisePacked(threads *Threads) bool {
	return convPackedUsable() && gemmTakesPacked(l.mg, l.pointwiseTile(), l.cg) &&
		l.n*l.group*gemmCeil(l.outSize, l.pointwiseTile()) < 2*threads.Workers()
}

// convNormGrain is the least input a worker normalizes of a tile whose
// GEMM the workers share (see pointwiseF32).
const convNormGrain = 16384

// convNorm is the normalization of a NormConv's input: input channel ch
// becomes act(x·a[ch] + b[ch]), a and b its BatchNormalization's
// scale/√(var + ε) and B − mean·a (in float64, then rounded, as
// FusedBatchNorm computes them, so that the two give the same values).
type convNorm struct {
	a, b []float32
	act  *convAct
}

// coefficients sets a and b from the node's inputs 3–6 (scale, B, mean
// and var of l.cin channels) and epsilon: once a layout where the four
// are constants of the plan, else every call.
func (nm *convNorm) coefficients(c *Call, l *convLayout) error {
	var params [4][]float32
	for i, name := range []string{"scale", "B", "mean", "var"} {
		v, err := normFloats(c, 3+i, name, l.cin)
		if err != nil {
			return err
		}
		params[i] = v
	}
	eps := float64(ops.Params[ops.NormConvParams](c.Node, c.Opset).Epsilon)
	build := func() ([]float32, []float32) {
		a, b := make([]float32, l.cin), make([]float32, l.cin)
		for ch := range l.cin {
			s := float64(params[0][ch]) / math.Sqrt(float64(params[3][ch])+eps)
			a[ch], b[ch] = float32(s), float32(float64(params[1][ch])-float64(params[2][ch])*s)
		}
		return a, b
	}
	if c.Const(3) && c.Const(4) && c.Const(5) && c.Const(6) {
		l.normOnce.Do(func() { l.normA, l.normB = build() })
		nm.a, nm.b = l.normA, l.normB
		return nil
	}
	nm.a, nm.b = build()
	return nil
}

// apply writes rows×cols normalized values into dst (rows cols apart):
// row r from the cols values of src from r·ld on, which belong to input
// channel ch0 + r; on the calling goroutine when serial, else shared
// among threads' workers.
func (nm *convNorm) apply(threads *Threads, serial bool, dst, src []float32, ch0, rows, cols, ld int) {
	f := func(r0, r1 int) {
		for r := r0; r < r1; r++ {
			row := dst[r*cols : (r+1)*cols]
			affineF32(row, src[r*ld:r*ld+cols], nm.a[ch0+r], nm.b[ch0+r])
			nm.act.apply(row, 0, 1, cols, cols)
		}
	}
	if serial {
		f(0, rows)
		return
	}
	threads.For(rows, max(1, convNormGrain/max(cols, 1)), f)
}
