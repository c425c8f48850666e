package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/sessionvalues"
)

type benchResult struct {
	Model   string `json:"model"`
	Version string `json:"version"`
	Device  string `json:"device"`
	// DeviceName and DeviceDriver describe a Vulkan device: the name, the
	// driver and its version.
	DeviceName   string `json:"device_name,omitempty"`
	DeviceDriver string `json:"device_driver,omitempty"`
	DeviceUUID   string `json:"device_uuid,omitempty"`
	Precision    string `json:"precision"`
	// Server is the URL of the server measured (bench --server), where
	// Device is "server".
	Server string `json:"server,omitempty"`
	// Inputs gives each input's shape as fed.
	Inputs     map[string][]int64 `json:"inputs"`
	LoadMS     float64            `json:"load_ms"`
	FirstRunMS float64            `json:"first_run_ms"`
	MedianMS   float64            `json:"median_ms"`
	P90MS      float64            `json:"p90_ms"`
	P95MS      float64            `json:"p95_ms"`
	P99MS      float64            `json:"p99_ms"`
	MinMS      float64            `json:"min_ms"`
	MaxMS      float64            `json:"max_ms"`
	MeanMS     float64            `json:"mean_ms"`
	StddevMS   float64            `json:"stddev_ms"`
	// ThroughputPerS is the timed Runs per second of wall time, over all
	// Concurrency goroutines.
	ThroughputPerS float64 `json:"throughput_per_s"`
	Concurrency    int     `json:"concurrency"`
	Runs           int     `json:"runs"`
	Warmup         int     `json:"warmup"`
	Threads        int     `json:"threads"`
	PeakRSSBytes   int64   `json:"peak_rss_bytes"`
	RSSAnonBytes   int64   `json:"rss_anon_bytes"`
	// DeviceMemoryBytes is the GPU memory the session holds after the
	// runs: weights and the buffers of its plans.
	DeviceMemoryBytes int64 `json:"device_memory_bytes"`
	// The counts of one steady-state Run after the timed ones, as the
	// devices counted them (see onnxvk.Counters); 0 on the CPU.
	SubmitsPerRun         int64 `json:"submits_per_run"`
	DispatchesPerRun      int64 `json:"dispatches_per_run"`
	HostDeviceBytesPerRun int64 `json:"host_device_bytes_per_run"`
	// Profile is the time per op type of one more Run timed step by step
	// (--profile).
	Profile []opTime `json:"profile,omitempty"`
}

