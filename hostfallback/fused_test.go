package hostfallback

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// nanAlloc allocates outputs filled with NaN, so that a kernel must write
// every element.
func nanAlloc(_ int, dt graph.DType, shape []int64) *graph.Tensor {
	y := graph.NewTensor(dt, shape)
	for i := range graph.View[float32](y) {
		graph.View[float32](y)[i] = float32(math.NaN())
	}
	return y
}

// checkFused runs the fused kernel of c's node and compares its float32
// output with want within the op's tolerance; what names the case.
func checkFused(t *testing.T, c *Call, want *graph.Tensor, what string) {
	t.Helper()
	if err := Lookup(ops.FusedDomain, c.Node.OpType)(c); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	got := graph.View[float32](c.Out[0].(*graph.Tensor))
	for i, v := range graph.View[float32](want) {
		if !opTol(c.Node.OpType, ops.FusedDomain).Within(float64(got[i]), float64(v)) {
			t.Fatalf("%s: element %d is %g, want %g", what, i, got[i], v)
		}
	}
}

// TestFusedConv checks FusedConv against Conv followed by the activation
// kernel, on depthwise, pointwise and general convolutions, with output
// storage that starts as NaN so that every element must be written.
func TestFusedConv(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	random := func(shape ...int64) *graph.Tensor {
		x := graph.NewTensor(graph.Float, shape)
		for i := range graph.View[float32](x) {
			graph.View[float32](x)[i] = float32(rng.NormFloat64() * 4)
		}
		return x
	}
	convs := []struct {
		name  string
		x, w  []int64
		group int64
		pads  []int64
	}{
		{"depthwise", []int64{1, 6, 9, 9}, []int64{6, 1, 3, 3}, 6, []int64{1, 1, 1, 1}},
		{"pointwise", []int64{1, 5, 7, 7}, []int64{12, 5, 1, 1}, 1, []int64{0, 0, 0, 0}},
		{"general", []int64{2, 3, 11, 11}, []int64{17, 3, 3, 3}, 1, []int64{1, 1, 1, 1}},
		{"squeeze", []int64{1, 24, 1, 1}, []int64{96, 24, 1, 1}, 1, []int64{0, 0, 0, 0}},
	}
	acts := []struct {
		op           string
		alpha, beta  float32
		attrs        ewAttrs
		extra        []graph.Value
		unfusedOpset int64
	}{
		{op: "Relu", unfusedOpset: 14},
		{op: "Clip", alpha: 0, beta: 6, extra: []graph.Value{ewT(graph.Float, nil, float32(0)), ewT(graph.Float, nil, float32(6))}, unfusedOpset: 13},
		{op: "LeakyRelu", alpha: 0.1, attrs: ewWith(ewFloat("alpha", 0.1)), unfusedOpset: 16},
		{op: "Sigmoid", unfusedOpset: 13},
		{op: "HardSigmoid", alpha: 0.3, beta: 0.4, attrs: ewWith(ewFloat("alpha", 0.3), ewFloat("beta", 0.4)), unfusedOpset: 6},
		{op: "HardSwish", unfusedOpset: 14},
	}
	for _, cv := range convs {
		x, w, b := random(cv.x...), random(cv.w...), random(cv.w[0])
		attrs := ewWith(ewInt("group", cv.group), ewInts("pads", cv.pads...))
		conv := ewRun(t, "Conv", 11, attrs, x, w, b)
		for _, a := range acts {
			want := ewRun(t, a.op, a.unfusedOpset, a.attrs, append([]graph.Value{conv}, a.extra...)...)
			n := &graph.Node{Name: "f", OpType: "FusedConv", Domain: ops.FusedDomain, Outputs: []string{"y"},
				Attrs: ewWith(ewInt("group", cv.group), ewInts("pads", cv.pads...), ewString("activation", a.op),
					ewFloat("alpha", a.alpha), ewFloat("beta", a.beta))}
			c := &Call{Node: n, Opset: 1, In: []graph.Value{x, w, b}, Out: make([]graph.Value, 1), Alloc: nanAlloc}
			checkFused(t, c, want, cv.name+"+"+a.op)
		}
	}
}

