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

// sdpaReference is ScaledDotProductAttention computed in float64 on
// operands transposed by the Transpose kernel: softmax(scale·q·kᵀ +
// bias)·v per batch entry, then the output's Transpose. bias (nil: none)
// gives the mask's term for key j of query i of entry b (−inf: hidden);
// a row hidden throughout gives zeros.
func sdpaReference(t *testing.T, q, k, v *graph.Tensor, perms [4][]int64, scale float64, bias func(b, i, j int) float64) ([]int64, []float32) {
	t.Helper()
	transpose := func(x *graph.Tensor, perm []int64) *graph.Tensor {
		if perm == nil {
			return x
		}
		return ewRun(t, "Transpose", 13, ewAttrs{"perm": ewInts("perm", perm...)}, x)
	}
	lq, lk, lv := transpose(q, perms[0]), transpose(k, perms[1]), transpose(v, perms[2])
	r := lq.Rank()
	M, D, N, Dv := int(lq.Shape[r-2]), int(lq.Shape[r-1]), int(lk.Shape[r-1]), int(lv.Shape[r-1])
	entries := int(graph.NumElements(lq.Shape[:r-2]))
	qv, kv, vv := graph.View[float32](lq), graph.View[float32](lk), graph.View[float32](lv)
	y := graph.NewTensor(graph.Float, append(slices.Clone(lq.Shape[:r-1]), int64(Dv)))
	yv := graph.View[float32](y)
	s := make([]float64, N)
	for b := range entries {
		for i := range M {
			top := math.Inf(-1)
			for j := range N {
				dot := 0.0
				for p := range D {
					dot += float64(qv[(b*M+i)*D+p]) * float64(kv[(b*D+p)*N+j])
				}
				s[j] = scale * dot
				if bias != nil {
					s[j] += bias(b, i, j)
				}
				top = math.Max(top, s[j])
			}
			if math.IsInf(top, -1) {
				clear(yv[(b*M+i)*Dv : (b*M+i+1)*Dv])
				continue
			}
			sum := 0.0
			for j := range N {
				s[j] = math.Exp(s[j] - top)
				sum += s[j]
			}
			for o := range Dv {
				acc := 0.0
				for j := range N {
					acc += s[j] / sum * float64(vv[(b*N+j)*Dv+o])
				}
				yv[(b*M+i)*Dv+o] = float32(acc)
			}
		}
	}
	out := transpose(y, perms[3])
	return out.Shape, graph.View[float32](out)
}

// sdpaCase is a ScaledDotProductAttention test case: the operands'
// shapes, their permutations (perm_q, perm_k, perm_v and perm_y; nil:
// none) and the scale.
type sdpaCase struct {
	name    string
	q, k, v []int64
	perms   [4][]int64
	scale   float32
}

// sdpaViews are the view attributes of the sdpaCases that have them (see
// ops.AttentionView), by name: their q, k and v are then the shapes of
// the inputs the views read. nn.MultiheadAttention's heads cut out of its
// packed projection [T, B, 3·H·d] by a Slice and a Reshape to [T, B·H, d]
// (T 20, B 2, H 2, d 8): the B·H axis walks B, then H.
var sdpaViews = map[string][3][]int64{
	"torch-mha-qkv":       {{0, 3, 1, 20, 96, 2, 2, 48, 2, 8, 1, 8, 1}, {16, 3, 1, 20, 96, 2, 2, 48, 2, 8, 1, 8, 1}, {32, 3, 1, 20, 96, 2, 2, 48, 2, 8, 1, 8, 1}},
	"torch-mha-qkv-small": {{0, 3, 1, 1, 96, 2, 2, 48, 2, 8, 1, 8, 1}, {16, 3, 1, 20, 96, 2, 2, 48, 2, 8, 1, 8, 1}, {32, 3, 1, 20, 96, 2, 2, 48, 2, 8, 1, 8, 1}},
}

