package hostfallback

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

// qgemmRef is C = A·B for row-major int32 A (m×k) and B (k×n), in int64.
func qgemmRef(a, b []int32, m, n, k int) []int64 {
	c := make([]int64, m*n)
	for i := range m {
		for p := range k {
			for j := range n {
				c[i*n+j] += int64(a[i*k+p]) * int64(b[p*n+j])
			}
		}
	}
	return c
}

// qgemmValues returns n values of [−255, 255], a third of them at the
// ends.
func qgemmValues(rng *rand.Rand, n int) []int32 {
	v := make([]int32, n)
	for i := range v {
		switch rng.IntN(6) {
		case 0:
			v[i] = -255
		case 1:
			v[i] = 255
		default:
			v[i] = rng.Int32N(511) - 255
		}
	}
	return v
}

// TestQgemmVariants checks every integer micro-kernel this CPU runs
// against the int64 product, over sizes that are not multiples of the
// tile or of the pair, with operands at the ends of their range.
func TestQgemmVariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 17))
	for _, v := range qgemmVariants() {
		if !v.runs {
			t.Logf("%s not run: it needs %s, which this CPU lacks", v.kernel.name, strings.Join(v.needs, " and "))
			continue
		}
		t.Logf("%s runs", v.kernel.name)
		for _, m := range []int{1, 3, 4, 5, 8, 13} {
			for _, n := range []int{1, 15, 16, 17, 40} {
				for _, k := range []int{0, 1, 2, 3, 7, 16, 33, 144} {
					a, b := qgemmValues(rng, m*k), qgemmValues(rng, k*n)
					if m == 4 && n == 16 {
						// The largest sums: every product 255².
						for i := range a {
							a[i] = -255
						}
						for i := range b {
							b[i] = -255
						}
					}
					pa, pb := make([]int16, qgemmSizeA(m, k)), make([]int32, qgemmSizeB(k, n))
					for i := range pa {
						pa[i] = 1 // the packing must overwrite the padding
					}
					for i := range pb {
						pb[i] = 1
					}
					qpackA(pa, a, m, k, k)
					qpackB(pb, b, k, n, n)
					ldc := n + 3
					c := make([]int32, m*ldc)
					for i := range c {
						c[i] = -7
					}
					qgemm(v.kernel, m, n, k, pa, pb, c, ldc)
					want := qgemmRef(a, b, m, n, k)
					for i := range m {
						for j := range ldc {
							got, exp := int64(c[i*ldc+j]), int64(-7)
							if j < n {
								exp = want[i*n+j]
							}
							if got != exp {
								t.Fatalf("%s m=%d n=%d k=%d: C[%d,%d] = %d, want %d", v.kernel.name, m, n, k, i, j, got, exp)
							}
						}
					}
				}
			}
		}
	}
}

// TestQgemmPairRows checks the vector pairing of B's rows against the
// portable one over lengths around the vector's.
func TestQgemmPairRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for n := range 40 {
		r0, r1 := qgemmValues(rng, n), qgemmValues(rng, n)
		got, want := make([]int32, n), make([]int32, n)
		qgemmPairRows(got, r0, r1)
		qgemmPairRowsGo(want, r0, r1)
		for c := range n {
			if got[c] != want[c] || int16(want[c]) != int16(r0[c]) || want[c]>>16 != r1[c] {
				t.Fatalf("n=%d: pair %d = %#x (portable %#x) of %d and %d", n, c, got[c], want[c], r0[c], r1[c])
			}
		}
	}
}

// convIntegerCase is a ConvInteger of random 8-bit operands with zero
// points (nil: absent).
type convIntegerCase struct {
	attrs      nnAttrs
	xs, ws     []int64
	xt, wt     graph.DType
	xzp, wzp   []int64
	group      int
	stride     int
	pad, dilat int
}

// convIntegerRef is the direct 2-D convolution of x − xzp by w − wzp.
func convIntegerRef(tc convIntegerCase, x, w []int64, oh, ow int) []int64 {
	n, cin, h, wd := int(tc.xs[0]), int(tc.xs[1]), int(tc.xs[2]), int(tc.xs[3])
	m, cg, kh, kw := int(tc.ws[0]), int(tc.ws[1]), int(tc.ws[2]), int(tc.ws[3])
	mg := m / tc.group
	y := make([]int64, n*m*oh*ow)
	for b := range n {
		for o := range m {
			zw := int64(0)
			if tc.wzp != nil {
				zw = tc.wzp[o%len(tc.wzp)]
			}
			for i := range oh {
				for j := range ow {
					var s int64
					for ci := range cg {
						c := o/mg*cg + ci
						for u := range kh {
							for v := range kw {
								yi, xj := i*tc.stride-tc.pad+u*tc.dilat, j*tc.stride-tc.pad+v*tc.dilat
								if yi < 0 || yi >= h || xj < 0 || xj >= wd {
									continue
								}
								xv := x[((b*cin+c)*h+yi)*wd+xj]
								if tc.xzp != nil {
									xv -= tc.xzp[0]
								}
								s += xv * (w[((o*cg+ci)*kh+u)*kw+v] - zw)
							}
						}
					}
					y[((b*m+o)*oh+i)*ow+j] = s
				}
			}
		}
	}
	return y
}

