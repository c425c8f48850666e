package onnxvk_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/internal/sessionvalues"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/planner"
)

// exportedAttention is the attention core nn.MultiheadAttention exports,
// of element type dt (float32 or float16), its heads cut out of a packed
// projection qkv [t, b, 3·h·d] by Slices and Reshapes to [t, b·h, d],
// transposed to [b·h, t, d] (Kᵀ to [b·h, d, t]), the queries divided by
// √d, MatMul, Softmax, MatMul and the Transpose back to [t, b·h, d].
// mask puts a mask between the scores and the Softmax: "causal", a
// Where writing −inf where a constant bool [t, t] is true (key after
// query, as a decoder's), "causal-lowest" the same writing −65504 (the
// lowest float16, as Hugging Face's exports write the type's lowest),
// "padding", the Add of a constant [b·h, 1, t] of random values but −inf
// for the last keys of some heads, or "causal-padding", both (the Where
// writing −65504, as Hugging Face's GPT-2); "none" none. With unfused, the
// probabilities are an output too, which keeps the chain unfused.
func exportedAttention(dt graph.DType, t, b, h, d int64, mask string, unfused bool) *graph.Model {
	g := graph.NewGraph("mha")
	g.Inputs = []*graph.ValueInfo{{Name: "qkv", Type: graph.TensorType(dt, graph.ShapeOf(t, b, 3*h*d))}}
	g.Initializers["heads"], _ = graph.FromSlice(graph.Int64, []int64{3}, []int64{t, b * h, d})
	g.Initializers["axis"], _ = graph.FromSlice(graph.Int64, []int64{1}, []int64{2})
	g.Initializers["root"] = tensorOf(dt, nil, []float32{float32(d) / 8})
	perm := func(p ...int64) map[string]*graph.Attribute {
		return map[string]*graph.Attribute{"perm": {Name: "perm", Type: graph.AttrInts, Ints: p}}
	}
	for i, name := range []string{"qh", "kh", "vh"} {
		lo, hi := "lo"+name, "hi"+name
		g.Initializers[lo], _ = graph.FromSlice(graph.Int64, []int64{1}, []int64{int64(i) * h * d})
		g.Initializers[hi], _ = graph.FromSlice(graph.Int64, []int64{1}, []int64{int64(i+1) * h * d})
		g.Nodes = append(g.Nodes, &graph.Node{Name: "slice" + name, OpType: "Slice", Inputs: []string{"qkv", lo, hi, "axis"}, Outputs: []string{"s" + name}},
			&graph.Node{Name: "reshape" + name, OpType: "Reshape", Inputs: []string{"s" + name, "heads"}, Outputs: []string{name}})
	}
	g.Nodes = append(g.Nodes,
		&graph.Node{Name: "tq", OpType: "Transpose", Inputs: []string{"qh"}, Outputs: []string{"qt"}, Attrs: perm(1, 0, 2)},
		&graph.Node{Name: "div", OpType: "Div", Inputs: []string{"qt", "root"}, Outputs: []string{"qs"}},
		&graph.Node{Name: "tk", OpType: "Transpose", Inputs: []string{"kh"}, Outputs: []string{"kt"}, Attrs: perm(1, 2, 0)},
		&graph.Node{Name: "qk", OpType: "MatMul", Inputs: []string{"qs", "kt"}, Outputs: []string{"s"}})
	scores := "s"
	inf := float32(math.Inf(-1))
	if strings.HasPrefix(mask, "causal") {
		c := graph.NewTensor(graph.Bool, []int64{t, t})
		for at := range c.Data {
			if int64(at)%t > int64(at)/t {
				c.Data[at] = 1
			}
		}
		fill := inf
		if mask != "causal" {
			fill = -65504
		}
		g.Initializers["causal"], g.Initializers["fill"] = c, tensorOf(dt, nil, []float32{fill})
		g.Nodes = append(g.Nodes, &graph.Node{Name: "mask", OpType: "Where", Inputs: []string{"causal", "fill", scores}, Outputs: []string{"masked"}})
		scores = "masked"
	}
	if strings.HasSuffix(mask, "padding") {
		r := rand.New(rand.NewPCG(7, 8))
		pad := make([]float32, b*h*t)
		for at := range pad {
			if head, key := int64(at)/t, int64(at)%t; key >= t-5*head {
				pad[at] = inf
			} else {
				pad[at] = r.Float32() - 0.5
			}
		}
		g.Initializers["pad"] = tensorOf(dt, []int64{b * h, 1, t}, pad)
		g.Nodes = append(g.Nodes, &graph.Node{Name: "pad", OpType: "Add", Inputs: []string{scores, "pad"}, Outputs: []string{"padded"}})
		scores = "padded"
	}
	g.Nodes = append(g.Nodes,
		&graph.Node{Name: "sm", OpType: "Softmax", Inputs: []string{scores}, Outputs: []string{"p"},
			Attrs: map[string]*graph.Attribute{"axis": {Name: "axis", Type: graph.AttrInt, I: -1}}},
		&graph.Node{Name: "tv", OpType: "Transpose", Inputs: []string{"vh"}, Outputs: []string{"vt"}, Attrs: perm(1, 0, 2)},
		&graph.Node{Name: "pv", OpType: "MatMul", Inputs: []string{"p", "vt"}, Outputs: []string{"o"}},
		&graph.Node{Name: "ty", OpType: "Transpose", Inputs: []string{"o"}, Outputs: []string{"y"}, Attrs: perm(1, 0, 2)})
	for i, n := range g.Nodes {
		n.Index = i
	}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	if unfused {
		g.Outputs = append(g.Outputs, &graph.ValueInfo{Name: "p"})
	}
	return &graph.Model{Name: "mha", IRVersion: 8, Opsets: map[string]int64{"": 13}, Graph: g}
}

