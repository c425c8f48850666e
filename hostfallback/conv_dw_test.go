package hostfallback

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestDwRows checks the depthwise row kernel (with the AVX2 kernel where
// the CPU has it, and again with the AVX-512 one where it has that too)
// against a plain sum over the taps, for row widths around the vector
// widths and the AVX-512 kernel's chunks of 64, one to 19 rows (groups of
// two, four and eight and the rows left over), one to 25 taps, and clamps
// that cut both ends, none, or meet NaN; the values after the rows must
// stay untouched.
func TestDwRows(t *testing.T) {
	for _, z := range zmmSettings(t, &dwZMM) {
		dwZMM = z
		testDwRows(t)
	}
}

func testDwRows(t *testing.T) {
	conv := opTol("Conv")
	r := rand.New(rand.NewPCG(5, 6))
	inf := float32(math.Inf(1))
	for _, taps := range []int{1, 3, 9, 25} {
		for ow := 1; ow <= 140; ow++ {
			rows, wq := 1+r.IntN(19), ow+r.IntN(4)
			span := dwSpan(rows, ow, wq)
			src := nnRandFloats(r, span+40)
			src[r.IntN(len(src))] = float32(math.NaN())
			offs := make([]int, taps)
			for i := range offs {
				offs[i] = r.IntN(len(src) - span + 1)
			}
			w := nnRandFloats(r, taps)
			for _, bound := range [][2]float32{{-inf, inf}, {0, 6}, {-0.25, 0.25}} {
				got := nnRandFloats(r, rows*ow+9)
				want := append([]float32{}, got...)
				dwRows(got, src, offs, w, rows, ow, wq, 0.5, bound[0], bound[1])
				for row := range rows {
					for i := range ow {
						sum := float64(0.5)
						for k, off := range offs {
							sum += float64(w[k]) * float64(src[off+row*wq+i])
						}
						if !math.IsNaN(sum) {
							sum = min(max(sum, float64(bound[0])), float64(bound[1]))
						}
						want[row*ow+i] = float32(sum)
					}
				}
				if i := nnClose(got, want, conv.Abs, conv.Rel); i >= 0 {
					t.Fatalf("AVX-512 %v, taps %d rows %d ow %d wq %d clamp %v: dst[%d] = %v, want %v", dwZMM, taps, rows, ow, wq, bound, i, got[i], want[i])
				}
			}
		}
	}
}

// TestDwCopyRows checks the one-call copy of a plane's rows into dwPoly's
// stride-1 layout: each row's values in place, zeros up to its last whole
// vector, and nothing else written; and that the layouts of stride-1
// depthwise convolutions leave it the room it needs, so that fill takes it
// wherever the CPU has it.
func TestDwCopyRows(t *testing.T) {
	// fast: the build and CPU have the one-call copy.
	fast := dwCopyRows(make([]float32, 8), make([]float32, 1), 1, 1, 1, 1)
	r := rand.New(rand.NewPCG(21, 22))
	for range 300 {
		rows, n := 1+r.IntN(12), 1+r.IntN(40)
		srcPitch, dstPitch := n+r.IntN(3), n+r.IntN(6)
		src := nnRandFloats(r, (rows-1)*srcPitch+n)
		dst := nnRandFloats(r, (rows-1)*dstPitch+(n+7)&^7+r.IntN(3))
		want := slices.Clone(dst)
		for i := range rows {
			end := min(i*dstPitch+(n+7)&^7, len(want))
			clear(want[i*dstPitch+n : end])
			copy(want[i*dstPitch:i*dstPitch+n], src[i*srcPitch:])
		}
		if !dwCopyRows(dst, src, rows, n, srcPitch, dstPitch) {
			if fast {
				t.Fatalf("rows %d n %d pitches %d, %d: not copied", rows, n, srcPitch, dstPitch)
			}
			continue
		}
		if !slices.Equal(dst, want) {
			t.Fatalf("rows %d n %d pitches %d, %d: got %v, want %v", rows, n, srcPitch, dstPitch, dst, want)
		}
	}
	for hw := 1; hw <= 20; hw++ {
		for k := 1; k <= 7; k++ {
			for pad := 0; pad <= k; pad++ {
				out := hw + 2*pad - k + 1
				if out < 1 {
					continue
				}
				g := &convGeom{rank: 2, in: []int{hw, hw}, out: []int{out, out}, kernel: []int{k, k}, stride: []int{1, 1}, dil: []int{1, 1},
					padBegin: []int{pad, pad}, padEnd: []int{pad, pad}, inSize: hw * hw, outSize: out * out, kernelSize: k * k}
				p, _ := (&convLayout{convGeom: g, n: 1, cin: 1, m: 1, group: 1, cg: 1, mg: 1}).dwLayout()
				buf := make([]float32, p.size)
				rows, n := min(p.h, p.hq-p.padTop), min(p.w, p.wq-p.padLeft)
				if got := dwCopyRows(buf[p.padTop*p.wq+p.padLeft:], make([]float32, hw*hw), rows, n, p.w, p.wq); got != fast {
					t.Fatalf("%dx%d plane, %dx%d kernel, pads %d: dwCopyRows %v, want %v", hw, hw, k, k, pad, got, fast)
				}
			}
		}
	}
}

// TestDwSplitRows checks the one-call split of a plane's rows into even
// and odd columns: every value in place and nothing else written, for
// counts around the vectors of 8 and even and odd counts one apart; and
// that fill takes it for the layouts of column stride 2 wherever the CPU
// has it.
func TestDwSplitRows(t *testing.T) {
	fast := dwSplitRows(make([]float32, 1), make([]float32, 1), make([]float32, 2), 1, 1, 1, 2, 1)
	r := rand.New(rand.NewPCG(23, 24))
	for range 400 {
		rows, ne := 1+r.IntN(9), 1+r.IntN(40)
		no := max(ne-1+r.IntN(3), 0)
		srcPitch, dstPitch := max(2*ne-1, 2*no)+r.IntN(3), max(ne, no)+r.IntN(4)
		src := nnRandFloats(r, (rows-1)*srcPitch+max(2*ne-1, 2*no))
		buf := nnRandFloats(r, 2*(rows*dstPitch+8))
		even, odd := buf[:rows*dstPitch+8], buf[rows*dstPitch+8:]
		want := slices.Clone(buf)
		for i := range rows {
			for k := range ne {
				want[i*dstPitch+k] = src[i*srcPitch+2*k]
			}
			for k := range no {
				want[rows*dstPitch+8+i*dstPitch+k] = src[i*srcPitch+2*k+1]
			}
		}
		if !dwSplitRows(even, odd, src, rows, ne, no, srcPitch, dstPitch) {
			if fast {
				t.Fatalf("rows %d ne %d no %d: not split", rows, ne, no)
			}
			continue
		}
		if !slices.Equal(buf, want) {
			t.Fatalf("rows %d ne %d no %d pitches %d, %d: got %v, want %v", rows, ne, no, srcPitch, dstPitch, buf, want)
		}
	}
	for hw := 2; hw <= 20; hw++ {
		for k := 1; k <= 7; k++ {
			for pad := 0; pad <= k/2; pad++ {
				out := (hw+2*pad-k)/2 + 1
				if out < 1 {
					continue
				}
				g := &convGeom{rank: 2, in: []int{hw, hw}, out: []int{out, out}, kernel: []int{k, k}, stride: []int{2, 2}, dil: []int{1, 1},
					padBegin: []int{pad, pad}, padEnd: []int{pad, pad}, inSize: hw * hw, outSize: out * out, kernelSize: k * k}
				p, _ := (&convLayout{convGeom: g, n: 1, cin: 1, m: 1, group: 1, cg: 1, mg: 1}).dwLayout()
				if got := p.splitRows(make([]float32, p.size), make([]float32, hw*hw)); got != fast {
					t.Fatalf("%dx%d plane, %dx%d kernel, stride 2, pads %d: splitRows %v, want %v", hw, hw, k, k, pad, got, fast)
				}
			}
		}
	}
}

// TestClampF32 checks the in-place clamp of fused activations over
// lengths around the vector widths, NaN included.
func TestClampF32(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for n := range 140 {
		y := nnRandFloats(r, n)
		if n > 0 {
			y[r.IntN(n)] = float32(math.NaN())
		}
		want := make([]float32, n)
		for i, v := range y {
			want[i] = v
			if v < -0.5 {
				want[i] = -0.5
			} else if v > 0.25 {
				want[i] = 0.25
			}
		}
		clampF32(y, -0.5, 0.25)
		if i := nnClose(y, want, 0, 0); i >= 0 {
			t.Fatalf("n %d: y[%d] = %v, want %v", n, i, y[i], want[i])
		}
	}
}

// TestDwSplit2 checks the even/odd split of the stride-2 padded layout
// over lengths around the vector width.
func TestDwSplit2(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for n := range 70 {
		x := nnRandFloats(r, n)
		even, odd := make([]float32, n/2+1), make([]float32, (n+1)/2)
		done := dwSplit2(even, odd, x)
		if done > n/2 || done > len(odd) {
			t.Fatalf("n %d: split %d pairs", n, done)
		}
		for i := range done {
			if even[i] != x[2*i] || odd[i] != x[2*i+1] {
				t.Fatalf("n %d: pair %d is (%v, %v), want (%v, %v)", n, i, even[i], odd[i], x[2*i], x[2*i+1])
			}
		}
	}
}

// TestSigmoidF32 checks the fused sigmoid and swish (with the AVX2
// kernel where the CPU has it, and again with the AVX-512 one where it
// has that too) against float64 over lengths around the vector widths,
// large arguments, ±Inf and NaN; the two kernels agree bit for bit.
func TestSigmoidF32(t *testing.T) {
	zmm := zmmSettings(t, &actZMM)
	sigmoid := opTol("Sigmoid")
	r := rand.New(rand.NewPCG(13, 14))
	special := []float32{0, -0.5, 3, 30, -30, 90, -90, 200, -200, float32(math.Inf(1)), float32(math.NaN())}
	for _, swish := range []bool{false, true} {
		for n := range 70 {
			y := make([]float32, n)
			for i := range y {
				y[i] = float32(r.NormFloat64() * 8)
				if r.IntN(4) == 0 {
					y[i] = special[r.IntN(len(special))]
				}
			}
			want := make([]float32, n)
			for i, v := range y {
				s := 1 / (1 + math.Exp(-float64(v)))
				if swish {
					s *= float64(v)
				}
				want[i] = float32(s)
			}
			var first []uint32
			for _, z := range zmm {
				actZMM = z
				got := slices.Clone(y)
				sigmoidF32(got, swish)
				if i := nnClose(got, want, sigmoid.Abs, sigmoid.Rel); i >= 0 {
					t.Fatalf("zmm %v swish %v n %d: y[%d] = %v, want %v", z, swish, n, i, got[i], want[i])
				}
				if bits := f32Bits(got); first == nil {
					first = bits
				} else if !slices.Equal(bits, first) {
					t.Fatalf("swish %v n %d: the AVX-512 kernel differs from the AVX2 one: %s", swish, n, firstDiff(bits, first))
				}
			}
		}
	}
}

// TestTanhSlice checks tanhSlice (the recurrent ops' tanh) against
// float64 over lengths around the vector widths, with values about the
// switch between its formulas, tiny and huge ones, ±0, ±Inf and NaN, and
// requires the same bits from the AVX-512 kernel as from the AVX2 one.
func TestTanhSlice(t *testing.T) {
	zmm := zmmSettings(t, &actZMM)
	tol := opTol("Tanh")
	r := rand.New(rand.NewPCG(17, 18))
	special := []float32{0, float32(math.Copysign(0, -1)), 0.625, -0.625, 0.62499994, 1e-30, -1e-41, 9, -9, 44.2, 50, -100,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
	for n := range 70 {
		y := make([]float32, n)
		for i := range y {
			y[i] = float32(r.NormFloat64() * 2)
			if r.IntN(3) == 0 {
				y[i] = special[r.IntN(len(special))]
			}
		}
		var first []uint32
		for _, z := range zmm {
			actZMM = z
			got := slices.Clone(y)
			tanhSlice(got)
			for i, v := range y {
				want := math.Tanh(float64(v))
				if g := float64(got[i]); !(g == want || math.IsNaN(g) && math.IsNaN(want) || tol.Within(g, want)) ||
					math.Signbit(g) != math.Signbit(want) {
					t.Fatalf("zmm %v n %d: tanh(%v) = %v, want %v", z, n, v, got[i], want)
				}
			}
			if bits := f32Bits(got); first == nil {
				first = bits
			} else if !slices.Equal(bits, first) {
				t.Fatalf("n %d: the AVX-512 kernel differs from the AVX2 one: %s", n, firstDiff(bits, first))
			}
		}
	}
}

// TestHardSigmoidF32 checks the fused hard sigmoid and hard swish against
// float64 over lengths around the vector width, in place and into another
// slice, with values on and past both bends, ±Inf and NaN.
func TestHardSigmoidF32(t *testing.T) {
	tol := opTol("HardSwish")
	r := rand.New(rand.NewPCG(15, 16))
	special := []float32{0, -3, 3, -2.5, 2.5, 1e30, -1e30, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
	params := [][2]float32{{1.0 / 6, 0.5}, {0.2, 0.5}, {-0.75, 0.25}}
	for _, swish := range []bool{false, true} {
		for _, p := range params {
			for n := range 70 {
				s := make([]float32, n)
				for i := range s {
					s[i] = float32(r.NormFloat64() * 4)
					if r.IntN(4) == 0 {
						s[i] = special[r.IntN(len(special))]
					}
				}
				want := make([]float32, n)
				for i, v := range s {
					h := float64(p[0])*float64(v) + float64(p[1])
					if !math.IsNaN(h) {
						h = max(0, min(1, h))
					}
					if swish {
						h *= float64(v)
					}
					want[i] = float32(h)
				}
				got := make([]float32, n)
				hardSigmoidF32(got, s, p[0], p[1], swish)
				if i := nnClose(got, want, tol.Abs, tol.Rel); i >= 0 {
					t.Fatalf("swish %v %v n %d: d[%d] = %v, want %v", swish, p, n, i, got[i], want[i])
				}
				hardSigmoidF32(s, s, p[0], p[1], swish)
				if i := nnClose(s, got, 0, 0); i >= 0 {
					t.Fatalf("swish %v %v n %d in place: d[%d] = %v, want %v", swish, p, n, i, s[i], got[i])
				}
			}
		}
	}
}

// TestDepthwiseEdges checks depthwise convolutions against the naive
// reference over random draws of 1×1 to 7×7 kernels, strides 1 to 3 on
// either axis, dilations, padding on every side (none, asymmetric, wider
// than the kernel and than the polyphase rows), channel multipliers 1 and 2, and planes from 1×1 to
// wide enough that the middle columns are read in place while the edges
// go through the padded copy.
func TestDepthwiseEdges(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	sizes := [][2]int64{{1, 1}, {5, 7}, {9, 23}, {14, 14}, {17, 40}, {3, 61}}
	for range 300 {
		k := [2]int64{1 + r.Int64N(7), 1 + r.Int64N(7)}
		if r.IntN(2) == 0 {
			k[1] = k[0]
		}
		hw := sizes[r.IntN(len(sizes))]
		tc := convCase{
			x: []int64{1 + r.Int64N(2), 1 + r.Int64N(3), hw[0], hw[1]}, group: 0,
			stride: []int64{1 + r.Int64N(2) + r.Int64N(2)*r.Int64N(2), 1 + r.Int64N(2) + r.Int64N(2)*r.Int64N(2)},
			dil:    []int64{1 + r.Int64N(2)*r.Int64N(3), 1 + r.Int64N(2)*r.Int64N(3)},
			bias:   r.IntN(2) == 0,
		}
		tc.pads = make([]int64, 4)
		for i := range tc.pads {
			tc.pads[i] = r.Int64N(k[i%2] + 1 + r.Int64N(4))
		}
		tc.group = int(tc.x[1])
		tc.w = []int64{tc.x[1] * (1 + r.Int64N(2)), 1, k[0], k[1]}
		if (hw[0]+tc.pads[0]+tc.pads[2]-(k[0]-1)*tc.dil[0]-1) < 0 || (hw[1]+tc.pads[1]+tc.pads[3]-(k[1]-1)*tc.dil[1]-1) < 0 {
			continue
		}
		convExpect(t, r, tc)
	}
}
