package hostfallback

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Blocking of sgemm, after Goto and van de Geijn's layout (as in BLIS and
// gonum): a KC×NC slab of op(B) is packed into NR-wide strips and the
// matching m×KC slab of op(A) (scaled by alpha) into MR-tall strips; a
// register-blocked MR×NR micro-kernel (a sgemmKernel) then runs over a
// KC-long pair of strips. A B strip (KC×NR) stays in L1 while an A block
// (MC×KC) streams from L2.
const (
	gemmKC = 256
	gemmNC = 2048
	// gemmSmallWork is the m·n·k below which packing does not pay.
	gemmSmallWork = 8 * 8 * 8
	// gemmParallelWork is the m·n·k from which a call is split over
	// goroutines.
	gemmParallelWork = 64 * 64 * 64
)

// The portable kernel is 4×2 with its k loop unrolled gemmKU times: eight
// accumulators leave room in amd64's sixteen SSE registers for the
// operands (4×3, 4×4 and 6×2 tiles measured slower).
const (
	gemmMR = 4
	gemmNR = 2
	gemmKU = 4
)

// sgemmKernel is a micro-kernel and the blocking that suits it.
type sgemmKernel struct {
	name   string
	mr, nr int
	// ku is the multiple of k-steps that tile consumes; packed strips are
	// zero-padded to it.
	ku int
	// mc is the height of an A block, a multiple of mr.
	mc int
	// tile computes a full mr×nr tile of C at c (row stride ldc) from kc
	// k-steps (a positive multiple of ku) of packed strips a (mr values a
	// step) and b (nr values a step): it stores the tile, or adds it to C
	// when add is set. Storing, it adds bias[i] to row i unless bias is
	// nil.
	tile func(kc int, a, b, c *float32, ldc int, add bool, bias *float32)
	// direct, when set, is tile reading A unpacked: mr rows of op(A) at a,
	// lda floats apart, for ku = 1 and alpha = 1. It spares packing A, whose
	// rows are read only once a B strip in any case.
	direct func(kc int, a *float32, lda int, b, c *float32, ldc int, add bool, bias *float32)
	// halfTile and halfDirect, when set, are tile and direct computing
	// only the first nr/2 columns of the tile, for an edge strip of at
	// most that many columns (N of 196 leaves 4 of a 16- or 32-wide
	// strip), or, with A unpacked, of a column or two more, which
	// gemmMacro computes apart (N of 49 leaves 17 of a 32-wide strip).
	halfTile   func(kc int, a, b, c *float32, ldc int, add bool, bias *float32)
	halfDirect func(kc int, a *float32, lda int, b, c *float32, ldc int, add bool, bias *float32)
	// directPart, when set, holds direct kernels for a partial strip of
	// A, indexed by its row count (nil where there is none): they read
	// and compute only its rows, sparing the packing of the strip and
	// the rows missing from it (M = 32 or 64 leaves 2 or 4).
	directPart []func(kc int, a *float32, lda int, b, c *float32, ldc int, add bool, bias *float32)
	// warm, when set, prefetches lines cache lines from p on (see
	// gemmMacro).
	warm func(p *float32, lines int)
}

// part returns the direct kernel for a partial strip of rows rows, or nil.
func (kn *sgemmKernel) part(rows int) func(kc int, a *float32, lda int, b, c *float32, ldc int, add bool, bias *float32) {
	if rows < len(kn.directPart) {
		return kn.directPart[rows]
	}
	return nil
}

// gemmGo is the portable kernel, in pure Go.
var gemmGo = &sgemmKernel{name: "go4x2", mr: gemmMR, nr: gemmNR, ku: gemmKU, mc: 64, tile: gemmTileGo}

// sgemmVariant is a kernel of this architecture, the CPU features it
// needs (named as Linux's /proc/cpuinfo flags) and whether this CPU has
// them.
type sgemmVariant struct {
	kernel *sgemmKernel
	needs  []string
	runs   bool
}

// sgemmKernels returns the kernels that this CPU runs, fastest first; the
// portable one is always last.
func sgemmKernels() []*sgemmKernel {
	var ks []*sgemmKernel
	for _, v := range sgemmVariants() {
		if v.runs {
			ks = append(ks, v.kernel)
		}
	}
	return ks
}

// gemmBest is the fastest kernel that this CPU runs.
var gemmBest = sgemmKernels()[0]

// gemmBufs holds the scratch buffers of the GEMM and the convolutions.
var gemmBufs = newScratchPool()

// gemmBuf returns a pooled buffer of at least n floats; put it back with
// gemmBufs.Put.
func gemmBuf(n int) *[]float32 {
	p := gemmBufs.Get()
	if cap(*p) < n {
		*p = make([]float32, n)
	}
	*p = (*p)[:n]
	return p
}

// scratchSmall is the size in floats up to which a scratch buffer is kept
// across garbage collections.
const scratchSmall = 1 << 18

// scratchPool keeps float32 scratch buffers between kernel calls. Small
// ones wait in a channel, which, unlike a sync.Pool, the garbage collector
// does not empty: a model of many small kernels collects often, and would
// otherwise allocate its scratch anew after each collection. Large ones go
// to a sync.Pool, so that their memory is returned when unused.
type scratchPool struct {
	small chan *[]float32
	large sync.Pool
}

