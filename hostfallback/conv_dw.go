package hostfallback

import (
	"math"
	"slices"
	"sync/atomic"

	"github.com/onnxvk/onnxvk/graph/ops"
)

// depthwise2D is the direct convolution of a 2-D layout with one input
// channel per group (depthwise, possibly with a channel multiplier), plus
// the bias b, then act (nil: none) on each run of planes (contiguous in
// y: one call instead of one a plane, of 49 values on 7×7 planes). Runs
// of planes are handed out one by one, so that a worker the OS holds back
// does not hold up the others; a run is long enough that workers do not
// write the same cache lines (dwRunOut values of output at least) unless
// that leaves fewer than four runs a worker.
func (l *convLayout) depthwise2D(threads *Threads, x, w, b, y []float32, act *convAct) {
	S, K := l.outSize, l.kernelSize
	lo, hi := float32(math.Inf(-1)), float32(math.Inf(1))
	if act != nil && act.sum == nil {
		switch act.name {
		case ops.ActRelu, ops.ActClip:
			lo, hi = act.lo, act.hi
			act = nil
		case "":
			act = nil
		}
	}
	p, offs := l.dwLayout()
	planes := l.n * l.m
	workers := min(threads.Workers(), planes)
	run := min(gemmCeil(dwRunOut, max(S, 1)), gemmCeil(planes, 4*workers))
	runs := gemmCeil(planes, run)
	var next atomic.Int64
	threads.For(min(workers, runs), 1, func(_, _ int) {
		buf := gemmBuf(p.size)
		defer gemmBufs.Put(buf)
		src := *buf
		// Every plane's fill writes the same positions: the padding,
		// cleared here, stays zero.
		clear(src)
		for r := int(next.Add(1) - 1); r < runs; r = int(next.Add(1) - 1) {
			u0, u1 := r*run, min((r+1)*run, planes)
			for u := u0; u < u1; u++ {
				n, m := u/l.m, u%l.m
				p.fill(src, x[(n*l.cin+m/l.mg)*l.inSize:][:l.inSize])
				dwRows(y[u*S:(u+1)*S], src, offs, w[m*K:(m+1)*K], l.out[0], l.out[1], p.wq, b[m], lo, hi)
			}
			act.apply(y, u0*S, 1, (u1-u0)*S, (u1-u0)*S)
		}
	})
}

// dwRunOut is the least output that depthwise2D hands out at once, where
// the planes allow.
const dwRunOut = 4096

// dwPoly is the polyphase layout in which depthwise2D reads an input
// plane: the zero-padded plane split into sh·sw sub-planes (sh and sw the
// strides), sub-plane (rp, cp) holding the padded rows rp, rp+sh, … and
// columns cp, cp+sw, …, hq rows of wq values each. Tap (kh, kw) of output
// (oh, ow) then reads sub-plane (kh·dh mod sh, kw·dw mod sw) at row
// oh + ⌊kh·dh/sh⌋ and column ow + ⌊kw·dw/sw⌋ (dh and dw the dilations): at
// a fixed offset from oh·wq + ow, for every output of a plane.
type dwPoly struct {
	h, w, sh, sw, padTop, padLeft int
	hq, wq                        int
	// With column stride 2, fill puts a row's even input columns, ne of
	// them, at e0 from the start of its row of sub-planes, and its odd
	// ones, no of them, at o0 (see columns).
	e0, o0, ne, no int
	// size is the length of the layout with the zeros after it that
	// dwRows reads (whole vectors and groups of rows) for the last row,
	// and that fill's dwCopyRows writes (a whole vector) after its last.
	size int
}

// dwLayout returns the polyphase layout of l's input planes and the
// offset of each kernel tap (row-major) in it.
func (l *convLayout) dwLayout() (*dwPoly, []int) {
	KH, KW := l.kernel[0], l.kernel[1]
	sh, sw, dh, dw := l.stride[0], l.stride[1], l.dil[0], l.dil[1]
	p := &dwPoly{h: l.in[0], w: l.in[1], sh: sh, sw: sw, padTop: l.padBegin[0], padLeft: l.padBegin[1],
		hq: l.out[0] + (KH-1)*dh/sh, wq: l.out[1] + (KW-1)*dw/sw}
	sub := p.hq * p.wq
	offs := make([]int, 0, KH*KW)
	for kh := range KH {
		for kw := range KW {
			r, c := kh*dh, kw*dw
			offs = append(offs, (r%sh*sw+c%sw)*sub+r/sh*p.wq+c/sw)
		}
	}
	p.size = max(p.filled()+8, slices.Max(offs)+dwSpan(l.out[0], l.out[1], p.wq))
	p.e0, p.o0, p.ne, p.no = p.columns()
	return p, offs
}

// dwSpan is how far past a tap's offset dwRows reads for rows rows of ow
// outputs, wq apart: whole vectors of 8 values, and whole groups of up to
// 8 rows.
func dwSpan(rows, ow, wq int) int {
	return ((rows+7)&^7-1)*wq + (ow+7)&^7
}

