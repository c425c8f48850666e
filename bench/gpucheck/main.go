// Command gpucheck is the one-shot check of a Vulkan GPU: in one run of a
// few minutes it records the device and then, in this order, runs the
// PyTorch models on the GPU against PyTorch's outputs, a batched vision
// model, greedy decoding with the KV cache on the GPU (a GPT-2-style
// decoder and one with grouped-query attention), the decoder and
// mobilenet_v2 under the device's kernel schedule and under the
// alternatives to it (flash-decoding or not, the depthwise convolution
// kernel or not), a MatMul sweep in TFLOP/s, the GPU kernel tests, and
// the ONNX backend tests on the CPU and on the GPU (every test that passes
// on the CPU must pass on the GPU), and writes everything to one JSON
// file. Each part gets at most its own cap and what is left of --budget.
// bench/gpucheck/run.sh builds it and exports the models; --quick makes
// every part small enough for lavapipe in CI.
//
// It exits 1 when a correctness check fails or a part could not run, 0
// otherwise; timings are recorded, never judged.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/backend/vulkan"
	"github.com/onnxvk/onnxvk/bench"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/internal/decoding"
	"github.com/onnxvk/onnxvk/internal/npy"
	"github.com/onnxvk/onnxvk/internal/sessionvalues"
	"github.com/onnxvk/onnxvk/loader"
	"github.com/onnxvk/onnxvk/planner"
	"github.com/x448/float16"
)

// config holds the command line.
type config struct {
	quick     bool
	out       string
	device    string
	models    string
	onnxData  string
	kernelBin string
	kernelDir string
	kernelRun string
	// conformanceRun selects the backend tests by name (nil: all).
	conformanceRun *regexp.Regexp
	// matmulModes holds the MatMul sweep's modes to run (nil: all).
	matmulModes map[string]bool
	// only holds the parts to run (nil: all).
	only   map[string]bool
	budget time.Duration
	start  time.Time
}

// part is the outcome of one part of the check.
type part struct {
	Name    string  `json:"name"`
	OK      bool    `json:"ok"`
	Seconds float64 `json:"seconds"`
	Error   string  `json:"error,omitempty"`
	Data    any     `json:"data,omitempty"`
}

// report is the JSON file gpucheck writes.
type report struct {
	Build     string             `json:"build"`
	Quick     bool               `json:"quick"`
	Started   time.Time          `json:"started"`
	GoMaxProc int                `json:"gomaxprocs"`
	Device    *onnxvk.DeviceInfo `json:"device,omitempty"`
	Parts     []part             `json:"parts"`
	OK        bool               `json:"ok"`
	Elapsed   time.Duration      `json:"elapsed_ns"`
}

func main() {
	var c config
	flag.BoolVar(&c.quick, "quick", false, "small sizes and samples (lavapipe, CI)")
	flag.StringVar(&c.out, "out", "gpucheck.json", "write the report to `FILE`")
	flag.StringVar(&c.device, "device", "vulkan", "the device to check: vulkan or vulkan:N")
	flag.StringVar(&c.models, "models", "", "`DIR` of models exported by testdata/torch/export.py (one folder each)")
	flag.StringVar(&c.onnxData, "onnx-data", "/usr/share/libonnx-testdata/data", "`DIR` of the ONNX backend test suites (node, simple, ...)")
	flag.StringVar(&c.kernelBin, "kernel-tests", "", "the backend/vulkan test binary (go test -c) to run, `PATH`")
	flag.StringVar(&c.kernelDir, "kernel-dir", ".", "the `DIR` the kernel tests run in (backend/vulkan)")
	flag.StringVar(&c.kernelRun, "kernel-run", "", "the kernel tests to run, a go test -run `REGEX` (default: all, or TestKernels with --quick)")
	only := flag.String("parts", "", "run only the parts in `LIST`, comma-separated ("+strings.Join(partNames(), ", ")+"; a dash for a space); default: all")
	matmulModes := flag.String("matmul-modes", "", "run only the MatMul sweep's modes in `LIST`, comma-separated ("+strings.Join(allMatmulModes(), ", ")+"); default: all the device offers")
	conformanceRun := flag.String("conformance-run", "", "run only the backend tests whose suite/name matches `REGEX` (default: all, or a sample with --quick)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the check to `FILE` (go tool pprof), to see where a part's host time goes")
	flag.DurationVar(&c.budget, "budget", 7*time.Minute, "stop starting new parts after `DURATION`; the last part started gets what is left")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "gpucheck: no arguments expected:", strings.Join(flag.Args(), " "))
		os.Exit(2)
	}
	if *only != "" {
		c.only = map[string]bool{}
		for _, name := range strings.Split(*only, ",") {
			name = strings.ReplaceAll(strings.TrimSpace(name), "-", " ")
			if !slices.Contains(partNames(), name) {
				fmt.Fprintf(os.Stderr, "gpucheck: --parts: no part %q (want some of %s)\n", name, strings.Join(partNames(), ", "))
				os.Exit(2)
			}
			c.only[name] = true
		}
	}
	if *matmulModes != "" {
		c.matmulModes = map[string]bool{}
		for _, mode := range strings.Split(*matmulModes, ",") {
			mode = strings.TrimSpace(mode)
			if !slices.Contains(allMatmulModes(), mode) {
				fmt.Fprintf(os.Stderr, "gpucheck: --matmul-modes: no mode %q (want some of %s)\n", mode, strings.Join(allMatmulModes(), ", "))
				os.Exit(2)
			}
			c.matmulModes[mode] = true
		}
	}
	switch {
	case *conformanceRun != "":
		re, err := regexp.Compile(*conformanceRun)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gpucheck: --conformance-run:", err)
			os.Exit(2)
		}
		c.conformanceRun = re
	case c.quick:
		c.conformanceRun = quickConformance
	}
	if c.kernelRun == "" {
		c.kernelRun = "."
		if c.quick {
			c.kernelRun = "TestKernels"
		}
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "gpucheck: --cpuprofile:", err)
			os.Exit(2)
		}
		defer f.Close()
	}
	c.start = time.Now()
	r := check(&c)
	pprof.StopCPUProfile()
	if err := writeReport(c.out, r); err != nil {
		fmt.Fprintln(os.Stderr, "gpucheck:", err)
		os.Exit(1)
	}
	summary(os.Stdout, r)
	if !r.OK {
		os.Exit(1)
	}
}

// parts are the parts of the check after the device's, in the order they
// run, each with its time cap.
var parts = []struct {
	name string
	cap  time.Duration
	run  func(ctx context.Context, c *config) (any, error)
}{
	{"models", 2 * time.Minute, models},
	{"batch", time.Minute, batch},
	{"decoder", time.Minute, decoder},
	{"schedules", time.Minute, schedules},
	{"matmul", 2 * time.Minute, matmul},
	{"kernel tests", 4 * time.Minute, kernelTests},
	{"conformance", 3 * time.Minute, conformance},
}

