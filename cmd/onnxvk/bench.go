package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/graph"
)

type benchResult struct {
	Model        string  `json:"model"`
	Version      string  `json:"version"`
	Device       string  `json:"device"`
	Precision    string  `json:"precision"`
	LoadMS       float64 `json:"load_ms"`
	FirstRunMS   float64 `json:"first_run_ms"`
	MedianMS     float64 `json:"median_ms"`
	P90MS        float64 `json:"p90_ms"`
	MinMS        float64 `json:"min_ms"`
	MaxMS        float64 `json:"max_ms"`
	MeanMS       float64 `json:"mean_ms"`
	Runs         int     `json:"runs"`
	Warmup       int     `json:"warmup"`
	Threads      int     `json:"threads"`
	PeakRSSBytes int64   `json:"peak_rss_bytes"`
	RSSAnonBytes int64   `json:"rss_anon_bytes"`
	// DeviceMemoryBytes is the GPU memory the session holds after the
	// runs: weights and the buffers of its plans.
	DeviceMemoryBytes int64 `json:"device_memory_bytes"`
	// The counts of one steady-state Run after the timed ones, as the
	// devices counted them (see onnxvk.Counters); 0 on the CPU.
	SubmitsPerRun         int64 `json:"submits_per_run"`
	DispatchesPerRun      int64 `json:"dispatches_per_run"`
	HostDeviceBytesPerRun int64 `json:"host_device_bytes_per_run"`
}