func newScratchPool() *scratchPool {
	return &scratchPool{small: make(chan *[]float32, 4*runtime.GOMAXPROCS(0)+8)}
}

// Get returns a buffer of any length, possibly empty.
func (p *scratchPool) Get() *[]float32 {
	select {
	case b := <-p.small:
		return b
	default:
	}
	if b, ok := p.large.Get().(*[]float32); ok {
		return b
	}
	return new([]float32)
}

// Put returns b to the pool.
func (p *scratchPool) Put(b *[]float32) {
	if cap(*b) <= scratchSmall {
		select {
		case p.small <- b:
			return
		default:
		}
	}
	p.large.Put(b)
}

// sgemm computes C = alpha·op(A)·op(B) + beta·C for row-major float32
// matrices, where op(X) is X or its transpose: op(A) is m×k, op(B) is k×n
// and C is m×n. lda, ldb and ldc are the row strides of A, B and C as
// stored (A is k×m when transA is set, B is n×k when transB is set). When
// beta is 0, C is overwritten and need not hold numbers. The slices must
// cover the matrices; the work is spread over threads.Workers() goroutines.
func sgemm(threads *Threads, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	gemmRun(threads, gemmBest, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, nil, c, ldc, threads.Workers())
}

// sgemmSerial is sgemm on the calling goroutine alone, for callers that
// already run one product per goroutine.
func sgemmSerial(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	gemmRun(nil, gemmBest, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, nil, c, ldc, 1)
}

// sgemmBias sets C (m×n, row stride ldc) to A·B plus bias[i] on each row
// i, for row-major A (m×k) and B (k×n), then applies ep (nil: none) to
// it; serial keeps it on the calling goroutine.
func sgemmBias(threads *Threads, serial bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias, c []float32, ldc int, ep gemmEpilogue) {
	workers := threads.Workers()
	if serial {
		workers = 1
	}
	gemmRunWith(threads, gemmBest, false, false, m, n, k, 1, a, lda, b, ldb, 0, bias[:m], c, ldc, workers, ep)
}

// gemmEpilogue finishes blocks of C in place once their products are
// complete (their last k slab stored), while they are still in cache:
// rows×cols values from c[at], rows ldc apart. The packed product calls
// it on each column strip of a row block, or, unless perStrip, once on a
// row block's strips together; the others on the whole of C.
type gemmEpilogue interface {
	finish(c []float32, at, rows, cols, ldc int)
	// perStrip reports whether finish gains from a strip's being in L1
	// more than it loses to the short rows (a clamp, in one call for the
	// block, does; an activation called row by row does not).
	perStrip() bool
}

// gemmRun is sgemm with kernel kn on up to workers goroutines, plus
// bias[i] on each row i when bias is not nil (then beta must be 0):
// degenerate shapes scale C, small or thin ones take the unpacked loops,
// the rest the packed kernel.
func gemmRun(threads *Threads, kn *sgemmKernel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, bias, c []float32, ldc int, workers int) {
	gemmRunWith(threads, kn, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, bias, c, ldc, workers, nil)
}

// gemmRunWith is gemmRun followed by the epilogue ep (nil: none) on C.
func gemmRunWith(threads *Threads, kn *sgemmKernel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, bias, c []float32, ldc int, workers int, ep gemmEpilogue) {
	if m <= 0 || n <= 0 {
		return
	}
	if ep != nil && (k <= 0 || alpha == 0 || !gemmTakesPacked(m, n, k)) {
		gemmRunWith(threads, kn, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, bias, c, ldc, workers, nil)
		ep.finish(c, 0, m, n, ldc)
		return
	}
	if bias != nil && (k <= 0 || alpha == 0 || !gemmTakesPacked(m, n, k)) {
		for i := range m {
			row := c[i*ldc : i*ldc+n]
			for j := range row {
				row[j] = bias[i]
			}
		}
		bias, beta = nil, 1
	}
	if k <= 0 || alpha == 0 {
		for i := range m {
			gemmScaleRow(c[i*ldc:i*ldc+n], beta)
		}
		return
	}
	work := m * n * k
	if work < gemmParallelWork {
		workers = 1
	}
	if !gemmTakesPacked(m, n, k) {
		g := &gemmSmall{transA, transB, k, alpha, a, lda, b, ldb, beta, c, ldc}
		if workers == 1 {
			g.run(0, m, 0, n)
			return
		}
		if m >= 2*workers {
			threads.For(m, 1, func(lo, hi int) { g.run(lo, hi, 0, n) })
			return
		}
		threads.For(n, 16, func(lo, hi int) { g.run(0, m, lo, hi) })
		return
	}
	gemmPackedWith(threads, kn, transA, transB, m, n, k, alpha, a, lda, b, ldb, nil, beta, bias, c, ldc, workers, ep)
}

// gemmTakesPacked reports whether gemmRun multiplies an m×n product of
// depth k with the packed kernels rather than gemmSmall.
func gemmTakesPacked(m, n, k int) bool {
	return m >= 2 && n >= 4 && m*n*k >= gemmSmallWork
}