// sdpaCases are the layouts exporters write: PyTorch's
// nn.MultiheadAttention ([T, B·H, d] heads, Kᵀ by a three-axis
// permutation), the [B, S, H, d] heads of Hugging Face models, plain
// matrices, and permutations under which neither matrix axis of an
// operand or the output is contiguous (copied); sizes below and above the
// packed GEMM's threshold and the blocked kernel's, depths and key counts
// over a GEMM slab (256), one entry split into row blocks.
var sdpaCases = []sdpaCase{
	{"torch-mha", []int64{5, 6, 8}, []int64{5, 6, 8}, []int64{5, 6, 8}, [4][]int64{{1, 0, 2}, {1, 2, 0}, {1, 0, 2}, {1, 0, 2}}, 0.125},
	{"torch-mha-packed", []int64{33, 4, 16}, []int64{40, 4, 16}, []int64{40, 4, 24}, [4][]int64{{1, 0, 2}, {1, 2, 0}, {1, 0, 2}, {1, 0, 2}}, 0.25},
	{"torch-mha-long", []int64{40, 3, 12}, []int64{300, 3, 12}, []int64{300, 3, 20}, [4][]int64{{1, 0, 2}, {1, 2, 0}, {1, 0, 2}, {1, 0, 2}}, 0.25},
	{"hf", []int64{2, 5, 3, 4}, []int64{2, 7, 3, 4}, []int64{2, 7, 3, 4}, [4][]int64{{0, 2, 1, 3}, {0, 2, 3, 1}, {0, 2, 1, 3}, {0, 2, 1, 3}}, 0.5},
	{"hf-packed", []int64{1, 37, 2, 32}, []int64{1, 37, 2, 32}, []int64{1, 37, 2, 32}, [4][]int64{{0, 2, 1, 3}, {0, 2, 3, 1}, {0, 2, 1, 3}, {0, 2, 1, 3}}, 0.17},
	{"matrices", []int64{7, 5}, []int64{5, 9}, []int64{9, 3}, [4][]int64{}, 1},
	{"matrices-blocked", []int64{2, 30, 16}, []int64{2, 16, 33}, []int64{2, 33, 16}, [4][]int64{}, -0.4},
	{"one-entry", []int64{50, 8}, []int64{8, 21}, []int64{21, 9}, [4][]int64{}, 0.6},
	{"deep", []int64{2, 13, 270}, []int64{2, 270, 19}, []int64{2, 19, 5}, [4][]int64{}, 0.06},
	{"one-query", []int64{3, 1, 8}, []int64{3, 8, 11}, []int64{3, 11, 8}, [4][]int64{}, 0.3},
	{"copied", []int64{6, 5, 3}, []int64{7, 3, 5}, []int64{4, 3, 7}, [4][]int64{{2, 0, 1}, {1, 2, 0}, {1, 2, 0}, {1, 2, 0}}, 0.7},
	{"copied-blocked", []int64{5, 14, 3}, []int64{5, 17, 3}, []int64{17, 7, 3}, [4][]int64{{2, 1, 0}, {2, 0, 1}, {2, 0, 1}, {1, 2, 0}}, 0.7},
	{"q-transposed", []int64{2, 16, 25}, []int64{2, 31, 16}, []int64{2, 31, 8}, [4][]int64{{0, 2, 1}, {0, 2, 1}, nil, nil}, 0.3},
	{"no-keys", []int64{3, 4, 8}, []int64{3, 8, 0}, []int64{3, 0, 5}, [4][]int64{}, 1},
	{"torch-mha-qkv", []int64{20, 2, 48}, []int64{20, 2, 48}, []int64{20, 2, 48}, [4][]int64{{1, 0, 2}, {1, 2, 0}, {1, 0, 2}, {1, 0, 2}}, 0.35},
	{"torch-mha-qkv-small", []int64{1, 2, 48}, []int64{20, 2, 48}, []int64{20, 2, 48}, [4][]int64{{1, 0, 2}, {1, 2, 0}, {1, 0, 2}, {1, 0, 2}}, 0.35},
}

