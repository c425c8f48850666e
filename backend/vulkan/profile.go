package vulkan

import (
	"fmt"
	"time"

	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/backend/vulkan/internal/vk"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/planner"
)

// profiled returns the profiling variant of ec's command buffer, recording
// it on first use: the same dispatches, each waiting for the one before so
// that none overlap, with a timestamp before the first and after each
// dispatch in a query pool of its own. Only traced Runs submit it, so an
// untraced Run pays nothing for it.
func (pr *program) profiled(ec *execContext) (*commands, error) {
	if ec.profile != nil {
		return ec.profile, nil
	}
	d := pr.d
	var query uintptr
	qci := &vk.QueryPoolCreateInfo{SType: vk.StructureTypeQueryPoolCreateInfo, QueryType: vk.QueryTypeTimestamp,
		QueryCount: uint32(len(pr.dispatches) + 1)}
	if err := vk.CreateQueryPool(d.dev, qci, &query); err != nil {
		return nil, fmt.Errorf("vulkan: vkCreateQueryPool for profiling: %w", err)
	}
	c, err := d.newCommands()
	if err != nil {
		vk.DestroyQueryPool(d.dev, query)
		return nil, err
	}
	if err := pr.record(ec, c.cmd, query, true, nil); err != nil {
		c.destroy(d.dev)
		vk.DestroyQueryPool(d.dev, query)
		return nil, err
	}
	ec.profile, ec.profileQuery = c, query
	return c, nil
}

// span is when a node ran on the device: start is its offset from the
// segment's first timestamp and dur the sum of its dispatches' times.
type span struct {
	start, dur time.Duration
}

// readProfile reads the timestamps of a run of ec's profiling command
// buffer and returns the span of each node and the device time of the
// whole segment.
func (pr *program) readProfile(ec *execContext) ([]span, time.Duration, error) {
	d := pr.d
	ts := make([]uint64, len(pr.dispatches)+1)
	if err := vk.GetQueryPoolResults(d.dev, ec.profileQuery, 0, ts); err != nil {
		return nil, 0, fmt.Errorf("vulkan: vkGetQueryPoolResults for profiling: %w", err)
	}
	spans := make([]span, len(pr.nodes))
	i := 0
	for n := range pr.nodes {
		spans[n].start = d.ticks(ts[0], ts[i])
		for ; i < len(pr.dispatches) && pr.dispatches[i].node == n; i++ {
			spans[n].dur += d.ticks(ts[i], ts[i+1])
		}
	}
	return spans, d.ticks(ts[0], ts[len(ts)-1]), nil
}

// ticks returns the time from timestamp a to the later timestamp b: their
// difference in the valid bits (a counter may wrap) times the period.
func (d *Device) ticks(a, b uint64) time.Duration {
	diff := b - a
	if bits := d.info.TimestampBits; bits < 64 {
		diff &= 1<<bits - 1
	}
	return time.Duration(float64(diff) * float64(d.info.TimestampPeriod))
}

// traceNodes records one event per node of a profiled Run whose command
// buffer was submitted at submitted on tr's clock: each event starts at
// the submission plus the node's offset on the device and lasts its device
// time.
func (pr *program) traceNodes(tr *backend.Trace, submitted time.Duration, spans []span) {
	for n, node := range pr.nodes {
		sp := spans[n]
		tr.Add(backend.TraceEvent{Name: node.Name, Op: node.OpType, Device: pr.d.name,
			Start: submitted + sp.start, Dur: sp.dur, DeviceDur: sp.dur, Note: pr.note(n)})
	}
}

// note says why node n of the program records no dispatch of its own, ""
// when it does.
func (pr *program) note(n int) string {
	if f := pr.fused[n]; f != nil {
		return "fused into " + f.String()
	}
	return pr.notes[n]
}

// describe names the segment in error messages.
func (pr *program) describe() string { return describeNodes(pr.nodes) }

// describeNodes names the segment of nodes.
func describeNodes(nodes []*graph.Node) string {
	switch len(nodes) {
	case 0:
		return "an empty segment"
	case 1:
		return fmt.Sprintf("the segment of %s", nodes[0])
	}
	return fmt.Sprintf("the segment of %d nodes, %s … %s", len(nodes), nodes[0], nodes[len(nodes)-1])
}

// stepNodes returns the nodes of steps.
func stepNodes(steps []planner.Step) []*graph.Node {
	nodes := make([]*graph.Node, len(steps))
	for i := range steps {
		nodes[i] = steps[i].Node
	}
	return nodes
}
