package hostfallback

import (
	"sync/atomic"
)

// pointwiseCols is the width of the column tiles of pointwiseF32.
const pointwiseCols = 512

// pointwiseActGrain is the least output a worker takes of a costly
// activation (see convAct.heavy) that pointwiseF32 spreads over the
// workers after a GEMM that it did not hand out whole.
const pointwiseActGrain = 8192

// pointwiseF32 is the 1×…×1 convolution: per image and group, the product
// of the filters (mg×cg) by the input planes (cg×S), plus the bias b in
// the GEMM's store, then act (nil: none) on each block of output (see
// convLayout.runF32). The
// products are cut into tiles of columns; with tiles enough to keep every
// worker busy, they are handed out one by one (each a serial GEMM), so
// that a worker the OS holds back does not hold up the others; with fewer,
// each tile's GEMM is spread over the workers, which then share its
// packed input (splitting rows instead would pack it once per block).
func (l *convLayout) pointwiseF32(threads *Threads, x, w, b, y []float32, act *convAct) {
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
		sgemmBias(threads, serial, l.mg, c, l.cg, w[grp*l.mg*l.cg:], l.cg, x[(n*l.cin+grp*l.cg)*S+j0:], S, b[grp*l.mg:], y[at:], S, ep)
		if ep != nil {
			return
		}
		if serial || workers == 1 || !act.heavy() || l.mg*c < 2*pointwiseActGrain {
			act.apply(y, at, l.mg, c, S)
			return
		}
		// The GEMM went parallel inside; so does a costly activation.
		threads.For(l.mg, gemmCeil(pointwiseActGrain, c), func(r0, r1 int) {
			act.apply(y, at+r0*S, r1-r0, c, S)
		})
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
// 2048-deep product, 16 meetings against 2). A costly activation (see
// convAct.heavy) stays with pointwiseF32, which spreads it over the
// workers, and so do products too thin for the GEMM to pack (see
// gemmTakesPacked: the 1×1 planes of a squeeze-and-excitation block),
// which it then runs on the calling goroutine alone: a 576→144 one took
// 12 µs there against 28 µs packed.
func (l *convLayout) pointwisePacked(threads *Threads, act *convAct) bool {
	return convPackedUsable() && !act.heavy() && gemmTakesPacked(l.mg, l.pointwiseTile(), l.cg) &&
		l.n*l.group*gemmCeil(l.outSize, l.pointwiseTile()) < 2*threads.Workers()
}
