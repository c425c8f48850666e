package hostfallback

import "sync/atomic"

// convShiftKernel computes an 8×32 tile of convShiftF32: for each of the
// taps t, for each of the c channels, A's next eight values (eight output
// channels' filter values of tap t and channel ch, packed taps outer,
// channels inner) times the 32 floats of B at b + offs[t] + ch·plane,
// summed; then bias[i] added to row i and the tile stored at out (row
// stride ldc floats).
type convShiftKernel func(c int, a *float32, b *float32, plane int, offs *int, taps int, out *float32, ldc int, bias *float32)

// convShiftCols is about how many grid columns (see convShiftF32) a unit
// of convShiftF32's work computes, and convShiftRows how many output
// channels at most: its tile of output, 64 rows by ~1024 columns, stays
// within a core's L2.
const (
	convShiftCols = 1024
	convShiftRows = 64
)

// shiftable reports whether convShiftF32 computes the convolution: a 2-D
// one of group 1, strides 1 and a kernel of more than one tap, where the
// CPU has the tile kernel.
func (l *convLayout) shiftable() bool {
	return convShiftTile != nil && l.rank == 2 && l.group == 1 && l.kernelSize > 1 &&
		l.stride[0] == 1 && l.stride[1] == 1
}

// shiftF32 is the stride-1 convolution without the im2col copy (which
// writes each input value once per tap, and costs as much as the product
// where there are few output channels). Each image's input is copied once
// into zero-padded planes of the hp×wp values its windows reach; output
// (oh, ow) is then position oh·wp + ow of a grid of wp columns a row,
// and tap (i, j) of every grid position reads the padded plane at that
// position plus i·dh·wp + j·dw: for each tap, the product of the filters'
// column of that tap by a contiguous run of the padded planes. The tile
// kernel sums all taps and channels in registers, then adds the bias; the
// grid's columns past OW are dropped as the tile is copied to y, and act
// (nil: none) applied to each block of output. With constW (the filters
// are a constant of the model) the filters are packed for the kernel once
// (see shiftFilters). The sums run over taps,
// then channels, where the im2col product's run over channels, then taps.
func (l *convLayout) shiftF32(threads *Threads, x, w, b, y []float32, act *convAct, constW bool) {
	H, W, OH, OW := l.in[0], l.in[1], l.out[0], l.out[1]
	kh, kw, dh, dw := l.kernel[0], l.kernel[1], l.dil[0], l.dil[1]
	hp, wp := OH+(kh-1)*dh, OW+(kw-1)*dw
	top, left := l.padBegin[0], min(l.padBegin[1], wp)
	C, M, S, taps := l.cin, l.m, l.outSize, l.kernelSize
	K, plane := C*taps, hp*wp
	offs := make([]int, 0, taps)
	for i := range kh {
		for j := range kw {
			offs = append(offs, i*dh*wp+j*dw)
		}
	}
	blocks := (M + 7) / 8
	ap := l.shiftFilters(w, constW)
	if !constW {
		defer gemmBufs.Put(&ap)
	}
	var bLast [8]float32
	copy(bLast[:], b[(blocks-1)*8:M])
	// Units of work: R output rows by bpg blocks of output channels.
	workers := threads.Workers()
	R := min(OH, max(1, convShiftCols/wp))
	chunks := (OH + R - 1) / R
	groups := (blocks + convShiftRows/8 - 1) / (convShiftRows / 8)
	for chunks*groups < 2*workers && groups < blocks {
		groups++
	}
	bpg := (blocks + groups - 1) / groups
	groups = (blocks + bpg - 1) / bpg
	units := chunks * groups
	ld := gemmCeil((R-1)*wp+OW, 32) * 32
	pbuf := gemmBuf(C*plane + 32)
	defer gemmBufs.Put(pbuf)
	pad := *pbuf
	clear(pad[C*plane:])
	for img := range l.n {
		xi := x[img*C*H*W:]
		threads.For(C, max(1, 16384/plane), func(c0, c1 int) {
			for c := c0; c < c1; c++ {
				for r := range hp {
					row := pad[c*plane+r*wp : c*plane+(r+1)*wp]
					ir := r - top
					if ir < 0 || ir >= H {
						clear(row)
						continue
					}
					n := copy(row[left:], xi[(c*H+ir)*W:(c*H+ir+1)*W])
					clear(row[:left])
					clear(row[left+n:])
				}
			}
		})
		yi := img * M * S
		run := func(u int, scr []float32) {
			ch, g := u/groups, u%groups
			oh0, oh1 := ch*R, min(OH, (ch+1)*R)
			rb0, rb1 := g*bpg, min(blocks, (g+1)*bpg)
			tiles := gemmCeil((oh1-oh0-1)*wp+OW, 32)
			for rb := rb0; rb < rb1; rb++ {
				bias := b[rb*8:]
				if rb == blocks-1 {
					bias = bLast[:]
				}
				for t := range tiles {
					q := oh0*wp + t*32
					convShiftTile(C, &ap[rb*8*K], &pad[q], plane, &offs[0], taps, &scr[(rb-rb0)*8*ld+t*32], ld, &bias[0])
				}
			}
			m0, m1 := rb0*8, min(M, rb1*8)
			for m := m0; m < m1; m++ {
				src := scr[(m-m0)*ld:]
				for oh := oh0; oh < oh1; oh++ {
					copy(y[yi+m*S+oh*OW:yi+m*S+(oh+1)*OW], src[(oh-oh0)*wp:])
				}
			}
			act.apply(y, yi+m0*S+oh0*OW, m1-m0, (oh1-oh0)*OW, S)
		}
		if workers == 1 || units == 1 {
			buf := gemmBuf(bpg * 8 * ld)
			for u := range units {
				run(u, *buf)
			}
			gemmBufs.Put(buf)
			continue
		}
		var next atomic.Int64
		threads.For(workers, 1, func(_, _ int) {
			buf := gemmBuf(bpg * 8 * ld)
			defer gemmBufs.Put(buf)
			for u := int(next.Add(1) - 1); u < units; u = int(next.Add(1) - 1) {
				run(u, *buf)
			}
		})
	}
}