// int8Tensor is a random int8 or uint8 tensor, with its values.
func int8Tensor(rng *rand.Rand, dt graph.DType, shape []int64) (*graph.Tensor, []int64) {
	t := graph.NewTensor(dt, shape)
	v := make([]int64, t.NumElements())
	for i := range v {
		b := uint8(rng.IntN(256))
		switch rng.IntN(8) {
		case 0:
			b = 0
		case 1:
			b = 255
		case 2:
			b = 127
		case 3:
			b = 128
		}
		t.Data[i] = b
		v[i] = int64(b)
		if dt == graph.Int8 {
			v[i] = int64(int8(b))
		}
	}
	return t, v
}

// int8Scalars is a tensor of the given 8-bit values.
func int8Scalars(dt graph.DType, shape []int64, v []int64) *graph.Tensor {
	t := graph.NewTensor(dt, shape)
	for i, x := range v {
		t.Data[i] = uint8(x)
	}
	return t
}

// TestConvIntegerVariants checks ConvInteger, run with every integer
// micro-kernel this CPU runs, against the direct convolution: groups,
// strides, padding, dilation, odd depths, several panels and a partial
// one, zero points at the ends of their types.
func TestConvIntegerVariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 10))
	cases := []convIntegerCase{
		{xs: []int64{1, 3, 9, 7}, ws: []int64{5, 3, 3, 3}, xt: graph.Uint8, wt: graph.Uint8, xzp: []int64{255}, wzp: []int64{255}, group: 1, stride: 2, pad: 1, dilat: 1},
		{xs: []int64{2, 4, 6, 6}, ws: []int64{6, 2, 3, 3}, xt: graph.Uint8, wt: graph.Int8, xzp: []int64{0}, wzp: []int64{-128, 127, 0, 5, -1, 127}, group: 2, stride: 1, pad: 2, dilat: 2},
		{xs: []int64{1, 32, 5, 5}, ws: []int64{32, 1, 3, 3}, xt: graph.Int8, wt: graph.Int8, xzp: []int64{-128}, wzp: []int64{127}, group: 32, stride: 1, pad: 1, dilat: 1},
		{xs: []int64{1, 7, 20, 21}, ws: []int64{9, 7, 1, 1}, xt: graph.Uint8, wt: graph.Int8, xzp: []int64{128}, group: 1, stride: 1, dilat: 1},
		{xs: []int64{1, 16, 16, 16}, ws: []int64{16, 16, 3, 3}, xt: graph.Uint8, wt: graph.Int8, group: 1, stride: 1, pad: 1, dilat: 1},
	}
	for ci, tc := range cases {
		attrs := nnAttrs{"group": tc.group, "strides": []int64{int64(tc.stride), int64(tc.stride)},
			"pads": []int64{int64(tc.pad), int64(tc.pad), int64(tc.pad), int64(tc.pad)}, "dilations": []int64{int64(tc.dilat), int64(tc.dilat)}}
		x, xv := int8Tensor(rng, tc.xt, tc.xs)
		w, wv := int8Tensor(rng, tc.wt, tc.ws)
		in := []graph.Value{x, w, nil, nil}
		if tc.xzp != nil {
			in[2] = int8Scalars(tc.xt, nil, tc.xzp)
		}
		if tc.wzp != nil {
			shape := []int64{int64(len(tc.wzp))}
			if len(tc.wzp) == 1 {
				shape = nil
			}
			in[3] = int8Scalars(tc.wt, shape, tc.wzp)
		}
		for _, v := range qgemmVariants() {
			if !v.runs {
				continue
			}
			name := fmt.Sprintf("case %d %s", ci, v.kernel.name)
			c := &Call{Node: attrs.node("ConvInteger", len(in), []string{"y"}), Opset: 10, In: in, Out: make([]graph.Value, 1)}
			l, err := convPlan(c, x.Shape, w.Shape)
			if err != nil {
				t.Fatal(name, err)
			}
			xi, err := int8Values(c, x)
			if err != nil {
				t.Fatal(name, err)
			}
			if tc.xzp != nil {
				for i := range xi {
					xi[i] -= int32(tc.xzp[0])
				}
			}
			wp, err := convIntegerWeights(c, l, w)
			if err != nil {
				t.Fatal(name, err)
			}
			y := make([]int32, l.n*l.m*l.outSize)
			convIntegerRun(c.Threads, v.kernel, l, xi, wp, y)
			want := convIntegerRef(tc, xv, wv, l.out[0], l.out[1])
			for i := range want {
				if int64(y[i]) != want[i] {
					t.Fatalf("%s: y[%d] = %d, want %d", name, i, y[i], want[i])
				}
			}
		}
	}
}