// dwFits reports whether dwLayout's scratch stays within a few times the
// size of a plane's input and output: strides or dilations far larger
// than the plane make sh·sw sub-planes of mostly padding (strides of 2^20
// asked for 2^42 floats to make a 1×1 output), which the other
// convolution paths, whose scratch follows the output, do without. It
// computes in float64, where the sizes cannot wrap.
func (l *convLayout) dwFits() bool {
	sh, sw := float64(l.stride[0]), float64(l.stride[1])
	hq := float64(l.out[0]) + float64(l.kernel[0]-1)*float64(l.dil[0])/sh
	wq := float64(l.out[1]) + float64(l.kernel[1]-1)*float64(l.dil[1])/sw
	return 2*sh*sw*(hq+1)*(wq+1) <= 4*float64(l.inSize+l.outSize)+1<<16
}

// filled is the length of the sub-planes, which fill writes.
func (p *dwPoly) filled() int { return p.sh * p.sw * p.hq * p.wq }

// fill writes the input plane x (h×w) into buf[:p.filled()] in the
// polyphase layout. It writes the positions of x's values only, the same
// ones for every plane: the padding in buf must be zero already.
func (p *dwPoly) fill(buf, x []float32) {
	if p.sh == 1 && p.sw == 1 && p.padLeft < p.wq && p.padTop < p.hq {
		if dwCopyRows(buf[p.padTop*p.wq+p.padLeft:], x, min(p.h, p.hq-p.padTop), min(p.w, p.wq-p.padLeft), p.w, p.wq) {
			return
		}
	}
	sub := p.hq * p.wq
	// Input row ih lands in sub-plane row (ih+padTop) mod sh, at index
	// ⌊(ih+padTop)/sh⌋ (phase and q, stepped without dividing); input
	// column c in sub-plane column (c+padLeft) mod sw, at index
	// ⌊(c+padLeft)/sw⌋; the columns from wq on are not read.
	phase, q := p.padTop%p.sh, p.padTop/p.sh
	if p.sw == 2 && p.splitRows(buf, x) {
		return
	}
	for ih := range min(p.h, p.hq*p.sh-p.padTop) {
		at := phase*p.sw*sub + q*p.wq
		if phase++; phase == p.sh {
			phase, q = 0, q+1
		}
		src := x[ih*p.w : (ih+1)*p.w]
		switch p.sw {
		case 1:
			copy(buf[at+min(p.padLeft, p.wq):at+p.wq], src)
		case 2:
			even, odd := buf[at+p.e0:at+p.e0+p.ne], buf[at+p.o0:at+p.o0+p.no]
			n := dwSplit2(even, odd, src)
			for i := n; i < len(even); i++ {
				even[i] = src[2*i]
			}
			for i := n; i < len(odd); i++ {
				odd[i] = src[2*i+1]
			}
		default:
			for c := range p.w {
				pc := c + p.padLeft
				if j := pc / p.sw; j < p.wq {
					buf[at+pc%p.sw*sub+j] = src[c]
				}
			}
		}
	}
}

// columns returns where fill puts a row's even and odd input columns for
// column stride 2 (dwPoly's e0, o0, ne and no, which dwLayout sets from
// it once).
func (p *dwPoly) columns() (e0, o0, ne, no int) {
	sub := p.hq * p.wq
	e, o := p.padLeft, p.padLeft+1
	e0, o0 = e%2*sub+min(e/2, p.wq), o%2*sub+min(o/2, p.wq)
	ne, no = min(p.wq-min(e/2, p.wq), (p.w+1)/2), min(p.wq-min(o/2, p.wq), p.w/2)
	return e0, o0, ne, no
}

// splitRows is fill for column stride 2 with one dwSplitRows call for
// each row phase (the input rows that land in one row of sub-planes),
// reporting whether the calls did it.
func (p *dwPoly) splitRows(buf, x []float32) bool {
	sub := p.hq * p.wq
	h := min(p.h, p.hq*p.sh-p.padTop)
	for ph := range p.sh {
		ih0 := ((ph-p.padTop)%p.sh + p.sh) % p.sh
		if ih0 >= h {
			continue
		}
		at := ph*p.sw*sub + (ih0+p.padTop)/p.sh*p.wq
		if !dwSplitRows(buf[at+p.e0:], buf[at+p.o0:], x[ih0*p.w:], (h-ih0+p.sh-1)/p.sh, p.ne, p.no, p.sh*p.w, p.wq) {
			return false
		}
	}
	return true
}

// dwRowsGo is the portable dwRows.
func dwRowsGo(dst, src []float32, offs []int, w []float32, rows, ow, wq int, bias, lo, hi float32) {
	for r := range rows {
		for i, d := range dst[r*ow : (r+1)*ow] {
			d = bias
			for t, off := range offs {
				d += w[t] * src[off+r*wq+i]
			}
			if d < lo {
				d = lo
			} else if d > hi {
				d = hi
			}
			dst[r*ow+i] = d
		}
	}
}