// TestFusedMatMul checks FusedMatMul against MatMul then Add.
func TestFusedMatMul(t *testing.T) {
	a := ewT(graph.Float, []int64{2, 2, 3}, float32(1), 2, 3, 4, 5, 6, -1, -2, -3, 0, 1, 0)
	b := ewT(graph.Float, []int64{3, 2}, float32(1), 0, 0, 1, 2, 2)
	bias := ewT(graph.Float, []int64{2}, float32(10), -10)
	want := ewRun(t, "Add", 14, nil, ewRun(t, "MatMul", 13, nil, a, b), bias)
	n := &graph.Node{Name: "f", OpType: "FusedMatMul", Domain: ops.FusedDomain, Outputs: []string{"y"}}
	c := &Call{Node: n, Opset: 1, In: []graph.Value{a, b, bias}, Out: make([]graph.Value, 1)}
	if err := Lookup(ops.FusedDomain, "FusedMatMul")(c); err != nil {
		t.Fatal(err)
	}
	got := graph.View[float32](c.Out[0].(*graph.Tensor))
	for i, v := range graph.View[float32](want) {
		if got[i] != v {
			t.Fatalf("element %d is %g, want %g", i, got[i], v)
		}
	}
	c = &Call{Node: n, Opset: 1, In: []graph.Value{a, b, ewT(graph.Float, []int64{3}, float32(1), 2, 3)}, Out: make([]graph.Value, 1)}
	if err := Lookup(ops.FusedDomain, "FusedMatMul")(c); err == nil {
		t.Fatal("a bias of the wrong length was accepted")
	}
}

// TestFusedConvSum checks FusedConv with a Sum input against Conv, Add and
// the activation kernels (Mul and Sigmoid for Swish; or none), on
// depthwise, pointwise (one whose GEMMs go parallel inside, the activation
// their epilogue on each worker's blocks) and general convolutions, with
// output storage that starts as NaN; and that a Sum of another shape is an
// error.
func TestFusedConvSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	random := func(shape ...int64) *graph.Tensor {
		x := graph.NewTensor(graph.Float, shape)
		for i := range graph.View[float32](x) {
			graph.View[float32](x)[i] = float32(rng.NormFloat64() * 4)
		}
		return x
	}
	convs := []struct {
		name  string
		x, w  []int64
		group int64
		pads  []int64
	}{
		{"depthwise", []int64{2, 6, 9, 9}, []int64{6, 1, 3, 3}, 6, []int64{1, 1, 1, 1}},
		{"pointwise", []int64{1, 5, 23, 29}, []int64{12, 5, 1, 1}, 1, []int64{0, 0, 0, 0}},
		// Two column tiles, each a GEMM that goes parallel inside, the
		// activation finishing each worker's blocks.
		{"pointwise wide", []int64{1, 8, 24, 25}, []int64{128, 8, 1, 1}, 1, []int64{0, 0, 0, 0}},
		{"general", []int64{2, 3, 11, 11}, []int64{17, 3, 3, 3}, 1, []int64{1, 1, 1, 1}},
		// Deeper than a k slab (gemmKC), with a partial strip of rows and
		// of columns: the GEMM's epilogue must wait for the last slab.
		{"general deep", []int64{1, 30, 13, 11}, []int64{20, 30, 3, 3}, 1, []int64{1, 1, 1, 1}},
		{"pointwise deep", []int64{1, 300, 5, 7}, []int64{13, 300, 1, 1}, 1, []int64{0, 0, 0, 0}},
	}
	for _, cv := range convs {
		x, w, b := random(cv.x...), random(cv.w...), random(cv.w[0])
		attrs := ewWith(ewInt("group", cv.group), ewInts("pads", cv.pads...))
		conv := ewRun(t, "Conv", 11, attrs, x, w, b)
		sum := random(conv.Shape...)
		added := ewRun(t, "Add", 14, nil, conv, sum)
		for _, act := range []string{"", ops.ActRelu, ops.ActSigmoid, ops.ActSwish, ops.ActHardSwish} {
			want := added
			switch act {
			case "":
			case ops.ActSwish:
				want = ewRun(t, "Mul", 14, nil, added, ewRun(t, "Sigmoid", 13, nil, added))
			default:
				want = ewRun(t, act, 14, nil, added)
			}
			n := &graph.Node{Name: "f", OpType: "FusedConv", Domain: ops.FusedDomain, Outputs: []string{"y"},
				Attrs: ewWith(ewInt("group", cv.group), ewInts("pads", cv.pads...), ewString("activation", act))}
			c := &Call{Node: n, Opset: 1, In: []graph.Value{x, w, b, sum}, Out: make([]graph.Value, 1), Alloc: nanAlloc}
			if err := Lookup(ops.FusedDomain, "FusedConv")(c); err != nil {
				t.Fatalf("%s+Sum+%q: %v", cv.name, act, err)
			}
			got := graph.View[float32](c.Out[0].(*graph.Tensor))
			for i, v := range graph.View[float32](want) {
				if !opTol("FusedConv", ops.FusedDomain).Within(float64(got[i]), float64(v)) {
					t.Fatalf("%s+Sum+%q: element %d is %g, want %g", cv.name, act, i, got[i], v)
				}
			}
		}
		n := &graph.Node{Name: "f", OpType: "FusedConv", Domain: ops.FusedDomain, Outputs: []string{"y"}, Attrs: attrs}
		c := &Call{Node: n, Opset: 1, In: []graph.Value{x, w, b, random(1, 2)}, Out: make([]graph.Value, 1), Alloc: nanAlloc}
		if err := Lookup(ops.FusedDomain, "FusedConv")(c); err == nil {
			t.Fatalf("%s: a Sum of shape [1 2] was accepted", cv.name)
		}
	}
}