// partNames names the parts.
func partNames() []string {
	var names []string
	for _, p := range parts {
		names = append(names, p.name)
	}
	return names
}

// check runs every part in turn (those of --parts), each within what is
// left of the budget.
func check(c *config) *report {
	r := &report{Build: onnxvk.Build().String(), Quick: c.quick, Started: c.start, GoMaxProc: runtime.GOMAXPROCS(0)}
	info, err := device(c.device)
	r.Device = info
	devicePart := part{Name: "device", OK: err == nil}
	if err != nil {
		devicePart.Error = err.Error()
	}
	r.Parts = append(r.Parts, devicePart)
	if err == nil {
		for _, p := range parts {
			if c.only != nil && !c.only[p.name] {
				continue
			}
			left := c.budget - time.Since(c.start)
			if left <= 0 {
				r.Parts = append(r.Parts, part{Name: p.name, Error: "not run: the time budget is spent"})
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), min(left, p.cap))
			begin := time.Now()
			fmt.Fprintf(os.Stderr, "gpucheck: %s...\n", p.name)
			data, err := p.run(ctx, c)
			cancel()
			res := part{Name: p.name, OK: err == nil, Seconds: time.Since(begin).Seconds(), Data: data}
			if err != nil {
				res.Error = err.Error()
			}
			fmt.Fprintf(os.Stderr, "gpucheck: %s: ok %v in %.1fs %s\n", p.name, res.OK, res.Seconds, res.Error)
			r.Parts = append(r.Parts, res)
			// The report so far, in case the run is cut short.
			if err := writeReport(c.out, r); err != nil {
				fmt.Fprintln(os.Stderr, "gpucheck:", err)
			}
		}
	}
	r.OK = true
	for _, p := range r.Parts {
		r.OK = r.OK && p.OK
	}
	r.Elapsed = time.Since(c.start)
	return r
}

// device describes the Vulkan device named by name, as onnxvk.Devices
// lists it: "vulkan" is the default one, "vulkan:ID" the one whose index,
// name or UUID ID is.
func device(name string) (*onnxvk.DeviceInfo, error) {
	devices, reason := onnxvk.Devices()
	id, named := strings.CutPrefix(name, "vulkan:")
	for i, d := range devices {
		if d.Kind == "host" {
			continue
		}
		if name == "vulkan" && d.Default || named && (d.Name == name || strings.EqualFold(d.Description, id) || strings.EqualFold(d.UUID, id)) {
			return &devices[i], nil
		}
	}
	if len(devices) == 1 {
		return nil, fmt.Errorf("no Vulkan device: %s", reason)
	}
	return nil, fmt.Errorf("no device %s", name)
}

func writeReport(path string, r *report) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// summary prints one line per part, and the figures worth reading.
func summary(w io.Writer, r *report) {
	if r.Device != nil {
		fmt.Fprintf(w, "device: %s %s (%s, Vulkan %s)\n", r.Device.Name, r.Device.Description, r.Device.Driver, r.Device.APIVersion)
	}
	for _, p := range r.Parts {
		status := "ok  "
		if !p.OK {
			status = "FAIL"
		}
		fmt.Fprintf(w, "%s %-13s %6.1fs %s\n", status, p.Name, p.Seconds, p.Error)
		switch d := p.Data.(type) {
		case []modelResult:
			for _, m := range d {
				fmt.Fprintf(w, "       %-16s median %8.3f ms  max |diff| %.2e (tolerance %.2e)  %d dispatches\n", m.Name, m.MedianMs, m.MaxAbsDiff, m.Tolerance, m.Dispatches)
			}
		case *batchResult:
			fmt.Fprintf(w, "       %s batch %d: median %.3f ms, %.1f images/s\n", d.Model, d.Batch, d.MedianMs, d.ImagesPerSec)
		case []*decoderResult:
			for _, r := range d {
				fmt.Fprintf(w, "       %-16s %d tokens, median %.3f ms/token\n", r.Model, r.Tokens, r.MedianMsPerToken)
			}
		case []scheduleResult:
			for _, r := range d {
				fmt.Fprintf(w, "       %-16s %-16s median %9.3f ms  %.2f× the device schedule's  %d steps take the kernels\n", r.Workload, r.Schedule, r.MedianMs, r.VsDevice, r.KernelSteps)
			}
		case []matmulResult:
			for _, m := range d {
				if m.Placed != "" {
					fmt.Fprintf(w, "       %5d³ %s: placed on %s\n", m.N, m.Mode, m.Placed)
					continue
				}
				if m.Rows > 0 {
					fmt.Fprintf(w, "  %d×%5d² %-13s %9.3f ms  %8.4g GB/s of weights\n", m.Rows, m.N, m.Mode, m.MedianMs, m.WeightGBs)
					continue
				}
				fmt.Fprintf(w, "       %5d³ %-13s %9.3f ms  %8.4g TFLOP/s\n", m.N, m.Mode, m.MedianMs, m.TFLOPs)
			}
		}
	}
}

// kernelTests runs the backend/vulkan test binary on the device.
func kernelTests(ctx context.Context, c *config) (any, error) {
	if c.kernelBin == "" {
		return nil, errors.New("no kernel test binary given (--kernel-tests)")
	}
	cmd := exec.CommandContext(ctx, c.kernelBin, "-test.run", c.kernelRun, "-test.v")
	cmd.Dir = c.kernelDir
	out, err := cmd.CombinedOutput()
	failed, messages, passed := testResults(string(out))
	data := map[string]any{"run": c.kernelRun, "passed": passed, "failed": failed, "messages": messages}
	if err != nil {
		data["output_tail"] = tail(string(out), 6000)
		return data, fmt.Errorf("kernel tests: %v (%d failed)", err, len(failed))
	}
	return data, nil
}