func cmdBench(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", "bench MODEL [--device ...] [--config NAME] [--devices LIST] [--fp16] [--threads N] [--warmup N] [--runs N | --duration D] [--concurrency N] [--profile] [--report FILE.html] [--json] | bench --server URL NAME [--warmup N] [--runs N | --duration D] [--concurrency N] [--json] | bench --compare A.json B.json", stdout)
	device := fs.String("device", "auto", "device: auto, cpu, vulkan or vulkan:N")
	multi := addMultiDeviceFlags(fs)
	fp16 := addFP16Flag(fs)
	hostMem := addHostMemoryFlag(fs)
	threads := addThreadsFlag(fs)
	warmup := fs.Int("warmup", 3, "untimed runs after the first")
	runs := fs.Int("runs", 20, "timed runs (per goroutine with --concurrency)")
	duration := fs.Duration("duration", 0, "time runs for `DURATION` (e.g. 10s) instead of counting --runs")
	concurrency := fs.Int("concurrency", 1, "run from `N` goroutines at once, all on the one Session")
	compare := fs.Bool("compare", false, "compare two --json results given instead of a model: bench --compare A.json B.json prints B's figures over A's")
	report := fs.String("report", "", "also write a self-contained HTML report to `FILE`: the run's facts, a latency histogram and the time per op type (profiles one more run)")
	profile := fs.Bool("profile", false, "after the timed runs, time one more step by step and print the time of each op type and its share")
	asJSON := fs.Bool("json", false, "print one JSON object")
	seed := fs.Uint64("seed", 1, "seed for the random input data")
	server := fs.String("server", "", "measure the model named by the argument on the running server at `URL` (grpc://HOST:PORT or http://HOST:PORT, the Open Inference Protocol) instead of a local model; random inputs shaped by its metadata (-1: 1); takes --warmup, --runs, --duration, --concurrency (one connection each), --seed and --json")
	var inputs, dimList listFlag
	fs.Var(&inputs, "i", "input `NAME=FILE` (.npy, .pb, or a picture: .png, .jpg, .gif); others get random data")
	img := addImageFlags(fs)
	fs.Var(&dimList, "dim", "size of a symbolic dimension, `NAME=SIZE`; repeatable (default 1)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if *compare {
		if len(pos) != 2 {
			return usagef("--compare wants two bench --json files, got %d arguments", len(pos))
		}
		return compareBench(stdout, pos[0], pos[1])
	}
	path, err := oneModel(pos)
	if err != nil {
		return err
	}
	if *runs < 1 || *warmup < 0 || *concurrency < 1 || *duration < 0 {
		return usagef("--runs and --concurrency must be at least 1, --warmup and --duration at least 0")
	}
	if *server != "" {
		if local := localFlags(fs); local != "" {
			return usagef("%s: not with --server, which measures a model the server configures", local)
		}
		return benchServer(*server, path, *warmup, *runs, *concurrency, *duration, *seed, *asJSON, stdout, stderr)
	}
	dims, err := parseDims(dimList)
	if err != nil {
		return err
	}
	phases := newPhases(stderr)
	phases.say("loading " + path)
	start := time.Now()
	memOpts, restoreGC, err := hostMem.options()
	if err != nil {
		return err
	}
	defer restoreGC()
	threadOpts, err := threads.options()
	if err != nil {
		return err
	}
	opts := append(append(append(append([]onnxvk.Option{onnxvk.WithDevice(*device)}, multi.options()...), fp16Options(*fp16)...), memOpts...), threadOpts...)
	sess, err := onnxvk.Load(path, opts...)
	if err != nil {
		return err
	}
	defer sess.Close()
	res := benchResult{Model: filepath.Base(path), Version: onnxvk.Build().String(), Device: sess.Device(), Precision: sess.Precision().String(), LoadMS: ms(time.Since(start)),
		Warmup: *warmup, Concurrency: *concurrency, Threads: sess.Threads(), RSSAnonBytes: rssAnon(), Inputs: map[string][]int64{}}
	res.DeviceName, res.DeviceDriver, res.DeviceUUID = deviceDescription(sess.Device())
	feeds, err := makeInputs(sess, inputs, img, dims, *seed, nil)
	if err != nil {
		return err
	}
	for name, v := range feeds {
		if t, ok := v.(*graph.Tensor); ok {
			res.Inputs[name] = t.Shape
		}
	}
	ctx := context.Background()
	run := func() (time.Duration, error) {
		t0 := time.Now()
		_, err := sessionvalues.Of(sess).RunValues(ctx, feeds)
		return time.Since(t0), err
	}
	times, err := measure(&res, run, *warmup, *runs, *duration, *concurrency, "run", phases, stderr, *asJSON)
	if err != nil {
		return err
	}
	before := sess.Counters()
	if _, err := run(); err != nil {
		return err
	}
	per := sess.Counters().Sub(before)
	res.SubmitsPerRun, res.DispatchesPerRun, res.HostDeviceBytesPerRun = per.Submits, per.Dispatches, per.HostDeviceBytes
	if *profile || *report != "" {
		phases.say("profiling one run")
		tr := backend.NewTrace()
		if _, err := sessionvalues.Of(sess).RunValues(backend.WithTrace(ctx, tr), feeds); err != nil {
			return err
		}
		res.Profile = opTimes(tr.Events())
	}
	res.PeakRSSBytes, res.DeviceMemoryBytes = peakRSS(), sess.DeviceMemoryInUse()
	if *report != "" {
		if err := writeReport(*report, &res, times); err != nil {
			return fmt.Errorf("--report: %w", err)
		}
	}
	return printBench(stdout, &res, *asJSON, *report)
}

