package backend

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"sync"
	"time"
)

// Trace collects the timed steps of Runs for a profile. A Run records into
// the Trace its context carries (WithTrace); programs record their steps,
// the executor its transfers. Safe for concurrent use.
type Trace struct {
	start  time.Time
	mu     sync.Mutex
	events []TraceEvent
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
}

// NewTrace returns an empty trace whose clock starts now.
func NewTrace() *Trace { return &Trace{start: time.Now()} }

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
func (t *Trace) Now() time.Duration { return time.Since(t.start) }

// Add records ev.
func (t *Trace) Add(ev TraceEvent) {
	t.mu.Lock()
	t.events = append(t.events, ev)
	t.mu.Unlock()
}

// Events returns the events recorded so far, by start time.
func (t *Trace) Events() []TraceEvent {
	t.mu.Lock()
	evs := slices.Clone(t.events)
	t.mu.Unlock()
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

// WriteChrome writes the trace as Chrome trace JSON: one track per device,
// each step a slice named after its node with the op, the host time and,
// where measured, the device time in its arguments.
func (t *Trace) WriteChrome(w io.Writer) error {
	evs := t.Events()
	tids := map[string]int{}
	var out []chromeEvent
	for _, ev := range evs {
		tid, ok := tids[ev.Device]
		if !ok {
			tid = len(tids) + 1
			tids[ev.Device] = tid
			out = append(out, chromeEvent{Name: "thread_name", Ph: "M", Pid: 1, Tid: tid, Args: map[string]any{"name": ev.Device}})
		}
		args := map[string]any{"op": ev.Op, "device": ev.Device, "host_us": us(ev.Dur)}
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