// reference is sdpaReference of the case's operands, read from q, k and v
// through its views.
func (tc *sdpaCase) reference(t *testing.T, q, k, v *graph.Tensor) ([]int64, []float32) {
	views := sdpaViews[tc.name]
	return sdpaReference(t, viewed(t, q, views[0]), viewed(t, k, views[1]), viewed(t, v, views[2]), tc.perms, float64(tc.scale), nil)
}

// viewed returns the operand that view (nil: none) reads from x, as a
// tensor of its own.
func viewed(t *testing.T, x *graph.Tensor, view []int64) *graph.Tensor {
	t.Helper()
	if view == nil {
		return x
	}
	n := &graph.Node{Name: "v", OpType: "ScaledDotProductAttention", Domain: ops.FusedDomain,
		Attrs: map[string]*graph.Attribute{"view_q": ewInts("view_q", view...)}}
	views, err := ops.AttentionViews(n, 1)
	if err != nil {
		t.Fatal(err)
	}
	v := views[0]
	var fs [][2]int64
	for _, a := range v.Factors {
		fs = append(fs, a...)
	}
	y := graph.NewTensor(graph.Float, v.Shape)
	src, dst := graph.View[float32](x), graph.View[float32](y)
	for i := range dst {
		at, rest := v.Offset, int64(i)
		for f := len(fs) - 1; f >= 0; f-- {
			at += rest % fs[f][0] * fs[f][1]
			rest /= fs[f][0]
		}
		dst[i] = src[at]
	}
	return y
}

// operands returns the case's random operands, q and k spread so that
// the softmax is not near uniform, and the node.
func (tc *sdpaCase) operands(r *rand.Rand) (q, k, v *graph.Tensor, n *graph.Node) {
	q, k, v = nnRand(r, tc.q...), nnRand(r, tc.k...), nnRand(r, tc.v...)
	for _, x := range []*graph.Tensor{q, k} {
		for i := range graph.View[float32](x) {
			graph.View[float32](x)[i] *= 3
		}
	}
	attrs := map[string]*graph.Attribute{"scale": ewFloat("scale", tc.scale)}
	for i, name := range []string{"perm_q", "perm_k", "perm_v", "perm_y"} {
		if tc.perms[i] != nil {
			attrs[name] = ewInts(name, tc.perms[i]...)
		}
	}
	for i, name := range []string{"view_q", "view_k", "view_v"} {
		if view := sdpaViews[tc.name][i]; view != nil {
			attrs[name] = ewInts(name, view...)
		}
	}
	n = &graph.Node{Name: "sdpa", OpType: "ScaledDotProductAttention", Domain: ops.FusedDomain,
		Inputs: []string{"q", "k", "v"}, Outputs: []string{"y"}, Attrs: attrs}
	return q, k, v, n
}

// TestScaledDotProductAttention checks the fused attention against
// sdpaReference on sdpaCases, on one thread and on four.
func TestScaledDotProductAttention(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, tc := range sdpaCases {
		q, k, v, n := tc.operands(r)
		shape, want := tc.reference(t, q, k, v)
		tol := opTol("ScaledDotProductAttention", ops.FusedDomain)
		for _, threads := range []int{1, 4} {
			c := &Call{Node: n, Opset: 1, In: []graph.Value{q, k, v}, Out: make([]graph.Value, 1), Alloc: nanAlloc, Threads: NewThreads(threads)}
			if err := Lookup(ops.FusedDomain, "ScaledDotProductAttention")(c); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			nnCheck(t, fmt.Sprintf("%s on %d threads", tc.name, threads), c.Out[0].(*graph.Tensor), shape, want, tol.Abs, tol.Rel)
		}
	}
}