// TestMatMulTransB checks MatMulTransB against naiveMatMul of A and B
// transposed by the Transpose kernel: one row (a decode step's scores) and
// more, batched and broadcast, with B a single matrix; and the errors.
func TestMatMulTransB(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	n := &graph.Node{Name: "f", OpType: "MatMulTransB", Domain: ops.FusedDomain, Outputs: []string{"y"}}
	for _, tc := range [][2][]int64{
		{{1, 8, 1, 64}, {1, 8, 41, 64}},
		{{1, 8, 1, 64}, {1, 8, 1001, 64}},
		{{1, 8, 32, 64}, {1, 8, 32, 64}},
		{{3, 1, 5, 7}, {2, 9, 7}},
		{{4, 33}, {17, 33}},
		{{2, 3, 33}, {100, 33}},
		{{7}, {5, 7}},
	} {
		a, b := nnRand(r, tc[0]...), nnRand(r, tc[1]...)
		perm := make([]int64, len(tc[1]))
		for i := range perm {
			perm[i] = int64(i)
		}
		perm[len(perm)-2], perm[len(perm)-1] = perm[len(perm)-1], perm[len(perm)-2]
		bt := ewRun(t, "Transpose", 13, ewAttrs{"perm": ewInts("perm", perm...)}, b)
		shape, want := naiveMatMul(a, bt)
		c := &Call{Node: n, Opset: 1, In: []graph.Value{a, b}, Out: make([]graph.Value, 1)}
		if err := matmulTransBKernel(c); err != nil {
			t.Fatalf("%v·%vᵀ: %v", tc[0], tc[1], err)
		}
		tol := opTol("MatMul")
		nnCheck(t, fmt.Sprint(tc[0], "·", tc[1], "ᵀ"), c.Out[0].(*graph.Tensor), shape, want, tol.Abs, tol.Rel)
	}
	for _, bad := range [][]*graph.Tensor{
		{nnRand(r, 2, 3), nnRand(r, 3)},
		{nnRand(r, 2, 3), nnRand(r, 4, 2)},
		{nnRand(r, 2, 3), graph.NewTensor(graph.Double, []int64{4, 3})},
	} {
		c := &Call{Node: n, Opset: 1, In: []graph.Value{bad[0], bad[1]}, Out: make([]graph.Value, 1)}
		if err := matmulTransBKernel(c); err == nil {
			t.Errorf("%s%v·%s%vᵀ: no error", bad[0].DType, bad[0].Shape, bad[1].DType, bad[1].Shape)
		}
	}
}