// gemmScaleRow sets row to beta·row; beta 0 clears it, NaNs included.
func gemmScaleRow(row []float32, beta float32) {
	switch beta {
	case 0:
		clear(row)
	case 1:
	default:
		for j := range row {
			row[j] *= beta
		}
	}
}

// gemmSmall is the unpacked product for small or degenerate shapes.
type gemmSmall struct {
	transA, transB bool
	k              int
	alpha          float32
	a              []float32
	lda            int
	b              []float32
	ldb            int
	beta           float32
	c              []float32
	ldc            int
}

// run computes rows [i0, i1) and columns [j0, j1) of C: dot products when
// op(B)'s columns are contiguous (B transposed, or a single column with
// unit stride), row updates otherwise.
func (g *gemmSmall) run(i0, i1, j0, j1 int) {
	k := g.k
	column := !g.transB && j1-j0 == 1 && g.ldb == 1
	for i := i0; i < i1; i++ {
		crow := g.c[i*g.ldc+j0 : i*g.ldc+j1]
		gemmScaleRow(crow, g.beta)
		if g.transB || column {
			var arow []float32
			if g.transA {
				arow = make([]float32, k)
				for p := range arow {
					arow[p] = g.a[p*g.lda+i]
				}
			} else {
				arow = g.a[i*g.lda : i*g.lda+k]
			}
			if column {
				crow[0] += g.alpha * gemmDot(arow, g.b[j0:j0+k])
				continue
			}
			for j := range crow {
				crow[j] += g.alpha * gemmDot(arow, g.b[(j0+j)*g.ldb:(j0+j)*g.ldb+k])
			}
			continue
		}
		if !g.transA && g.alpha == 1 {
			gemvRows(g.a[i*g.lda:][:k], g.b[j0:], g.ldb, crow)
			continue
		}
		for p := range k {
			var av float32
			if g.transA {
				av = g.a[p*g.lda+i]
			} else {
				av = g.a[i*g.lda+p]
			}
			av *= g.alpha
			brow := g.b[p*g.ldb+j0 : p*g.ldb+j1]
			for j, bv := range brow {
				crow[j] += av * bv
			}
		}
	}
}

