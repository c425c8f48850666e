package hostfallback

import (
	"math/bits"
	"sync/atomic"
)

// convPanel is an im2col patch matrix (rows × width) written straight in
// the packed layout of sgemm's B operand (gemmPanelIndex), which spares
// the GEMM a packing pass over it.
type convPanel struct {
	buf                []float32
	rows, width, shift int
}

// putRow writes columns [q, q+n) of row r, strip by strip: zeros at
// q+k for k < lo and for k ≥ hi, src[(k−lo)·st] for lo ≤ k < hi (0 ≤ lo ≤
// hi ≤ n).
func (p *convPanel) putRow(r, q, n, lo, hi int, src []float32, st int) {
	nr := 1 << p.shift
	i := gemmPanelIndex(r, q&^(nr-1), p.rows, p.width, p.shift)
	step := min(gemmKC, p.rows-r/gemmKC*gemmKC) * nr
	for k, lane := 0, q&(nr-1); k < n; lane = 0 {
		c := min(n-k, nr-lane)
		dst := p.buf[i+lane : i+lane+c]
		// Columns k … k+c−1 of the run: dst[j] is column k+j.
		a, b := min(max(lo-k, 0), c), min(max(hi-k, 0), c)
		for j := 0; j < a; j++ {
			dst[j] = 0
		}
		if a < b {
			if st == 1 {
				copy(dst[a:b], src[k+a-lo:])
			} else {
				part := dst[a:b]
				s := src[(k+a-lo)*st:]
				for j := range part {
					part[j] = s[j*st]
				}
			}
		}
		for j := b; j < c; j++ {
			dst[j] = 0
		}
		i += step
		k += c
	}
}

// convPackedUsable reports whether convPackedF32 can run with gemmBest.
func convPackedUsable() bool {
	kn := gemmBest
	return kn.ku == 1 && kn.direct != nil && kn.nr&(kn.nr-1) == 0
}

// convPackedF32 is the float32 im2col convolution (see convGeneral) with
// the patch matrix written in the GEMM's packed layout and the bias b
// added in its store, then act (nil: none) on each tile of output.
func convPackedF32(threads *Threads, l *convLayout, x, w, b, y []float32, act *convAct) {
	S := l.outSize
	rows := l.cg * l.kernelSize
	workers := threads.Workers()
	tile := min(S, max(convIm2colBudget/rows, 16))
	tiles := (S + tile - 1) / tile
	if images := l.n * l.group; images < workers && S >= 64*workers {
		per := (workers + images - 1) / images
		tiles = (tiles + per - 1) / per * per
	}
	tile = (S + tiles - 1) / tiles
	tiles = (S + tile - 1) / tile
	taps := l.taps()
	kn := gemmBest
	shift := bits.TrailingZeros(uint(kn.nr))
	units := l.n * l.group * tiles
	run := func(u, workers int, buf []float32) {
		ng, t := u/tiles, u%tiles
		n, grp := ng/l.group, ng%l.group
		s0 := t * tile
		s1 := min(s0+tile, S)
		p := &convPanel{buf: buf, rows: rows, width: s1 - s0, shift: shift}
		convIm2colPacked(l.convGeom, taps, x[(n*l.cin+grp*l.cg)*l.inSize:], l.cg, s0, s1, p)
		at := (n*l.m+grp*l.mg)*S + s0
		gemmPacked(threads, kn, false, false, l.mg, s1-s0, rows, 1, w[grp*l.mg*rows:], rows, nil, 0, buf, 0, b[grp*l.mg:(grp+1)*l.mg], y[at:], S, workers)
		act.apply(y, at, l.mg, s1-s0, S)
	}
	size := rows * gemmCeil(tile, kn.nr) * kn.nr
	if workers > 1 && (units >= 4*workers || units%workers == 0) {
		// Units are handed out one by one, so that a worker the OS
		// holds back does not hold up the others.
		var next atomic.Int64
		threads.For(workers, 1, func(_, _ int) {
			buf := gemmBuf(size)
			defer gemmBufs.Put(buf)
			for u := int(next.Add(1) - 1); u < units; u = int(next.Add(1) - 1) {
				run(u, 1, *buf)
			}
		})
		return
	}
	buf := gemmBuf(size)
	defer gemmBufs.Put(buf)
	for u := range units {
		run(u, workers, *buf)
	}
}

// convIm2colPacked is convIm2col writing into a packed panel: row
// (channel, tap), column s − s0 holds the input value under the tap for
// output position s.
func convIm2colPacked(g *convGeom, taps [][]int, x []float32, cg, s0, s1 int, p *convPanel) {
	r := g.rank
	last := r - 1
	outStrides, inStrides := convStrides(g.out), convStrides(g.in)
	oc := make([]int, r)
	st := g.stride[last]
	for s := s0; s < s1; {
		rem := s
		for d := range r {
			oc[d] = rem / outStrides[d]
			rem %= outStrides[d]
		}
		o0 := oc[last]
		o1 := min(g.out[last], o0+s1-s)
		seg := s - s0
		for t, off := range taps {
			base, inside := 0, true
			for d := range last {
				i := oc[d]*g.stride[d] + off[d]
				if i < 0 || i >= g.in[d] {
					inside = false
					break
				}
				base += i * inStrides[d]
			}
			of := off[last]
			lo, hi := lastAxisRange(o0, o1, of, st, g.in[last])
			if !inside {
				lo, hi = o0, o0
			}
			for ch := range cg {
				row := ch*len(taps) + t
				if hi <= lo {
					p.putRow(row, seg, o1-o0, 0, 0, nil, st)
					continue
				}
				p.putRow(row, seg, o1-o0, lo-o0, hi-o0, x[ch*g.inSize+base+lo*st+of:], st)
			}
		}
		s += o1 - o0
	}
}