// TestFusedBatchNorm checks FusedBatchNorm against BatchNormalization
// followed by the activation kernel, on planes of sizes around the vector
// width (1×1 included), with output storage that starts as NaN so that
// every element must be written.
func TestFusedBatchNorm(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	random := func(lo, hi float64, shape ...int64) *graph.Tensor {
		x := graph.NewTensor(graph.Float, shape)
		for i := range graph.View[float32](x) {
			graph.View[float32](x)[i] = float32(lo + (hi-lo)*rng.Float64())
		}
		return x
	}
	acts := []struct {
		op          string
		alpha, beta float32
		attrs       ewAttrs
		extra       []graph.Value
		opset       int64
	}{
		{op: "", opset: 0},
		{op: "Relu", opset: 14},
		{op: "Clip", alpha: -0.5, beta: 0.5, extra: []graph.Value{ewT(graph.Float, nil, float32(-0.5)), ewT(graph.Float, nil, float32(0.5))}, opset: 13},
		{op: "HardSwish", opset: 14},
	}
	for _, shape := range [][]int64{{1, 3, 1, 1}, {2, 5, 3, 3}, {1, 4, 8}, {1, 7, 13, 11}} {
		ch := shape[1]
		x := random(-4, 4, shape...)
		params := []graph.Value{random(0.5, 2, ch), random(-1, 1, ch), random(-1, 1, ch), random(0.1, 3, ch)}
		bnAttrs := ewWith(ewFloat("epsilon", 1e-3))
		bn := ewRun(t, "BatchNormalization", 15, bnAttrs, append([]graph.Value{x}, params...)...)
		for _, a := range acts {
			want := bn
			if a.op != "" {
				want = ewRun(t, a.op, a.opset, a.attrs, append([]graph.Value{bn}, a.extra...)...)
			}
			n := &graph.Node{Name: "f", OpType: "FusedBatchNorm", Domain: ops.FusedDomain, Outputs: []string{"y"},
				Attrs: ewWith(ewFloat("epsilon", 1e-3), ewString("activation", a.op), ewFloat("alpha", a.alpha), ewFloat("beta", a.beta))}
			c := &Call{Node: n, Opset: 1, In: append([]graph.Value{x}, params...), Out: make([]graph.Value, 1), Alloc: nanAlloc}
			if err := Lookup(ops.FusedDomain, "FusedBatchNorm")(c); err != nil {
				t.Fatalf("%v+%q: %v", shape, a.op, err)
			}
			got := graph.View[float32](c.Out[0].(*graph.Tensor))
			for i, v := range graph.View[float32](want) {
				if got[i] != v {
					t.Fatalf("%v+%q: element %d is %g, want %g", shape, a.op, i, got[i], v)
				}
			}
		}
	}
}

// TestAffineF32 checks the vector affine map against the portable loop,
// bit for bit, over lengths around the vector widths, in place and into
// another slice.
func TestAffineF32(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	for n := range 140 {
		s := nnRandFloats(r, n)
		if n > 0 {
			s[r.IntN(n)] = float32(math.NaN())
		}
		want := make([]float32, n)
		affineF32Go(want, s, 1.75, -0.3)
		got := make([]float32, n)
		affineF32(got, s, 1.75, -0.3)
		if i := nnClose(got, want, 0, 0); i >= 0 {
			t.Fatalf("n %d: d[%d] = %v, want %v", n, i, got[i], want[i])
		}
		affineF32(s, s, 1.75, -0.3)
		if i := nnClose(s, want, 0, 0); i >= 0 {
			t.Fatalf("n %d in place: d[%d] = %v, want %v", n, i, s[i], want[i])
		}
	}
}

// TestClampAddF32 checks clampAddF32 (with AVX2 where the CPU has it)
// bit for bit against clampAddF32Go on blocks of every width up to 40,
// with and without a sum, NaN and infinite values included.
func TestClampAddF32(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	inf := float32(math.Inf(1))
	for cols := 1; cols <= 40; cols++ {
		for _, bounds := range [][2]float32{{0, inf}, {-inf, inf}, {-1, 6}} {
			rows, ld, at := 1+r.IntN(7), cols+r.IntN(9), r.IntN(5)
			n := at + (rows-1)*ld + cols + r.IntN(3)
			y, s := poolSpecials(r, n), poolSpecials(r, n)
			for _, sum := range [][]float32{nil, s} {
				got, want := slices.Clone(y), slices.Clone(y)
				clampAddF32(got, sum, at, rows, cols, ld, bounds[0], bounds[1])
				clampAddF32Go(want, sum, at, rows, cols, ld, bounds[0], bounds[1])
				gb, wb := make([]uint32, n), make([]uint32, n)
				for i := range got {
					gb[i], wb[i] = math.Float32bits(got[i]), math.Float32bits(want[i])
				}
				if !slices.Equal(gb, wb) {
					t.Fatalf("%d×%d (ld %d, at %d), bounds %v, sum %v: %s", rows, cols, ld, at, bounds, sum != nil, firstDiff(gb, wb))
				}
			}
		}
	}
}

