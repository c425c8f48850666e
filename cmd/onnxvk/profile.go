package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/onnxvk/onnxvk/backend"
)

// opTime is the time of one op type on one timeline in a traced run.
type opTime struct {
	Track string  `json:"track"`
	Op    string  `json:"op"`
	Steps int     `json:"steps"`
	MS    float64 `json:"ms"`
	// Percent is the share of the track's time.
	Percent float64 `json:"percent"`
}

// opTimes sums events by timeline and op type, most time first: the
// device's own time where it measured one (GPU timestamps), else the
// host's. A node fused into another took no time of its own and counts no
// step.
func opTimes(events []backend.TraceEvent) []opTime {
	type key struct{ track, op string }
	sums := map[key]*opTime{}
	trackTotal := map[string]time.Duration{}
	var order []key
	for _, ev := range events {
		if ev.Note != "" {
			continue
		}
		d := ev.Dur
		if ev.DeviceDur > 0 {
			d = ev.DeviceDur
		}
		k := key{ev.Track(), ev.Op}
		t := sums[k]
		if t == nil {
			t = &opTime{Track: k.track, Op: k.op}
			sums[k] = t
			order = append(order, k)
		}
		t.Steps += max(ev.Steps, 1)
		t.MS += float64(d.Nanoseconds()) / 1e6
		trackTotal[k.track] += d
	}
	out := make([]opTime, 0, len(order))
	for _, k := range order {
		t := *sums[k]
		if total := trackTotal[k.track]; total > 0 {
			t.Percent = 100 * t.MS / (float64(total.Nanoseconds()) / 1e6)
		}
		out = append(out, t)
	}
	slices.SortStableFunc(out, func(a, b opTime) int { return cmp.Compare(b.MS, a.MS) })
	return out
}

// printOpTimes writes the first limit rows of ts (all when limit is 0) as
// a table.
func printOpTimes(w io.Writer, ts []opTime, limit int) {
	if limit > 0 && len(ts) > limit {
		ts = ts[:limit]
	}
	fmt.Fprintf(w, "  %-10s %-24s %6s %11s %6s\n", "device", "op", "steps", "time", "share")
	for _, t := range ts {
		fmt.Fprintf(w, "  %-10s %-24s %6d %9.3fms %5.1f%%\n", t.Track, t.Op, t.Steps, t.MS, t.Percent)
	}
}