// printBench prints a bench result: one JSON object, or lines of text.
func printBench(stdout io.Writer, res *benchResult, asJSON bool, report string) error {
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	on := res.Device
	if res.Server != "" {
		on += " " + res.Server
	}
	if res.DeviceName != "" {
		on += " (" + res.DeviceName + ", " + res.DeviceDriver + ")"
	}
	fmt.Fprintf(stdout, "model      %s on %s, %d threads\n", res.Model, on, res.Threads)
	fmt.Fprintf(stdout, "build      %s\n", res.Version)
	if res.Precision != "" {
		fmt.Fprintf(stdout, "precision  %s\n", res.Precision)
	}
	fmt.Fprintf(stdout, "load       %.2f ms\n", res.LoadMS)
	fmt.Fprintf(stdout, "first run  %.2f ms\n", res.FirstRunMS)
	fmt.Fprintf(stdout, "%d runs     median %.3f ms  p90 %.3f ms  p95 %.3f ms  p99 %.3f ms  min %.3f ms  max %.3f ms\n",
		res.Runs, res.MedianMS, res.P90MS, res.P95MS, res.P99MS, res.MinMS, res.MaxMS)
	fmt.Fprintf(stdout, "           mean %.3f ms ± %.3f ms (stddev), %.1f runs/s from %d goroutines\n",
		res.MeanMS, res.StddevMS, res.ThroughputPerS, res.Concurrency)
	if res.Server == "" {
		fmt.Fprintf(stdout, "memory     peak RSS %.1f MiB, anonymous RSS after load %.1f MiB\n",
			float64(res.PeakRSSBytes)/(1<<20), float64(res.RSSAnonBytes)/(1<<20))
	}
	if res.DeviceMemoryBytes > 0 {
		fmt.Fprintf(stdout, "gpu memory %.1f MiB in use after the runs\n", float64(res.DeviceMemoryBytes)/(1<<20))
		fmt.Fprintf(stdout, "per run    %d submits, %d dispatches, %.1f KiB between host and device\n",
			res.SubmitsPerRun, res.DispatchesPerRun, float64(res.HostDeviceBytesPerRun)/(1<<10))
	}
	if report != "" {
		fmt.Fprintf(stdout, "report     %s\n", report)
	}
	if res.Profile != nil {
		fmt.Fprintln(stdout, "profile    one run, step by step:")
		printOpTimes(stdout, res.Profile, 0)
	}
	return nil
}

// measure times run as bench does: a first run, warmup untimed ones, then
// the timed runs from concurrency goroutines (see timeRuns); it sets res's
// figures and returns the timed runs' milliseconds, sorted. what names a run in the phase lines on stderr ("run",
// "request"); quiet leaves out the progress bar.
func measure(res *benchResult, run func() (time.Duration, error), warmup, runs int, d time.Duration, concurrency int, what string, phases *phases, stderr io.Writer, quiet bool) ([]float64, error) {
	phases.say("first " + what)
	first, err := run()
	if err != nil {
		return nil, err
	}
	res.FirstRunMS = ms(first)
	if warmup > 0 {
		phases.say(fmt.Sprintf("%d warm-up %ss", warmup, what))
	}
	for i := 0; i < warmup; i++ {
		if _, err := run(); err != nil {
			return nil, err
		}
	}
	if d > 0 {
		phases.say(fmt.Sprintf("timing %ss for %v from %d goroutines", what, d, concurrency))
	} else {
		phases.say(fmt.Sprintf("timing %d %ss from %d goroutines", runs*concurrency, what, concurrency))
	}
	bar := newProgress(stderr, runs*concurrency, quiet || d > 0)
	times, wall, err := timeRuns(run, runs, d, concurrency, bar.step)
	bar.done()
	if err != nil {
		return nil, err
	}
	res.setTimes(times, wall)
	return times, nil
}

