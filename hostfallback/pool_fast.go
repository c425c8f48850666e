package hostfallback

// poolFast is the vectorised part of 2-D float32 pooling (AveragePool,
// and MaxPool without indices where poolPadded does not apply): the
// windows of the interior output columns [c0, c1), those whose taps along
// the last axis all lie inside the input, computed tap by tap over a whole output row at once (maxRows, meanRows),
// and those of the edge columns one at a time by the same kernels, with
// the taps in the same order as the window-by-window paths (maxPlane2D,
// avgPlane2D), so with the same results to the bit. With a column stride
// sw > 1 the input plane is first split into sw phase planes (phase q
// holding columns q, q+sw, …), so that each tap reads a contiguous run.
type poolFast struct {
	c0, c1 int
	// wq is the length of a phase row (the row length with sw = 1) and
	// sub that of a phase plane.
	sw, wq, sub int
	// offs[t] is tap t's offset (row-major over the kernel) from the
	// first input row of a window, for output column c0; a window with
	// rn input rows takes the first rn·kernel[1] taps.
	offs []int
	// edges are the output columns outside [c0, c1), each a call of one
	// output with its own in-input taps, where every one of them has
	// some (else nil); skip0 and skip1 bound the columns that plane
	// writes: [0, OW) with edges, [c0, c1) without.
	edges        []poolEdge
	skip0, skip1 int
}

// poolEdge is an output column ow whose window has cn < kernel[1]
// columns in the input: offs as poolFast's, over those columns only (a
// window with rn input rows takes the first rn·cn).
type poolEdge struct {
	ow, cn int
	offs   []int
}

// poolFastLeast is the least number of interior output columns for which
// poolFastPlan sets up the vectorised path. Five columns of a 7×7 plane
// already take it in 0.4 of the time window by window does (GoogLeNet's
// last 3×3 stride-1 max pooling, 832 planes: 1.33 → 0.53 ms, one thread).
const poolFastLeast = 4

// poolFastPlan returns the vectorised plan for p, or nil where too few
// output columns are interior.
func poolFastPlan(p *poolLayout) *poolFast {
	H, W, OW := p.in[0], p.in[1], p.out[1]
	kw, sw := p.kernel[1], p.stride[1]
	c0, c1 := OW, 0
	for ow := range OW {
		if p.count[1][ow] == kw {
			c0, c1 = min(c0, ow), ow+1
		}
	}
	if c1-c0 < poolFastLeast {
		return nil
	}
	f := &poolFast{c0: c0, c1: c1, sw: sw, wq: (W + sw - 1) / sw, skip0: c0, skip1: c1}
	f.sub = H * f.wq
	f.offs = f.taps(p, c0, kw)
	// The edge columns go through the same row kernel, one output a call
	// (a call costs less than a window walked directly), where none is
	// outside the input altogether.
	var edges []poolEdge
	for ow := range OW {
		if ow >= c0 && ow < c1 {
			continue
		}
		cn := p.count[1][ow]
		if cn == 0 {
			return f
		}
		edges = append(edges, poolEdge{ow: ow, cn: cn, offs: f.taps(p, ow, cn)})
	}
	f.edges, f.skip0, f.skip1 = edges, 0, OW
	return f
}

// taps returns the offsets, row-major, of the kernel's taps on the first
// cn input columns of output column ow's window, from its first input row.
func (f *poolFast) taps(p *poolLayout, ow, cn int) []int {
	offs := make([]int, 0, p.kernel[0]*cn)
	for i := range p.kernel[0] {
		for j := range cn {
			c := p.first[1][ow] + j*p.dil[1]
			offs = append(offs, i*p.dil[0]*f.wq+c%f.sw*f.sub+c/f.sw)
		}
	}
	return offs
}

