package serve

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onnxvk/onnxvk"
)

// Histogram buckets: latencies and queue times in seconds, batch sizes in
// requests per Run.
var (
	latencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}
	batchBuckets   = []float64{1, 2, 4, 8, 16, 32, 64, 128}
)

// metrics are the server's Prometheus metrics, written in the text
// exposition format by WriteMetrics.
type metrics struct {
	mu     sync.Mutex
	models map[string]*modelMetrics
}

// modelMetrics are one model's metrics.
type modelMetrics struct {
	// requests and latency are by status code; requests with an unknown
	// model name count under the name they gave only as "" (see observe).
	mu       sync.Mutex
	requests map[Code]int64
	latency  map[Code]*histogram

	queueTime *histogram
	batchSize *histogram
	inflight  atomic.Int64
	// queueLength and deviceMemory read the loaded model's queue length
	// and its session's GPU memory in use, plans its session's plan
	// counts (nil: not loaded); set by attach under mu.
	queueLength, deviceMemory func() int64
	plans                     func() onnxvk.PlanStats
}

// attach points the gauges read at scrape time at a loaded model.
func (mm *modelMetrics) attach(queueLength, deviceMemory func() int64, plans func() onnxvk.PlanStats) {
	mm.mu.Lock()
	defer mm.mu.Unlock()
	mm.queueLength, mm.deviceMemory, mm.plans = queueLength, deviceMemory, plans
}

// planStats reads the loaded model's plan counts, zero when unset.
func (mm *modelMetrics) planStats() onnxvk.PlanStats {
	mm.mu.Lock()
	f := mm.plans
	mm.mu.Unlock()
	if f == nil {
		return onnxvk.PlanStats{}
	}
	return f()
}

// gauge reads f under mu, 0 when unset.
func (mm *modelMetrics) gauge(f *func() int64) int64 {
	mm.mu.Lock()
	g := *f
	mm.mu.Unlock()
	if g == nil {
		return 0
	}
	return g()
}

func newMetrics() *metrics { return &metrics{models: map[string]*modelMetrics{}} }

// model returns the metrics of a model, creating them.
func (m *metrics) model(name string) *modelMetrics {
	m.mu.Lock()
	defer m.mu.Unlock()
	mm := m.models[name]
	if mm == nil {
		mm = &modelMetrics{requests: map[Code]int64{}, latency: map[Code]*histogram{},
			queueTime: newHistogram(latencyBuckets), batchSize: newHistogram(batchBuckets)}
		m.models[name] = mm
	}
	return mm
}

// observe counts a finished request. A model name the server does not
// know counts as "" so that clients cannot grow the metrics.
func (m *metrics) observe(model string, code Code, d time.Duration) {
	m.mu.Lock()
	mm := m.models[model]
	m.mu.Unlock()
	if mm == nil {
		mm = m.model("")
	}
	mm.mu.Lock()
	mm.requests[code]++
	h := mm.latency[code]
	if h == nil {
		h = newHistogram(latencyBuckets)
		mm.latency[code] = h
	}
	mm.mu.Unlock()
	h.observe(d.Seconds())
}

// totals returns the requests finished so far by status, over all models.
func (m *metrics) totals() map[Code]int64 {
	m.mu.Lock()
	models := make([]*modelMetrics, 0, len(m.models))
	for _, mm := range m.models {
		models = append(models, mm)
	}
	m.mu.Unlock()
	out := map[Code]int64{}
	for _, mm := range models {
		mm.mu.Lock()
		for c, n := range mm.requests {
			out[c] += n
		}
		mm.mu.Unlock()
	}
	return out
}

// histogram counts observations in cumulative buckets.
type histogram struct {
	mu     sync.Mutex
	bounds []float64
	counts []int64
	sum    float64
	n      int64
}

func newHistogram(bounds []float64) *histogram {
	return &histogram{bounds: bounds, counts: make([]int64, len(bounds))}
}

func (h *histogram) observe(v float64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, b := range h.bounds {
		if v <= b {
			h.counts[i]++
		}
	}
	h.sum += v
	h.n++
}

// write writes the histogram's series with the labels.
func (h *histogram) write(w io.Writer, name, labels string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	sep := ""
	if labels != "" {
		sep = ","
	}
	for i, b := range h.bounds {
		fmt.Fprintf(w, "%s_bucket{%s%sle=%q} %d\n", name, labels, sep, formatFloat(b), h.counts[i])
	}
	fmt.Fprintf(w, "%s_bucket{%s%sle=\"+Inf\"} %d\n", name, labels, sep, h.n)
	fmt.Fprintf(w, "%s_sum{%s} %s\n", name, labels, formatFloat(h.sum))
	fmt.Fprintf(w, "%s_count{%s} %d\n", name, labels, h.n)
}

