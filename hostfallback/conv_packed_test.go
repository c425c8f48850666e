package hostfallback

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestConvIm2colPacked checks the packed patch matrix bit for bit against
// the row-major one of convIm2col over random geometries (rank 1 to 3, strides,
// dilations, pads), tiles and strip widths, with NaN and infinite inputs,
// packed by the scalar copies and by convPackStrip16 (with AVX2 where the
// CPU has it, else in Go).
func TestConvIm2colPacked(t *testing.T) {
	defer func(v bool) { convPackVec = v }(convPackVec)
	r := rand.New(rand.NewPCG(31, 32))
	for iter := range 400 {
		rank := 1 + r.IntN(3)
		if iter < 200 {
			rank = 2
		}
		g := &convGeom{rank: rank}
		for range rank {
			k := 1 + r.IntN(4)
			if r.IntN(3) == 0 {
				k = 3
			}
			in, s, d := 1+r.IntN(20), 1+r.IntN(3), 1+r.IntN(2)
			pb, pe := r.IntN(k+1), r.IntN(k+1)
			span := (k-1)*d + 1
			if in+pb+pe < span {
				in = span
			}
			g.in, g.kernel, g.stride, g.dil = append(g.in, in), append(g.kernel, k), append(g.stride, s), append(g.dil, d)
			g.padBegin, g.padEnd = append(g.padBegin, pb), append(g.padEnd, pe)
			g.out = append(g.out, (in+pb+pe-span)/s+1)
		}
		g.inSize, g.outSize, g.kernelSize = convProd(g.in), convProd(g.out), convProd(g.kernel)
		cg := 1 + r.IntN(8)
		if r.IntN(4) == 0 {
			cg = 30 + r.IntN(40) // more than gemmKC rows
		}
		x := poolSpecials(r, cg*g.inSize)
		x[0] = float32(math.NaN())
		s0 := r.IntN(g.outSize)
		s1 := s0 + 1 + r.IntN(g.outSize-s0)
		shift := 4 + r.IntN(2)
		rows := cg * g.kernelSize
		size := rows * ((s1 - s0 + (1 << shift) - 1) &^ ((1 << shift) - 1))
		taps := g.taps()
		col := make([]float32, rows*(s1-s0))
		convIm2col(g, taps, x, cg, s0, s1, col)
		wb := make([]uint32, len(col))
		for i, v := range col {
			wb[i] = math.Float32bits(v)
		}
		for _, vec := range []bool{false, true} {
			convPackVec = vec
			got := &convPanel{buf: make([]float32, size), rows: rows, width: s1 - s0, shift: shift}
			for i := range got.buf {
				got.buf[i] = 7
			}
			convIm2colPacked(g, taps, x, cg, s0, s1, got)
			if gb := panelBits(got); !slices.Equal(gb, wb) {
				t.Fatalf("in %v kernel %v stride %v dil %v pads %v %v, cg %d, [%d, %d), nr %d, vector %v: %s",
					g.in, g.kernel, g.stride, g.dil, g.padBegin, g.padEnd, cg, s0, s1, 1<<shift, vec, firstDiff(gb, wb))
			}
		}
	}
}

// panelBits is the bit patterns of p's rows × width values, row by row
// (the strips' columns past width, which the GEMM ignores, left out).
func panelBits(p *convPanel) []uint32 {
	var out []uint32
	for r := range p.rows {
		for q := range p.width {
			out = append(out, math.Float32bits(p.buf[gemmPanelIndex(r, q, p.rows, p.width, p.shift)]))
		}
	}
	return out
}