// plane calls row for every output row oh that has input rows under its
// windows, with the row's interior outputs (dst, from output column ow),
// the source its taps read at offs (rn·kernel[1] of them, rn the
// window's input rows) plus the output's index among dst's, then once for
// each edge column (dst its one output, rn·cn taps). Where rows is not
// nil, it takes the interior outputs of each run of rows whose windows
// all lie in the input (so stride rows apart) in one call instead: n outputs
// of each of the rows, dstPitch apart in dst, their taps srcPitch apart
// in src. maxPlane2D or avgPlane2D with the skip range [skip0, skip1)
// writes the rest.
func (f *poolFast) plane(p *poolLayout, x, y []float32, row func(oh, ow int, dst, src []float32, offs []int), rows func(dst, src []float32, offs []int, n, rows, dstPitch, srcPitch int)) {
	src := x
	if f.sw > 1 {
		buf := gemmBuf(f.sw * f.sub)
		defer gemmBufs.Put(buf)
		src = *buf
		poolSplit(x, src, p.in[0], p.in[1], f.sw, f.wq, f.sub)
	}
	OH, OW, kh, kw, sh := p.out[0], p.out[1], p.kernel[0], p.kernel[1], p.stride[0]
	for oh := 0; oh < OH; oh++ {
		rn := p.count[0][oh]
		if rn == 0 {
			continue
		}
		first := p.first[0][oh]
		n := 1
		if rows != nil && rn == kh {
			// Whole windows start where their row's does (the stride
			// apart), no tap cut off.
			for oh+n < OH && p.count[0][oh+n] == kh {
				n++
			}
			rows(y[oh*OW+f.c0:], src[first*f.wq:], f.offs[:rn*kw], f.c1-f.c0, n, OW, sh*f.wq)
		} else {
			row(oh, f.c0, y[oh*OW+f.c0:oh*OW+f.c1], src[first*f.wq:], f.offs[:rn*kw])
		}
		for r := oh; r < oh+n; r++ {
			in := src[p.first[0][r]*f.wq:]
			for _, e := range f.edges {
				row(r, e.ow, y[r*OW+e.ow:r*OW+e.ow+1], in, e.offs[:rn*e.cn])
			}
		}
		oh += n - 1
	}
}

// poolSplit writes the H×W plane x into buf in the phase layout of column
// stride sw: column c of row r at (c mod sw)·sub + r·wq + ⌊c/sw⌋. Slots
// past a phase row's last column are left as they are (no window reads
// them).
func poolSplit(x, buf []float32, H, W, sw, wq, sub int) {
	if sw == 2 && dwSplitRows(buf, buf[sub:], x, H, wq, W/2, W, wq) {
		return
	}
	for r := range H {
		row := x[r*W : (r+1)*W]
		if sw == 2 {
			// Even columns fill the wq = ⌈W/2⌉ slots of phase 0, odd ones
			// ⌊W/2⌋ of phase 1.
			even, odd := buf[r*wq:(r+1)*wq], buf[sub+r*wq:sub+r*wq+W/2]
			n := dwSplit2(even, odd, row)
			for i := n; i < len(even); i++ {
				even[i] = row[2*i]
			}
			for i := n; i < len(odd); i++ {
				odd[i] = row[2*i+1]
			}
			continue
		}
		// Column c's phase and index, stepped without dividing.
		ph, q := 0, 0
		for _, v := range row {
			buf[ph*sub+r*wq+q] = v
			if ph++; ph == sw {
				ph, q = 0, q+1
			}
		}
	}
}

// maxRowsPitchGo is the portable maxRowsPitch.
func maxRowsPitchGo(dst, src []float32, offs []int, n, rows, dstPitch, srcPitch int) {
	for r := range rows {
		maxRowsGo(dst[r*dstPitch:r*dstPitch+n], src[r*srcPitch:], offs)
	}
}

// maxRowsGo is the portable maxRows.
func maxRowsGo(dst, src []float32, offs []int) {
	for i := range dst {
		best := src[offs[0]+i]
		for _, off := range offs[1:] {
			if v := src[off+i]; v > best || best != best {
				best = v
			}
		}
		dst[i] = best
	}
}

// meanRowsGo is the portable meanRows.
func meanRowsGo(dst, src []float32, offs []int, d float32) {
	first := src[offs[0]:][:len(dst)]
	for i, v := range first {
		dst[i] = v + 0
	}
	for _, off := range offs[1:] {
		tap := src[off:][:len(dst)]
		for i, v := range tap {
			dst[i] += v
		}
	}
	for i := range dst {
		dst[i] /= d
	}
}