func cmdBench(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", "bench MODEL [--device ...] [--config NAME] [--devices LIST] [--fp16] [--warmup N] [--runs N] [--json]", stderr)
	device := fs.String("device", "auto", "device: auto, cpu, vulkan or vulkan:N")
	multi := addMultiDeviceFlags(fs)
	fp16 := addFP16Flag(fs)
	warmup := fs.Int("warmup", 3, "untimed runs after the first")
	runs := fs.Int("runs", 20, "timed runs")
	asJSON := fs.Bool("json", false, "print one JSON object")
	seed := fs.Uint64("seed", 1, "seed for the random input data")
	var inputs, dimList listFlag
	fs.Var(&inputs, "i", "input `NAME=FILE` (.npy or .pb); others get random data")
	fs.Var(&dimList, "dim", "size of a symbolic dimension, `NAME=SIZE`; repeatable (default 1)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	path, err := oneModel(pos)
	if err != nil {
		return err
	}
	if *runs < 1 || *warmup < 0 {
		return fmt.Errorf("--runs must be at least 1 and --warmup at least 0")
	}
	dims, err := parseDims(dimList)
	if err != nil {
		return err
	}
	start := time.Now()
	opts := append(append([]onnxvk.Option{onnxvk.WithDevice(*device)}, multi.options()...), fp16Options(*fp16)...)
	sess, err := onnxvk.Load(path, opts...)
	if err != nil {
		return err
	}
	defer sess.Close()
	res := benchResult{Model: filepath.Base(path), Version: onnxvk.Build().String(), Device: sess.Device(), Precision: sess.Precision(), LoadMS: ms(time.Since(start)),
		Runs: *runs, Warmup: *warmup, Threads: runtime.GOMAXPROCS(0), RSSAnonBytes: rssAnon()}
	feeds, err := makeInputs(sess, inputs, dims, *seed, nil)
	if err != nil {
		return err
	}
	ctx := context.Background()
	run := func() (time.Duration, error) {
		t0 := time.Now()
		_, err := sess.RunValues(ctx, feeds)
		return time.Since(t0), err
	}
	first, err := run()
	if err != nil {
		return err
	}
	res.FirstRunMS = ms(first)
	bar := newProgress(stderr, *warmup+*runs, *asJSON)
	for i := 0; i < *warmup; i++ {
		if _, err := run(); err != nil {
			return err
		}
		bar.step()
	}
	times := make([]float64, *runs)
	for i := range times {
		d, err := run()
		if err != nil {
			return err
		}
		times[i] = ms(d)
		bar.step()
	}
	bar.done()
	before := sess.Counters()
	if _, err := run(); err != nil {
		return err
	}
	per := sess.Counters().Sub(before)
	res.SubmitsPerRun, res.DispatchesPerRun, res.HostDeviceBytesPerRun = per.Submits, per.Dispatches, per.HostDeviceBytes
	slices.Sort(times)
	res.MinMS, res.MaxMS = times[0], times[len(times)-1]
	res.MedianMS = percentile(times, 0.5)
	res.P90MS = percentile(times, 0.9)
	for _, t := range times {
		res.MeanMS += t / float64(len(times))
	}
	res.PeakRSSBytes, res.DeviceMemoryBytes = peakRSS(), sess.DeviceMemoryInUse()
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	fmt.Fprintf(stdout, "model      %s on %s (%d threads)\n", res.Model, res.Device, res.Threads)
	fmt.Fprintf(stdout, "precision  %s\n", res.Precision)
	fmt.Fprintf(stdout, "load       %.2f ms\n", res.LoadMS)
	fmt.Fprintf(stdout, "first run  %.2f ms\n", res.FirstRunMS)
	fmt.Fprintf(stdout, "%d runs     median %.3f ms  p90 %.3f ms  min %.3f ms  max %.3f ms  mean %.3f ms\n",
		res.Runs, res.MedianMS, res.P90MS, res.MinMS, res.MaxMS, res.MeanMS)
	fmt.Fprintf(stdout, "memory     peak RSS %.1f MiB, anonymous RSS after load %.1f MiB\n",
		float64(res.PeakRSSBytes)/(1<<20), float64(res.RSSAnonBytes)/(1<<20))
	if res.DeviceMemoryBytes > 0 {
		fmt.Fprintf(stdout, "gpu memory %.1f MiB in use after the runs\n", float64(res.DeviceMemoryBytes)/(1<<20))
		fmt.Fprintf(stdout, "per run    %d submits, %d dispatches, %.1f KiB between host and device\n",
			res.SubmitsPerRun, res.DispatchesPerRun, float64(res.HostDeviceBytesPerRun)/(1<<10))
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// percentile of sorted values, interpolating linearly between ranks.
func percentile(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	lo := int(pos)
	if lo+1 >= len(sorted) {
		return sorted[lo]
	}
	frac := pos - float64(lo)
	return sorted[lo]*(1-frac) + sorted[lo+1]*frac
}

// rssAnon reads RssAnon from /proc/self/status, in bytes (0 where absent).
func rssAnon() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "RssAnon:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// progress draws a bar on a terminal and nothing elsewhere.
type progress struct {
	w          io.Writer
	total, cur int
	on         bool
}

func newProgress(w io.Writer, total int, quiet bool) *progress {
	p := &progress{w: w, total: total}
	if f, ok := w.(*os.File); ok && !quiet {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.on = true
		}
	}
	return p
}

func (p *progress) step() {
	p.cur++
	if !p.on {
		return
	}
	const width = 30
	fill := width * p.cur / max(p.total, 1)
	fmt.Fprintf(p.w, "\r[%s%s] %d/%d", strings.Repeat("#", fill), strings.Repeat(" ", width-fill), p.cur, p.total)
}

func (p *progress) done() {
	if p.on {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// declaredTypes gives each input its declared type with symbolic
// dimensions bound from dims (1 when not given).
func declaredTypes(sess *onnxvk.Session, dims map[string]int64) map[string]*graph.Type {
	types := map[string]*graph.Type{}
	for _, in := range sess.Inputs() {
		if in.Type == nil || in.Type.Kind != graph.TensorKind || in.Shape == nil {
			continue
		}
		t := in.Type.Clone()
		for i, d := range t.Shape {
			if !d.Known() {
				size, ok := dims[d.Param]
				if !ok {
					size = 1
				}
				t.Shape[i] = graph.DimOf(size)
			}
		}
		types[in.Name] = t
	}
	return types
}