// gemmDotGo is the portable gemmDot, with four partial sums so that the
// additions pipeline.
func gemmDotGo(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		x, y := (*[4]float32)(a[i:]), (*[4]float32)(b[i:])
		s0 += x[0] * y[0]
		s1 += x[1] * y[1]
		s2 += x[2] * y[2]
		s3 += x[3] * y[3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// gemmMaxTile bounds mr·nr over the kernels (the scratch tile for edges)
// and gemmMaxMR bounds mr; gemmMacroScratch is the scratch of gemmMacro:
// the tile, the bias of a partial strip and a column of a B strip.
const (
	gemmMaxTile      = 256
	gemmMaxMR        = 16
	gemmMacroScratch = gemmMaxTile + gemmMaxMR + gemmKC
)

// gemmCeil is ⌈a/b⌉ for positive b.
func gemmCeil(a, b int) int { return (a + b - 1) / b }

// gemmPacked is the blocked, packed product with kernel kn, plus bias[i]
// on each row i when bias is not nil and beta is 0. When bPre is not nil,
// it is op(B) already packed whole (see gemmPanelIndex; ku must be 1) and
// b is not used.
func gemmPacked(threads *Threads, kn *sgemmKernel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, bPre []float32, beta float32, bias, c []float32, ldc int, workers int) {
	gemmPackedWith(threads, kn, transA, transB, m, n, k, alpha, a, lda, b, ldb, bPre, beta, bias, c, ldc, workers, nil)
}

// gemmPackedWith is gemmPacked, with the epilogue ep (nil: none) run on
// each block of C that a worker completes, right after its last k slab.
func gemmPackedWith(threads *Threads, kn *sgemmKernel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, bPre []float32, beta float32, bias, c []float32, ldc int, workers int, ep gemmEpilogue) {
	mr, nr := kn.mr, kn.nr
	// With a direct kernel only the last, partial strip of A is packed.
	direct := kn.direct != nil && !transA && alpha == 1
	if beta != 0 && beta != 1 {
		for i := range m {
			gemmScaleRow(c[i*ldc:i*ldc+n], beta)
		}
		beta = 1
	}
	if bPre != nil {
		gemmPackedPre(threads, kn, transA, direct, m, n, k, alpha, a, lda, bPre, beta == 1, bias, c, ldc, workers, ep)
		return
	}
	kcMax := gemmCeil(min(gemmKC, k), kn.ku) * kn.ku
	aStrips := gemmCeil(m, mr)
	bufA := gemmBuf(aStrips * mr * kcMax)
	defer gemmBufs.Put(bufA)
	bufB := gemmBuf(gemmCeil(min(gemmNC, n), nr) * nr * kcMax)
	defer gemmBufs.Put(bufB)
	per, mBlocks := gemmRowBlocks(kn, aStrips, workers)
	g := gemmJob{kn: kn, transA: transA, transB: transB, direct: direct, m: m, aStrips: aStrips, per: per,
		alpha: alpha, a: a, lda: lda, b: b, ldb: ldb, ap: *bufA, bp: *bufB, c: c, ldc: ldc}
	for jc := 0; jc < n; jc += gemmNC {
		nc := min(gemmNC, n-jc)
		bStrips := gemmCeil(nc, nr)
		// Split the columns too when there are too few row blocks to
		// balance the workers dynamically, into a tile count that they
		// share evenly where possible, at least four strips a tile.
		nSplit := 1
		if workers > 1 && mBlocks < 4*workers {
			most := max(bStrips/4, 1)
			nSplit = min(gemmCeil(4*workers, mBlocks), most)
			for nSplit < most && mBlocks*nSplit%workers != 0 {
				nSplit++
			}
		}
		perTile := gemmCeil(bStrips, nSplit)
		nSplit = gemmCeil(bStrips, perTile)
		g.jc, g.nc, g.bStrips, g.perTile, g.nSplit, g.tiles = jc, nc, bStrips, perTile, nSplit, mBlocks*nSplit
		for pc := 0; pc < k; pc += gemmKC {
			g.pc, g.kc = pc, min(gemmKC, k-pc)
			g.kcs = gemmCeil(g.kc, kn.ku) * kn.ku
			g.add = pc > 0 || beta == 1
			g.rowBias = nil
			if !g.add {
				g.rowBias = bias
			}
			g.ep = nil
			if pc+g.kc == k {
				g.ep = ep
			}
			g.next = 0
			if workers == 1 {
				g.pack(0, aStrips+bStrips)
				g.run()
				continue
			}
			// The workers get a copy, so that g itself stays on the stack.
			shared := new(gemmJob)
			*shared = g
			threads.For(aStrips+bStrips, 4, shared.pack)
			threads.For(workers, 1, func(_, _ int) { shared.run() })
		}
	}
}

// gemmRowBlocks splits aStrips strips of A into row blocks of at most
// kn.mc rows, in a count that workers share evenly where the strips allow:
// per strips a block, mBlocks blocks.
func gemmRowBlocks(kn *sgemmKernel, aStrips, workers int) (per, mBlocks int) {
	per = kn.mc / kn.mr
	mBlocks = gemmCeil(aStrips, per)
	if workers > 1 {
		mBlocks = min(gemmCeil(mBlocks, workers)*workers, aStrips)
	}
	per = gemmCeil(aStrips, mBlocks)
	return per, gemmCeil(aStrips, per)
}

// gemmPreStrips is the widest tile of gemmPackedPre in B strips, and
// gemmPreRows its tallest in rows of A.
const (
	gemmPreStrips = 8
	gemmPreRows   = 144
)

// gemmPreTiles splits the C of gemmPackedPre into tiles of per A strips
// (mBlocks row blocks) by perTile B strips (nSplit column groups), at
// least four a worker where the sizes allow. A row block holds up to
// gemmPreRows rows (with kc 256, 144 rows of A take 144 KiB of L2 on the
// way to each B strip), so that the products of a transformer's tokens
// (a few hundred rows, B too large for any cache) read each B strip from
// memory once or twice rather than once for each 96 rows. More tiles for
// the workers cost a read of the larger operand, which is the one not in
// cache: a row block more reads all of B again, a column group more all
// of A. So where B is the larger (the tokens against the weights) the
// tiles are made narrower before the rows are split further, and where A
// is (a convolution's weights against a panel of its positions) the rows
// are split.
func gemmPreTiles(kn *sgemmKernel, aStrips, bStrips, workers int) (per, mBlocks, perTile, nSplit int) {
	mBlocks = gemmCeil(aStrips, max(1, gemmPreRows/kn.mr))
	perTile = min(gemmPreStrips, bStrips)
	for perTile > 2 && aStrips*kn.mr < bStrips*kn.nr && mBlocks*gemmCeil(bStrips, perTile) < 4*workers {
		perTile = (perTile + 1) / 2
	}
	nSplit = gemmCeil(bStrips, perTile)
	if mBlocks*nSplit < 4*workers {
		mBlocks = min(gemmCeil(4*workers, nSplit), aStrips)
	}
	per = gemmCeil(aStrips, mBlocks)
	return per, gemmCeil(aStrips, per), perTile, nSplit
}

// gemmPackedPre is gemmPacked for a B packed whole (bPre), plus bias[i] on
// each row i when bias is not nil and add is not set. Where gemmPacked
// packs a k slab of both operands and then multiplies it, meeting its
// workers twice a slab, here op(A) is packed once for the whole depth
// (with a direct kernel, only its last, partial strip) and the workers
// then claim tiles of C, a row block by gemmPreStrips B strips, and run
// each through every k slab: they meet once in all, a worker that starts
// late or is held back by the OS takes fewer tiles instead of holding up
// every slab, and the tile's block of C stays in cache from one slab to
// the next.
func gemmPackedPre(threads *Threads, kn *sgemmKernel, transA, direct bool, m, n, k int, alpha float32, a []float32, lda int, bPre []float32, add bool, bias, c []float32, ldc int, workers int, ep gemmEpilogue) {
	mr := kn.mr
	aStrips := gemmCeil(m, mr)
	// ap holds the packed strips from ra on, slab after slab: strip s of
	// the slab at depth pc at (pc·packed + (s-ra)·kc)·mr.
	ra := 0
	if direct {
		ra = m / mr
		if kn.part(m%mr) != nil {
			ra = aStrips
		}
	}
	packed := aStrips - ra
	bufA := gemmBuf(packed * mr * k)
	defer gemmBufs.Put(bufA)
	ap := *bufA
	pack := func(lo, hi int) {
		for u := lo; u < hi; u++ {
			pc, s := u/packed*gemmKC, ra+u%packed
			kc := min(gemmKC, k-pc)
			i := s * mr
			at := (pc*packed + (s-ra)*kc) * mr
			gemmPackA(transA, a, lda, i, min(mr, m-i), mr, pc, kc, alpha, ap[at:at+mr*kc])
		}
	}
	// The row blocks are split further for the workers only when the
	// column tiles are too few to share (gemmPreTiles): a row block read
	// by one worker after another reads B again, from memory when it is
	// large (a language model's vocabulary projection).
	bStrips := gemmCeil(n, kn.nr)
	per, mBlocks, perTile, nSplit := gemmPreTiles(kn, aStrips, bStrips, workers)
	tiles := mBlocks * nSplit
	var next atomic.Int64
	run := func() {
		buf := gemmBuf(gemmMacroScratch)
		defer gemmBufs.Put(buf)
		tmp := *buf
		for t := int(next.Add(1) - 1); t < tiles; t = int(next.Add(1) - 1) {
			ib, jb := t/nSplit, t%nSplit
			r0, s0 := ib*per, jb*perTile
			r1, s1 := min(r0+per, aStrips), min(s0+perTile, bStrips)
			for pc := 0; pc < k; pc += gemmKC {
				kc := min(gemmKC, k-pc)
				var da []float32
				if direct {
					da = a[pc:]
				}
				var rowBias []float32
				if pc == 0 && !add {
					rowBias = bias
				}
				var last gemmEpilogue
				if pc+kc == k {
					last = ep
				}
				// After its strips the macro warms the tile's first
				// strip of the next slab.
				var next []float32
				if pc+kc < k {
					at := (pc+kc)*bStrips*kn.nr + s0*kn.nr*min(gemmKC, k-pc-kc)
					next = bPre[at : at+kn.nr*min(gemmKC, k-pc-kc)]
				}
				gemmMacro(kn, ap[pc*packed*mr:], ra, da, lda, bPre[pc*bStrips*kn.nr:], kc, m, r0, r1, 0, n, s0, s1, pc > 0 || add, rowBias, c, ldc, tmp, last, next)
			}
		}
	}
	units := gemmCeil(k, gemmKC) * packed
	if workers == 1 {
		pack(0, units)
		run()
		return
	}
	threads.For(units, 4, pack)
	threads.For(workers, 1, func(_, _ int) { run() })
}

// gemmJob is one k-slab of a column block of gemmPacked: the operands, the
// packed buffers and the tiling that the workers share.
type gemmJob struct {
	kn                               *sgemmKernel
	transA, transB, direct, add      bool
	m, aStrips, per                  int
	jc, nc, bStrips, perTile, nSplit int
	tiles, pc, kc, kcs               int
	alpha                            float32
	a                                []float32
	lda                              int
	b                                []float32
	ldb                              int
	ap, bp, rowBias, c               []float32
	ldc                              int
	// ep is the epilogue, set for the last k slab only.
	ep gemmEpilogue
	// next is the next tile to claim (atomically).
	next int64
}

// pack packs the strips [lo, hi) of the slab: A's strips first (only the
// partial one with a direct kernel), then B's.
func (g *gemmJob) pack(lo, hi int) {
	mr, nr := g.kn.mr, g.kn.nr
	for s := lo; s < hi; s++ {
		if s < g.aStrips {
			i := s * mr
			if g.direct && (i+mr <= g.m || g.kn.part(g.m-i) != nil) {
				continue
			}
			gemmPackA(g.transA, g.a, g.lda, i, min(mr, g.m-i), mr, g.pc, g.kc, g.alpha, g.ap[s*mr*g.kcs:(s+1)*mr*g.kcs])
			continue
		}
		t := s - g.aStrips
		j := t * nr
		gemmPackB(g.transB, g.b, g.ldb, g.pc, g.kc, g.jc+j, min(nr, g.nc-j), nr, g.bp[t*nr*g.kcs:(t+1)*nr*g.kcs])
	}
}

// run claims tiles and multiplies them until none is left.
func (g *gemmJob) run() {
	buf := gemmBuf(gemmMacroScratch)
	defer gemmBufs.Put(buf)
	tmp := *buf
	var da []float32
	if g.direct {
		da = g.a[g.pc:]
	}
	for {
		t := int(atomic.AddInt64(&g.next, 1) - 1)
		if t >= g.tiles {
			return
		}
		ib, jb := t/g.nSplit, t%g.nSplit
		r0, s0 := ib*g.per, jb*g.perTile
		gemmMacro(g.kn, g.ap, 0, da, g.lda, g.bp, g.kcs, g.m, r0, min(r0+g.per, g.aStrips), g.jc, g.nc, s0, min(s0+g.perTile, g.bStrips), g.add, g.rowBias, g.c, g.ldc, tmp, g.ep, nil)
	}
}

// gemmPanelIndex is where element (p, q) of a k×n op(B) goes when packed
// whole for a kernel with ku 1 and nr a power of two (1<<shift): per
// gemmKC-row slab, nr-wide strips of the slab's rows, row by row.
func gemmPanelIndex(p, q, k, n, shift int) int {
	nr := 1 << shift
	pc := p / gemmKC * gemmKC
	kcs := min(gemmKC, k-pc)
	return pc*gemmCeil(n, nr)*nr + (q>>shift)*kcs*nr + (p-pc)*nr + q&(nr-1)
}

// gemmPackWhole packs a k×n op(B) whole in nr-wide strips, in the layout
// gemmPacked reads as bPre with a kernel of that nr (ku 1, nr a power of
// two; see convPackedUsable): B is row-major k×n, or n×k when transB is
// set.
func gemmPackWhole(transB bool, b []float32, k, n, nr int) []float32 {
	ldb := n
	if transB {
		ldb = k
	}
	strips := gemmCeil(n, nr)
	dst := make([]float32, k*strips*nr)
	for pc := 0; pc < k; pc += gemmKC {
		kc := min(gemmKC, k-pc)
		slab := dst[pc*strips*nr:]
		for t := range strips {
			gemmPackB(transB, b, ldb, pc, kc, t*nr, min(nr, n-t*nr), nr, slab[t*kc*nr:(t+1)*kc*nr])
		}
	}
	return dst
}

// gemmPackA packs rows [i, i+rows) and columns [pc, pc+kc) of op(A), times
// alpha, into dst as one mr-tall strip stored column by column, zero-padded
// to len(dst)/mr columns and mr rows.
func gemmPackA(transA bool, a []float32, lda, i, rows, mr, pc, kc int, alpha float32, dst []float32) {
	if rows < mr {
		clear(dst)
	} else {
		clear(dst[kc*mr:])
	}
	if transA {
		for p := range kc {
			col := a[(pc+p)*lda+i:][:rows]
			d := dst[p*mr:][:rows]
			for q, v := range col {
				d[q] = alpha * v
			}
		}
		return
	}
	for q := range rows {
		row := a[(i+q)*lda+pc:][:kc]
		d := dst[q:]
		for p, v := range row {
			d[p*mr] = alpha * v
		}
	}
}

// gemmPackB packs rows [pc, pc+kc) of columns [j, j+cols) of op(B) into dst
// as rows of nr values, zero-padding the missing columns and the rows up
// to len(dst)/nr.
func gemmPackB(transB bool, b []float32, ldb, pc, kc, j, cols, nr int, dst []float32) {
	clear(dst[kc*nr:])
	if transB {
		if cols < nr {
			clear(dst[:kc*nr])
		}
		for q := range cols {
			row := b[(j+q)*ldb+pc:][:kc]
			d := dst[q:]
			for p, v := range row {
				d[p*nr] = v
			}
		}
		return
	}
	if nr == 16 && cols == 16 {
		// Four moves of four values a row: a copy of more than four is a
		// call to memmove, which costs more than the copy.
		for p := range kc {
			src, d := b[(pc+p)*ldb+j:][:16], dst[p*16:][:16]
			*(*[4]float32)(d[0:4]) = *(*[4]float32)(src[0:4])
			*(*[4]float32)(d[4:8]) = *(*[4]float32)(src[4:8])
			*(*[4]float32)(d[8:12]) = *(*[4]float32)(src[8:12])
			*(*[4]float32)(d[12:16]) = *(*[4]float32)(src[12:16])
		}
		return
	}
	for p := range kc {
		d := dst[p*nr:][:nr]
		copy(d, b[(pc+p)*ldb+j:][:cols])
		clear(d[cols:])
	}
}

// gemmMacro multiplies the A strips [r0, r1), packed in ap from strip ra
// on, by the packed B strips [s0, s1) of the slab starting at column jc
// (nc columns wide), kcs k-steps each, and stores the product into C or, with add, adds it. When
// da is set, the full strips of A are read from it (the k-slab's first
// column of op(A), rows lda apart) by kn.direct. Storing, it adds bias[i]
// to row i unless bias is nil. Edge tiles go through tmp, gemmMaxTile
// values, and the bias of a partial strip through the gemmMaxMR after them.
// The columns of a last strip that a direct kernel's tiles leave (see
// sgemmKernel.halfDirect) are dot products of A's rows with each column,
// copied to the gemmKC values after those. When ep is not nil, it finishes
// each column strip of the row block once computed, or all of them at the
// end (see gemmEpilogue.perStrip). With kn.warm, each pass over the row
// strips also brings the B strip read next into cache, a share at each
// tile: the next strip of [s0, s1), or next after the last (nil: none). A B
// packed whole comes from memory, and the hardware prefetcher alone leaves
// the first tile of each strip waiting on it.
func gemmMacro(kn *sgemmKernel, ap []float32, ra int, da []float32, lda int, bp []float32, kcs, m, r0, r1, jc, nc, s0, s1 int, add bool, bias, c []float32, ldc int, tmp []float32, ep gemmEpilogue, next []float32) {
	mr, nr := kn.mr, kn.nr
	padded := tmp[gemmMaxTile : gemmMaxTile+gemmMaxMR]
	col := tmp[gemmMaxTile+gemmMaxMR : gemmMacroScratch]
	tmp = tmp[:gemmMaxTile]
	warm := kn.warm
	for s := s0; s < s1; s++ {
		j := jc + s*nr
		cols := min(nr, jc+nc-j)
		bs := &bp[s*nr*kcs : (s+1)*nr*kcs][0]
		ahead := next
		if s+1 < s1 {
			ahead = bp[(s+1)*nr*kcs : (s+2)*nr*kcs]
		}
		step := 0
		if warm != nil && len(ahead) > 0 {
			step = gemmCeil(gemmCeil(len(ahead), 16), r1-r0)
		}
		// apart columns of the strip, at its right, are computed one by
		// one as dot products of A's rows after the tiles: a strip of a
		// single column, or one a column or two wider than a half tile (N
		// of 49 leaves 17), for which a half tile and a column or two cost
		// less than a whole tile of mostly zeros.
		apart := 0
		switch {
		case da == nil:
		case cols == 1:
			apart = 1
		case kn.halfDirect != nil && cols > nr/2 && cols-nr/2 <= gemmApartMax:
			apart = cols - nr/2
		}
		if apart < cols {
			gemmTiles(kn, ap, ra, da, lda, bs, kcs, m, r0, r1, j, cols-apart, add, bias, c, ldc, tmp, padded, ahead, step)
		}
		if apart > 0 {
			strip := bp[s*nr*kcs : (s+1)*nr*kcs]
			for q := cols - apart; q < cols; q++ {
				for p := range kcs {
					col[p] = strip[p*nr+q]
				}
				gemmColumn(da, lda, col[:kcs], r0*mr, min(r1*mr, m), add, bias, c[j+q:], ldc)
			}
		}
		if ep != nil && ep.perStrip() {
			i0 := r0 * mr
			ep.finish(c, i0*ldc+j, min(r1*mr, m)-i0, cols, ldc)
		}
	}
	if ep != nil && !ep.perStrip() && s0 < s1 {
		i0, j0 := r0*mr, jc+s0*nr
		ep.finish(c, i0*ldc+j0, min(r1*mr, m)-i0, min(jc+s1*nr, jc+nc)-j0, ldc)
	}
}

// gemmApartMax is the most columns past a half tile that gemmMacro
// computes apart (see gemmColumn) rather than with a whole tile.
const gemmApartMax = 2

// gemmTiles is gemmMacro's work on the B strip bs at column j: the tiles
// of the rows of A strips r0..r1 over the strip's cols leftmost columns,
// prefetching step lines of ahead a tile.
func gemmTiles(kn *sgemmKernel, ap []float32, ra int, da []float32, lda int, bs *float32, kcs, m, r0, r1, j, cols int, add bool, bias, c []float32, ldc int, tmp, padded, ahead []float32, step int) {
	mr, nr := kn.mr, kn.nr
	warm := kn.warm
	for r := r0; r < r1; r++ {
		if at := (r - r0) * step * 16; step > 0 && at < len(ahead) {
			warm(&ahead[at], min(step, gemmCeil(len(ahead)-at, 16)))
		}
		i := r * mr
		rows := min(mr, m-i)
		var bi *float32
		if bias != nil {
			// The kernel reads mr values: pad the last strip's.
			if rows < mr {
				clear(padded)
				copy(padded, bias[i:m])
				bi = &padded[0]
			} else {
				bi = &bias[i : i+mr][0]
			}
		}
		if part := kn.part(rows); rows < mr && da != nil && part != nil {
			_ = da[(i+rows-1)*lda+kcs-1]
			if cols == nr {
				_ = c[(i+rows-1)*ldc+j+nr-1]
				part(kcs, &da[i*lda], lda, bs, &c[i*ldc+j], ldc, add, bi)
				continue
			}
			part(kcs, &da[i*lda], lda, bs, &tmp[0], nr, false, bi)
			gemmEdge(tmp, nr, c[i*ldc+j:], ldc, rows, cols, add)
			continue
		}
		if rows == mr && da != nil {
			// The kernel reads unchecked: check the block's last
			// element.
			_ = da[(i+mr-1)*lda+kcs-1]
			if cols == nr {
				_ = c[(i+mr-1)*ldc+j+nr-1]
				kn.direct(kcs, &da[i*lda], lda, bs, &c[i*ldc+j], ldc, add, bi)
				continue
			}
			direct := kn.direct
			if cols <= nr/2 && kn.halfDirect != nil {
				direct = kn.halfDirect
				if cols == nr/2 {
					_ = c[(i+mr-1)*ldc+j+cols-1]
					direct(kcs, &da[i*lda], lda, bs, &c[i*ldc+j], ldc, add, bi)
					continue
				}
			}
			direct(kcs, &da[i*lda], lda, bs, &tmp[0], nr, false, bi)
			gemmEdge(tmp, nr, c[i*ldc+j:], ldc, rows, cols, add)
			continue
		}
		as := &ap[(r-ra)*mr*kcs : (r-ra+1)*mr*kcs][0]
		if rows == mr && cols == nr {
			// The kernel writes unchecked: check the tile's last
			// element.
			_ = c[(i+mr-1)*ldc+j+nr-1]
			kn.tile(kcs, as, bs, &c[i*ldc+j], ldc, add, bi)
			continue
		}
		tile := kn.tile
		if cols <= nr/2 && kn.halfTile != nil {
			tile = kn.halfTile
		}
		tile(kcs, as, bs, &tmp[0], nr, false, bi)
		gemmEdge(tmp, nr, c[i*ldc+j:], ldc, rows, cols, add)
	}
}

// gemmColumn stores (or, with add, adds) into c[i·ldc] for rows i in
// [i0, i1) the dot product of row i of A (da, rows lda apart) with col,
// plus bias[i] when storing and bias is not nil.
func gemmColumn(da []float32, lda int, col []float32, i0, i1 int, add bool, bias, c []float32, ldc int) {
	for i := i0; i < i1; i++ {
		v := gemmDot(da[i*lda:][:len(col)], col)
		switch {
		case add:
			c[i*ldc] += v
		case bias != nil:
			c[i*ldc] = v + bias[i]
		default:
			c[i*ldc] = v
		}
	}
}

// gemmEdge stores (or, with add, adds) the top-left rows×cols corner of a
// tile held in tmp with row stride nr into c.
func gemmEdge(tmp []float32, nr int, c []float32, ldc, rows, cols int, add bool) {
	for q := range rows {
		row := c[q*ldc:][:cols]
		src := tmp[q*nr:][:cols]
		if !add {
			copy(row, src)
			continue
		}
		for x, v := range src {
			row[x] += v
		}
	}
}

// gemmTileGo is gemmGo's tile function: gemmMicro, then the store.
func gemmTileGo(kc int, a, b, c *float32, ldc int, add bool, bias *float32) {
	var acc [gemmMR * gemmNR]float32
	gemmMicro(unsafe.Slice(a, kc*gemmMR), unsafe.Slice(b, kc*gemmNR), &acc)
	if bias != nil && !add {
		for i, v := range unsafe.Slice(bias, gemmMR) {
			acc[i*gemmNR] += v
			acc[i*gemmNR+1] += v
		}
	}
	for i := range gemmMR {
		row := unsafe.Slice((*float32)(unsafe.Add(unsafe.Pointer(c), 4*i*ldc)), gemmNR)
		if add {
			row[0] += acc[i*gemmNR]
			row[1] += acc[i*gemmNR+1]
			continue
		}
		row[0], row[1] = acc[i*gemmNR], acc[i*gemmNR+1]
	}
}

// gemmMicro is the 4×2 micro-kernel: acc = Aₛ·Bₛ for a packed A strip
// (4 values per k-step) and B strip (2 values per k-step) of equal length,
// a multiple of gemmKU k-steps.
//
// The loop body is kept a single basic block (no bounds checks: the strips
// are walked by pointer, within the lengths checked on entry) because the
// Go compiler schedules an accumulation that feeds a loop phi of another
// block after every other value of its block: with the phis in the same
// block each product is added as soon as it is made, and the accumulators
// stay in registers instead of spilling.
func gemmMicro(a, b []float32, acc *[gemmMR * gemmNR]float32) {
	n := min(len(a)/(gemmMR*gemmKU), len(b)/(gemmNR*gemmKU))
	var c00, c01, c10, c11, c20, c21, c30, c31 float32
	if n > 0 {
		pa, pb := unsafe.Pointer(&a[0]), unsafe.Pointer(&b[0])
		for {
			x := (*[gemmMR * gemmKU]float32)(pa)
			y := (*[gemmNR * gemmKU]float32)(pb)
			c00 += x[0] * y[0]
			c01 += x[0] * y[1]
			c10 += x[1] * y[0]
			c11 += x[1] * y[1]
			c20 += x[2] * y[0]
			c21 += x[2] * y[1]
			c30 += x[3] * y[0]
			c31 += x[3] * y[1]
			c00 += x[4] * y[2]
			c01 += x[4] * y[3]
			c10 += x[5] * y[2]
			c11 += x[5] * y[3]
			c20 += x[6] * y[2]
			c21 += x[6] * y[3]
			c30 += x[7] * y[2]
			c31 += x[7] * y[3]
			c00 += x[8] * y[4]
			c01 += x[8] * y[5]
			c10 += x[9] * y[4]
			c11 += x[9] * y[5]
			c20 += x[10] * y[4]
			c21 += x[10] * y[5]
			c30 += x[11] * y[4]
			c31 += x[11] * y[5]
			c00 += x[12] * y[6]
			c01 += x[12] * y[7]
			c10 += x[13] * y[6]
			c11 += x[13] * y[7]
			c20 += x[14] * y[6]
			c21 += x[14] * y[7]
			c30 += x[15] * y[6]
			c31 += x[15] * y[7]
			if n--; n == 0 {
				break
			}
			pa, pb = unsafe.Add(pa, 4*gemmMR*gemmKU), unsafe.Add(pb, 4*gemmNR*gemmKU)
		}
	}
	*acc = [gemmMR * gemmNR]float32{c00, c01, c10, c11, c20, c21, c30, c31}
}