// TestScaledDotProductAttentionBlocked checks the blocked attention with
// every GEMM kernel this CPU runs, the portable one included, against
// sdpaReference on the sdpaCases with enough queries for it, on one
// thread and on four.
func TestScaledDotProductAttentionBlocked(t *testing.T) {
	eachSgemmKernel(t, func(t *testing.T, kn *sgemmKernel) {
		r := rand.New(rand.NewPCG(27, 28))
		ran := 0
		for _, tc := range sdpaCases {
			q, k, v, n := tc.operands(r)
			c := &Call{Node: n, Opset: 1, In: []graph.Value{q, k, v}}
			p, err := newSDPAPlan(c, q.Shape, k.Shape, v.Shape, nil, [3]int{int(q.NumElements()), int(k.NumElements()), int(v.NumElements())})
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if !sdpaBlocked(kn, p.q.rows) || p.k.cols == 0 {
				continue
			}
			ran++
			shape, want := tc.reference(t, q, k, v)
			tol := opTol("ScaledDotProductAttention", ops.FusedDomain)
			for _, threads := range []int{1, 4} {
				y := nanAlloc(0, graph.Float, p.out)
				th := NewThreads(threads)
				newSDPAJob(p, kn, th.Workers(), graph.View[float32](q), graph.View[float32](k), graph.View[float32](v), graph.View[float32](y), tc.scale, &sdpaMask{}).start(th)
				nnCheck(t, fmt.Sprintf("%s on %d threads", tc.name, threads), y, shape, want, tol.Abs, tol.Rel)
			}
		}
		if ran < 6 {
			t.Fatalf("%d cases took the blocked kernel, want at least 6", ran)
		}
	})
}

// TestScaledDotProductAttentionErrors checks that operands whose shapes
// do not fit, and views that do not, are refused with an error naming the
// node.
func TestScaledDotProductAttentionErrors(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	for _, tc := range []struct {
		q, k, v []int64
		perm    []int64
		view    []int64
	}{
		{q: []int64{2, 3, 4}, k: []int64{2, 5, 6}, v: []int64{2, 6, 4}},          // depth 4 against 5
		{q: []int64{2, 3, 4}, k: []int64{2, 4, 6}, v: []int64{2, 5, 4}},          // 6 keys against 5 values
		{q: []int64{2, 3, 4}, k: []int64{3, 4, 6}, v: []int64{3, 6, 4}},          // batch 2 against 3
		{q: []int64{2, 3, 4}, k: []int64{4, 6}, v: []int64{6, 4}},                // ranks differ
		{q: []int64{3, 4}, k: []int64{4, 6}, v: []int64{6, 4}, perm: []int64{0}}, // perm of rank 1
		// Views of q: past the end of the input, a matrix axis of two
		// strides, one cut short.
		{q: []int64{12}, k: []int64{4, 6}, v: []int64{6, 4}, view: []int64{1, 2, 1, 3, 4, 1, 4, 1}},
		{q: []int64{24}, k: []int64{4, 6}, v: []int64{6, 4}, view: []int64{0, 2, 2, 2, 1, 2, 8, 1, 4, 2}},
		{q: []int64{12}, k: []int64{4, 6}, v: []int64{6, 4}, view: []int64{0, 2, 1, 3, 4, 1}},
	} {
		n := &graph.Node{Name: "sdpa", OpType: "ScaledDotProductAttention", Domain: ops.FusedDomain, Outputs: []string{"y"}}
		if tc.perm != nil {
			n.Attrs = map[string]*graph.Attribute{"perm_q": ewInts("perm_q", tc.perm...)}
		}
		if tc.view != nil {
			n.Attrs = map[string]*graph.Attribute{"view_q": ewInts("view_q", tc.view...)}
		}
		c := &Call{Node: n, Opset: 1, In: []graph.Value{nnRand(r, tc.q...), nnRand(r, tc.k...), nnRand(r, tc.v...)}, Out: make([]graph.Value, 1)}
		err := Lookup(ops.FusedDomain, "ScaledDotProductAttention")(c)
		if err == nil {
			t.Fatalf("q%v k%v v%v perm_q %v: no error", tc.q, tc.k, tc.v, tc.perm)
		}
		if !strings.Contains(err.Error(), "sdpa") {
			t.Errorf("error %q does not name the node", err)
		}
	}
}
