package hostfallback

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Blocking of sgemm, after Goto and van de Geijn's layout (as in BLIS and
// gonum): a KC×NC slab of op(B) is packed into NR-wide strips, an MC×KC block
// of op(A) (scaled by alpha) into MR-tall strips, and a register-blocked
// MR×NR micro-kernel runs over a KC-long pair of strips. A B strip (KC×NR)
// stays in L1 while the A block (MC×KC) streams from L2.
//
// The micro-kernel is 4×2 with its k loop unrolled gemmKU times: eight
// accumulators leave room in amd64's sixteen SSE registers for the
// operands (4×3, 4×4 and 6×2 tiles measured slower).
const (
	gemmMR = 4
	gemmNR = 2
	gemmKU = 4
	gemmKC = 256
	gemmMC = 64
	gemmNC = 2048
	// gemmSmallWork is the m·n·k below which packing does not pay.
	gemmSmallWork = 24 * 24 * 24
	// gemmParallelWork is the m·n·k from which a call is split over
	// goroutines.
	gemmParallelWork = 64 * 64 * 64
)

var gemmBufs = sync.Pool{New: func() any { return new([]float32) }}

// gemmBuf returns a pooled buffer of at least n floats; put it back with
// gemmBufs.Put.
func gemmBuf(n int) *[]float32 {
	p := gemmBufs.Get().(*[]float32)
	if cap(*p) < n {
		*p = make([]float32, n)
	}
	*p = (*p)[:n]
	return p
}

// sgemm computes C = alpha·op(A)·op(B) + beta·C for row-major float32
// matrices, where op(X) is X or its transpose: op(A) is m×k, op(B) is k×n
// and C is m×n. lda, ldb and ldc are the row strides of A, B and C as
// stored (A is k×m when transA is set, B is n×k when transB is set). When
// beta is 0, C is overwritten and need not hold numbers. The slices must
// cover the matrices; the work is spread over GOMAXPROCS goroutines.
func sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	gemmRun(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, runtime.GOMAXPROCS(0))
}

// sgemmSerial is sgemm on the calling goroutine alone, for callers that
// already run one product per goroutine.
func sgemmSerial(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	gemmRun(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, 1)
}

