package planner

import (
	"fmt"
	"sort"

	"github.com/onnxvk/onnxvk/graph/ops"
)

// assignOffsets places every arena buffer of each device at the lowest
// offset where it overlaps no buffer that is live at the same time:
// "greedy by size", largest first, as TFLite's and ONNX Runtime's arena
// planners do. Alias buffers then take their root's place, parts theirs
// inside their Concat output's.
func (p *Plan) assignOffsets(align int64) {
	type placed struct {
		off, end    int64
		first, last int
	}
	var order []int
	for v, b := range p.Buffers {
		if b.AliasOf < 0 && b.Part == nil {
			order = append(order, v)
			p.UnsharedBytes += alignUp(b.Size, align)
		}
	}
	sort.Slice(order, func(i, j int) bool {
		bi, bj := p.Buffers[order[i]], p.Buffers[order[j]]
		if bi.Size != bj.Size {
			return bi.Size > bj.Size
		}
		return order[i] < order[j]
	})
	byDevice := map[string][]placed{}
	for _, v := range order {
		b := p.Buffers[v]
		var live []placed
		for _, q := range byDevice[b.Device] {
			if q.first <= b.Last && b.First <= q.last {
				live = append(live, q)
			}
		}
		sort.Slice(live, func(i, j int) bool { return live[i].off < live[j].off })
		size := alignUp(b.Size, align)
		off := int64(0)
		for _, q := range live {
			if off+size <= q.off {
				break
			}
			off = max(off, q.end)
		}
		b.Offset = off
		byDevice[b.Device] = append(byDevice[b.Device], placed{off, off + size, b.First, b.Last})
		p.ArenaBytes[b.Device] = max(p.ArenaBytes[b.Device], off+size)
	}
	for _, b := range p.Buffers {
		switch {
		case b.AliasOf >= 0:
			root := p.Buffers[b.AliasOf]
			b.Offset, b.Size, b.First, b.Last = root.Offset, root.Size, root.First, root.Last
		case b.Part != nil:
			root := p.Buffers[b.Part.Of]
			b.Offset, b.First, b.Last = root.Offset+b.Part.At, root.First, root.Last
		}
	}
}

func alignUp(n, a int64) int64 { return (n + a - 1) / a * a }

// PeakBytes is the sum of all devices' arena sizes.
func (p *Plan) PeakBytes() int64 {
	var n int64
	for _, b := range p.ArenaBytes {
		n += b
	}
	return n
}

// checkHostMemory computes HostBytes, the host memory a Run of the plan
// takes (the host arena and the host tensors of known size allocated on
// their own), and fails with ErrOutOfMemory, naming the node, when one
// value or the whole exceeds HostMemoryLimit.
func (p *Plan) checkHostMemory() error {
	p.HostBytes = p.ArenaBytes[HostDevice]
	var largest, largestSize int64 = -1, 0
	var largestStep *Step
	for s := range p.Steps {
		st := &p.Steps[s]
		onHost := st.Kind == Compute && st.Device == HostDevice || st.Kind == Transfer && st.To == HostDevice
		if !onHost {
			continue
		}
		outs := st.Out
		if st.Kind == Transfer {
			outs = st.In[:1]
		}
		for _, v := range outs {
			if v < 0 {
				continue
			}
			size := p.byteSize(v)
			if size <= 0 {
				continue
			}
			if p.HostMemoryLimit > 0 && size > p.HostMemoryLimit {
				return fmt.Errorf("%s: value %q (%s) needs %d bytes, over the host memory limit of %d bytes: %w",
					p.stepName(st), p.Values[v], p.Types[v], size, p.HostMemoryLimit, ErrOutOfMemory)
			}
			if b := p.Buffers[v]; b != nil || st.Kind == Compute && ops.Has(st.Node.Domain, st.Node.OpType, ops.View) {
				continue
			}
			p.HostBytes += size
			if size > largestSize {
				largest, largestSize, largestStep = int64(v), size, st
			}
		}
	}
	if p.HostMemoryLimit <= 0 || p.HostBytes <= p.HostMemoryLimit {
		return nil
	}
	msg := fmt.Sprintf("the plan needs %d bytes of host memory (an arena of %d bytes and %d bytes of tensors of their own)",
		p.HostBytes, p.ArenaBytes[HostDevice], p.HostBytes-p.ArenaBytes[HostDevice])
	if largest >= 0 {
		msg += fmt.Sprintf(", the largest %s's %q of %d bytes", p.stepName(largestStep), p.Values[largest], largestSize)
	}
	return fmt.Errorf("%s, over the host memory limit of %d bytes: %w", msg, p.HostMemoryLimit, ErrOutOfMemory)
}

// stepName names a step in errors: its node, or the transfer and value.
func (p *Plan) stepName(st *Step) string {
	if st.Kind == Compute {
		return st.Node.String()
	}
	return fmt.Sprintf("transfer of %q from %s", p.Values[st.In[0]], st.From)
}