// shiftFilters returns the filters w packed for convShiftKernel: per block
// of eight output channels (zero past M), per tap, per channel, the eight
// channels' values. With constW they are packed once, kept in l (which the
// call's memo keeps for its shapes) and returned from then on; else they
// are packed into a buffer of gemmBufs, which the caller puts back.
func (l *convLayout) shiftFilters(w []float32, constW bool) []float32 {
	if constW {
		l.shiftOnce.Do(func() { l.shiftA = l.packShiftFilters(w, make([]float32, l.shiftFiltersSize())) })
		return l.shiftA
	}
	return l.packShiftFilters(w, *gemmBuf(l.shiftFiltersSize()))
}

// shiftFiltersSize is the length of the packed filters.
func (l *convLayout) shiftFiltersSize() int { return (l.m + 7) / 8 * 8 * l.cin * l.kernelSize }

// packShiftFilters packs w into ap (see shiftFilters) and returns it.
func (l *convLayout) packShiftFilters(w, ap []float32) []float32 {
	M, C, taps := l.m, l.cin, l.kernelSize
	K := C * taps
	for rb := range (M + 7) / 8 {
		blk := ap[rb*8*K : (rb+1)*8*K]
		for r := range 8 {
			m := rb*8 + r
			if m >= M {
				for k := range K {
					blk[k*8+r] = 0
				}
				continue
			}
			wm := w[m*K : (m+1)*K]
			for c := range C {
				for t := range taps {
					blk[(t*C+c)*8+r] = wm[c*taps+t]
				}
			}
		}
	}
	return ap
}
