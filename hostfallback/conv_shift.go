package hostfallback

import "sync/atomic"

// convShiftKernel computes an mr×nr tile of shiftF32: for each of the
// taps t, for each of the c channels, A's next mr values (mr output
// channels' filter values of tap t and channel ch, packed taps outer,
// channels inner) times the nr floats of B at b + offs[t] + ch·plane,
// summed; then bias[i] added to row i and the tile stored at out (row
// stride ldc floats).
type convShiftKernel struct {
	name   string
	mr, nr int
	tile   func(c int, a *float32, b *float32, plane int, offs *int, taps int, out *float32, ldc int, bias *float32)
	// narrow: the kernel beats the im2col product only where its copy
	// costs most, with few output channels or input channels (see
	// shiftable).
	narrow bool
}

// convShiftCols is about how many grid columns (see shiftF32) a unit of
// shiftF32's work computes, and convShiftRows how many output channels at
// most: the unit's output, 64 channels by ~1024 columns, and the input
// rows its taps read stay within a core's L2.
const (
	convShiftCols  = 1024
	convShiftRows  = 64
	convShiftUnits = 4
)

// convShiftTile is shiftF32's tile kernel, the CPU's fastest; nil where
// it has none.
var convShiftTile = func() *convShiftKernel {
	if ks := convShiftKernels(); len(ks) > 0 {
		return ks[0]
	}
	return nil
}()

// shiftable reports whether shiftF32 computes the convolution: a 2-D
// one of group 1, more than one tap and strides within the kernel's
// extent, where the CPU has a tile kernel; with a narrow kernel, only
// where there are at most 32 output channels or 4 input channels. (A
// strided 1×1 convolution, or one whose stride skips input, reads some of
// the phase planes that shiftF32 would copy whole: the im2col copy costs
// less. The AVX2 kernel on one goroutine, against the AVX2 im2col
// product, in GFLOP/s: 128→32 on 56² 81 vs 67, the 3→16 and 3→64 stems
// 53 vs 45 and 93 vs 77, but 64→64 on 56² 88 vs 89, 256→256 on 14² 86 vs
// 82, 512→512 on 7² 68 vs 90.)
func (l *convLayout) shiftable() bool {
	kn := convShiftTile
	if kn == nil || l.rank != 2 || l.group != 1 || l.kernelSize == 1 || kn.narrow && l.m > 32 && l.cin > 4 {
		return false
	}
	for d := range 2 {
		if l.stride[d] > (l.kernel[d]-1)*l.dil[d]+1 {
			return false
		}
	}
	return true
}

