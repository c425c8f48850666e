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

// repeatHeads returns x with each entry of axis repeated rep times in a
// row, as Hugging Face's repeat_kv repeats a grouped-query attention's
// key and value heads.
func repeatHeads(x *graph.Tensor, axis, rep int) *graph.Tensor {
	shape := append([]int64{}, x.Shape...)
	shape[axis] *= int64(rep)
	out := graph.NewTensor(graph.Float, shape)
	outer, inner := int(graph.NumElements(x.Shape[:axis+1])), int(graph.NumElements(x.Shape[axis+1:]))
	src, dst := graph.View[float32](x), graph.View[float32](out)
	for o := range outer {
		for k := range rep {
			copy(dst[(o*rep+k)*inner:], src[o*inner:(o+1)*inner])
		}
	}
	return out
}

// TestScaledDotProductAttentionKVRepeat checks grouped-query attention
// (kv_repeat) against sdpaReference on K and V with their heads repeated:
// plain operands, torch's layout read through permutations, one key and
// value head for all (blocked kernel), and a causal mask.
func TestScaledDotProductAttentionKVRepeat(t *testing.T) {
	tol := opTol("ScaledDotProductAttention", ops.FusedDomain)
	r := rand.New(rand.NewPCG(41, 42))
	for _, tc := range []struct {
		name    string
		q, k, v []int64
		perms   [4][]int64
		rep     int
		causal  bool
	}{
		{"plain", []int64{2, 6, 5, 8}, []int64{2, 2, 8, 7}, []int64{2, 2, 7, 6}, [4][]int64{}, 3, false},
		{"torch-layout", []int64{1, 3, 8, 16}, []int64{1, 2, 5, 16}, []int64{1, 2, 5, 16},
			[4][]int64{{0, 2, 1, 3}, {0, 1, 3, 2}, nil, {0, 2, 1, 3}}, 4, false},
		{"one-kv-head-blocked", []int64{1, 4, 40, 16}, []int64{1, 1, 16, 40}, []int64{1, 1, 40, 8}, [4][]int64{}, 4, false},
		{"causal", []int64{2, 6, 5, 8}, []int64{2, 3, 8, 7}, []int64{2, 3, 7, 6}, [4][]int64{}, 2, true},
	} {
		q, k, v := nnRand(r, tc.q...), nnRand(r, tc.k...), nnRand(r, tc.v...)
		attrs := map[string]*graph.Attribute{"scale": ewFloat("scale", 0.4),
			"kv_repeat": {Name: "kv_repeat", Type: graph.AttrInt, I: int64(tc.rep)}}
		for i, perm := range tc.perms {
			if perm != nil {
				name := [4]string{"perm_q", "perm_k", "perm_v", "perm_y"}[i]
				attrs[name] = ewInts(name, perm...)
			}
		}
		in := []graph.Value{q, k, v}
		var bias func(b, i, j int) float64
		if tc.causal {
			m := graph.NewTensor(graph.Bool, []int64{tc.q[2], tc.k[3]})
			for at := range m.Data {
				if at%int(tc.k[3]) > at/int(tc.k[3])+2 {
					m.Data[at] = 1
				}
			}
			in = append(in, m)
			attrs["mask_hides"] = &graph.Attribute{Name: "mask_hides", Type: graph.AttrInt, I: 1}
			bias = func(b, i, j int) float64 {
				if m.Data[i*int(tc.k[3])+j] != 0 {
					return math.Inf(-1)
				}
				return 0
			}
		}
		n := &graph.Node{Name: "gqa", OpType: "ScaledDotProductAttention", Domain: ops.FusedDomain,
			Inputs: []string{"q", "k", "v", "mask"}[:len(in)], Outputs: []string{"y"}, Attrs: attrs}
		// The heads are axis 1 of every operand in these layouts.
		shape, want := sdpaReference(t, q, repeatHeads(k, 1, tc.rep), repeatHeads(v, 1, tc.rep), tc.perms, 0.4, bias)
		for _, threads := range []int{1, 4} {
			c := &Call{Node: n, Opset: 1, In: in, Out: make([]graph.Value, 1), Alloc: nanAlloc, Threads: NewThreads(threads)}
			if err := Lookup(ops.FusedDomain, "ScaledDotProductAttention")(c); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			nnCheck(t, fmt.Sprintf("%s on %d threads", tc.name, threads), c.Out[0].(*graph.Tensor), shape, want, tol.Abs, tol.Rel)
		}
	}
	// Heads that kv_repeat does not map onto Q's are an error naming the
	// node.
	q, k, v := nnRand(r, 1, 6, 5, 8), nnRand(r, 1, 4, 8, 7), nnRand(r, 1, 4, 7, 6)
	n := &graph.Node{Name: "gqa", OpType: "ScaledDotProductAttention", Domain: ops.FusedDomain, Outputs: []string{"y"},
		Attrs: map[string]*graph.Attribute{"kv_repeat": {Name: "kv_repeat", Type: graph.AttrInt, I: 2}}}
	c := &Call{Node: n, Opset: 1, In: []graph.Value{q, k, v}, Out: make([]graph.Value, 1)}
	if err := Lookup(ops.FusedDomain, "ScaledDotProductAttention")(c); err == nil || !strings.Contains(err.Error(), "gqa") {
		t.Errorf("4 key heads repeated twice for 6 query heads: error %v, want one naming the node", err)
	}
}
