package vulkan

import (
	"math"
	"slices"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// lossOps maps the loss ops to the OP specialization constant of
// loss.comp.
var lossOps = map[string]int32{"NegativeLogLikelihoodLoss": 0, "SoftmaxCrossEntropyLoss": 1}

// Flags of loss.comp.
const (
	lossWeight  = 1
	lossIgnore  = 2
	lossLogProb = 4
	lossSum     = 8
	lossMean    = 16
)

// maxLoopSteps bounds the loop iterations of one invocation of loss.comp:
// lavapipe ends a shader's loops after 65535 iterations in all.
const maxLoopSteps = 1 << 15

func init() {
	for op, code := range lossOps {
		register(op, func(q *query) (*launch, bool) { return lowerLoss(q, code) })
	}
}

// lowerLoss lowers NegativeLogLikelihoodLoss or SoftmaxCrossEntropyLoss
// on float32 scores [N, C, d...] with an int32 or int64 target [N, d...],
// an optional weight [C], ignore_index in the int32 range and any
// reduction; SoftmaxCrossEntropyLoss may also write its log_prob output.
// Sum and mean run on one workgroup, so inputs too large for it decline.
func lowerLoss(q *query, code int32) (*launch, bool) {
	n, shapes := q.n, q.shapes
	if len(shapes) < 2 || len(shapes) > 3 || len(shapes[0]) < 2 || shapes[1] == nil {
		return nil, false
	}
	x, t := shapes[0], shapes[1]
	if len(t) != len(x)-1 || t[0] != x[0] || !slices.Equal(t[1:], x[2:]) {
		return nil, false
	}
	var tstride, flags uint32
	switch q.elems[1] {
	case graph.Int32:
		tstride = 1
	case graph.Int64:
		tstride = 2
	default:
		return nil, false
	}
	bindings := []slot{{false, 0}, {false, 1}, {false, 0}, {true, 0}, {true, 0}}
	if len(shapes) == 3 && shapes[2] != nil {
		if !slices.Equal(shapes[2], x[1:2]) {
			return nil, false
		}
		flags |= lossWeight
		bindings[2] = slot{false, 2}
	}
	var ignore int64
	p := ops.LossOf(n, q.opset)
	if p.IgnoreIndex != nil {
		if *p.IgnoreIndex < math.MinInt32 || *p.IgnoreIndex > math.MaxInt32 {
			return nil, false
		}
		flags |= lossIgnore
		ignore = *p.IgnoreIndex
	}
	out := t
	switch p.Reduction {
	case "none":
	case "sum":
		flags |= lossSum
		out = []int64{}
	case "mean":
		flags |= lossMean
		out = []int64{}
	default:
		return nil, false
	}
	outShapes := [][]int64{out}
	if len(n.Outputs) > 1 && n.Outputs[1] != "" {
		if code != lossOps["SoftmaxCrossEntropyLoss"] {
			return nil, false
		}
		flags |= lossLogProb
		bindings[4] = slot{true, 1}
		outShapes = append(outShapes, x)
	}
	rows := graph.NumElements(t)
	groups := int64(1)
	if flags&(lossSum|lossMean) == 0 {
		groups = min((rows+workgroupSize-1)/workgroupSize, maxGroups)
	}
	if (rows+groups*workgroupSize-1)/(groups*workgroupSize)*(3*x[1]+1) > maxLoopSteps {
		return nil, false
	}
	return &launch{shader: "loss", op: code, bindings: bindings,
		push:  words(uint32(rows), uint32(x[1]), uint32(graph.NumElements(x[2:])), tstride, flags, uint32(int32(ignore))),
		elems: graph.NumElements(out), outShapes: outShapes, groups: groups, rawInputs: []int{1}}, true
}