// gemmRun is sgemm on up to workers goroutines: degenerate shapes scale C,
// small or thin ones take the unpacked loops, the rest the packed kernel.
func gemmRun(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, workers int) {
	if m <= 0 || n <= 0 {
		return
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
	if m < gemmMR || n < gemmNR || work < gemmSmallWork {
		g := &gemmSmall{transA, transB, k, alpha, a, lda, b, ldb, beta, c, ldc}
		if workers == 1 {
			g.run(0, m, 0, n)
			return
		}
		if m >= 2*workers {
			ParallelFor(m, 1, func(lo, hi int) { g.run(lo, hi, 0, n) })
			return
		}
		ParallelFor(n, 16, func(lo, hi int) { g.run(0, m, lo, hi) })
		return
	}
	gemmPacked(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, workers)
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

// gemmDot is Σ a[i]·b[i] over len(a) ≤ len(b) values, with four partial
// sums so that the additions pipeline.
func gemmDot(a, b []float32) float32 {
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

// gemmPacked is the blocked, packed product.
func gemmPacked(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, workers int) {
	kcMax := min(gemmKC, k)
	kcPad := (kcMax + gemmKU - 1) / gemmKU * gemmKU
	ncMax := min(gemmNC, n)
	bufB := gemmBuf(kcPad * ((ncMax + gemmNR - 1) / gemmNR * gemmNR))
	defer gemmBufs.Put(bufB)
	bp := *bufB

	mc := min(gemmMC, (m+gemmMR-1)/gemmMR*gemmMR)
	mBlocks := (m + mc - 1) / mc
	for jc := 0; jc < n; jc += gemmNC {
		nc := min(gemmNC, n-jc)
		strips := (nc + gemmNR - 1) / gemmNR
		// Split the columns too when there are too few row blocks to
		// keep every worker busy (each tile repacks its A block), into a
		// tile count that the workers share evenly where possible.
		nSplit := 1
		if workers > 1 && mBlocks < 4*workers {
			most := max(strips/16, 1)
			nSplit = min((4*workers+mBlocks-1)/mBlocks, most)
			for nSplit < most && mBlocks*nSplit%workers != 0 {
				nSplit++
			}
		}
		stripsPerTile := (strips + nSplit - 1) / nSplit
		tiles := mBlocks * nSplit
		for pc := 0; pc < k; pc += gemmKC {
			kc := min(gemmKC, k-pc)
			kcp := (kc + gemmKU - 1) / gemmKU * gemmKU
			packB := func(lo, hi int) {
				for s := lo; s < hi; s++ {
					j := s * gemmNR
					gemmPackB(transB, b, ldb, pc, kc, jc+j, min(gemmNR, nc-j), bp[s*kcp*gemmNR:(s+1)*kcp*gemmNR])
				}
			}
			first := pc == 0
			var next atomic.Int64
			tile := func(ap []float32) {
				for {
					t := int(next.Add(1) - 1)
					if t >= tiles {
						return
					}
					ib, jb := t/nSplit, t%nSplit
					i0 := ib * mc
					rows := min(mc, m-i0)
					gemmPackA(transA, a, lda, i0, rows, pc, kc, kcp, alpha, ap)
					s0 := jb * stripsPerTile
					s1 := min(s0+stripsPerTile, strips)
					gemmMacro(ap, bp, kcp, i0, rows, jc, nc, s0, s1, first, beta, c, ldc)
				}
			}
			if workers == 1 {
				packB(0, strips)
				bufA := gemmBuf(mc * kcp)
				tile(*bufA)
				gemmBufs.Put(bufA)
				continue
			}
			ParallelFor(strips, 64, packB)
			ParallelFor(workers, 1, func(_, _ int) {
				bufA := gemmBuf(mc * kcp)
				tile(*bufA)
				gemmBufs.Put(bufA)
			})
		}
	}
}

// gemmPackB packs rows [pc, pc+kc) of columns [j, j+cols) of op(B) into dst
// as rows of gemmNR values, zero-padding the missing columns and the rows
// past kc.
func gemmPackB(transB bool, b []float32, ldb, pc, kc, j, cols int, dst []float32) {
	clear(dst[kc*gemmNR:])
	if cols == gemmNR {
		if transB {
			r0 := b[j*ldb+pc : j*ldb+pc+kc]
			r1 := b[(j+1)*ldb+pc : (j+1)*ldb+pc+kc]
			for p := range r0 {
				dst[2*p] = r0[p]
				dst[2*p+1] = r1[p]
			}
			return
		}
		for p := range kc {
			row := b[(pc+p)*ldb+j : (pc+p)*ldb+j+2]
			dst[2*p] = row[0]
			dst[2*p+1] = row[1]
		}
		return
	}
	clear(dst[:kc*gemmNR])
	for p := range kc {
		for q := range cols {
			if transB {
				dst[p*gemmNR+q] = b[(j+q)*ldb+pc+p]
			} else {
				dst[p*gemmNR+q] = b[(pc+p)*ldb+j+q]
			}
		}
	}
}

// gemmPackA packs rows [i0, i0+rows) and columns [pc, pc+kc) of op(A),
// times alpha, into dst as gemmMR-tall strips of kcp columns each, stored
// column by column and zero-padded.
func gemmPackA(transA bool, a []float32, lda, i0, rows, pc, kc, kcp int, alpha float32, dst []float32) {
	for r := 0; r < rows; r += gemmMR {
		d := dst[r*kcp : (r+gemmMR)*kcp]
		clear(d[kc*gemmMR:])
		i := i0 + r
		if rows-r < gemmMR {
			clear(d[:kc*gemmMR])
			for p := range kc {
				for q := range rows - r {
					if transA {
						d[p*gemmMR+q] = alpha * a[(pc+p)*lda+i+q]
					} else {
						d[p*gemmMR+q] = alpha * a[(i+q)*lda+pc+p]
					}
				}
			}
			continue
		}
		if transA {
			for p := range kc {
				col := a[(pc+p)*lda+i : (pc+p)*lda+i+gemmMR]
				d[4*p] = alpha * col[0]
				d[4*p+1] = alpha * col[1]
				d[4*p+2] = alpha * col[2]
				d[4*p+3] = alpha * col[3]
			}
			continue
		}
		r0 := a[i*lda+pc : i*lda+pc+kc]
		r1 := a[(i+1)*lda+pc : (i+1)*lda+pc+kc]
		r2 := a[(i+2)*lda+pc : (i+2)*lda+pc+kc]
		r3 := a[(i+3)*lda+pc : (i+3)*lda+pc+kc]
		for p := range r0 {
			d[4*p] = alpha * r0[p]
			d[4*p+1] = alpha * r1[p]
			d[4*p+2] = alpha * r2[p]
			d[4*p+3] = alpha * r3[p]
		}
	}
}

// gemmMacro multiplies a packed A block (rows×kcp) by the packed B strips
// [s0, s1) of the slab starting at column jc (nc columns wide) and adds the
// product into C at row i0. On the first k-slab C is first scaled by beta.
func gemmMacro(ap, bp []float32, kcp, i0, rows, jc, nc, s0, s1 int, first bool, beta float32, c []float32, ldc int) {
	var acc [gemmMR * gemmNR]float32
	for s := s0; s < s1; s++ {
		j := jc + s*gemmNR
		cols := min(gemmNR, jc+nc-j)
		bs := bp[s*kcp*gemmNR : (s+1)*kcp*gemmNR]
		for r := 0; r < rows; r += gemmMR {
			gemmMicro(ap[r*kcp:(r+gemmMR)*kcp], bs, &acc)
			gemmStore(&acc, c[(i0+r)*ldc+j:], ldc, min(gemmMR, rows-r), cols, first, beta)
		}
	}
}

// gemmStore adds a micro-tile into the top-left rows×cols corner of c, or
// on the first k-slab sets it to acc + beta·c.
func gemmStore(acc *[gemmMR * gemmNR]float32, c []float32, ldc, rows, cols int, first bool, beta float32) {
	for i := range rows {
		row := c[i*ldc : i*ldc+cols]
		for j := range row {
			v := acc[i*gemmNR+j]
			switch {
			case !first:
				row[j] += v
			case beta == 0:
				row[j] = v
			default:
				row[j] = beta*row[j] + v
			}
		}
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