// shiftF32 is the 2-D convolution without the im2col copy (which writes
// each input value once per tap, and costs as much as the product where
// there are few output channels). Each image's input is copied once into
// zero-padded planes of the hp×wp values its windows reach, split by the
// strides into sh·sw phase planes of hq×wq (phase (a, b) holding the rows
// a, a+sh, … and columns b, b+sw, …); output (oh, ow) is then position
// oh·wq + ow of a grid of wq columns a row, and tap (i, j) of every grid
// position reads one phase plane, (i·dh mod sh, j·dw mod sw), at that
// position plus ⌊i·dh/sh⌋·wq + ⌊j·dw/sw⌋: for each tap, the product of
// the filters' column of that tap by a contiguous run of the phase planes.
// The tile kernel sums all taps and channels in registers, then adds the
// bias, and stores a tile that lies within one output row's columns
// straight into y; another goes to a scratch tile, from which its output
// columns are copied (the grid's columns past OW dropped). act (nil:
// none) is applied to each unit's block of output. With constW (the
// filters are a constant of the model) the filters are packed for the
// kernel once (see shiftFilters). The sums run over taps, then channels,
// where the im2col product's run over channels, then taps.
func (l *convLayout) shiftF32(threads *Threads, x, w, b, y []float32, act *convAct, constW bool) {
	H, W, OH, OW := l.in[0], l.in[1], l.out[0], l.out[1]
	kh, kw, dh, dw := l.kernel[0], l.kernel[1], l.dil[0], l.dil[1]
	sh, sw := l.stride[0], l.stride[1]
	hp, wp := (OH-1)*sh+(kh-1)*dh+1, (OW-1)*sw+(kw-1)*dw+1
	hq, wq := (hp+sh-1)/sh, (wp+sw-1)/sw
	top, left := l.padBegin[0], min(l.padBegin[1], wp)
	C, M, S, taps := l.cin, l.m, l.outSize, l.kernelSize
	K, pq := C*taps, hq*wq
	plane := sh * sw * pq
	offs := l.shiftOffsets(wq, pq)
	kn := convShiftTile
	mr, nr := kn.mr, kn.nr
	blocks := (M + mr - 1) / mr
	ap, abuf := l.shiftFilters(w, constW)
	if abuf != nil {
		defer gemmBufs.Put(abuf)
	}
	var bLast [8]float32
	copy(bLast[:], b[(blocks-1)*mr:M])
	// Units of work: R output rows by bpg blocks of output channels, at
	// least convShiftUnits a worker where the output has rows and blocks
	// enough, all of about one size: the workers claim them in turn, so
	// that the last unit to finish is a small share of the work. Each
	// further cut of the rows reads the filters once more, each further
	// group of channels the input planes: the smaller is cut first.
	workers := threads.Workers()
	chunks := (OH + max(1, convShiftCols/wq) - 1) / max(1, convShiftCols/wq)
	groups := (blocks + convShiftRows/mr - 1) / (convShiftRows / mr)
	rowsFirst := M*K < C*plane
	for workers > 1 && chunks*groups < convShiftUnits*workers && (chunks < OH || groups < blocks) {
		if (rowsFirst || groups == blocks) && chunks < OH {
			chunks++
		} else {
			groups++
		}
	}
	R := (OH + chunks - 1) / chunks
	chunks = (OH + R - 1) / R
	bpg := (blocks + groups - 1) / groups
	groups = (blocks + bpg - 1) / bpg
	units := chunks * groups
	pbuf := gemmBuf(C*plane + 32)
	defer gemmBufs.Put(pbuf)
	pad := *pbuf
	clear(pad[C*plane:])
	for img := range l.n {
		xi := x[img*C*H*W:]
		threads.For(C, max(1, 16384/plane), func(c0, c1 int) {
			var row []float32
			var rbuf *[]float32
			if sw > 1 {
				rbuf = gemmBuf(wp)
				row = *rbuf
			}
			for c := c0; c < c1; c++ {
				if sw == 2 && shiftSplit2(pad[c*plane:(c+1)*plane], xi[c*H*W:(c+1)*H*W], H, W, hp, wp, wq, pq, sh, top, left) {
					continue
				}
				for r := range hp {
					// Row r of the padded plane: row ⌊r/sh⌋ of the phase
					// planes (r mod sh, ·).
					at := c*plane + r%sh*sw*pq + r/sh*wq
					ir := r - top
					if ir < 0 || ir >= H {
						for ph := range sw {
							clear(pad[at+ph*pq : at+ph*pq+wq])
						}
						continue
					}
					if sw == 1 {
						row = pad[at : at+wp]
					}
					n := copy(row[left:], xi[(c*H+ir)*W:(c*H+ir+1)*W])
					clear(row[:left])
					clear(row[left+n:])
					if sw > 1 {
						poolSplit(row, pad[at:], 1, wp, sw, wq, pq)
					}
				}
			}
			if rbuf != nil {
				gemmBufs.Put(rbuf)
			}
		})
		yi := img * M * S
		run := func(u int, scr []float32) {
			ch, g := u/groups, u%groups
			oh0, oh1 := ch*R, min(OH, (ch+1)*R)
			rb0, rb1 := g*bpg, min(blocks, (g+1)*bpg)
			last := (oh1-1)*wq + OW
			for rb := rb0; rb < rb1; rb++ {
				m0 := rb * mr
				bias, rows := b[m0:], min(mr, M-m0)
				if rb == blocks-1 {
					bias = bLast[:]
				}
				for q := oh0 * wq; q < last; q += nr {
					// A tile within one output row's columns goes
					// straight to y; others to scr, then their output
					// columns to y.
					oh, c := q/wq, q%wq
					if rows == mr && c+nr <= OW {
						kn.tile(C, &ap[rb*mr*K], &pad[q], plane, &offs[0], taps, &y[yi+m0*S+oh*OW+c], S, &bias[0])
						continue
					}
					kn.tile(C, &ap[rb*mr*K], &pad[q], plane, &offs[0], taps, &scr[0], nr, &bias[0])
					for j := 0; j < nr && q+j < last; {
						oh, c := (q+j)/wq, (q+j)%wq
						n := min(nr-j, wq-c)
						if c < OW {
							n = min(n, OW-c)
							for r := range rows {
								copy(y[yi+(m0+r)*S+oh*OW+c:][:n], scr[r*nr+j:][:n])
							}
						}
						j += n
					}
				}
			}
			m0, m1 := rb0*mr, min(M, rb1*mr)
			act.apply(y, yi+m0*S+oh0*OW, m1-m0, (oh1-oh0)*OW, S)
		}
		if workers == 1 || units == 1 {
			buf := gemmBuf(mr * nr)
			for u := range units {
				run(u, *buf)
			}
			gemmBufs.Put(buf)
			continue
		}
		var next atomic.Int64
		threads.For(workers, 1, func(_, _ int) {
			buf := gemmBuf(mr * nr)
			defer gemmBufs.Put(buf)
			for u := int(next.Add(1) - 1); u < units; u = int(next.Add(1) - 1) {
				run(u, *buf)
			}
		})
	}
}

