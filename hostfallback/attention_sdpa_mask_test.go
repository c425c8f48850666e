package hostfallback

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// sdpaMaskCase is a ScaledDotProductAttention case with a mask: plain
// operands q [..., M, D], kᵀ [..., D, N] and v [..., N, Dv], the mask's
// shape and kind (float, bool, or bool with mask_hides) and which of its
// elements hide (bool) or are −inf (float).
type sdpaMaskCase struct {
	name    string
	q, k, v []int64
	mask    []int64
	kind    string
	hidden  func(at int) bool
}

// sdpaMaskCases cover a causal mask as a decoder's Where writes it (2-D,
// broadcast over batch and heads, mask_hides), a padding mask as BERT
// adds it ([B, 1, 1, N]), a full bool mask, one broadcast along the keys,
// rows hidden throughout (zeros), and sizes that take the blocked
// kernel.
var sdpaMaskCases = []sdpaMaskCase{
	{"causal-where", []int64{2, 3, 5, 8}, []int64{2, 3, 8, 7}, []int64{2, 3, 7, 6}, []int64{5, 7}, "hides", func(at int) bool { return at%7 > at/7+2 }},
	{"padding-add", []int64{2, 3, 5, 8}, []int64{2, 3, 8, 7}, []int64{2, 3, 7, 6}, []int64{2, 1, 1, 7}, "float", func(at int) bool { return at%7 >= 5-at/7 }},
	{"full-bool", []int64{2, 3, 5, 8}, []int64{2, 3, 8, 7}, []int64{2, 3, 7, 6}, []int64{2, 3, 5, 7}, "bool", func(at int) bool { return at%3 == 0 }},
	{"keys-broadcast", []int64{2, 5, 8}, []int64{2, 8, 7}, []int64{2, 7, 6}, []int64{5, 1}, "float", func(at int) bool { return false }},
	{"rows-hidden", []int64{2, 5, 8}, []int64{2, 8, 7}, []int64{2, 7, 6}, []int64{2, 5, 7}, "hides", func(at int) bool { return at/7%5 == 3 || at%2 == 0 }},
	{"blocked-causal", []int64{2, 40, 16}, []int64{2, 16, 40}, []int64{2, 40, 8}, []int64{40, 40}, "hides", func(at int) bool { return at%40 > at/40 }},
	{"blocked-padding", []int64{3, 2, 33, 16}, []int64{3, 2, 16, 300}, []int64{3, 2, 300, 8}, []int64{3, 1, 1, 300}, "float", func(at int) bool { return at%300 >= 290-at/300*100 }},
}

// operands returns the case's random operands, mask and node.
func (tc *sdpaMaskCase) operands(r *rand.Rand) (q, k, v, m *graph.Tensor, n *graph.Node) {
	q, k, v = nnRand(r, tc.q...), nnRand(r, tc.k...), nnRand(r, tc.v...)
	attrs := map[string]*graph.Attribute{"scale": ewFloat("scale", 0.4)}
	if tc.kind == "float" {
		m = nnRand(r, tc.mask...)
		for at := range graph.View[float32](m) {
			if tc.hidden(at) {
				graph.View[float32](m)[at] = float32(math.Inf(-1))
			}
		}
	} else {
		m = graph.NewTensor(graph.Bool, tc.mask)
		for at := range m.Data {
			if tc.hidden(at) == (tc.kind == "hides") {
				m.Data[at] = 1
			}
		}
		if tc.kind == "hides" {
			attrs["mask_hides"] = &graph.Attribute{Name: "mask_hides", Type: graph.AttrInt, I: 1}
		}
	}
	n = &graph.Node{Name: "sdpa", OpType: "ScaledDotProductAttention", Domain: ops.FusedDomain,
		Inputs: []string{"q", "k", "v", "mask"}, Outputs: []string{"y"}, Attrs: attrs}
	return q, k, v, m, n
}

// bias is the reference's mask term: the mask broadcast to the scores
// [..., M, N] by hand, the float mask's value or −inf where hidden.
func (tc *sdpaMaskCase) bias(m *graph.Tensor) func(b, i, j int) float64 {
	r := len(tc.q)
	scores := append(append([]int64{}, tc.q[:r-1]...), tc.k[r-1])
	full := make([]int64, r)
	for d := range full {
		full[d] = 1
	}
	copy(full[r-len(tc.mask):], tc.mask)
	return func(b, i, j int) float64 {
		coord := make([]int64, r)
		coord[r-2], coord[r-1] = int64(i), int64(j)
		for d := r - 3; d >= 0; d-- {
			coord[d] = int64(b) % scores[d]
			b /= int(scores[d])
		}
		at := int64(0)
		for d := range r {
			at *= full[d]
			if full[d] != 1 {
				at += coord[d]
			}
		}
		switch {
		case tc.kind == "float":
			return float64(graph.View[float32](m)[at])
		case tc.hidden(int(at)):
			return math.Inf(-1)
		}
		return 0
	}
}

