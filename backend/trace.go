package backend

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Trace collects the timed steps of Runs for a profile. A Run records into
// the Trace its context carries (WithTrace); programs record their steps,
// the executor its transfers. The executor hands each segment a view of
// the trace that labels its events with the Run's request number and the
// segment's logical device. Safe for concurrent use.
type Trace struct {
	log *traceLog
	// scoped marks a view made by scope: Add labels events with logical
	// and request.
	scoped  bool
	logical string
	request int
}

// traceLog is what a Trace and its views share.
type traceLog struct {
	start    time.Time
	requests atomic.Int64
	mu       sync.Mutex
	events   []TraceEvent
}

// TraceEvent is one timed step.
type TraceEvent struct {
	// Name is the node's name (or "transfer") and Op its op type.
	Name, Op string
	// Device is the device that ran the step ("cpu", "vulkan:0"); for a
	// transfer, the destination.
	Device string
	// Start is the step's start since the trace began and Dur its
	// wall-clock time on the host. A step that a device timed on its own,
	// within a submission of many, has the device's timing placed on the
	// host clock instead: Start is the submission plus the step's offset
	// on the device and Dur its device time.
	Start, Dur time.Duration
	// DeviceDur is the time the device itself measured (GPU timestamps);
	// 0 where it has none.
	DeviceDur time.Duration
	// Bytes is the size a transfer moved; 0 for compute steps.
	Bytes int64
	// Steps is the number of plan steps the event covers (a device program
	// that times only its whole segment); 0 means 1.
	Steps int
	// Logical is the logical device ("d0", "d1", ...) of a multi-device
	// configuration that the step belongs to; "" outside one.
	Logical string
	// Note says why a node took no time of its own on a device that times
	// its nodes ("a view of its input", "fused into <node>": a fused
	// dispatch's time goes to the last node it covers); "" for a node with
	// its own dispatches.
	Note string
	// Request numbers the Run that recorded the step: Runs under one trace
	// take 0, 1, ... as they begin, a RunBatch one number per request in
	// order.
	Request int
}

// Track names the timeline the event belongs to: its logical device, or
// its device outside a multi-device configuration.
func (ev TraceEvent) Track() string {
	if ev.Logical != "" {
		return ev.Logical
	}
	return ev.Device
}

// NewTrace returns an empty trace whose clock starts now.
func NewTrace() *Trace { return &Trace{log: &traceLog{start: time.Now()}} }

// reserve returns the first of n consecutive request numbers.
func (t *Trace) reserve(n int) int { return int(t.log.requests.Add(int64(n))) - n }

// scope returns a view of t whose Add labels events with the logical
// device (unless the event names its own) and the request number.
func (t *Trace) scope(logical string, request int) *Trace {
	return &Trace{log: t.log, scoped: true, logical: logical, request: request}
}

type traceKey struct{}

// WithTrace returns ctx carrying t: Runs under it record their steps in t.
func WithTrace(ctx context.Context, t *Trace) context.Context {
	return context.WithValue(ctx, traceKey{}, t)
}

// TraceFrom returns the trace ctx carries, or nil.
func TraceFrom(ctx context.Context) *Trace {
	t, _ := ctx.Value(traceKey{}).(*Trace)
	return t
}

// Now returns the time since the trace began, for an event's Start.
func (t *Trace) Now() time.Duration { return time.Since(t.log.start) }

// Add records ev; a segment's view of the trace (see Trace) fills in its
// Request and, where ev has none, its Logical.
func (t *Trace) Add(ev TraceEvent) {
	if t.scoped {
		ev.Request = t.request
		if ev.Logical == "" {
			ev.Logical = t.logical
		}
	}
	t.log.mu.Lock()
	t.log.events = append(t.log.events, ev)
	t.log.mu.Unlock()
}

// Events returns the events recorded so far, by start time.
func (t *Trace) Events() []TraceEvent {
	t.log.mu.Lock()
	evs := slices.Clone(t.log.events)
	t.log.mu.Unlock()
	slices.SortStableFunc(evs, func(a, b TraceEvent) int { return int(a.Start - b.Start) })
	return evs
}

// chromeEvent is an event of the Chrome trace event format, which
// Perfetto and chrome://tracing open.
type chromeEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	Ts   float64        `json:"ts"`
	Dur  float64        `json:"dur,omitempty"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	Args map[string]any `json:"args,omitempty"`
}

// WriteChrome writes the trace as Chrome trace JSON: one track per
// logical device, or per device outside a multi-device configuration (see
// TraceEvent.Track), each step a slice named after its node with the op,
// the device, the request, the host time and, where measured, the device
// time in its arguments.
func (t *Trace) WriteChrome(w io.Writer) error {
	evs := t.Events()
	tids := map[string]int{}
	var out []chromeEvent
	for _, ev := range evs {
		track := ev.Track()
		tid, ok := tids[track]
		if !ok {
			tid = len(tids) + 1
			tids[track] = tid
			out = append(out, chromeEvent{Name: "thread_name", Ph: "M", Pid: 1, Tid: tid, Args: map[string]any{"name": track}})
		}
		args := map[string]any{"op": ev.Op, "device": ev.Device, "request": ev.Request, "host_us": us(ev.Dur)}
		if ev.DeviceDur > 0 {
			args["device_us"] = us(ev.DeviceDur)
		}
		if ev.Bytes > 0 {
			args["bytes"] = ev.Bytes
		}
		if ev.Steps > 1 {
			args["steps"] = ev.Steps
		}
		out = append(out, chromeEvent{Name: ev.Name, Cat: ev.Op, Ph: "X", Ts: us(ev.Start), Dur: max(us(ev.Dur), 0.001), Pid: 1, Tid: tid, Args: args})
	}
	enc := json.NewEncoder(w)
	return enc.Encode(map[string]any{"traceEvents": out, "displayTimeUnit": "ms"})
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// Overlap returns the fraction of the busy time of evs during which two or
// more tracks (see TraceEvent.Track) are busy at once: the time covered by
// events of at least two tracks over the time covered by any event. A
// pipeline of two stages that keeps both busy all the time has 1, one
// whose stages take turns has 0, and so does a trace of one track or
// none.
func Overlap(evs []TraceEvent) float64 {
	byTrack := map[string][]TraceEvent{}
	for _, ev := range evs {
		if ev.Dur > 0 {
			byTrack[ev.Track()] = append(byTrack[ev.Track()], ev)
		}
	}
	type edge struct {
		at    time.Duration
		delta int
	}
	var edges []edge
	for _, track := range byTrack {
		slices.SortFunc(track, func(a, b TraceEvent) int { return int(a.Start - b.Start) })
		start, end := track[0].Start, track[0].Start+track[0].Dur
		for _, ev := range track[1:] {
			if ev.Start > end {
				edges = append(edges, edge{start, 1}, edge{end, -1})
				start = ev.Start
			}
			end = max(end, ev.Start+ev.Dur)
		}
		edges = append(edges, edge{start, 1}, edge{end, -1})
	}
	slices.SortFunc(edges, func(a, b edge) int { return int(a.at - b.at) })
	var busy, both time.Duration
	n := 0
	for i, e := range edges {
		if i > 0 {
			d := e.at - edges[i-1].at
			if n >= 1 {
				busy += d
			}
			if n >= 2 {
				both += d
			}
		}
		n += e.delta
	}
	if busy == 0 {
		return 0
	}
	return float64(both) / float64(busy)
}
