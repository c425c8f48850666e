package vulkan

import (
	"math"
	"slices"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

func init() {
	register("LayerNormalization", lowerLayerNorm)
	registerFused("LayerNormalization", lowerLayerNorm)
	register("RMSNormalization", lowerLayerNorm)
}

// lowerLayerNorm lowers LayerNormalization (opset 17, or the planner's
// fused node of ops.FusedDomain, which has its semantics) and
// RMSNormalization (opset 23: not centred, no B, no statistics outputs)
// over the axes from axis on, with stash_type float. Scale and the
// optional B broadcast to the normalized shape from a suffix of it; the
// optional Mean and InvStdDev outputs keep the rank of X with 1 for the
// normalized axes.
func lowerLayerNorm(q *query) (*launch, bool) {
	n, opset, shapes := q.n, q.opset, q.shapes
	rms := n.OpType == "RMSNormalization"
	p := ops.NormalizationOf(n, opset)
	if n.Domain == graph.DefaultDomain && opset < 17 || len(shapes) < 2 || len(shapes) > 3 || shapes[1] == nil || len(shapes[0]) == 0 ||
		p.StashType != int64(graph.Float) || rms && len(shapes) != 2 {
		return nil, false
	}
	x := shapes[0]
	axis, ok := normAxis(p.Axis, len(x))
	if !ok {
		return nil, false
	}
	norm := x[axis:]
	// period returns after how many normalized elements s repeats, or
	// false when s is not a suffix of norm with leading 1s.
	period := func(s []int64) (int64, bool) {
		for len(s) > 0 && s[0] == 1 {
			s = s[1:]
		}
		if len(s) > len(norm) || !slices.Equal(s, norm[len(norm)-len(s):]) {
			return 0, false
		}
		return graph.NumElements(s), true
	}
	sn, ok := period(shapes[1])
	if !ok {
		return nil, false
	}
	bn := int64(1)
	bindings := []slot{{false, 0}, {false, 1}, {false, 1}, {true, 0}, {true, 0}, {true, 0}}
	var flags uint32
	if rms {
		flags = 8
	}
	if len(shapes) == 3 && shapes[2] != nil {
		if bn, ok = period(shapes[2]); !ok {
			return nil, false
		}
		bindings[2], flags = slot{false, 2}, flags|1
	}
	stat := append([]int64{}, x[:axis]...)
	for range norm {
		stat = append(stat, 1)
	}
	for k := 1; k <= 2; k++ {
		if k < len(n.Outputs) && n.Outputs[k] != "" {
			bindings[3+k], flags = slot{true, k}, flags|1<<k
		}
	}
	rows, length := graph.NumElements(x[:axis]), graph.NumElements(norm)
	groups, serial := q.rowGroups(rows, length)
	return &launch{shader: "layernorm", bindings: bindings,
		push:  words(uint32(rows), uint32(length), math.Float32bits(p.Epsilon), flags|serial<<4, uint32(sn), uint32(bn)),
		elems: graph.NumElements(x), outShapes: [][]int64{x, stat, stat}, groups: groups}, true
}