// TestMatMulIntegerVariants checks MatMulInteger, run with every integer
// micro-kernel this CPU runs, against int64 products: stacked and
// broadcast batches, vectors, an empty depth, odd sizes, per-tensor
// zero points at the ends of their types, per-row and per-column ones.
func TestMatMulIntegerVariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 11))
	cases := []struct {
		as, bs   []int64
		at, bt   graph.DType
		azp, bzp []int64
	}{
		{as: []int64{3, 5, 7}, bs: []int64{7, 17}, at: graph.Uint8, bt: graph.Int8, azp: []int64{255}, bzp: []int64{-128}},
		{as: []int64{2, 1, 4, 33}, bs: []int64{3, 33, 9}, at: graph.Int8, bt: graph.Uint8, azp: []int64{127}, bzp: []int64{0}},
		{as: []int64{13}, bs: []int64{13, 20}, at: graph.Uint8, bt: graph.Uint8},
		{as: []int64{1, 144}, bs: []int64{144, 10}, at: graph.Uint8, bt: graph.Int8, azp: []int64{0}, bzp: []int64{127}},
		{as: []int64{6, 31}, bs: []int64{31, 18}, at: graph.Uint8, bt: graph.Uint8, azp: []int64{0, 255, 1, 128, 7, 255}, bzp: []int64{255, 0, 3, 255, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 255}},
		{as: []int64{4, 0}, bs: []int64{0, 3}, at: graph.Uint8, bt: graph.Int8},
		// Enough rows for the workers to share.
		{as: []int64{3, 41, 64}, bs: []int64{64, 48}, at: graph.Uint8, bt: graph.Int8, azp: []int64{3}},
	}
	for ci, tc := range cases {
		a, av := int8Tensor(rng, tc.at, tc.as)
		b, bv := int8Tensor(rng, tc.bt, tc.bs)
		in := []graph.Value{a, b, nil, nil}
		if tc.azp != nil {
			in[2] = int8Scalars(tc.at, []int64{int64(len(tc.azp))}, tc.azp)
		}
		if tc.bzp != nil {
			in[3] = int8Scalars(tc.bt, []int64{int64(len(tc.bzp))}, tc.bzp)
		}
		for _, v := range qgemmVariants() {
			if !v.runs {
				continue
			}
			name := fmt.Sprintf("case %d %s", ci, v.kernel.name)
			c := &Call{Node: nnAttrs{}.node("MatMulInteger", len(in), []string{"y"}), Opset: 10, In: in, Out: make([]graph.Value, 1)}
			p, err := matmulPlan(c, a.Shape, b.Shape)
			if err != nil {
				t.Fatal(name, err)
			}
			ai, err := int8Operand(c, a, c.Tensor(2), "a_zero_point", p.k, p.n, false)
			if err != nil {
				t.Fatal(name, err)
			}
			bp, err := matmulIntegerB(c, p, b)
			if err != nil {
				t.Fatal(name, err)
			}
			y := make([]int32, int(graph.NumElements(p.out)))
			for i := range y {
				y[i] = -3
			}
			matmulIntegerRun(c.Threads, v.kernel, p, ai, bp, y)
			m, n, k := p.m, p.n, p.k
			for o := range p.offA {
				for i := range m {
					for j := range n {
						var want int64
						for q := range k {
							x, w := av[p.offA[o]+i*k+q], bv[p.offB[o]+q*n+j]
							if tc.azp != nil {
								x -= tc.azp[i%len(tc.azp)]
							}
							if tc.bzp != nil {
								w -= tc.bzp[j%len(tc.bzp)]
							}
							want += x * w
						}
						if got := y[(o*m+i)*n+j]; int64(got) != want {
							t.Fatalf("%s: matrix %d y[%d,%d] = %d, want %d", name, o, i, j, got, want)
						}
					}
				}
			}
		}
	}
}