// TestAttentionPatternVulkan checks that the exported attention pattern,
// float32 and float16, unmasked, masked by a causal Where (writing −inf or
// −65504), by an added padding mask and by both, becomes one
// ScaledDotProductAttention on Vulkan (with both, after a Where that joins
// the masks), as on the CPU, and that its output
// on Vulkan matches the CPU's within that op's tolerance (widened by two
// float16 roundings for float16: both devices compute in fp32 and round
// once), at 100 positions (query tiles and key tiles and a part), batch
// 2, 4 heads of 64; in float32, the CPU's unfused chain (the
// probabilities an output too) gives the fused output within the same
// tolerance.
func TestAttentionPatternVulkan(t *testing.T) {
	for _, dt := range []graph.DType{graph.Float, graph.Float16} {
		for _, mask := range []string{"none", "causal", "causal-lowest", "padding", "causal-padding"} {
			t.Run(dt.String()+"/"+mask, func(t *testing.T) { attentionPattern(t, dt, mask) })
		}
	}
}

// attentionPattern is TestAttentionPatternVulkan of element type dt and
// mask (see exportedAttention).
func attentionPattern(t *testing.T, dt graph.DType, mask string) {
	const tl, b, h, d = 100, 2, 4, 64
	r := rand.New(rand.NewPCG(5, 6))
	xs := make([]float32, tl*b*3*h*d)
	for i := range xs {
		xs[i] = 4*r.Float32() - 2
	}
	outs := map[string][]float32{}
	runs := []string{"cpu", "vulkan"}
	if dt == graph.Float {
		runs = append(runs, "cpu-unfused")
	}
	for _, run := range runs {
		dev, unfused := strings.CutSuffix(run, "-unfused")
		sess, p := placedSession(t, func() (*onnxvk.Session, error) {
			return onnxvk.NewSession(exportedAttention(dt, tl, b, h, d, mask, unfused), onnxvk.WithDevice(dev))
		})
		fused := 0
		for _, st := range p.Steps {
			if st.Kind == planner.Compute && st.Node.OpType == "ScaledDotProductAttention" {
				fused++
			}
		}
		if unfused && fused != 0 || !unfused && (fused != 1 || p.Fused == 0) {
			t.Errorf("%s: %d ScaledDotProductAttention steps of %d fused nodes", run, fused, p.Fused)
		}
		x := onnxvk.TensorFrom(tensorOf(dt, []int64{tl, b, 3 * h * d}, xs))
		out, err := sess.Run(context.Background(), map[string]*onnxvk.Tensor{"qkv": x})
		if err != nil {
			t.Fatal(err)
		}
		if dt == graph.Float16 {
			outs[run] = widen(t, out["y"])
		} else if outs[run], err = onnxvk.Data[float32](out["y"]); err != nil {
			t.Fatal(err)
		}
	}
	tol := ops.Lookup(ops.FusedDomain, "ScaledDotProductAttention", 1).Tolerance()
	if dt == graph.Float16 {
		tol = tol.Float16()
	}
	for _, run := range runs[1:] {
		bad := 0
		for i, want := range outs["cpu"] {
			if got := outs[run][i]; !tol.Within(float64(got), float64(want)) {
				if bad++; bad <= 5 {
					t.Errorf("y[%d] = %g on %s, %g on cpu (tolerance %+v)", i, got, run, want, tol)
				}
			}
		}
		if len(outs[run]) != tl*b*h*d || bad > 0 {
			t.Errorf("%s: %d elements, %d out of tolerance", run, len(outs[run]), bad)
		}
	}
}

// placedSession opens a session with load, skipping the test when its
// device is unavailable, closes it at the test's end, and returns it with
// its plan for the model's declared shapes, failing the test where a
// compute node is placed on another device than the session's.
func placedSession(t *testing.T, load func() (*onnxvk.Session, error)) (*onnxvk.Session, *planner.Plan) {
	t.Helper()
	sess, err := load()
	if errors.Is(err, onnxvk.ErrDeviceUnavailable) {
		testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", err))
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	p, err := sessionvalues.Of(sess).Plan(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range p.Steps {
		if st.Kind == planner.Compute && st.Device != sess.Device() {
			t.Errorf("%s (%s) is placed on %s, not %s", st.Node.Name, st.Node.OpType, st.Device, sess.Device())
		}
	}
	return sess, p
}