// shiftOffsets returns each tap's offset (row-major over the kernel) in
// shiftF32's phase planes (wq a phase row, pq a phase plane), worked out
// once for l (which the call's memo keeps for its shapes).
func (l *convLayout) shiftOffsets(wq, pq int) []int {
	l.shiftGeom.Do(func() {
		sh, sw := l.stride[0], l.stride[1]
		for i := range l.kernel[0] {
			for j := range l.kernel[1] {
				r, c := i*l.dil[0], j*l.dil[1]
				l.shiftOffs = append(l.shiftOffs, (r%sh*sw+c%sw)*pq+r/sh*wq+c/sw)
			}
		}
	})
	return l.shiftOffs
}

// shiftFilters returns the filters w packed for the tile kernel: per block
// of mr output channels (zero past M), per tap, per channel, the mr
// channels' values. With constW they are packed once, kept in l (which
// the call's memo keeps for its shapes) and returned from then on; else
// they are packed into a buffer of gemmBufs, returned too for the caller
// to put back.
func (l *convLayout) shiftFilters(w []float32, constW bool) ([]float32, *[]float32) {
	if constW {
		l.shiftOnce.Do(func() { l.shiftA = l.packShiftFilters(w, make([]float32, l.shiftFiltersSize())) })
		return l.shiftA, nil
	}
	buf := gemmBuf(l.shiftFiltersSize())
	return l.packShiftFilters(w, *buf), buf
}

// shiftFiltersSize is the length of the packed filters.
func (l *convLayout) shiftFiltersSize() int {
	mr := convShiftTile.mr
	return (l.m + mr - 1) / mr * mr * l.cin * l.kernelSize
}

// packShiftFilters packs w into ap (see shiftFilters) and returns it.
func (l *convLayout) packShiftFilters(w, ap []float32) []float32 {
	M, C, taps, mr := l.m, l.cin, l.kernelSize, convShiftTile.mr
	K := C * taps
	for rb := range (M + mr - 1) / mr {
		blk := ap[rb*mr*K : (rb+1)*mr*K]
		for r := range mr {
			m := rb*mr + r
			if m >= M {
				for k := range K {
					blk[k*mr+r] = 0
				}
				continue
			}
			wm := w[m*K : (m+1)*K]
			for c := range C {
				for t := range taps {
					blk[(t*C+c)*mr+r] = wm[c*taps+t]
				}
			}
		}
	}
	return ap
}

// shiftSplit2 is shiftF32's copy of one input plane x (H×W) into its
// zero-padded phase planes pad for a column stride of 2, in one
// dwSplitRows call for each row phase instead of one a row; it reports
// false where dwSplitRows does not take the rows, the caller then writing
// every row itself.
func shiftSplit2(pad, x []float32, H, W, hp, wp, wq, pq, sh, top, left int) bool {
	n := min(W, wp-left)
	if n < 1 {
		return false
	}
	ne, no := (n+1)/2, n/2
	// Input column 2k is padded column 2k+left: phase left mod 2, index
	// k+⌊left/2⌋; column 2k+1 the other phase, index k+⌊(left+1)/2⌋.
	e, o := left%2*pq+left/2, (left+1)%2*pq+(left+1)/2
	for a := range sh {
		// The padded rows of row phase a that hold input rows: r = a,
		// a+sh, … from the first at or past top to the last before
		// top+H (and hp).
		r0 := a
		if r0 < top {
			r0 += (top - r0 + sh - 1) / sh * sh
		}
		end := min(hp, top+H)
		if r0 >= end {
			continue
		}
		rows := (end-1-r0)/sh + 1
		at := a*2*pq + r0/sh*wq
		if !dwSplitRows(pad[at+e:], pad[at+o:], x[(r0-top)*W:], rows, ne, no, sh*W, wq) {
			return false
		}
	}
	for r := range hp {
		at := r%sh*2*pq + r/sh*wq
		if ir := r - top; ir < 0 || ir >= H {
			clear(pad[at : at+wq])
			clear(pad[at+pq : at+pq+wq])
			continue
		}
		for c := 0; c < left; c++ {
			pad[at+c%2*pq+c/2] = 0
		}
		for c := left + n; c < wp; c++ {
			pad[at+c%2*pq+c/2] = 0
		}
	}
	return true
}