// TestScaledDotProductAttentionMask checks the masked attention against
// sdpaReference, through the kernel (one thread and four) and through the
// blocked kernel with every GEMM kernel this CPU runs where the case has
// enough queries.
func TestScaledDotProductAttentionMask(t *testing.T) {
	tol := opTol("ScaledDotProductAttention", ops.FusedDomain)
	r := rand.New(rand.NewPCG(29, 30))
	for _, tc := range sdpaMaskCases {
		q, k, v, m, n := tc.operands(r)
		shape, want := sdpaReference(t, q, k, v, [4][]int64{}, 0.4, tc.bias(m))
		for _, threads := range []int{1, 4} {
			c := &Call{Node: n, Opset: 1, In: []graph.Value{q, k, v, m}, Out: make([]graph.Value, 1), Alloc: nanAlloc, Threads: NewThreads(threads)}
			if err := Lookup(ops.FusedDomain, "ScaledDotProductAttention")(c); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			nnCheck(t, fmt.Sprintf("%s on %d threads", tc.name, threads), c.Out[0].(*graph.Tensor), shape, want, tol.Abs, tol.Rel)
		}
	}
	eachSgemmKernel(t, func(t *testing.T, kn *sgemmKernel) {
		r := rand.New(rand.NewPCG(31, 32))
		ran := 0
		for _, tc := range sdpaMaskCases {
			q, k, v, m, n := tc.operands(r)
			c := &Call{Node: n, Opset: 1, In: []graph.Value{q, k, v, m}}
			p, err := newSDPAPlan(c, q.Shape, k.Shape, v.Shape, m.Shape, [3]int{int(q.NumElements()), int(k.NumElements()), int(v.NumElements())})
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if !sdpaBlocked(kn, p.q.rows) {
				continue
			}
			ran++
			shape, want := sdpaReference(t, q, k, v, [4][]int64{}, 0.4, tc.bias(m))
			mask := &sdpaMask{hides: tc.kind == "hides"}
			if tc.kind == "float" {
				mask.add = graph.View[float32](m)
			} else {
				mask.bools = m.Data
			}
			for _, threads := range []int{1, 4} {
				y := nanAlloc(0, graph.Float, p.out)
				th := NewThreads(threads)
				newSDPAJob(p, kn, th.Workers(), graph.View[float32](q), graph.View[float32](k), graph.View[float32](v), graph.View[float32](y), 0.4, mask).start(th)
				nnCheck(t, fmt.Sprintf("%s on %d threads", tc.name, threads), y, shape, want, tol.Abs, tol.Rel)
			}
		}
		if ran < 2 {
			t.Fatalf("%d cases took the blocked kernel, want at least 2", ran)
		}
	})
}

// TestScaledDotProductAttentionMaskErrors checks that a mask that does
// not broadcast to the scores, or of another type, is refused with an
// error naming the node.
func TestScaledDotProductAttentionMaskErrors(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	q, k, v := nnRand(r, 2, 5, 8), nnRand(r, 2, 8, 7), nnRand(r, 2, 7, 6)
	for _, m := range []*graph.Tensor{nnRand(r, 3, 5, 7), nnRand(r, 5, 6), nnRand(r, 1, 2, 5, 7), graph.NewTensor(graph.Int32, []int64{5, 7})} {
		n := &graph.Node{Name: "sdpa", OpType: "ScaledDotProductAttention", Domain: ops.FusedDomain, Outputs: []string{"y"}}
		c := &Call{Node: n, Opset: 1, In: []graph.Value{q, k, v, m}, Out: make([]graph.Value, 1)}
		err := Lookup(ops.FusedDomain, "ScaledDotProductAttention")(c)
		if err == nil {
			t.Fatalf("mask %s%v: no error", m.DType, m.Shape)
		}
		if !strings.Contains(err.Error(), "sdpa") {
			t.Errorf("error %q does not name the node", err)
		}
	}
}
