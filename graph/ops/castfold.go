package ops

import (
	"maps"
	"runtime"
	"slices"
	"sync"
	"weak"

	"github.com/x448/float16"

	"github.com/onnxvk/onnxvk/graph"
)

// FoldWeightCasts replaces, in m's main graph, each Cast that widens a
// constant float tensor (an initializer that is not also a graph input)
// exactly, float16 or bfloat16 to float32 or float64 and float32 to
// float64, with an initializer holding the widened values, whatever its
// size. Mixed-precision exports store their weights as float16 and Cast
// them to float32 before each Conv or MatMul (FoldConstants leaves large
// tensors alone): folded once at load, every plan and device shares one
// float32 tensor per weight, which a device makes resident once, instead
// of casting every weight at every Run. An initializer that no node, graph
// output or subgraph reads any more is dropped. It returns the number of
// nodes removed.
func FoldWeightCasts(m *graph.Model) int {
	if m == nil || m.Graph == nil {
		return 0
	}
	g := m.Graph
	fixed := map[string]bool{}
	for _, v := range g.Inputs {
		fixed[v.Name] = true
	}
	for _, v := range g.Outputs {
		fixed[v.Name] = true
	}
	keep := g.Nodes[:0:0]
	var sources []string
	for _, n := range g.Nodes {
		if w := widenedConstant(g, n, fixed); w != nil {
			g.Initializers[n.Outputs[0]] = w
			sources = append(sources, n.Inputs[0])
			continue
		}
		keep = append(keep, n)
	}
	removed := len(g.Nodes) - len(keep)
	if removed == 0 {
		return 0
	}
	g.Nodes = keep
	read := map[string]bool{}
	for _, n := range g.Nodes {
		if slices.ContainsFunc(slices.Collect(maps.Values(n.Attrs)), func(a *graph.Attribute) bool { return a != nil && (a.G != nil || len(a.Graphs) > 0) }) {
			return removed
		}
		for _, x := range n.Inputs {
			read[x] = true
		}
	}
	for _, s := range sources {
		if !read[s] && !fixed[s] {
			delete(g.Initializers, s)
		}
	}
	return removed
}

// widenedConstant returns the folded output of n when n is a Cast that
// widens a constant float tensor of g exactly (see FoldWeightCasts), else
// nil.
func widenedConstant(g *graph.Graph, n *graph.Node, fixed map[string]bool) *graph.Tensor {
	if n.Domain != graph.DefaultDomain || n.OpType != "Cast" || len(n.Inputs) != 1 || len(n.Outputs) != 1 || fixed[n.Inputs[0]] || fixed[n.Outputs[0]] {
		return nil
	}
	src := g.Initializers[n.Inputs[0]]
	a := n.Attrs["to"]
	if src == nil || a == nil || a.Type != graph.AttrInt {
		return nil
	}
	to := graph.DType(a.I)
	if to != graph.Float && to != graph.Double {
		return nil
	}
	if _, taken := g.Initializers[n.Outputs[0]]; taken {
		return nil
	}
	var widen func(i int) float64
	switch src.DType {
	case graph.Float16:
		h := graph.View[uint16](src)
		widen = func(i int) float64 { return float64(float16.Frombits(h[i]).Float32()) }
	case graph.BFloat16:
		h := graph.View[uint16](src)
		widen = func(i int) float64 { return float64(graph.BFloat16ToFloat32(h[i])) }
	case graph.Float:
		if to != graph.Double {
			return nil
		}
		f := graph.View[float32](src)
		widen = func(i int) float64 { return float64(f[i]) }
	default:
		return nil
	}
	out := graph.NewTensor(to, src.Shape)
	switch to {
	case graph.Float:
		v := graph.View[float32](out)
		for i := range v {
			v[i] = float32(widen(i))
		}
		if src.DType == graph.Float16 {
			fromFloat16(out)
		}
	case graph.Double:
		v := graph.View[float64](out)
		for i := range v {
			v[i] = widen(i)
		}
	}
	return out
}

// float16Weights holds, by weak pointer, the float32 tensors
// FoldWeightCasts widened from float16; an entry goes when its tensor
// does.
var float16Weights sync.Map

// fromFloat16 records that the float32 tensor t holds float16 values.
func fromFloat16(t *graph.Tensor) {
	k := weak.Make(t)
	float16Weights.Store(k, struct{}{})
	runtime.AddCleanup(t, func(k weak.Pointer[graph.Tensor]) { float16Weights.Delete(k) }, k)
}

// FromFloat16 tells whether t is a float32 weight that FoldWeightCasts
// widened from float16, so that float16 holds its values exactly: a
// device may keep it as float16 and widen it as it reads.
func FromFloat16(t *graph.Tensor) bool {
	_, ok := float16Weights.Load(weak.Make(t))
	return ok
}
