package planner

import (
	"sort"
)

// assignOffsets places every arena buffer of each device at the lowest
// offset where it overlaps no buffer that is live at the same time:
// "greedy by size", largest first, as TFLite's and ONNX Runtime's arena
// planners do. Alias buffers then take their root's place.
func (p *Plan) assignOffsets(align int64) {
	type placed struct {
		off, end    int64
		first, last int
	}
	var order []int
	for v, b := range p.Buffers {
		if b.AliasOf < 0 {
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
		if b.AliasOf >= 0 {
			root := p.Buffers[b.AliasOf]
			b.Offset, b.Size, b.First, b.Last = root.Offset, root.Size, root.First, root.Last
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
