package main

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// reportBins is the number of bars of the latency histogram.
const reportBins = 24

// histogram counts sorted into bins equal-width bins from its smallest to
// its largest value; lo and width describe the bins.
func histogram(sorted []float64, bins int) (counts []int, lo, width float64) {
	counts = make([]int, bins)
	lo, hi := sorted[0], sorted[len(sorted)-1]
	width = (hi - lo) / float64(bins)
	if width == 0 {
		width = max(lo*0.01, 1e-6)
		lo -= width * float64(bins) / 2
	}
	for _, v := range sorted {
		i := min(int((v-lo)/width), bins-1)
		counts[i]++
	}
	return counts, lo, width
}

// reportBar is one bar of an SVG chart, in the chart's coordinates.
type reportBar struct {
	X, Y, W, H float64
	Label      string
	Title      string
}

// reportPage is what the HTML template draws.
type reportPage struct {
	Title     string
	Generated string
	Facts     [][2]string
	Stats     [][2]string
	Hist      []reportBar
	HistTicks []reportBar
	HistMax   int
	Ops       []reportBar
	OpsHeight float64
}

var reportTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em auto; max-width: 960px; color: #222; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 1.6em; }
table { border-collapse: collapse; } td { padding: 2px 12px 2px 0; vertical-align: top; }
td:first-child { color: #666; } svg text { font: 11px system-ui, sans-serif; fill: #333; }
.bar { fill: #3b78c2; } .op { fill: #e08a2c; } .axis { stroke: #999; }
</style></head><body>
<h1>{{.Title}}</h1>
<table>{{range .Facts}}<tr><td>{{index . 0}}</td><td>{{index . 1}}</td></tr>{{end}}</table>
<h2>Latency per run</h2>
<table>{{range .Stats}}<tr><td>{{index . 0}}</td><td>{{index . 1}}</td></tr>{{end}}</table>
<svg width="920" height="260" viewBox="0 0 920 260" role="img" aria-label="latency histogram">
<line class="axis" x1="40" y1="220" x2="900" y2="220"/><line class="axis" x1="40" y1="20" x2="40" y2="220"/>
<text x="34" y="24" text-anchor="end">{{.HistMax}}</text><text x="34" y="220" text-anchor="end">0</text>
{{range .Hist}}<rect class="bar" x="{{printf "%.1f" .X}}" y="{{printf "%.1f" .Y}}" width="{{printf "%.1f" .W}}" height="{{printf "%.1f" .H}}"><title>{{.Title}}</title></rect>
{{end}}{{range .HistTicks}}<text x="{{printf "%.1f" .X}}" y="238" text-anchor="middle">{{.Label}}</text>
{{end}}<text x="470" y="256" text-anchor="middle">milliseconds (runs per bin on the vertical axis)</text>
</svg>
{{if .Ops}}<h2>Time per op type (one run, step by step)</h2>
<svg width="920" height="{{printf "%.0f" .OpsHeight}}" viewBox="0 0 920 {{printf "%.0f" .OpsHeight}}" role="img" aria-label="time per op type">
{{range .Ops}}<text x="250" y="{{printf "%.1f" (.Y)}}" dy="13" text-anchor="end">{{.Label}}</text>
<rect class="op" x="260" y="{{printf "%.1f" .Y}}" width="{{printf "%.1f" .W}}" height="{{printf "%.1f" .H}}"><title>{{.Title}}</title></rect>
<text x="{{printf "%.1f" (.X)}}" y="{{printf "%.1f" .Y}}" dy="13">{{.Title}}</text>
{{end}}</svg>{{end}}
<p style="color:#666">Written by onnxvk bench --report on {{.Generated}}.</p>
</body></html>
`))

// writeReport writes res and the sorted run times as a self-contained HTML
// page: the run's facts, the latency statistics, a histogram and, when
// profiled, the time per op type, drawn as inline SVG (no scripts, no
// fetches).
func writeReport(path string, res *benchResult, sorted []float64) error {
	page := reportPage{Title: fmt.Sprintf("onnxvk bench: %s on %s", res.Model, res.Device), Generated: time.Now().Format(time.RFC3339)}
	device := res.Device
	if res.DeviceName != "" {
		device += " (" + res.DeviceName + ", " + res.DeviceDriver + ")"
	}
	var inputs []string
	for name, shape := range res.Inputs {
		inputs = append(inputs, fmt.Sprintf("%s %v", name, shape))
	}
	slices.Sort(inputs)
	page.Facts = [][2]string{{"model", res.Model}, {"device", device}, {"precision", res.Precision}, {"build", res.Version},
		{"inputs", strings.Join(inputs, ", ")}, {"threads", fmt.Sprint(res.Threads)}, {"concurrency", fmt.Sprint(res.Concurrency)},
		{"load", fmt.Sprintf("%.2f ms", res.LoadMS)}, {"first run", fmt.Sprintf("%.2f ms", res.FirstRunMS)},
		{"peak RSS", fmt.Sprintf("%.1f MiB", float64(res.PeakRSSBytes)/(1<<20))}}
	if res.DeviceMemoryBytes > 0 {
		page.Facts = append(page.Facts, [2]string{"GPU memory", fmt.Sprintf("%.1f MiB", float64(res.DeviceMemoryBytes)/(1<<20))},
			[2]string{"per run", fmt.Sprintf("%d submits, %d dispatches, %.1f KiB between host and device", res.SubmitsPerRun, res.DispatchesPerRun, float64(res.HostDeviceBytesPerRun)/(1<<10))})
	}
	page.Stats = [][2]string{{"runs", fmt.Sprint(res.Runs)}, {"median", fmt.Sprintf("%.3f ms", res.MedianMS)},
		{"p90 / p95 / p99", fmt.Sprintf("%.3f / %.3f / %.3f ms", res.P90MS, res.P95MS, res.P99MS)},
		{"min / max", fmt.Sprintf("%.3f / %.3f ms", res.MinMS, res.MaxMS)},
		{"mean ± stddev", fmt.Sprintf("%.3f ± %.3f ms", res.MeanMS, res.StddevMS)},
		{"throughput", fmt.Sprintf("%.1f runs/s", res.ThroughputPerS)}}

	counts, lo, width := histogram(sorted, reportBins)
	page.HistMax = slices.Max(counts)
	const left, right, top, bottom = 40.0, 900.0, 20.0, 220.0
	barW := (right - left) / reportBins
	for i, n := range counts {
		h := (bottom - top) * float64(n) / float64(page.HistMax)
		page.Hist = append(page.Hist, reportBar{X: left + float64(i)*barW + 1, Y: bottom - h, W: barW - 2, H: h,
			Title: fmt.Sprintf("%d runs from %.3f to %.3f ms", n, lo+float64(i)*width, lo+float64(i+1)*width)})
	}
	for i := 0; i <= reportBins; i += reportBins / 6 {
		page.HistTicks = append(page.HistTicks, reportBar{X: left + float64(i)*barW, Label: fmt.Sprintf("%.3g", lo+float64(i)*width)})
	}

	if len(res.Profile) > 0 {
		ops := res.Profile[:min(len(res.Profile), 16)]
		longest := 0.0
		for _, o := range ops {
			longest = math.Max(longest, o.MS)
		}
		for i, o := range ops {
			w := 0.0
			if longest > 0 {
				w = 480 * o.MS / longest
			}
			y := 6 + float64(i)*22
			page.Ops = append(page.Ops, reportBar{X: 266 + w, Y: y, W: w, H: 16, Label: o.Track + " " + o.Op,
				Title: fmt.Sprintf("%.3f ms, %.1f%%, %d steps", o.MS, o.Percent, o.Steps)})
		}
		page.OpsHeight = 12 + 22*float64(len(ops))
	}
	return writeFileAtomic(path, func(w io.Writer) error { return reportTemplate.Execute(w, page) })
}

// writeFileAtomic writes a file through write under a temporary name beside
// path and renames it into place, mode 0644.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".onnxvk-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	err = f.Chmod(0o644)
	if err == nil {
		err = write(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