func formatFloat(f float64) string {
	if math.IsInf(f, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// label escapes a label value for the exposition format.
func label(v string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`).Replace(v)
}

// WriteMetrics writes the server's metrics in Prometheus's text exposition
// format (version 0.0.4).
func (s *Server) WriteMetrics(w io.Writer) {
	m := s.metrics
	m.mu.Lock()
	names := make([]string, 0, len(m.models))
	for n := range m.models {
		names = append(names, n)
	}
	models := m.models
	m.mu.Unlock()
	sort.Strings(names)
	type codeStat struct {
		code Code
		n    int64
		h    *histogram
	}
	byModel := map[string][]codeStat{}
	for _, n := range names {
		mm := models[n]
		mm.mu.Lock()
		for c, k := range mm.requests {
			byModel[n] = append(byModel[n], codeStat{c, k, mm.latency[c]})
		}
		mm.mu.Unlock()
		sort.Slice(byModel[n], func(i, j int) bool { return byModel[n][i].code < byModel[n][j].code })
	}
	fmt.Fprintln(w, "# HELP onnxvk_requests_total Inference requests finished, by model and status.")
	fmt.Fprintln(w, "# TYPE onnxvk_requests_total counter")
	for _, n := range names {
		for _, c := range byModel[n] {
			fmt.Fprintf(w, "onnxvk_requests_total{model=\"%s\",status=\"%s\"} %d\n", label(n), c.code, c.n)
		}
	}
	fmt.Fprintln(w, "# HELP onnxvk_request_duration_seconds Time from a request's arrival at the server core to its response, by model and status.")
	fmt.Fprintln(w, "# TYPE onnxvk_request_duration_seconds histogram")
	for _, n := range names {
		for _, c := range byModel[n] {
			c.h.write(w, "onnxvk_request_duration_seconds", fmt.Sprintf("model=\"%s\",status=\"%s\"", label(n), c.code))
		}
	}
	series := []struct {
		name, help, typ string
		write           func(mm *modelMetrics, labels string)
	}{
		{"onnxvk_queue_duration_seconds", "Time requests waited in the model's queue before their Run started.", "histogram",
			func(mm *modelMetrics, l string) { mm.queueTime.write(w, "onnxvk_queue_duration_seconds", l) }},
		{"onnxvk_batch_size", "Requests merged into each Run (1: run alone).", "histogram",
			func(mm *modelMetrics, l string) { mm.batchSize.write(w, "onnxvk_batch_size", l) }},
		{"onnxvk_inflight_requests", "Requests whose Run is in progress.", "gauge",
			func(mm *modelMetrics, l string) {
				fmt.Fprintf(w, "onnxvk_inflight_requests{%s} %d\n", l, mm.inflight.Load())
			}},
		{"onnxvk_queue_length", "Requests admitted to the model's queue and not yet running.", "gauge",
			func(mm *modelMetrics, l string) {
				fmt.Fprintf(w, "onnxvk_queue_length{%s} %d\n", l, mm.gauge(&mm.queueLength))
			}},
		{"onnxvk_device_memory_bytes", "GPU memory the model's session holds (weights and plan buffers; 0 on the CPU).", "gauge",
			func(mm *modelMetrics, l string) {
				fmt.Fprintf(w, "onnxvk_device_memory_bytes{%s} %d\n", l, mm.gauge(&mm.deviceMemory))
			}},
		{"onnxvk_plans_compiled_total", "Plans the model's session compiled since it loaded (Session.PlanStats): one per shape class met.", "counter",
			func(mm *modelMetrics, l string) {
				fmt.Fprintf(w, "onnxvk_plans_compiled_total{%s} %d\n", l, mm.planStats().Compiled)
			}},
		{"onnxvk_plan_cache_bytes", "Memory the model's cached plans hold (host arenas and GPU buffers, not the weights).", "gauge",
			func(mm *modelMetrics, l string) {
				fmt.Fprintf(w, "onnxvk_plan_cache_bytes{%s} %d\n", l, mm.planStats().CachedBytes)
			}},
	}
	for _, sr := range series {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", sr.name, sr.help, sr.name, sr.typ)
		for _, n := range names {
			if n == "" {
				continue
			}
			sr.write(models[n], fmt.Sprintf("model=\"%s\"", label(n)))
		}
	}
}
