package vulkan

import (
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/planner"
)

// concatPart is where a Concat's input is written: at byte off of the
// Concat's output, value concat.
type concatPart struct {
	concat int
	off    uint64
}

// concatsInPlace finds the Concats of the segment whose inputs the steps
// that compute them can write straight into the output: every input is
// the output of an earlier step of the segment (no view, no Concat), read
// by nothing else and not leaving the segment, and the axis has only 1s
// before it, so that each input is one contiguous block of the output, at
// an offset the device can bind. It returns, per such input, its place in
// the output, and the Concat steps, which then record nothing.
func concatsInPlace(p *planner.Plan, steps []planner.Step, compiled []*planner.Step, escapes map[int]bool, reads map[int]int, align uint64) (map[int]concatPart, map[int]bool) {
	producer := map[int]int{}
	for i, st := range compiled {
		if st != nil {
			for _, v := range st.Out {
				producer[v] = i
			}
		}
	}
	parts, concats := map[int]concatPart{}, map[int]bool{}
	for c, st := range steps {
		n := st.Node
		if compiled[c] == nil || n.Domain != graph.DefaultDomain || n.OpType != "Concat" || len(st.Out) != 1 || st.Out[0] < 0 {
			continue
		}
		out := p.Types[st.Out[0]]
		if out == nil || !out.Shape.Known() {
			continue
		}
		shape := out.Shape.Ints()
		axis := ops.Params[ops.ConcatParams](n, p.Model.OpsetOf(n)).Axis
		if axis < 0 {
			axis += int64(len(shape))
		}
		if axis < 0 || axis >= int64(len(shape)) || graph.NumElements(shape[:axis]) != 1 {
			continue
		}
		mine := map[int]concatPart{}
		off := uint64(0)
		for _, v := range st.In {
			i, made := producer[v]
			_, twice := mine[v]
			t := p.Types[v]
			if v < 0 || !made || twice || i >= c || reads[v] != 1 || escapes[v] || t == nil || off%align != 0 ||
				isView(steps[i].Node) || steps[i].Node.OpType == "Concat" {
				mine = nil
				break
			}
			mine[v] = concatPart{concat: st.Out[0], off: off}
			off += uint64(t.Elem.ByteSize(graph.NumElements(t.Shape.Ints())))
		}
		if mine == nil {
			continue
		}
		for v, part := range mine {
			parts[v] = part
		}
		concats[c] = true
	}
	return parts, concats
}
