package hostfallback

import (
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
)

// convPanel is an im2col patch matrix (rows × width) written straight in
// the packed layout of sgemm's B operand (gemmPanelIndex), which spares
// the GEMM a packing pass over it.
type convPanel struct {
	buf                []float32
	rows, width, shift int
}

// convSeg is what one kernel tap puts in a run of n lanes of a strip,
// from lane on: zl zeros, cp input values from off (the tap's offset in an
// input plane, stride apart along the last axis), then zeros to the end of
// the run.
type convSeg struct{ lane, n, zl, cp, off int }

// convPackedUsable reports whether convPackedF32 can run with gemmBest.
func convPackedUsable() bool {
	kn := gemmBest
	return kn.ku == 1 && kn.direct != nil && kn.nr&(kn.nr-1) == 0
}

// convPackedF32 is the float32 im2col convolution (see convGeneral) with
// the patch matrix written in the GEMM's packed layout and the bias b
// added in its store, then act (nil: none) on each block of output (see
// convLayout.runF32). With norm (a pointwise convolution's only), each
// tile of the input planes is first normalized into a scratch tile, which
// is packed instead.
func convPackedF32(threads *Threads, l *convLayout, x, w, b, y []float32, act *convAct, norm *convNorm) {
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
	g := l.convGeom
	flat := func(n int) *convGeom {
		return &convGeom{rank: 1, in: []int{n}, out: []int{n}, kernel: []int{1}, stride: []int{1}, dil: []int{1},
			padBegin: []int{0}, padEnd: []int{0}, inSize: n, outSize: n, kernelSize: 1}
	}
	if l.pointwise() {
		// Input and output positions match: one run of S columns, as
		// if the planes were flat, instead of one a row of output.
		g = flat(S)
	}
	taps := g.taps()
	// With norm, a unit packs its normalized tile, flat planes of its
	// width: the tile's, or the last unit's.
	var normGeoms [2]*convGeom
	if norm != nil {
		normGeoms = [2]*convGeom{flat(tile), flat(S - (tiles-1)*tile)}
	}
	kn := gemmBest
	shift := bits.TrailingZeros(uint(kn.nr))
	units := l.n * l.group * tiles
	run := func(u, workers int, buf []float32) {
		ng, t := u/tiles, u%tiles
		n, grp := ng/l.group, ng%l.group
		s0 := t * tile
		s1 := min(s0+tile, S)
		p := &convPanel{buf: buf, rows: rows, width: s1 - s0, shift: shift}
		src, gs, q0, q1 := x[(n*l.cin+grp*l.cg)*l.inSize:], g, s0, s1
		if norm != nil {
			nb := gemmBuf(l.cg * (s1 - s0))
			defer gemmBufs.Put(nb)
			norm.apply(threads, workers == 1, *nb, src[s0:], grp*l.cg, l.cg, s1-s0, S)
			src, gs, q0, q1 = *nb, normGeoms[0], 0, s1-s0
			if s1-s0 != tile {
				gs = normGeoms[1]
			}
		}
		convIm2colPacked(gs, taps, src, l.cg, q0, q1, p)
		at := (n*l.m+grp*l.mg)*S + s0
		gemmPackedWith(threads, kn, false, false, l.mg, s1-s0, rows, 1, w[grp*l.mg*rows:], rows, nil, 0, buf, 0, b[grp*l.mg:(grp+1)*l.mg], y[at:], S, workers, act.epilogue(at))
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

// convPackScratch is the working slices of a convIm2colPacked call, kept
// for the next (convPackScratches).
type convPackScratch struct {
	runs, segs []convSeg
	vsegs      []convVecSeg
}

var convPackScratches = sync.Pool{New: func() any { return new(convPackScratch) }}

// convIm2colPacked is convIm2col writing into a packed panel: row
// (channel, tap), column s − s0 holds the input value under the tap for
// output position s. It fills the panel strip by strip, in the order of
// memory: a strip's columns split into runs along the last axis, each
// tap's segments of those runs are worked out once, and then every
// channel's rows of the strip are copied with them.
func convIm2colPacked(g *convGeom, taps [][]int, x []float32, cg, s0, s1 int, p *convPanel) {
	r := g.rank
	last := r - 1
	nr := 1 << p.shift
	outStrides, inStrides := convStrides(g.out), convStrides(g.in)
	oc := make([]int, r)
	st := g.stride[last]
	strips := gemmCeil(p.width, nr)
	nt := len(taps)
	// The runs of the columns along the last axis, each tap's segment of
	// each: runs[i·nt+t] for run i and tap t, its lane the run's first
	// column.
	sc := convPackScratches.Get().(*convPackScratch)
	runs := slices.Grow(sc.runs[:0], nt*(gemmCeil(p.width, g.out[last])+1))
	segs, vsegs := sc.segs, sc.vsegs
	defer func() {
		sc.runs, sc.segs, sc.vsegs = runs, segs, vsegs
		convPackScratches.Put(sc)
	}()
	for c := 0; c < p.width; {
		rem := s0 + c
		for d := range r {
			oc[d] = rem / outStrides[d]
			rem %= outStrides[d]
		}
		o0 := oc[last]
		n := min(g.out[last]-o0, p.width-c)
		for _, off := range taps {
			base, inside := convLeadBase(oc, g.stride, off, g.in, inStrides)
			of := off[last]
			lo, hi := lastAxisRange(o0, o0+n, of, st, g.in[last])
			if !inside {
				lo, hi = o0, o0
			}
			runs = append(runs, convSeg{lane: c, n: n, zl: lo - o0, cp: hi - lo, off: base + lo*st + of})
		}
		c += n
	}
	first := 0
	for j := range strips {
		q0 := j * nr
		q1 := min(q0+nr, p.width)
		// The strip's np runs, nt segments each: segs[t·np+i] for tap t
		// and run i, cut to the strip.
		for sg := runs[first*nt]; sg.lane+sg.n <= q0; sg = runs[first*nt] {
			first++
		}
		np := 0
		for first+np < len(runs)/nt && runs[(first+np)*nt].lane < q1 {
			np++
		}
		if nr%16 == 0 && convPackVec && st <= convPackMaxStride {
			// The strip packed in 16-wide parts (two of a 32-wide
			// strip), their rows nr apart; a part's np runs, nt
			// segments each: vsegs[t·np+i] for tap t and run i.
			pf := first
			for h0 := q0; h0 < q1; h0 += 16 {
				h1 := min(h0+16, q1)
				for sg := runs[pf*nt]; sg.lane+sg.n <= h0; sg = runs[pf*nt] {
					pf++
				}
				hn := 0
				for pf+hn < len(runs)/nt && runs[(pf+hn)*nt].lane < h1 {
					hn++
				}
				vsegs = slices.Grow(vsegs[:0], nt*hn)[:nt*hn]
				for i := range hn {
					for t, sg := range runs[(pf+i)*nt : (pf+i+1)*nt] {
						vsegs[t*hn+i].set(sg, h0, h1, st)
					}
				}
				for pc := 0; pc < p.rows; pc += gemmKC {
					kcs := min(gemmKC, p.rows-pc)
					ch := pc / nt
					dst := p.buf[pc*strips*nr+q0*kcs+h0-q0:][:(kcs-1)*nr+16]
					convPackStrip16(dst, x[ch*g.inSize:], vsegs, hn, nt, pc%nt, kcs, nr, g.inSize, st, cg-ch)
				}
			}
			continue
		}
		segs = slices.Grow(segs[:0], nt*np)[:nt*np]
		for i := range np {
			for t, sg := range runs[(first+i)*nt : (first+i+1)*nt] {
				segs[t*np+i] = sg.cut(q0, q1, st)
			}
		}
		lanes := q1 - q0
		// One full-width segment per tap, stride 1, is a plain copy of nr
		// values.
		whole := np == 1 && st == 1 && lanes == nr
		for pc := 0; pc < p.rows; pc += gemmKC {
			kcs := min(gemmKC, p.rows-pc)
			dst := p.buf[pc*strips*nr+q0*kcs:]
			ch, t := pc/nt, pc%nt
			plane := x[ch*g.inSize:]
			for i := range kcs {
				row := dst[i*nr : (i+1)*nr]
				if sg := segs[t]; whole && sg.cp == nr {
					copy(row, plane[sg.off:sg.off+nr])
				} else {
					for _, sg := range segs[t*np : (t+1)*np] {
						convPutSeg(row[sg.lane:sg.lane+sg.n], sg, plane, st)
					}
				}
				if t++; t == nt && i+1 < kcs {
					t, ch = 0, ch+1
					plane = x[ch*g.inSize:]
				}
			}
		}
	}
}

// cut returns the part of sg (a segment of a run of columns, lane its
// first) in columns [q0, q1), for input stride st, its lane counted from
// q0.
func (sg convSeg) cut(q0, q1, st int) convSeg {
	a, b := max(sg.lane, q0), min(sg.lane+sg.n, q1)
	lo := min(max(sg.lane+sg.zl, a), b)
	hi := min(max(sg.lane+sg.zl+sg.cp, lo), b)
	return convSeg{lane: a - q0, n: b - a, zl: lo - a, cp: hi - lo, off: sg.off + (lo-sg.lane-sg.zl)*st}
}

// convPackMaxStride bounds the input stride of convPackStrip16 (which
// indexes a plane with int32s).
const convPackMaxStride = 1 << 24

// convVecSeg is a convSeg for a vector copy of a 16-wide strip: lane k
// of the strip reads plane[off+k·st] (st the input stride) where mask[k]
// is −1, and is zero where it is 0. Off can be negative: the masked-off
// lanes are not read.
type convVecSeg struct {
	off  int
	mask [16]int32
}

// set makes v the part of sg (a segment of a run of columns, lane its
// first) in the 16-wide strip of columns [q0, q1), for input stride st:
// sg.cut(q0, q1, st) as a convVecSeg, without the convSeg in between.
func (v *convVecSeg) set(sg convSeg, q0, q1, st int) {
	b := min(sg.lane+sg.n, q1)
	lo := min(max(sg.lane+sg.zl, q0), b)
	hi := min(max(sg.lane+sg.zl+sg.cp, lo), b)
	v.off = sg.off + (q0-sg.lane-sg.zl)*st
	m := &convLaneMasks[lo-q0][hi-q0]
	// Four moves of four lanes (one of sixteen is a call to memmove).
	*(*[4]int32)(v.mask[0:4]) = *(*[4]int32)(m[0:4])
	*(*[4]int32)(v.mask[4:8]) = *(*[4]int32)(m[4:8])
	*(*[4]int32)(v.mask[8:12]) = *(*[4]int32)(m[8:12])
	*(*[4]int32)(v.mask[12:16]) = *(*[4]int32)(m[12:16])
}

// convLaneMasks[a][e] is the mask of a convVecSeg that reads lanes [a, e).
var convLaneMasks = func() (m [17][17][16]int32) {
	for a := range m {
		for e := a; e < len(m); e++ {
			for k := a; k < e; k++ {
				m[a][e][k] = -1
			}
		}
	}
	return m
}()

// convPackStrip16Go is convPackAVX2 in Go: it writes kcs 16-wide rows of
// a panel strip in dst, pitch floats apart, starting at tap t of the
// first of the channel planes x (stride floats apart), from each tap's np
// segments, for input stride st.
func convPackStrip16Go(dst, x []float32, segs []convVecSeg, np, nt, t, kcs, pitch, stride, st int) {
	plane := 0
	for i := range kcs {
		row := (*[16]float32)(dst[i*pitch:])
		*row = [16]float32{}
		for _, v := range segs[t*np : (t+1)*np] {
			for k, m := range v.mask {
				if m != 0 {
					row[k] = x[plane+v.off+k*st]
				}
			}
		}
		if t++; t == nt {
			t, plane = 0, plane+stride
		}
	}
}

// convPutSeg writes segment sg of an input plane into dst, its n lanes.
func convPutSeg(dst []float32, sg convSeg, plane []float32, st int) {
	for k := range sg.zl {
		dst[k] = 0
	}
	if sg.cp > 0 {
		part := dst[sg.zl : sg.zl+sg.cp]
		if st == 1 {
			copy(part, plane[sg.off:sg.off+sg.cp])
		} else {
			s := plane[sg.off : sg.off+(sg.cp-1)*st+1]
			for k := range part {
				part[k] = s[k*st]
			}
		}
	}
	for k := sg.zl + sg.cp; k < len(dst); k++ {
		dst[k] = 0
	}
}
