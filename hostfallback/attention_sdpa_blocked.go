package hostfallback

import "sync/atomic"

// sdpaScoreBlock bounds the scores (floats) of one pass of query rows in
// the blocked attention: they stay in L1 from the product that makes them,
// through the softmax, to the product that reads them.
const sdpaScoreBlock = 4096

// sdpaBlocked reports whether m queries take the blocked attention with
// kernel kn: at least two of its row strips, so that the rows repay the
// packing of kᵀ and v; fewer take sdpaSmall, whose unpacked products read
// the keys in place.
func sdpaBlocked(kn *sgemmKernel, m int) bool { return m >= 2*kn.mr }

// sdpaJob is a blocked ScaledDotProductAttention: its items, a block of
// query rows of one batch entry each, are claimed by the workers one at a
// time, so that a worker held back (by other work on its core) takes
// fewer. A worker packs kᵀ (times the scale) and v of an entry into the
// GEMM kernel's strips once for the items of that entry it runs in a row,
// then goes through the item's rows a pass at a time: the pass's scores
// by kn's tiles, reading q in place (or gathered, when its rows are not
// contiguous), their softmax while in cache, and their product by v,
// written where the output lies, each row then divided by its sum.
type sdpaJob struct {
	p     *sdpaPlan
	kn    *sgemmKernel
	q, k  []float32
	v     []float32
	out   []float32
	scale float32
	mask  *sdpaMask
	// per is the query rows of an item, blocks the items of an entry and
	// pass the rows of a pass, a multiple of kn.mr.
	per, blocks, pass int
	// next is the next item to claim (atomically).
	next atomic.Int64
}

// newSDPAJob plans the blocked attention of plan p for workers goroutines:
// an entry is split into row blocks only when there are too few entries
// for the workers to balance, into blocks of at least two row strips.
func newSDPAJob(p *sdpaPlan, kn *sgemmKernel, workers int, q, k, v, out []float32, scale float32, mask *sdpaMask) *sdpaJob {
	M, N := p.q.rows, p.k.cols
	mr := kn.mr
	strips := gemmCeil(M, mr)
	blocks := 1
	if workers > 1 {
		blocks = max(min(gemmCeil(4*workers, p.entries), strips/2), 1)
	}
	per := gemmCeil(strips, blocks) * mr
	pass := min(max(sdpaScoreBlock/(N*mr), 1)*mr, per)
	return &sdpaJob{p: p, kn: kn, q: q, k: k, v: v, out: out, scale: scale, mask: mask, per: per, blocks: gemmCeil(M, per), pass: pass}
}

// start runs the job on up to the workers of threads.
func (j *sdpaJob) start(threads *Threads) {
	if workers := min(threads.Workers(), j.p.entries*j.blocks); workers > 1 {
		threads.For(workers, 1, func(_, _ int) { j.run() })
		return
	}
	j.run()
}

// sdpaPackedLen is the length of a depth×width matrix packed by sdpaPack
// for kn.
func sdpaPackedLen(kn *sgemmKernel, depth, width int) int {
	steps := 0
	for pc := 0; pc < depth; pc += gemmKC {
		steps += gemmCeil(min(gemmKC, depth-pc), kn.ku) * kn.ku
	}
	return steps * gemmCeil(width, kn.nr) * kn.nr
}

// sdpaPack packs the depth×width matrix B(p, j) = scale·x[off + p·rs +
// j·cs] into dst as sdpaProduct reads it: per gemmKC-deep slab of its
// rows, kn.nr-wide strips of the slab's rows (padded with zeros to a
// multiple of kn.ku rows and to the strip's width).
func sdpaPack(kn *sgemmKernel, dst, x []float32, off, rs, cs, depth, width int, scale float32) {
	nr := kn.nr
	strips := gemmCeil(width, nr)
	for pc := 0; pc < depth; pc += gemmKC {
		kc := min(gemmKC, depth-pc)
		kcs := gemmCeil(kc, kn.ku) * kn.ku
		for t := range strips {
			strip := dst[:nr*kcs]
			dst = dst[nr*kcs:]
			j, cols := t*nr, min(nr, width-t*nr)
			if cols < nr || kc < kcs {
				clear(strip)
			}
			if nr == 16 && cols == 16 && sdpaPackStrip16(strip, x, off+pc*rs+j*cs, rs, cs, kc, scale) {
				continue
			}
			if cs == 1 {
				// Rows of the strip lie contiguous.
				for p := range kc {
					d := strip[p*nr:][:cols]
					for l, e := range x[off+(pc+p)*rs+j:][:cols] {
						d[l] = scale * e
					}
				}
				continue
			}
			// Columns, or neither: walk each column down.
			for l := range cols {
				base := off + pc*rs + (j+l)*cs
				for p := range kc {
					strip[p*nr+l] = scale * x[base+p*rs]
				}
			}
		}
	}
}