// TestNormConv checks NormConv against BatchNormalization, its
// activation, Conv and the conv's activation run one after the other: one
// and several column tiles (pointwiseF32's units handed out whole or each
// tile's GEMM shared), two images in two groups, a 7×7 plane, no bias, on
// the pool and on one goroutine, with the coefficients made per call and
// (constant inputs, a step's memo) once and reused; and that a padded
// convolution is refused.
func TestNormConv(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	random := func(scale float64, shape ...int64) *graph.Tensor {
		x := graph.NewTensor(graph.Float, shape)
		for i := range graph.View[float32](x) {
			graph.View[float32](x)[i] = float32(rng.NormFloat64() * scale)
		}
		return x
	}
	positive := func(n int64) *graph.Tensor {
		v := random(1, n)
		for i, f := range graph.View[float32](v) {
			graph.View[float32](v)[i] = f*f + 0.1
		}
		return v
	}
	cases := []struct {
		name      string
		x, w      []int64
		group     int64
		bias      bool
		norm, act string
	}{
		{"two tiles shared", []int64{1, 40, 30, 30}, []int64{24, 40, 1, 1}, 1, true, "Relu", "Relu"},
		{"many tiles", []int64{1, 24, 64, 64}, []int64{16, 24, 1, 1}, 1, true, "Relu", ""},
		{"groups", []int64{2, 16, 9, 9}, []int64{12, 8, 1, 1}, 2, true, "Clip", "Relu"},
		{"7x7 no bias", []int64{1, 96, 7, 7}, []int64{32, 96, 1, 1}, 1, false, "", "Clip"},
	}
	for _, tc := range cases {
		ch := tc.x[1]
		x, w := random(4, tc.x...), random(1, tc.w...)
		scale, bn, mean, vr := random(1, ch), random(1, ch), random(1, ch), positive(ch)
		var b graph.Value
		if tc.bias {
			b = random(1, tc.w[0])
		}
		clip := []graph.Value{ewT(graph.Float, nil, float32(0)), ewT(graph.Float, nil, float32(6))}
		activate := func(v *graph.Tensor, op string) *graph.Tensor {
			switch op {
			case "":
				return v
			case "Clip":
				return ewRun(t, "Clip", 13, nil, append([]graph.Value{v}, clip...)...)
			}
			return ewRun(t, op, 14, nil, v)
		}
		normed := activate(ewRun(t, "BatchNormalization", 15, nil, x, scale, bn, mean, vr), tc.norm)
		attrs := ewWith(ewInt("group", tc.group))
		in := []graph.Value{normed, w}
		if b != nil {
			in = append(in, b)
		}
		want := activate(ewRun(t, "Conv", 11, attrs, in...), tc.act)
		nattrs := ewWith(ewInt("group", tc.group), ewString("activation", tc.act), ewFloat("alpha", 0), ewFloat("beta", 6),
			ewString("norm_activation", tc.norm), ewFloat("norm_alpha", 0), ewFloat("norm_beta", 6))
		n := &graph.Node{Name: "f", OpType: "NormConv", Domain: ops.FusedDomain, Outputs: []string{"y"}, Attrs: nattrs}
		memo := new(stepMemo)
		for _, run := range []struct {
			name    string
			threads *Threads
			consts  []bool
		}{{"pool", nil, nil}, {"one goroutine", NewThreads(1), nil},
			{"constant", nil, []bool{false, true, true, true, true, true, true}},
			{"constant again", NewThreads(1), []bool{false, true, true, true, true, true, true}}} {
			c := &Call{Node: n, Opset: 1, In: []graph.Value{x, w, b, scale, bn, mean, vr}, Out: make([]graph.Value, 1),
				Alloc: nanAlloc, Threads: run.threads, consts: run.consts}
			if run.consts != nil {
				c.memo = memo
			}
			checkFused(t, c, want, tc.name+", "+run.name)
		}
	}
	x := random(1, 1, 4, 5, 5)
	n := &graph.Node{Name: "f", OpType: "NormConv", Domain: ops.FusedDomain, Outputs: []string{"y"}, Attrs: ewWith(ewInts("pads", 1, 1, 1, 1))}
	c := &Call{Node: n, Opset: 1, In: []graph.Value{x, random(1, 3, 4, 3, 3), nil, random(1, 4), random(1, 4), random(1, 4), positive(4)}, Out: make([]graph.Value, 1)}
	if err := Lookup(ops.FusedDomain, "NormConv")(c); err == nil || !strings.Contains(err.Error(), "1×…×1") {
		t.Fatalf("a padded 3×3 NormConv gave %v, want the error that it needs a 1×…×1 convolution", err)
	}
}