// testResults reads go test -v output: the failed tests, the lines each
// failed test logged (up to 20; -v streams them under the test's === RUN
// or === NAME line, older output under its --- FAIL line), and the number
// of passed tests.
func testResults(out string) (failed []string, messages map[string][]string, passed int) {
	logs := map[string][]string{}
	current := ""
	for _, line := range strings.Split(out, "\n") {
		t := strings.TrimSpace(line)
		f := strings.Fields(t)
		switch {
		case (strings.HasPrefix(t, "=== RUN") || strings.HasPrefix(t, "=== NAME") || strings.HasPrefix(t, "=== CONT")) && len(f) > 2:
			current = f[2]
		case strings.HasPrefix(t, "--- FAIL: ") && len(f) > 2:
			current = f[2]
			failed = append(failed, current)
		case strings.HasPrefix(t, "--- "):
			if strings.HasPrefix(t, "--- PASS: ") {
				passed++
			}
			current = ""
		case !strings.HasPrefix(line, " "):
			current = ""
		case current != "" && len(logs[current]) < 20:
			logs[current] = append(logs[current], t)
		}
	}
	messages = map[string][]string{}
	for _, name := range failed {
		if len(logs[name]) > 0 {
			messages[name] = logs[name]
		}
	}
	return failed, messages, passed
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// quickConformance is the sample of backend tests --quick runs: the
// operators vision and transformer models are made of.
var quickConformance = regexp.MustCompile(`^node/test_(add|sub|mul|relu|sigmoid|conv|gemm|matmul|softmax|maxpool|averagepool|concat|transpose|reshape|layer_normalization|batchnorm|gather|pad|where|reduce_sum|cast)(_|$)`)

type conformanceCounts struct {
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
	NotRun  int `json:"not_run"`
	// Whole counts the passes with every node on the GPU.
	Whole int `json:"whole,omitempty"`
}

type regression struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// conformance runs the ONNX backend tests on the CPU and on the device;
// a test that passes on the CPU and not on the device is a regression.
func conformance(ctx context.Context, c *config) (any, error) {
	var dirs []string
	for _, suite := range []string{"node", "pytorch-converted", "pytorch-operator", "simple", "real"} {
		if d := filepath.Join(c.onnxData, suite); isDir(d) {
			dirs = append(dirs, d)
		}
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("no ONNX backend tests in %s", c.onnxData)
	}
	opts := bench.ConformanceOptions{Timeout: time.Minute, Filter: c.conformanceRun}
	run := func(device string) ([]bench.ConformanceResult, conformanceCounts, error) {
		opts.Device = device
		rs, err := bench.RunConformance(ctx, dirs, opts)
		var n conformanceCounts
		for _, r := range rs {
			switch {
			case ctx.Err() != nil && r.Status == bench.Fail && strings.Contains(r.Reason, "context"):
				n.NotRun++
			case r.Status == bench.Pass:
				n.Passed++
				if len(r.Fallback) == 0 {
					n.Whole++
				}
			case r.Status == bench.Fail:
				n.Failed++
			default:
				n.Skipped++
			}
		}
		return rs, n, err
	}
	cpuRes, cpu, err := run("cpu")
	if err != nil {
		return nil, err
	}
	gpuRes, gpu, err := run(c.device)
	if err != nil {
		return nil, err
	}
	cpu.Whole = 0
	onCPU := map[string]bool{}
	for _, r := range cpuRes {
		onCPU[r.Name] = r.Status == bench.Pass
	}
	var regs []regression
	for _, r := range gpuRes {
		if onCPU[r.Name] && r.Status != bench.Pass {
			regs = append(regs, regression{r.Name, r.Reason})
		}
	}
	data := map[string]any{"cpu": cpu, "gpu": gpu, "regressions": regs}
	switch {
	case cpu.NotRun+gpu.NotRun > 0:
		return data, fmt.Errorf("conformance: out of time with %d CPU and %d GPU tests not run", cpu.NotRun, gpu.NotRun)
	case len(regs) > 0:
		return data, fmt.Errorf("conformance: %d tests pass on the CPU and not on %s", len(regs), c.device)
	}
	return data, nil
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// modelTolerance bounds the largest absolute difference of a float32
// model's output from PyTorch's (the models' outputs are of order 1).
// A model that holds float16 values (the _fp16, _keepio and _mixed
// exports) is held to ops.Float16ModelTolerance of the output's peak
// instead: PyTorch's reference is the float32 model's.
const modelTolerance = 1e-3

// outputTolerance is the bound on a model's largest difference from
// PyTorch's output want: modelTolerance, or for a model with float16
// values ops.Float16ModelTolerance of want's largest magnitude.
func outputTolerance(float16 bool, want []float32) float64 {
	if !float16 {
		return modelTolerance
	}
	peak := 0.0
	for _, v := range want {
		peak = max(peak, math.Abs(float64(v)))
	}
	return ops.Float16ModelTolerance * peak
}

// quickModels are the models --quick runs.
var quickModels = []string{"squeezenet1_1", "transformer"}

type modelResult struct {
	Name       string   `json:"name"`
	Nodes      int      `json:"compute_nodes"`
	OnCPU      []string `json:"on_cpu,omitempty"`
	MaxAbsDiff float64  `json:"max_abs_diff"`
	// Tolerance is the bound on MaxAbsDiff (see outputTolerance).
	Tolerance  float64 `json:"tolerance"`
	FirstRunMs float64 `json:"first_run_ms"`
	MedianMs   float64 `json:"median_ms"`
	P90Ms      float64 `json:"p90_ms"`
	MinMs      float64 `json:"min_ms"`
	Runs       int     `json:"runs"`
	Submits    int64   `json:"submits_per_run"`
	Dispatches int64   `json:"dispatches_per_run"`
	HostBytes  int64   `json:"host_device_bytes_per_run"`
}

// models runs every exported model with a reference output on the device:
// every compute node must be placed there and the output must match
// PyTorch's.
func models(ctx context.Context, c *config) (any, error) {
	if c.models == "" {
		return nil, errors.New("no models folder given (--models)")
	}
	entries, err := os.ReadDir(c.models)
	if err != nil {
		return nil, err
	}
	warmup, runs := 3, 30
	if c.quick {
		warmup, runs = 1, 3
	}
	var res []modelResult
	var problems []string
	for _, e := range entries {
		dir := filepath.Join(c.models, e.Name())
		if !fileExists(filepath.Join(dir, "output.npy")) || c.quick && !slices.Contains(quickModels, e.Name()) {
			continue
		}
		if ctx.Err() != nil {
			problems = append(problems, e.Name()+": not run, out of time")
			continue
		}
		m, err := runModel(ctx, c.device, e.Name(), dir, warmup, runs)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		res = append(res, *m)
		if len(m.OnCPU) > 0 {
			problems = append(problems, fmt.Sprintf("%s: %d nodes on the CPU", m.Name, len(m.OnCPU)))
		}
		if !(m.MaxAbsDiff <= m.Tolerance) {
			problems = append(problems, fmt.Sprintf("%s: max |diff| %.3g from PyTorch's output (tolerance %.3g)", m.Name, m.MaxAbsDiff, m.Tolerance))
		}
	}
	if len(res) == 0 && len(problems) == 0 {
		return nil, fmt.Errorf("no exported models in %s", c.models)
	}
	if len(problems) > 0 {
		return res, errors.New(strings.Join(problems, "; "))
	}
	return res, nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// reference reads the input of the exported model in dir and PyTorch's
// output for it.
func reference(dir string) (in, want *graph.Tensor, err error) {
	if in, err = npy.ReadFile(filepath.Join(dir, "input.npy")); err != nil {
		return nil, nil, err
	}
	if want, err = npy.ReadFile(filepath.Join(dir, "output.npy")); err != nil {
		return nil, nil, err
	}
	return in, want, nil
}

func runModel(ctx context.Context, device, name, dir string, warmup, runs int) (*modelResult, error) {
	in, want, err := reference(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	sess, err := onnxvk.Load(filepath.Join(dir, "model.onnx"), onnxvk.WithDevice(device))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer sess.Close()
	inName := sess.Inputs()[0].Name
	m := &modelResult{Name: name}
	p, err := sessionvalues.Of(sess).Plan(map[string]*graph.Type{inName: graph.TensorType(in.DType, graph.ShapeOf(in.Shape...))})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	m.Nodes, m.OnCPU = placement(sess, p)
	feed := map[string]*onnxvk.Tensor{inName: onnxvk.TensorFrom(in)}
	begin := time.Now()
	out, err := sess.Run(ctx, feed)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	m.FirstRunMs = ms(time.Since(begin))
	got, err := out[sess.Outputs()[0].Name].Float32s()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	m.MaxAbsDiff = maxAbsDiff(got, graph.View[float32](want))
	m.Tolerance = outputTolerance(holdsFloat16(p), graph.View[float32](want))
	times, counters, err := timeRuns(ctx, sess, feed, warmup, runs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	m.MedianMs, m.P90Ms, m.MinMs = quantile(times, 0.5), quantile(times, 0.9), slices.Min(times)
	m.Runs = len(times)
	m.Submits, m.Dispatches, m.HostBytes = counters.Submits, counters.Dispatches, counters.HostDeviceBytes
	return m, nil
}

// placement counts the compute nodes of sess's plan p and lists those
// placed on the CPU.
func placement(sess *onnxvk.Session, p *planner.Plan) (int, []string) {
	n := 0
	var cpu []string
	for _, st := range p.Steps {
		if st.Kind != planner.Compute {
			continue
		}
		n++
		if st.Device != sess.Device() {
			cpu = append(cpu, st.Node.OpType+" "+st.Node.Name)
		}
	}
	return n, cpu
}

// holdsFloat16 reports whether plan p computes on float16 values: a
// float16 tensor among its values or its model's weights (a mixed
// model's, which the planner widens where it folds their Casts).
func holdsFloat16(p *planner.Plan) bool {
	for _, w := range p.Model.Graph.Initializers {
		if w.DType == graph.Float16 {
			return true
		}
	}
	return slices.ContainsFunc(p.Types, func(t *graph.Type) bool {
		return t != nil && t.Kind == graph.TensorKind && t.Elem == graph.Float16
	})
}

// timeRuns runs sess on feed after warmup untimed runs and returns each
// run's milliseconds and the counters of one run.
func timeRuns(ctx context.Context, sess *onnxvk.Session, feed map[string]*onnxvk.Tensor, warmup, runs int) ([]float64, onnxvk.Counters, error) {
	for range warmup {
		if _, err := sess.Run(ctx, feed); err != nil {
			return nil, onnxvk.Counters{}, err
		}
	}
	var one onnxvk.Counters
	times := make([]float64, 0, runs)
	for i := range runs {
		if ctx.Err() != nil && i > 0 {
			break
		}
		before := sess.Counters()
		begin := time.Now()
		if _, err := sess.Run(ctx, feed); err != nil {
			return nil, one, err
		}
		times = append(times, ms(time.Since(begin)))
		one = sess.Counters().Sub(before)
	}
	return times, one, nil
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// quantile returns the q-quantile of xs (nearest rank).
func quantile(xs []float64, q float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(i, 0)]
}

// maxAbsDiff returns the largest |a-b|, +Inf when the lengths differ and
// NaN when an element is NaN.
func maxAbsDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	d := 0.0
	for i := range a {
		e := math.Abs(float64(a[i]) - float64(b[i]))
		if math.IsNaN(e) {
			return math.NaN()
		}
		d = max(d, e)
	}
	return d
}

type batchResult struct {
	Model        string  `json:"model"`
	Batch        int64   `json:"batch"`
	MaxAbsDiff   float64 `json:"max_abs_diff"`
	MedianMs     float64 `json:"median_ms"`
	MinMs        float64 `json:"min_ms"`
	ImagesPerSec float64 `json:"images_per_s"`
}

// batch runs a vision model on a batch of copies of its reference input
// (resnet50 batch 32; squeezenet1_1 batch 2 with --quick): every image's
// output must match PyTorch's.
func batch(ctx context.Context, c *config) (any, error) {
	name, n, warmup, runs := "resnet50", int64(32), 3, 10
	if c.quick {
		name, n, warmup, runs = "squeezenet1_1", 2, 0, 1
	}
	dir := filepath.Join(c.models, name)
	m, err := loader.Load(filepath.Join(dir, "model.onnx"))
	if err != nil {
		return nil, err
	}
	for _, vi := range []*graph.ValueInfo{m.Graph.Inputs[0], m.Graph.Outputs[0]} {
		if vi.Type == nil || len(vi.Type.Shape) == 0 {
			return nil, fmt.Errorf("%s: %s has no shape to batch", name, vi.Name)
		}
		vi.Type.Shape[0] = graph.SymDim("N")
	}
	sess, err := onnxvk.NewSession(m, onnxvk.WithDevice(c.device))
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	in, want, err := reference(dir)
	if err != nil {
		return nil, err
	}
	one := graph.View[float32](in)
	data := make([]float32, 0, int64(len(one))*n)
	for range n {
		data = append(data, one...)
	}
	shape := append([]int64{n}, in.Shape[1:]...)
	x, err := onnxvk.NewTensor(shape, data)
	if err != nil {
		return nil, err
	}
	feed := map[string]*onnxvk.Tensor{sess.Inputs()[0].Name: x}
	out, err := sess.Run(ctx, feed)
	if err != nil {
		return nil, err
	}
	got, err := out[sess.Outputs()[0].Name].Float32s()
	if err != nil {
		return nil, err
	}
	ref := graph.View[float32](want)
	r := &batchResult{Model: name, Batch: n}
	if len(got) != len(ref)*int(n) {
		return nil, fmt.Errorf("%s: %d outputs for batch %d, want %d", name, len(got), n, len(ref)*int(n))
	}
	for i := range n {
		r.MaxAbsDiff = max(r.MaxAbsDiff, maxAbsDiff(got[int(i)*len(ref):int(i+1)*len(ref)], ref))
	}
	times, _, err := timeRuns(ctx, sess, feed, warmup, runs)
	if err != nil {
		return r, err
	}
	r.MedianMs, r.MinMs = quantile(times, 0.5), slices.Min(times)
	r.ImagesPerSec = float64(n) / (r.MedianMs / 1e3)
	if !(r.MaxAbsDiff <= modelTolerance) {
		return r, fmt.Errorf("%s batch %d: max |diff| %.3g from PyTorch's output", name, n, r.MaxAbsDiff)
	}
	return r, nil
}

type decoderResult struct {
	// Model is the exported decoder: decoder, or decoder_gqa (grouped-query
	// attention).
	Model            string  `json:"model"`
	Tokens           int     `json:"tokens"`
	Matches          bool    `json:"matches_pytorch"`
	MedianMsPerToken float64 `json:"median_ms_per_token"`
	MinMsPerToken    float64 `json:"min_ms_per_token"`
	// HostBytesPerToken is the largest number of bytes a decode step moved
	// between host and device.
	HostBytesPerToken int64 `json:"host_device_bytes_per_token"`
}

// decoders are the exported decoders the decoder part runs: the
// GPT-2-style one and decoder_gqa, whose attention is grouped-query
// (testdata/torch/export.py).
var decoders = []string{"decoder", "decoder_gqa"}

// decoder runs greedy decoding with each of decoders, the KV cache kept
// on the device: the tokens must be PyTorch's. Steps after the prompt are
// timed.
func decoder(ctx context.Context, c *config) (any, error) {
	var res []*decoderResult
	for _, name := range decoders {
		r, err := decodeModel(ctx, c, name)
		if r != nil {
			res = append(res, r)
		}
		if err != nil {
			return res, fmt.Errorf("%s: %w", name, err)
		}
	}
	return res, nil
}

// decodeModel is the decoder part for the exported decoder name.
func decodeModel(ctx context.Context, c *config, name string) (*decoderResult, error) {
	prompt, want, err := decoderReference(c, name)
	if err != nil {
		return nil, err
	}
	// Class plans: the past length is symbolic from the third step, and
	// the attention and the cache stay on the GPU.
	sess, err := onnxvk.Load(filepath.Join(c.models, name, "model.onnx"), onnxvk.WithDevice(c.device))
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	d, err := decoding.New(sess, prompt, true)
	if err != nil {
		return nil, err
	}
	defer d.Release()
	r := &decoderResult{Model: name, Matches: true}
	var times []float64
	for step := range decodeSteps(c, want) {
		took, moved, err := decodeStep(ctx, d, step, want[step])
		if err != nil {
			r.Matches = !errors.Is(err, errTokenDiffers)
			return r, err
		}
		if step >= 2 {
			times = append(times, took)
			r.HostBytesPerToken = max(r.HostBytesPerToken, moved)
		}
		r.Tokens++
	}
	if len(times) > 0 {
		r.MedianMsPerToken, r.MinMsPerToken = quantile(times, 0.5), slices.Min(times)
	}
	return r, nil
}

// decoderReference reads the prompt of the exported decoder name and
// PyTorch's greedy continuation of it.
func decoderReference(c *config, name string) (prompt, want []int64, err error) {
	dir := filepath.Join(c.models, name)
	p, err := npy.ReadFile(filepath.Join(dir, "prompt.npy"))
	if err != nil {
		return nil, nil, err
	}
	ref, err := npy.ReadFile(filepath.Join(dir, "tokens.npy"))
	if err != nil {
		return nil, nil, err
	}
	if prompt, err = p.Int64s(); err != nil {
		return nil, nil, err
	}
	if want, err = ref.Int64s(); err != nil {
		return nil, nil, err
	}
	return prompt, want, nil
}

// decodeSteps returns how many tokens the decoding parts generate.
func decodeSteps(c *config, want []int64) int {
	if c.quick {
		return min(6, len(want))
	}
	return min(64, len(want))
}

// errTokenDiffers is the error of a decode step whose token is not
// PyTorch's.
var errTokenDiffers = errors.New("the token differs from PyTorch's")

// decodeStep runs step step of g and checks that its token is want (an
// error wrapping errTokenDiffers if not); it returns the step's
// milliseconds and the bytes it moved between host and device.
func decodeStep(ctx context.Context, g *decoding.Greedy, step int, want int64) (took float64, moved int64, err error) {
	token, did, d, err := g.Step(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("step %d: %w", step, err)
	}
	if token != want {
		return 0, 0, fmt.Errorf("token %d is %d, PyTorch's is %d: %w", step, token, want, errTokenDiffers)
	}
	return ms(d), did.HostDeviceBytes, nil
}

// scheduleResult is a workload's median milliseconds under one kernel
// schedule: the device's own or one forced in its place.
type scheduleResult struct {
	Workload string  `json:"workload"`
	Schedule string  `json:"schedule"`
	MedianMs float64 `json:"median_ms"`
	// VsDevice is MedianMs over the device schedule's median.
	VsDevice float64 `json:"vs_device_schedule"`
	// MaxAbsDiff is a model's largest difference from PyTorch's output.
	MaxAbsDiff float64 `json:"max_abs_diff,omitempty"`
	// KernelSteps counts the steps of the session's plan whose kernel the
	// workload's schedules choose (scheduleOps): with none, the schedules
	// time the same dispatches.
	KernelSteps int `json:"kernel_steps"`
}

// scheduleAlternatives are the schedules each workload of the schedules
// part is timed under besides the device's own: the kernels the device
// picks by default on a GPU and not on lavapipe and those they replace.
// A decode step's attention takes flash-decoding on a GPU, the row kernel
// or a single flash pass otherwise; a GPU runs mobilenet_v2's depthwise
// convolutions on dwconv.comp and its wide ones on convgemm.comp, which
// "gemm" keeps without dwconv.comp and "direct" replaces both.
var scheduleAlternatives = map[string][]vulkan.Schedule{
	"decoder step":     {{Attention: "rows"}, {Attention: "split"}},
	"mobilenet_v2 run": {{Conv: "direct"}, {Conv: "gemm"}},
}

// scheduleOps are, for each workload, the ops whose kernels its
// schedules choose.
var scheduleOps = map[string][]string{
	"decoder step":     {"Attention", "ScaledDotProductAttention"},
	"mobilenet_v2 run": {"Conv", "FusedConv"},
}

// kernelSteps counts the compute steps of sess's plan, its inputs of the
// given types (nil: the declared ones, symbolic sizes and all), whose op
// is one of workload's scheduleOps.
func kernelSteps(sess *onnxvk.Session, types map[string]*graph.Type, workload string) (int, error) {
	p, err := sessionvalues.Of(sess).Plan(types)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", workload, err)
	}
	n := 0
	for _, st := range p.Steps {
		if st.Kind == planner.Compute && slices.Contains(scheduleOps[workload], st.Node.OpType) {
			n++
		}
	}
	return n, nil
}

// schedules times a decode step of the decoder and a run of mobilenet_v2
// (whose depthwise convolutions have kernels of their own) under the
// device's schedule and under each of scheduleAlternatives, the sessions
// taking turns step by step; every schedule must give PyTorch's tokens
// and output.
func schedules(ctx context.Context, c *config) (any, error) {
	var res []scheduleResult
	dec, err := scheduleDecoder(ctx, c)
	res = append(res, dec...)
	if err != nil {
		return res, err
	}
	mv2, err := scheduleModel(ctx, c, "mobilenet_v2")
	return append(res, mv2...), err
}

// scheduleSessions loads model once per schedule: the device's own first,
// then workload's alternatives.
func scheduleSessions(c *config, model, workload string) ([]*onnxvk.Session, []string, error) {
	scheds := append([]vulkan.Schedule{{}}, scheduleAlternatives[workload]...)
	var sessions []*onnxvk.Session
	var names []string
	for _, s := range scheds {
		sess, err := onnxvk.Load(model, onnxvk.WithDevice(c.device), onnxvk.WithVulkanOptions(vulkan.WithSchedule(s)))
		if err != nil {
			closeAll(sessions)
			return nil, nil, fmt.Errorf("%s, schedule %s: %w", workload, s, err)
		}
		sessions, names = append(sessions, sess), append(names, s.String())
	}
	return sessions, names, nil
}

func closeAll(sessions []*onnxvk.Session) {
	for _, s := range sessions {
		s.Close()
	}
}

// scheduleTimes returns a result per schedule from each one's timings and
// kernel steps.
func scheduleTimes(workload string, names []string, times [][]float64, steps []int) []scheduleResult {
	var res []scheduleResult
	for i, name := range names {
		if len(times[i]) == 0 {
			continue
		}
		r := scheduleResult{Workload: workload, Schedule: name, MedianMs: quantile(times[i], 0.5), KernelSteps: steps[i]}
		if len(times[0]) > 0 {
			r.VsDevice = r.MedianMs / quantile(times[0], 0.5)
		}
		res = append(res, r)
	}
	return res
}

// scheduleDecoder decodes with the class plans under each schedule in
// turns, a step of each session after the other, timing the steps after
// the prompt's.
func scheduleDecoder(ctx context.Context, c *config) ([]scheduleResult, error) {
	const workload = "decoder step"
	prompt, want, err := decoderReference(c, "decoder")
	if err != nil {
		return nil, err
	}
	sessions, names, err := scheduleSessions(c, filepath.Join(c.models, "decoder", "model.onnx"), workload)
	if err != nil {
		return nil, err
	}
	defer closeAll(sessions)
	steps := make([]int, len(sessions))
	for i, s := range sessions {
		if steps[i], err = kernelSteps(s, nil, workload); err != nil {
			return nil, err
		}
	}
	var runs []*decoding.Greedy
	defer func() {
		for _, d := range runs {
			d.Release()
		}
	}()
	for _, s := range sessions {
		d, err := decoding.New(s, prompt, true)
		if err != nil {
			return nil, err
		}
		runs = append(runs, d)
	}
	times := make([][]float64, len(runs))
	for step := range decodeSteps(c, want) {
		for i, d := range runs {
			took, _, err := decodeStep(ctx, d, step, want[step])
			if err != nil {
				return scheduleTimes(workload, names, times, steps), fmt.Errorf("%s, schedule %s: %w", workload, names[i], err)
			}
			if step >= 2 {
				times[i] = append(times[i], took)
			}
		}
	}
	return scheduleTimes(workload, names, times, steps), nil
}

// scheduleModel runs an exported model under each schedule in turns, a
// run of each session after the other, after a warm-up run of each that
// is checked against PyTorch's output.
func scheduleModel(ctx context.Context, c *config, name string) ([]scheduleResult, error) {
	workload := name + " run"
	dir := filepath.Join(c.models, name)
	in, want, err := reference(dir)
	if err != nil {
		return nil, err
	}
	sessions, names, err := scheduleSessions(c, filepath.Join(dir, "model.onnx"), workload)
	if err != nil {
		return nil, err
	}
	defer closeAll(sessions)
	inName := sessions[0].Inputs()[0].Name
	feed := map[string]*onnxvk.Tensor{inName: onnxvk.TensorFrom(in)}
	diffs := make([]float64, len(sessions))
	steps := make([]int, len(sessions))
	for i, s := range sessions {
		if steps[i], err = kernelSteps(s, map[string]*graph.Type{inName: graph.TensorType(in.DType, graph.ShapeOf(in.Shape...))}, workload); err != nil {
			return nil, err
		}
		out, err := s.Run(ctx, feed)
		if err != nil {
			return nil, fmt.Errorf("%s, schedule %s: %w", workload, names[i], err)
		}
		got, err := out[s.Outputs()[0].Name].Float32s()
		if err != nil {
			return nil, err
		}
		if diffs[i] = maxAbsDiff(got, graph.View[float32](want)); !(diffs[i] <= modelTolerance) {
			return nil, fmt.Errorf("%s, schedule %s: max |diff| %.3g from PyTorch's output (tolerance %g)", workload, names[i], diffs[i], modelTolerance)
		}
	}
	runs := 30
	if c.quick {
		runs = 3
	}
	times := make([][]float64, len(sessions))
	for range runs {
		if ctx.Err() != nil {
			break
		}
		for i, s := range sessions {
			begin := time.Now()
			if _, err := s.Run(ctx, feed); err != nil {
				return nil, fmt.Errorf("%s, schedule %s: %w", workload, names[i], err)
			}
			times[i] = append(times[i], ms(time.Since(begin)))
		}
	}
	res := scheduleTimes(workload, names, times, steps)
	for i := range res {
		res[i].MaxAbsDiff = diffs[slices.Index(names, res[i].Schedule)]
	}
	return res, nil
}

type matmulResult struct {
	N int64 `json:"n"`
	// Rows is a's rows where they are not n: 1 in the GEMV rows of the
	// sweep (a decode step's products).
	Rows     int64   `json:"rows,omitempty"`
	Mode     string  `json:"mode"`
	Chain    int     `json:"chain"`
	MedianMs float64 `json:"median_ms"`
	TFLOPs   float64 `json:"tflops"`
	// WeightGBs is the bytes of the weight the chain reads per second, in
	// GB/s, for the GEMV rows, which memory bandwidth bounds.
	WeightGBs float64 `json:"weight_gb_s,omitempty"`
	// RelErr is ‖gpu − cpu‖ / ‖cpu‖ of one product chain, where the CPU
	// check ran (the smaller sizes).
	RelErr *float64 `json:"rel_err,omitempty"`
	// Placed says where a float16 model's MatMul is placed.
	Placed string `json:"placed,omitempty"`
}

// matmul times chains of products y = (((a·b)·b)·b)... with b a constant
// n×n weight, the output kept on the device and fed back as the next Run's
// a, so that nothing crosses the bus: square ones in each mode (see
// matmulOptions), then GEMVs, a of one row, on the gemv schedule in each
// of gemvModes. The smaller sizes are checked against the CPU. A float16
// model's placement is recorded.
func matmul(ctx context.Context, c *config) (any, error) {
	sizes, gemvSizes, chain, runs := []int64{512, 1024, 2048, 4096, 8192}, []int64{1024, 4096, 8192}, 8, 5
	if c.quick {
		sizes, gemvSizes, chain, runs = []int64{64, 256}, []int64{256}, 2, 2
	}
	units := hasMatrixUnits(c.device)
	modes := slices.Clone(squareModes)
	if units {
		modes = append(modes, unitModes...)
	}
	modes = c.chosen(modes)
	var res []matmulResult
	var problems []string
	sweep := func(what string, m, n int64, mode string, opts []onnxvk.Option) {
		if ctx.Err() != nil {
			problems = append(problems, what+": not run, out of time")
			return
		}
		r, err := matmulRun(ctx, m, n, chain, runs, mode, opts)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", what, err))
			return
		}
		res = append(res, *r)
		if r.RelErr != nil && !(*r.RelErr <= matmulTolerance(mode)) {
			problems = append(problems, fmt.Sprintf("%s: relative error %.3g", what, *r.RelErr))
		}
	}
	for _, n := range sizes {
		for _, mode := range modes {
			sweep(fmt.Sprintf("%d %s", n, mode), n, n, mode, matmulOptions(c.device, mode, units))
		}
	}
	for _, n := range gemvSizes {
		for _, mode := range c.chosen(gemvModes) {
			sweep(fmt.Sprintf("gemv %d %s", n, mode), 1, n, mode, gemvOptions(c.device, mode))
		}
	}
	placed, err := float16Placement(c.device)
	if err != nil {
		problems = append(problems, "float16 model: "+err.Error())
	} else {
		res = append(res, matmulResult{N: 4096, Mode: "float16 model", Placed: placed})
	}
	if len(problems) > 0 {
		return res, errors.New(strings.Join(problems, "; "))
	}
	return res, nil
}

// The modes of the MatMul sweep: "fp32"; "fp16-weights", fp32 with the
// weights stored as fp16 (WithFP16Weights); "float16", a float16 model
// (a, b and y float16, fp32 sums), on the matrix units where the device
// has them (units; a GPU's default, forced so that a CPU implementation
// with them runs them too); and there also "float16-2x2", the units with
// each subgroup's 2×2 fragments forced (the default takes 4×4 for large
// products), and "float16-tiled", the same model with the matrix units
// off (the tiled schedule forced).
func matmulOptions(device, mode string, units bool) []onnxvk.Option {
	opts := []onnxvk.Option{onnxvk.WithDevice(device)}
	switch {
	case mode == "fp16-weights":
		opts = append(opts, onnxvk.WithFP16Weights())
	case mode == "float16" && units:
		opts = append(opts, onnxvk.WithVulkanOptions(vulkan.WithSchedule(vulkan.Schedule{MatMul: "tiled", MatrixUnits: "on"})))
	case mode == "float16-2x2":
		opts = append(opts, onnxvk.WithVulkanOptions(vulkan.WithSchedule(vulkan.Schedule{MatMul: "tiled", MatrixUnits: "on", MatrixFragments: 2})))
	case mode == "float16-tiled":
		opts = append(opts, onnxvk.WithVulkanOptions(vulkan.WithSchedule(vulkan.Schedule{MatMul: "tiled", MatrixUnits: "off"})))
	}
	return opts
}

// squareModes are the modes of the sweep's square products on every
// device, unitModes those added where the device has matrix units (see
// matmulOptions).
var (
	squareModes = []string{"fp32", "fp16-weights", "float16"}
	unitModes   = []string{"float16-2x2", "float16-tiled"}
)

// allMatmulModes lists every mode of the MatMul sweep, once.
func allMatmulModes() []string {
	var all []string
	for _, m := range slices.Concat(squareModes, unitModes, gemvModes) {
		if !slices.Contains(all, m) {
			all = append(all, m)
		}
	}
	return all
}

// chosen returns the modes of modes that --matmul-modes selects.
func (c *config) chosen(modes []string) []string {
	if c.matmulModes == nil {
		return modes
	}
	var out []string
	for _, m := range modes {
		if c.matmulModes[m] {
			out = append(out, m)
		}
	}
	return out
}

// gemvModes are the modes of the sweep's GEMVs, all on the gemv schedule
// (a GPU's choice for up to 4 rows, forced so that lavapipe runs it too):
// "fp32", its slices' sums added by subgroup shuffles where the device
// has them; "fp32-tree", by the shared-memory tree alone; "fp16-weights"
// and "float16" as in matmulOptions.
var gemvModes = []string{"fp32", "fp32-tree", "fp16-weights", "float16"}

// gemvOptions returns the session options of the GEMV mode: those of
// matmulOptions for the mode ("fp32" for "fp32-tree"), the matrix units
// aside, with the gemv schedule forced.
func gemvOptions(device, mode string) []onnxvk.Option {
	s := vulkan.Schedule{MatMul: "gemv"}
	if mode == "fp32-tree" {
		mode, s.Rows = "fp32", "tree"
	}
	return append(matmulOptions(device, mode, false), onnxvk.WithVulkanOptions(vulkan.WithSchedule(s)))
}

// weightBytes is the bytes of a weight element in mode.
func weightBytes(mode string) int64 {
	if mode == "fp16-weights" || modeElem(mode) == graph.Float16 {
		return 2
	}
	return 4
}

// hasMatrixUnits reports whether the device that device names ("vulkan",
// "auto" or "vulkan:N") runs float16 products on matrix units.
func hasMatrixUnits(device string) bool {
	devices, _ := onnxvk.Devices()
	for _, d := range devices {
		if d.Name == device || device == "vulkan" && d.Default || device == "auto" && d.Auto {
			return len(d.MatrixUnit) > 0
		}
	}
	return false
}

// matmulTolerance bounds the relative error of a product chain: fp32
// rounding, fp16 weights (2^-11 relative per weight), or float16 values
// and weights rounded at every product.
func matmulTolerance(mode string) float64 {
	switch mode {
	case "fp16-weights":
		return 5e-3
	case "float16", "float16-2x2", "float16-tiled":
		return 1e-2
	}
	return 1e-4
}

// chainModel builds the product chain of length chain of m×n matrices by
// an n×n weight, of element type elem (float32 or float16).
func chainModel(m, n int64, chain int, elem graph.DType) *graph.Model {
	g := graph.NewGraph("matmul")
	g.Inputs = []*graph.ValueInfo{{Name: "a", Type: graph.TensorType(elem, graph.ShapeOf(m, n))}}
	g.Outputs = []*graph.ValueInfo{{Name: "y", Type: graph.TensorType(elem, graph.ShapeOf(m, n))}}
	rng := rand.New(rand.NewPCG(uint64(n), 3))
	scale := 1 / math.Sqrt(float64(n))
	g.Initializers["b"] = matrixOf(elem, n, n, func() float64 { return rng.NormFloat64() * scale })
	prev := "a"
	for i := range chain {
		out := fmt.Sprintf("t%d", i)
		if i == chain-1 {
			out = "y"
		}
		g.Nodes = append(g.Nodes, &graph.Node{Index: i, Name: "mm" + out, OpType: "MatMul", Inputs: []string{prev, "b"}, Outputs: []string{out}})
		prev = out
	}
	return &graph.Model{Name: fmt.Sprintf("matmul%dx%d", m, n), IRVersion: 8, Opsets: map[string]int64{"": 14}, Graph: g}
}

// matrixOf returns an m×n tensor of elem (float32 or float16) holding
// values drawn from next.
func matrixOf(elem graph.DType, m, n int64, next func() float64) *graph.Tensor {
	vals := make([]float32, m*n)
	for i := range vals {
		vals[i] = float32(next())
	}
	if elem == graph.Float16 {
		halves := make([]float16.Float16, len(vals))
		for i, v := range vals {
			halves[i] = float16.Fromfloat32(v)
		}
		t, _ := graph.FromSlice(elem, []int64{m, n}, halves)
		return t
	}
	t, _ := graph.FromSlice(elem, []int64{m, n}, vals)
	return t
}

// modeElem is the element type of the sweep's tensors in mode.
func modeElem(mode string) graph.DType {
	if strings.HasPrefix(mode, "float16") {
		return graph.Float16
	}
	return graph.Float
}

// matmulRun times the product chain of m×n by n×n in mode, the session
// opened with opts; for m other than n it gives the rows and the rate at
// which the weight is read.
func matmulRun(ctx context.Context, m, n int64, chain, runs int, mode string, opts []onnxvk.Option) (*matmulResult, error) {
	elem := modeElem(mode)
	sess, err := onnxvk.NewSession(chainModel(m, n, chain, elem), opts...)
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	rng := rand.New(rand.NewPCG(uint64(n), 5))
	a, err := onnxvk.NewTensorBytes(elem, []int64{m, n}, matrixOf(elem, m, n, func() float64 { return rng.Float64()*2 - 1 }).Data)
	if err != nil {
		return nil, err
	}
	r := &matmulResult{N: n, Mode: mode, Chain: chain}
	if n <= 1024 {
		out, err := sess.Run(ctx, map[string]*onnxvk.Tensor{"a": a})
		if err != nil {
			return nil, err
		}
		e, err := chainError(ctx, m, n, chain, elem, a, out["y"])
		if err != nil {
			return nil, err
		}
		r.RelErr = &e
	}
	keep := onnxvk.RunOptions{KeepOnDevice: []string{"y"}}
	cur := a
	var times []float64
	for i := range runs + 2 {
		begin := time.Now()
		out, err := sess.RunWith(ctx, map[string]*onnxvk.Tensor{"a": cur}, keep)
		if err != nil {
			return nil, err
		}
		if i >= 2 {
			times = append(times, ms(time.Since(begin)))
		}
		if cur != a {
			cur.Release()
		}
		cur = out["y"]
	}
	if cur != a {
		cur.Release()
	}
	r.MedianMs = quantile(times, 0.5)
	r.TFLOPs = float64(chain) * 2 * float64(m*n*n) / (r.MedianMs / 1e3) / 1e12
	if m != n {
		r.Rows = m
		r.WeightGBs = float64(chain) * float64(n*n*weightBytes(mode)) / (r.MedianMs / 1e3) / 1e9
	}
	return r, nil
}

// chainError returns ‖got − cpu‖ / ‖cpu‖ for the CPU's run of the chain
// of elem products on a.
func chainError(ctx context.Context, m, n int64, chain int, elem graph.DType, a, got *onnxvk.Tensor) (float64, error) {
	cpu, err := onnxvk.NewSession(chainModel(m, n, chain, elem), onnxvk.WithDevice("cpu"))
	if err != nil {
		return 0, err
	}
	defer cpu.Close()
	out, err := cpu.Run(ctx, map[string]*onnxvk.Tensor{"a": a})
	if err != nil {
		return 0, err
	}
	want, err := out["y"].Float32s()
	if err != nil {
		return 0, err
	}
	have, err := got.Float32s()
	if err != nil {
		return 0, err
	}
	var num, den float64
	for i := range want {
		d := float64(have[i]) - float64(want[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	return math.Sqrt(num / den), nil
}

// float16Placement says where a float16 MatMul [4096,4096] is placed.
func float16Placement(device string) (string, error) {
	g := graph.NewGraph("matmul16")
	typ := graph.TensorType(graph.Float16, graph.ShapeOf(4096, 4096))
	g.Inputs = []*graph.ValueInfo{{Name: "a", Type: typ}, {Name: "b", Type: typ}}
	g.Outputs = []*graph.ValueInfo{{Name: "y", Type: typ}}
	g.Nodes = []*graph.Node{{Index: 0, Name: "mm", OpType: "MatMul", Inputs: []string{"a", "b"}, Outputs: []string{"y"}}}
	sess, err := onnxvk.NewSession(&graph.Model{Name: "matmul16", IRVersion: 8, Opsets: map[string]int64{"": 14}, Graph: g}, onnxvk.WithDevice(device))
	if err != nil {
		return "", err
	}
	defer sess.Close()
	p, err := sessionvalues.Of(sess).Plan(map[string]*graph.Type{"a": typ, "b": typ})
	if err != nil {
		return "", err
	}
	if _, onCPU := placement(sess, p); len(onCPU) > 0 {
		return "cpu", nil
	}
	return sess.Device(), nil
}
