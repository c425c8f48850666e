package hostfallback

import "sync"

// The integer matrix product of MatMulInteger, ConvInteger, QLinearMatMul
// and QLinearConv. The 8-bit operands, their zero points subtracted, lie in
// [−255, 255]: they are widened to int16 and multiplied in pairs along k
// into int32 sums (VPMADDWD on amd64). A pair's sum is at most 2·255² in
// magnitude, so every step is exact, with none of VPMADDUBSW's int16
// saturation.
//
// A is packed row by row, each row of 2·pairs int16s (k rounded up to
// even, pairs = ⌈k/2⌉), the rows rounded up to a multiple of qgemmMR; B in
// panels of qgemmNR columns, each holding, pair by pair of k rows, an
// int32 per column whose low half is the pair's first value and whose high
// half is its second (two int16s side by side in memory). The padding is
// zero.

const qgemmMR, qgemmNR = 4, 16

// qgemmKernel is a micro-kernel of the integer product.
type qgemmKernel struct {
	name string
	// tile sets the qgemmMR×qgemmNR tile c (rows ldc apart) to the product
	// of qgemmMR packed rows of A (lda int16s apart) and a packed B panel,
	// over pairs ≥ 1 pairs of k.
	tile func(pairs int, a []int16, lda int, b []int32, c []int32, ldc int)
}

// qgemmVariant is a micro-kernel, the CPU features it needs (as
// /proc/cpuinfo names them) and whether this CPU has them.
type qgemmVariant struct {
	kernel *qgemmKernel
	needs  []string
	runs   bool
}

// qgemmGo is the portable micro-kernel.
var qgemmGo = &qgemmKernel{name: "go-4x16", tile: qgemmTileGo}

// qgemmBest is the fastest micro-kernel this CPU runs.
var qgemmBest = func() *qgemmKernel {
	for _, v := range qgemmVariants() {
		if v.runs {
			return v.kernel
		}
	}
	return qgemmGo
}()

// qgemmTileGo is the portable tile.
func qgemmTileGo(pairs int, a []int16, lda int, b []int32, c []int32, ldc int) {
	for r := range qgemmMR {
		var acc [qgemmNR]int32
		ar := a[r*lda : r*lda+2*pairs]
		for p := range pairs {
			a0, a1 := int32(ar[2*p]), int32(ar[2*p+1])
			for j, v := range b[p*qgemmNR : (p+1)*qgemmNR] {
				acc[j] += a0*int32(int16(v)) + a1*(v>>16)
			}
		}
		copy(c[r*ldc:r*ldc+qgemmNR], acc[:])
	}
}

// qgemmPairs is the number of pairs of a k-deep product.
func qgemmPairs(k int) int { return (k + 1) / 2 }

// qgemmSizeA is the length of the packed form of an m×k A.
func qgemmSizeA(m, k int) int {
	return (m + qgemmMR - 1) / qgemmMR * qgemmMR * 2 * qgemmPairs(k)
}

// qgemmSizeB is the length of the packed form of a k×n B.
func qgemmSizeB(k, n int) int {
	return (n + qgemmNR - 1) / qgemmNR * qgemmNR * qgemmPairs(k)
}

// qgemm sets C (m×n, rows ldc apart) to the product of packed A (m×k) and
// packed B (k×n) with micro-kernel kern.
func qgemm(kern *qgemmKernel, m, n, k int, a []int16, b, c []int32, ldc int) {
	pairs := qgemmPairs(k)
	if pairs == 0 {
		for i := range m {
			clear(c[i*ldc : i*ldc+n])
		}
		return
	}
	lda, panel := 2*pairs, pairs*qgemmNR
	var tmp [qgemmMR * qgemmNR]int32
	for j := 0; j < n; j += qgemmNR {
		bp := b[j/qgemmNR*panel : (j/qgemmNR+1)*panel]
		w := min(qgemmNR, n-j)
		for i := 0; i < m; i += qgemmMR {
			ai := a[i*lda : (i+qgemmMR)*lda]
			if h := min(qgemmMR, m-i); h < qgemmMR || w < qgemmNR {
				kern.tile(pairs, ai, lda, bp, tmp[:], qgemmNR)
				for r := range h {
					copy(c[(i+r)*ldc+j:(i+r)*ldc+j+w], tmp[r*qgemmNR:])
				}
				continue
			}
			kern.tile(pairs, ai, lda, bp, c[i*ldc+j:], ldc)
		}
	}
}

// qpackA packs the m×k matrix src (rows lda apart, values in int16's range)
// as qgemm's A into dst, which must hold qgemmSizeA(m, k) values.
func qpackA(dst []int16, src []int32, m, k, lda int) {
	row := 2 * qgemmPairs(k)
	dst = dst[:qgemmSizeA(m, k)]
	for i := range m {
		d := dst[i*row : (i+1)*row]
		for p, v := range src[i*lda : i*lda+k] {
			d[p] = int16(v)
		}
		clear(d[k:])
	}
	clear(dst[m*row:])
}

// qpackB packs the k×n matrix src (rows ldb apart, values in int16's
// range) as qgemm's B into dst, which must hold qgemmSizeB(k, n) values.
func qpackB(dst, src []int32, k, n, ldb int) {
	pairs := qgemmPairs(k)
	panel := pairs * qgemmNR
	for j := 0; j < n; j += qgemmNR {
		w := min(qgemmNR, n-j)
		d := dst[j/qgemmNR*panel : (j/qgemmNR+1)*panel]
		for p := range pairs {
			chunk := d[p*qgemmNR : (p+1)*qgemmNR]
			r0 := src[2*p*ldb+j : 2*p*ldb+j+w]
			if 2*p+1 == k {
				for c, v := range r0 {
					chunk[c] = int32(uint16(v))
				}
			} else {
				qgemmPairRows(chunk[:w], r0, src[(2*p+1)*ldb+j:(2*p+1)*ldb+j+w])
			}
			clear(chunk[w:])
		}
	}
}

// qgemmPairRowsGo sets dst[c] to the pair of r0[c] (low half) and r1[c]
// (high half), int16s.
func qgemmPairRowsGo(dst, r0, r1 []int32) {
	r0, r1 = r0[:len(dst)], r1[:len(dst)]
	for c, v := range r0 {
		dst[c] = int32(uint16(v)) | r1[c]<<16
	}
}

// qgemmBufs pools the packing buffers of activations, by element type.
var qgemmBufs struct{ a, b sync.Pool }

// qgemmBuf returns a buffer of n Ts (of any content) from pool; give it
// back with pool.Put.
func qgemmBuf[T int16 | int32](pool *sync.Pool, n int) *[]T {
	if p, ok := pool.Get().(*[]T); ok && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	b := make([]T, n)
	return &b
}
