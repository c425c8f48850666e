// Package bench holds onnxvk's timing, reporting and conformance runners.
package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/sessionvalues"
	"github.com/onnxvk/onnxvk/loader"
	"github.com/onnxvk/onnxvk/planner"
)

// The ONNX backend test runner's default tolerances; a test folder's
// data.json may set others ("rtol", "atol").
const (
	DefaultRTol = 1e-3
	DefaultATol = 1e-7
)

// Status is the outcome of one conformance test.
type Status int

// The outcomes of a conformance test. Skip means the test cannot apply
// (its folder has no model or no data sets); errors and mismatches are
// failures.
const (
	Pass Status = iota
	Fail
	Skip
)

// String returns "PASS", "FAIL" or "SKIP".
func (s Status) String() string {
	switch s {
	case Pass:
		return "PASS"
	case Fail:
		return "FAIL"
	case Skip:
		return "SKIP"
	}
	return "Status(" + strconv.Itoa(int(s)) + ")"
}

// MarshalText writes the status as String does, for JSON reports.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// ConformanceResult is the outcome of one test folder.
type ConformanceResult struct {
	// Name is "suite/test", the test folder's name qualified by its parent
	// folder's (e.g. "node/test_abs").
	Name   string `json:"name"`
	Dir    string `json:"dir"`
	Status Status `json:"status"`
	// Reason says why a test failed or was skipped; empty for a pass.
	Reason   string        `json:"reason,omitempty"`
	Duration time.Duration `json:"duration_ns"`
	// Device is the session's first device ("cpu", "vulkan:0", ...); set
	// when the model loaded.
	Device string `json:"device,omitempty"`
	// Fallback lists, for a pass, the ops of the compute steps placed on
	// another device than Device (the CPU, where a Vulkan kernel is
	// missing), once each in plan order; empty when every node ran on
	// Device.
	Fallback []string `json:"fallback,omitempty"`
}

// ConformanceOptions configures RunConformance.
type ConformanceOptions struct {
	// Device is the onnxvk device option ("cpu", "vulkan", ...); empty
	// means "auto".
	Device string
	// Filter, when set, keeps the tests whose Name it matches.
	Filter *regexp.Regexp
	// Workers is the number of tests run at once; 0 means GOMAXPROCS.
	Workers int
	// Timeout bounds each test; 0 means no limit. A kernel that is
	// running is not interrupted: the test fails once it returns.
	Timeout time.Duration
	// Progress, when set, is called after each test with the number of
	// tests done, the total and the result. Calls are serialized.
	Progress func(done, total int, r ConformanceResult)
	// Session holds further options of every test's session (a forced
	// Vulkan schedule, ...).
	Session []onnxvk.Option
}

// ConformanceSummary counts results by status.
type ConformanceSummary struct {
	Passed, Failed, Skipped int
	// Whole counts the passes that ran every node on their session's
	// device (no Fallback).
	Whole int
}

// String writes the summary as "N passed, N failed, N skipped".
func (s ConformanceSummary) String() string {
	return fmt.Sprintf("%d passed, %d failed, %d skipped", s.Passed, s.Failed, s.Skipped)
}

// Summarize counts rs by status.
func Summarize(rs []ConformanceResult) ConformanceSummary {
	var s ConformanceSummary
	for _, r := range rs {
		switch r.Status {
		case Pass:
			s.Passed++
			if len(r.Fallback) == 0 {
				s.Whole++
			}
		case Fail:
			s.Failed++
		case Skip:
			s.Skipped++
		}
	}
	return s
}

// isTestDir reports whether dir is one backend test: it holds model.onnx or
// test_data_set_* folders.
func isTestDir(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, "model.onnx")); err == nil {
		return true
	}
	sets, _ := filepath.Glob(filepath.Join(dir, "test_data_set_*"))
	return len(sets) > 0
}