// sdpaProduct sets C (rows×width, row stride ldc) to A·B for the rows×depth
// A (rows lda apart, contiguous along depth) and B packed by sdpaPack, with
// kernel kn: A read in place by kn's direct kernels where it has them, its
// strips packed into ap otherwise; tmp is gemmMacro's scratch.
func sdpaProduct(kn *sgemmKernel, a []float32, lda, rows, depth int, bp []float32, width int, c []float32, ldc int, ap, tmp []float32) {
	mr := kn.mr
	strips := gemmCeil(width, kn.nr)
	aStrips := gemmCeil(rows, mr)
	for pc := 0; pc < depth; pc += gemmKC {
		kc := min(gemmKC, depth-pc)
		kcs := gemmCeil(kc, kn.ku) * kn.ku
		var da []float32
		if kn.direct != nil && kn.ku == 1 {
			da = a[pc:]
		}
		for s := range aStrips {
			i := s * mr
			if n := min(mr, rows-i); da == nil || (n < mr && kn.part(n) == nil) {
				gemmPackA(false, a, lda, i, n, mr, pc, kc, 1, ap[s*mr*kcs:(s+1)*mr*kcs])
			}
		}
		gemmMacro(kn, ap, 0, da, lda, bp, kcs, rows, 0, aStrips, 0, width, 0, strips, pc > 0, nil, c, ldc, tmp, nil, nil)
		bp = bp[strips*kn.nr*kcs:]
	}
}

// run claims items and computes them until none is left.
func (j *sdpaJob) run() {
	p, kn := j.p, j.kn
	M, D, N, Dv := p.q.rows, p.q.cols, p.k.cols, p.v.cols
	gather := p.q.cs != 1 && D != 1
	direct := p.y.cs == 1 || Dv == 1
	mr := kn.mr
	// The worker's scratch, from the pool the GEMMs use: kᵀ and v packed,
	// a pass's scores, their rows' inverse sums, its packed strips of A,
	// its gathered rows of q, its rows of the output when they cannot be
	// written in place, and gemmMacro's scratch.
	sizes := []int{sdpaPackedLen(kn, D, N), sdpaPackedLen(kn, N, Dv), j.pass * N, j.pass,
		gemmCeil(j.pass, mr) * mr * gemmCeil(min(gemmKC, max(D, N)), kn.ku) * kn.ku, 0, 0, gemmMacroScratch}
	if gather {
		sizes[5] = j.pass * D
	}
	if !direct {
		sizes[6] = j.pass * Dv
	}
	buf, parts := sdpaScratch(sizes)
	defer gemmBufs.Put(buf)
	kp, vp, scores, inv, ap, qb, yb, tmp := parts[0], parts[1], parts[2], parts[3], parts[4], parts[5], parts[6], parts[7]
	last := -1
	for {
		t := int(j.next.Add(1) - 1)
		if t >= p.entries*j.blocks {
			return
		}
		b, r0 := t/j.blocks, t%j.blocks*j.per
		if b != last {
			sdpaPack(kn, kp, j.k, p.k.offset(b), p.k.rs, p.k.cs, D, N, j.scale)
			sdpaPack(kn, vp, j.v, p.v.offset(b), p.v.rs, p.v.cs, N, Dv, 1)
			last = b
		}
		qOff, yOff := p.q.offset(b), p.y.offset(b)
		r1 := min(r0+j.per, M)
		for i0 := r0; i0 < r1; i0 += j.pass {
			rows := min(j.pass, r1-i0)
			a, lda := j.q[qOff+i0*p.q.rs:], p.q.rs
			if gather {
				for i := range rows {
					for c := range D {
						qb[i*D+c] = j.q[qOff+(i0+i)*p.q.rs+c*p.q.cs]
					}
				}
				a, lda = qb, D
			}
			sdpaProduct(kn, a, lda, rows, D, kp, N, scores, N, ap, tmp)
			p.softmax(j.mask, scores, b, i0, rows, N, inv)
			if direct {
				c := j.out[yOff+i0*p.y.rs:]
				sdpaProduct(kn, scores, N, rows, N, vp, Dv, c, p.y.rs, ap, tmp)
				sdpaScaleRows(c, p.y.rs, rows, Dv, inv)
				continue
			}
			sdpaProduct(kn, scores, N, rows, N, vp, Dv, yb, Dv, ap, tmp)
			for i, f := range inv[:rows] {
				for x, e := range yb[i*Dv : (i+1)*Dv] {
					j.out[yOff+(i0+i)*p.y.rs+x*p.y.cs] = e * f
				}
			}
		}
	}
}

// sdpaScaleRowsGo is the portable sdpaScaleRows.
func sdpaScaleRowsGo(c []float32, ldc, rows, cols int, f []float32) {
	for i, g := range f[:rows] {
		row := c[i*ldc:][:cols]
		for x := range row {
			row[x] *= g
		}
	}
}