// setTimes sets the statistics of the timed runs: times in milliseconds,
// sorted here, over wall time.
func (res *benchResult) setTimes(times []float64, wall time.Duration) {
	res.Runs = len(times)
	res.ThroughputPerS = float64(len(times)) / wall.Seconds()
	slices.Sort(times)
	res.MinMS, res.MaxMS = times[0], times[len(times)-1]
	res.MedianMS = percentile(times, 0.5)
	res.P90MS = percentile(times, 0.9)
	res.P95MS = percentile(times, 0.95)
	res.P99MS = percentile(times, 0.99)
	res.MeanMS, res.StddevMS = meanStddev(times)
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// timeRuns times run from n goroutines at once: runs times each, or, when
// d > 0, as often as each can until d has passed (at least once). It
// returns every run's milliseconds and the wall time of the whole; step is
// called after each run.
func timeRuns(run func() (time.Duration, error), runs int, d time.Duration, n int, step func()) ([]float64, time.Duration, error) {
	var (
		mu    sync.Mutex
		times []float64
		first error
		wg    sync.WaitGroup
	)
	start := time.Now()
	for range n {
		wg.Go(func() {
			var mine []float64
			for i := 0; d > 0 && (i == 0 || time.Since(start) < d) || d == 0 && i < runs; i++ {
				t, err := run()
				mu.Lock()
				if err != nil && first == nil {
					first = err
				}
				stop := first != nil
				if err == nil {
					step()
				}
				mu.Unlock()
				if stop {
					break
				}
				mine = append(mine, ms(t))
			}
			mu.Lock()
			times = append(times, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	return times, time.Since(start), first
}

// meanStddev returns the mean and the sample standard deviation of xs.
func meanStddev(xs []float64) (mean, stddev float64) {
	for _, x := range xs {
		mean += x / float64(len(xs))
	}
	if len(xs) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1))
}

// deviceDescription returns the description, the driver and the UUID of a
// Vulkan device ("vulkan:N"), or empty strings.
func deviceDescription(device string) (name, driver, uuid string) {
	if !strings.HasPrefix(device, "vulkan:") {
		return "", "", ""
	}
	devices, _ := onnxvk.Devices()
	for _, d := range devices {
		if d.Name == device {
			return d.Description, d.Driver, d.UUID
		}
	}
	return "", "", ""
}

// phases prints one line per phase of a command on stderr when it is not a
// terminal (a log), and nothing on a terminal, where the progress bar shows.
type phases struct {
	w  io.Writer
	on bool
}

func newPhases(w io.Writer) *phases {
	return &phases{w: w, on: !isTerminal(w)}
}

func (p *phases) say(what string) {
	if p.on {
		fmt.Fprintf(p.w, "onnxvk bench: %s\n", what)
	}
}

// isTerminal reports whether w is a character device.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

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
	return &progress{w: w, total: total, on: !quiet && isTerminal(w)}
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
		decl := sessionvalues.Of(sess).Type(in.Name)
		if decl == nil || decl.Kind != graph.TensorKind || decl.Shape == nil {
			continue
		}
		t := decl.Clone()
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

// compareBench prints the figures of two bench --json results side by side
// with their ratio, b over a.
func compareBench(w io.Writer, pathA, pathB string) error {
	read := func(path string) (*benchResult, error) {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		var r benchResult
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, fmt.Errorf("%s: not a bench --json result: %w", path, err)
		}
		if r.Runs == 0 {
			return nil, fmt.Errorf("%s: not a bench --json result: no runs", path)
		}
		return &r, nil
	}
	a, err := read(pathA)
	if err != nil {
		return err
	}
	b, err := read(pathB)
	if err != nil {
		return err
	}
	describe := func(r *benchResult) string {
		s := r.Model + " on " + r.Device
		if r.DeviceName != "" {
			s += " (" + r.DeviceName + ")"
		}
		return s + ", " + r.Precision + ", " + r.Version
	}
	fmt.Fprintf(w, "A  %s: %s\nB  %s: %s\n", pathA, describe(a), pathB, describe(b))
	fmt.Fprintf(w, "%-18s %12s %12s %8s\n", "", "A", "B", "B/A")
	rows := []struct {
		name string
		a, b float64
		unit string
	}{
		{"median", a.MedianMS, b.MedianMS, "ms"},
		{"p90", a.P90MS, b.P90MS, "ms"},
		{"p99", a.P99MS, b.P99MS, "ms"},
		{"min", a.MinMS, b.MinMS, "ms"},
		{"mean", a.MeanMS, b.MeanMS, "ms"},
		{"stddev", a.StddevMS, b.StddevMS, "ms"},
		{"throughput", a.ThroughputPerS, b.ThroughputPerS, "/s"},
		{"load", a.LoadMS, b.LoadMS, "ms"},
		{"first run", a.FirstRunMS, b.FirstRunMS, "ms"},
		{"peak RSS", float64(a.PeakRSSBytes) / (1 << 20), float64(b.PeakRSSBytes) / (1 << 20), "MiB"},
		{"GPU memory", float64(a.DeviceMemoryBytes) / (1 << 20), float64(b.DeviceMemoryBytes) / (1 << 20), "MiB"},
		{"dispatches/run", float64(a.DispatchesPerRun), float64(b.DispatchesPerRun), ""},
		{"host↔device/run", float64(a.HostDeviceBytesPerRun) / (1 << 10), float64(b.HostDeviceBytesPerRun) / (1 << 10), "KiB"},
	}
	for _, r := range rows {
		if r.a == 0 && r.b == 0 {
			continue
		}
		ratio := "-"
		if r.a != 0 {
			ratio = fmt.Sprintf("%.3f", r.b/r.a)
		}
		fmt.Fprintf(w, "%-18s %9.3f %-3s %8.3f %-3s %7s\n", r.name, r.a, r.unit, r.b, r.unit, ratio)
	}
	return nil
}