// FindConformanceTests returns the test folders under dirs, in order: a dir
// that is a test folder itself, or the test_* folders of a suite folder,
// sorted by name.
func FindConformanceTests(dirs ...string) ([]string, error) {
	var out []string
	for _, dir := range dirs {
		fi, err := os.Stat(dir)
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("bench: %s is not a folder", dir)
		}
		if isTestDir(dir) {
			out = append(out, filepath.Clean(dir))
			continue
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		n := len(out)
		for _, e := range entries {
			if e.IsDir() && strings.HasPrefix(e.Name(), "test_") {
				out = append(out, filepath.Join(dir, e.Name()))
			}
		}
		if len(out) == n {
			return nil, fmt.Errorf("bench: %s holds no ONNX backend tests (no model.onnx, no test_* folders)", dir)
		}
	}
	return out, nil
}

// ConformanceTestName returns the name a result carries for test folder dir:
// "suite/test".
func ConformanceTestName(dir string) string {
	dir = filepath.Clean(dir)
	return filepath.Base(filepath.Dir(dir)) + "/" + filepath.Base(dir)
}

// RunConformance runs every test folder under dirs (see
// FindConformanceTests) that opts.Filter keeps, opts.Workers at a time, and
// returns the results in the order of the folders. Each test loads its
// model into its own session through onnxvk.Load and runs it on graph
// values (internal/sessionvalues: the Session's Run, whose inputs and
// outputs may be sequences, optionals or maps).
func RunConformance(ctx context.Context, dirs []string, opts ConformanceOptions) ([]ConformanceResult, error) {
	all, err := FindConformanceTests(dirs...)
	if err != nil {
		return nil, err
	}
	var tests []string
	for _, d := range all {
		if opts.Filter == nil || opts.Filter.MatchString(ConformanceTestName(d)) {
			tests = append(tests, d)
		}
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	results := make([]ConformanceResult, len(tests))
	next := make(chan int)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		done int
	)
	for range min(workers, len(tests)) {
		wg.Go(func() {
			for i := range next {
				results[i] = RunConformanceTest(ctx, tests[i], opts.Device, opts.Timeout, opts.Session...)
				if opts.Progress != nil {
					mu.Lock()
					done++
					opts.Progress(done, len(tests), results[i])
					mu.Unlock()
				}
			}
		})
	}
	for i := range tests {
		next <- i
	}
	close(next)
	wg.Wait()
	return results, nil
}

// RunConformanceTest runs one test folder on device (empty: "auto"), the
// session opened with opts besides: it loads model.onnx, runs each
// test_data_set_N and compares the outputs with the expected ones. A panic
// in the runtime is reported as a failure.
func RunConformanceTest(ctx context.Context, dir, device string, timeout time.Duration, opts ...onnxvk.Option) (r ConformanceResult) {
	r = ConformanceResult{Name: ConformanceTestName(dir), Dir: dir}
	start := time.Now()
	defer func() {
		if p := recover(); p != nil {
			r.Status, r.Reason = Fail, fmt.Sprintf("panic: %v (in %s)", p, panicSite())
		}
		r.Duration = time.Since(start)
	}()
	modelPath := filepath.Join(dir, "model.onnx")
	if _, err := os.Stat(modelPath); err != nil {
		r.Status, r.Reason = Skip, "no model.onnx"
		return r
	}
	if sets, _ := dataSets(dir); len(sets) == 0 {
		r.Status, r.Reason = Skip, "no test_data_set_* folders"
		return r
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	if err := runTest(ctx, &r, modelPath, device, opts); err != nil {
		r.Status, r.Reason = Fail, err.Error()
		return r
	}
	r.Status = Pass
	return r
}

// panicSite names the function and line that panicked, for a deferred
// function that recovered: the first frame outside the runtime.
func panicSite() string {
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	for {
		f, more := frames.Next()
		if !strings.HasPrefix(f.Function, "runtime.") {
			return fmt.Sprintf("%s at %s:%d", f.Function, filepath.Base(f.File), f.Line)
		}
		if !more {
			return "unknown"
		}
	}
}

// tolerances reads rtol and atol from dir/data.json, or the defaults.
func tolerances(dir string) (rtol, atol float64, err error) {
	rtol, atol = DefaultRTol, DefaultATol
	raw, err := os.ReadFile(filepath.Join(dir, "data.json"))
	if errors.Is(err, os.ErrNotExist) {
		return rtol, atol, nil
	}
	if err != nil {
		return 0, 0, err
	}
	var cfg struct {
		RTol *float64 `json:"rtol"`
		ATol *float64 `json:"atol"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return 0, 0, fmt.Errorf("data.json: %w", err)
	}
	if cfg.RTol != nil {
		rtol = *cfg.RTol
	}
	if cfg.ATol != nil {
		atol = *cfg.ATol
	}
	return rtol, atol, nil
}

// dataSets returns the test_data_set_N folders of dir in numeric order.
func dataSets(dir string) ([]string, error) {
	sets, err := filepath.Glob(filepath.Join(dir, "test_data_set_*"))
	if err != nil {
		return nil, err
	}
	num := func(p string) int {
		n, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(p), "test_data_set_"))
		return n
	}
	slices.SortFunc(sets, func(a, b string) int { return num(a) - num(b) })
	return sets, nil
}

// numbered returns dir/prefix_0.pb, dir/prefix_1.pb, ... up to the first
// missing number.
func numbered(dir, prefix string) []string {
	var out []string
	for k := 0; ; k++ {
		p := filepath.Join(dir, fmt.Sprintf("%s_%d.pb", prefix, k))
		if _, err := os.Stat(p); err != nil {
			return out
		}
		out = append(out, p)
	}
}

// runTest runs the test folder r.Dir through the model at modelPath on
// device, the session opened with extra besides, and records in r the
// session's device and the ops placed elsewhere.
func runTest(ctx context.Context, r *ConformanceResult, modelPath, device string, extra []onnxvk.Option) error {
	rtol, atol, err := tolerances(r.Dir)
	if err != nil {
		return err
	}
	sets, err := dataSets(r.Dir)
	if err != nil {
		return err
	}
	opts := slices.Clone(extra)
	if device != "" {
		opts = append(opts, onnxvk.WithDevice(device))
	}
	sess, err := onnxvk.Load(modelPath, opts...)
	if err != nil {
		return err
	}
	defer sess.Close()
	r.Device = sess.Device()
	var types map[string]*graph.Type
	for _, set := range sets {
		fed, err := runDataSet(ctx, sess, set, rtol, atol)
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Base(set), err)
		}
		if types == nil {
			types = fed
		}
	}
	if r.Device == planner.HostDevice {
		return nil
	}
	p, err := sessionvalues.Of(sess).Plan(types)
	if err != nil {
		return err
	}
	for _, st := range p.Steps {
		if st.Kind == planner.Compute && st.Device != r.Device && !slices.Contains(r.Fallback, st.Node.OpType) {
			r.Fallback = append(r.Fallback, st.Node.OpType)
		}
	}
	return nil
}

// feedInputs picks the model inputs the input files bind to, in order:
// the inputs without a default in the model when the counts agree (older
// models list their initializers as inputs), else all of them.
func feedInputs(sess *onnxvk.Session, n int) ([]onnxvk.ValueInfo, error) {
	all := sess.Inputs()
	var required []onnxvk.ValueInfo
	for _, in := range all {
		if !in.Optional {
			required = append(required, in)
		}
	}
	switch {
	case n == len(required):
		return required, nil
	case n <= len(all):
		return all[:n], nil
	}
	return nil, fmt.Errorf("%d input files for a model with %d inputs", n, len(all))
}

// runDataSet runs one test_data_set_N folder and compares the outputs, of
// which each must have its reference file (as the ONNX runner requires: an
// output without one would go unchecked); it returns the types of the
// inputs it fed.
func runDataSet(ctx context.Context, sess *onnxvk.Session, set string, rtol, atol float64) (map[string]*graph.Type, error) {
	inFiles, outFiles := numbered(set, "input"), numbered(set, "output")
	vs := sessionvalues.Of(sess)
	ins, err := feedInputs(sess, len(inFiles))
	if err != nil {
		return nil, err
	}
	feeds := make(map[string]graph.Value, len(ins))
	types := make(map[string]*graph.Type, len(ins))
	for k, f := range inFiles {
		v, err := loader.ReadValueFile(f, vs.Type(ins[k].Name))
		if err != nil {
			return nil, fmt.Errorf("input %q: %w", ins[k].Name, err)
		}
		feeds[ins[k].Name] = asDeclared(v, vs.Type(ins[k].Name))
		types[ins[k].Name] = feeds[ins[k].Name].ValueType()
	}
	outs := sess.Outputs()
	if len(outFiles) != len(outs) {
		return nil, fmt.Errorf("%d output files for a model with %d outputs", len(outFiles), len(outs))
	}
	got, err := vs.RunValues(ctx, feeds)
	if err != nil {
		return nil, err
	}
	for k, f := range outFiles {
		want, err := loader.ReadValueFile(f, vs.Type(outs[k].Name))
		if err != nil {
			return nil, fmt.Errorf("output %q: %w", outs[k].Name, err)
		}
		if err := CompareValues(got[outs[k].Name], asDeclared(want, vs.Type(outs[k].Name)), rtol, atol); err != nil {
			return nil, fmt.Errorf("output %q: %w", outs[k].Name, err)
		}
	}
	return types, nil
}

// asDeclared reinterprets a uint16 tensor as bfloat16 where the model
// declares bfloat16: ONNX test data written through numpy, which has no
// bfloat16, stores bfloat16 values as their uint16 bit patterns.
func asDeclared(v graph.Value, decl *graph.Type) graph.Value {
	t, ok := v.(*graph.Tensor)
	if !ok || decl == nil || decl.Kind != graph.TensorKind || decl.Elem != graph.BFloat16 || t.DType != graph.Uint16 {
		return v
	}
	return &graph.Tensor{DType: graph.BFloat16, Shape: t.Shape, Data: t.Data}
}

// CompareValues checks got against want with the ONNX backend runner's
// rule: kinds, element types and shapes must match; floating-point
// elements must satisfy |got-want| <= atol + rtol*|want|, with NaN equal to
// NaN and infinities equal only to themselves; integers, bools and strings
// must be equal. Sequences, optionals and maps compare element by element.
func CompareValues(got, want graph.Value, rtol, atol float64) error {
	if got == nil {
		return errors.New("no value produced")
	}
	switch w := want.(type) {
	case *graph.Tensor:
		g, ok := got.(*graph.Tensor)
		if !ok {
			return fmt.Errorf("got a %s, want a tensor %s", got.ValueType(), w.ValueType())
		}
		return compareTensors(g, w, rtol, atol)
	case *graph.Sequence:
		g, ok := got.(*graph.Sequence)
		if !ok {
			return fmt.Errorf("got a %s, want a sequence", got.ValueType())
		}
		if len(g.Items) != len(w.Items) {
			return fmt.Errorf("sequence of %d values, want %d", len(g.Items), len(w.Items))
		}
		for i := range w.Items {
			if err := CompareValues(g.Items[i], w.Items[i], rtol, atol); err != nil {
				return fmt.Errorf("sequence element %d: %w", i, err)
			}
		}
		return nil
	case *graph.Optional:
		g, ok := got.(*graph.Optional)
		if !ok {
			return fmt.Errorf("got a %s, want an optional", got.ValueType())
		}
		switch {
		case w.V == nil && g.V == nil:
			return nil
		case w.V == nil:
			return errors.New("optional holds a value, want none")
		case g.V == nil:
			return errors.New("optional holds no value, want one")
		}
		return CompareValues(g.V, w.V, rtol, atol)
	case *graph.Map:
		g, ok := got.(*graph.Map)
		if !ok {
			return fmt.Errorf("got a %s, want a map", got.ValueType())
		}
		if err := compareTensors(g.Keys, w.Keys, 0, 0); err != nil {
			return fmt.Errorf("map keys: %w", err)
		}
		if err := CompareValues(g.Values, w.Values, rtol, atol); err != nil {
			return fmt.Errorf("map values: %w", err)
		}
		return nil
	}
	return fmt.Errorf("cannot compare with a %T", want)
}

func compareTensors(g, w *graph.Tensor, rtol, atol float64) error {
	if g.DType != w.DType {
		return fmt.Errorf("element type %s, want %s", g.DType, w.DType)
	}
	if !slices.Equal(g.Shape, w.Shape) {
		return fmt.Errorf("shape %v, want %v", g.Shape, w.Shape)
	}
	n := w.NumElements()
	if w.DType == graph.String {
		if len(g.Strings) != len(w.Strings) {
			return fmt.Errorf("%d strings, want %d", len(g.Strings), len(w.Strings))
		}
		for i := range w.Strings {
			if g.Strings[i] != w.Strings[i] {
				return fmt.Errorf("element %d: %q, want %q", i, g.Strings[i], w.Strings[i])
			}
		}
		return nil
	}
	size := w.DType.ByteSize(n)
	if int64(len(g.Data)) < size || int64(len(w.Data)) < size {
		return fmt.Errorf("data of %d bytes, want %d", len(g.Data), size)
	}
	if !w.DType.IsFloat() && w.DType != graph.Complex64 && w.DType != graph.Complex128 {
		if slices.Equal(g.Data[:size], w.Data[:size]) {
			return nil
		}
		bad, first := 0, -1
		for i := range n {
			if g.Float64At(i) != w.Float64At(i) {
				if first < 0 {
					first = int(i)
				}
				bad++
			}
		}
		if first < 0 {
			return errors.New("data differs (packed elements)")
		}
		return fmt.Errorf("%d of %d elements differ; first at %d: got %v, want %v", bad, n, first, g.Float64At(int64(first)), w.Float64At(int64(first)))
	}
	gv, wv := numbers(g, n), numbers(w, n)
	bad, first := 0, -1
	for i := range wv {
		if !near(gv[i], wv[i], rtol, atol) {
			if first < 0 {
				first = i
			}
			bad++
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d values differ (rtol %g, atol %g); first at %d: got %g, want %g", bad, len(wv), rtol, atol, first, gv[first], wv[first])
	}
	return nil
}

// numbers returns t's n elements as float64s (complex values as real and
// imaginary parts in turn); t holds at least n elements.
func numbers(t *graph.Tensor, n int64) []float64 {
	switch t.DType {
	case graph.Complex64:
		out := make([]float64, 0, 2*n)
		for _, c := range graph.View[complex64](t)[:n] {
			out = append(out, float64(real(c)), float64(imag(c)))
		}
		return out
	case graph.Complex128:
		out := make([]float64, 0, 2*n)
		for _, c := range graph.View[complex128](t)[:n] {
			out = append(out, real(c), imag(c))
		}
		return out
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = t.Float64At(int64(i))
	}
	return out
}

// near applies the floating-point comparison rule to one value.
func near(got, want, rtol, atol float64) bool {
	switch {
	case math.IsNaN(want) || math.IsNaN(got):
		return math.IsNaN(want) && math.IsNaN(got)
	case math.IsInf(want, 0) || math.IsInf(got, 0):
		return got == want
	}
	return math.Abs(got-want) <= atol+rtol*math.Abs(want)
}
