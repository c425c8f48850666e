package main

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/example"
	"github.com/onnxvk/onnxvk/internal/example/reference"
	"github.com/onnxvk/onnxvk/internal/npy"
)

func cli(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = realMain(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func exampleFile(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "edges.onnx")
	require.NoError(t, os.WriteFile(path, example.Model(), 0o644))
	return path
}

// requireExampleEdges requires the example's output on its built-in
// input, read back as at(y, x), to be within tol of reference.Edges.
func requireExampleEdges(t *testing.T, at func(y, x int) float64, tol float64) {
	t.Helper()
	var worst float64
	for y, row := range reference.Edges(example.Input()) {
		for x, want := range row {
			worst = max(worst, math.Abs(at(y, x)-want))
		}
	}
	require.LessOrEqual(t, worst, tol, "largest difference from the plain Go reference")
}

// TestRunExample runs the built-in example and compares the picture it
// writes with the example's picture and the result, a grayscale PNG, with
// the reference rounded to 8 bits.
func TestRunExample(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := cli(t, "run", "-o", dir)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "ran the example on cpu")
	read := func(name string) image.Image {
		f, err := os.Open(filepath.Join(dir, name))
		require.NoError(t, err)
		defer f.Close()
		img, err := png.Decode(f)
		require.NoError(t, err)
		return img
	}
	picture, want := read("picture.png"), example.Picture()
	require.Equal(t, want.Bounds(), picture.Bounds())
	for y := range want.Bounds().Dy() {
		for x := range want.Bounds().Dx() {
			require.Equal(t, color.RGBAModel.Convert(want.At(x, y)), color.RGBAModel.Convert(picture.At(x, y)), "picture.png at (%d, %d)", x, y)
		}
	}
	edges := read("edges.png")
	require.Equal(t, image.Rect(0, 0, 192, 128), edges.Bounds())
	requireExampleEdges(t, func(y, x int) float64 {
		return float64(color.GrayModel.Convert(edges.At(x, y)).(color.Gray).Y) / 255
	}, 0.5/255+1e-5)
}

func TestRunModelWithInputsAndOutputs(t *testing.T) {
	model := exampleFile(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "in.npy")
	require.NoError(t, npy.WriteFile(in, example.Input()))
	code, out, errOut := cli(t, "run", model, "--device", "cpu", "-i", "image="+in, "-o", dir)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "output edges: float32[1 1 128 192]")
	got, err := npy.ReadFile(filepath.Join(dir, "edges.npy"))
	require.NoError(t, err)
	require.Equal(t, []int64{1, 1, 128, 192}, got.Shape)
	edges := graph.View[float32](got)
	requireExampleEdges(t, func(y, x int) float64 { return float64(edges[y*192+x]) }, 1e-5)

	// Random input with a symbolic size bound on the command line.
	code, out, errOut = cli(t, "run", "--dim", "H=16", "--dim", "W=24", model, "--seed", "3")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "random float32[1 3 16 24] (seed 3)")
	require.Contains(t, out, "float32[1 1 16 24]")

	code, out, errOut = cli(t, "run", model, "--device", "cpu", "--verify")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "verify: no node runs on another device than the CPU")

	trace := filepath.Join(dir, "trace.json")
	code, out, errOut = cli(t, "run", model, "--device", "cpu", "--profile", trace)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "profile of a second run written to "+trace)
	raw, err := os.ReadFile(trace)
	require.NoError(t, err)
	var doc struct {
		TraceEvents []struct {
			Name, Ph string
			Dur      float64
			Args     map[string]any
		}
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	steps := 0
	for _, ev := range doc.TraceEvents {
		if ev.Ph == "X" {
			steps++
			require.Equal(t, "cpu", ev.Args["device"], ev.Name)
			require.Positive(t, ev.Dur, ev.Name)
		}
	}
	require.Positive(t, steps, "no step in the trace")
}

func TestPlanJSON(t *testing.T) {
	code, out, errOut := cli(t, "plan", exampleFile(t), "--json", "--dim", "H=64", "--dim", "W=64")
	require.Equal(t, 0, code, errOut)
	var r struct {
		Steps []map[string]any `json:"steps"`
		Peak  *int64           `json:"peak_bytes"`
		Total *int64           `json:"unshared_bytes"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.NotEmpty(t, r.Steps)
	require.NotNil(t, r.Peak)
	require.NotNil(t, r.Total)
	require.LessOrEqual(t, *r.Peak, *r.Total)
	for _, s := range r.Steps {
		require.Contains(t, s, "node")
		require.Contains(t, s, "op")
		require.Equal(t, "cpu", s["device"])
		require.Contains(t, s, "outputs")
	}
	code, out, _ = cli(t, "plan", exampleFile(t))
	require.Equal(t, 0, code)
	require.Contains(t, out, "peak arena bytes")
}

func TestInspect(t *testing.T) {
	code, out, errOut := cli(t, "inspect", exampleFile(t))
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "image: float32[1 3 H W]")
	require.Contains(t, out, "Conv")
	code, out, _ = cli(t, "inspect", "--json", exampleFile(t))
	require.Equal(t, 0, code)
	var r map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Contains(t, r, "ops")
	require.Contains(t, r, "parameters")
}

func TestBenchJSON(t *testing.T) {
	code, out, errOut := cli(t, "bench", exampleFile(t), "--runs", "3", "--warmup", "1", "--json", "--dim", "H=32", "--dim", "W=32")
	require.Equal(t, 0, code, errOut)
	var r map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	for _, k := range []string{"load_ms", "first_run_ms", "median_ms", "p90_ms", "p95_ms", "p99_ms", "stddev_ms", "throughput_per_s",
		"runs", "device", "peak_rss_bytes", "rss_anon_bytes", "version", "inputs", "concurrency"} {
		require.Contains(t, r, k)
	}
	require.Equal(t, 3.0, r["runs"])
	require.Equal(t, "cpu", r["device"])
	require.Equal(t, onnxvk.Build().String(), r["version"])
	require.Equal(t, map[string]any{"image": []any{1.0, 3.0, 32.0, 32.0}}, r["inputs"])
	require.Greater(t, r["throughput_per_s"], 0.0)
	// Not a terminal: one line per phase on stderr.
	require.Contains(t, errOut, "onnxvk bench: first run\n")
	require.Contains(t, errOut, "onnxvk bench: timing 3 runs from 1 goroutines\n")

	code, out, errOut = cli(t, "bench", exampleFile(t), "--runs", "2", "--warmup", "0", "--concurrency", "3", "--json", "--dim", "H=16", "--dim", "W=16")
	require.Equal(t, 0, code, errOut)
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Equal(t, 6.0, r["runs"])
	require.Equal(t, 3.0, r["concurrency"])

	code, out, errOut = cli(t, "bench", exampleFile(t), "--duration", "30ms", "--warmup", "0", "--json", "--dim", "H=16", "--dim", "W=16")
	require.Equal(t, 0, code, errOut)
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.GreaterOrEqual(t, r["runs"], 1.0)
	require.Contains(t, errOut, "onnxvk bench: timing runs for 30ms from 1 goroutines\n")

	code, out, errOut = cli(t, "bench", exampleFile(t), "--runs", "1", "--warmup", "0", "--profile", "--json", "--dim", "H=16", "--dim", "W=16")
	require.Equal(t, 0, code, errOut)
	var prof struct {
		Profile []opTime `json:"profile"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &prof))
	require.NotEmpty(t, prof.Profile)
	share := map[string]float64{}
	for _, row := range prof.Profile {
		require.Positive(t, row.Steps, row)
		share[row.Track] += row.Percent
	}
	for track, p := range share {
		require.InDelta(t, 100, p, 1e-6, track)
	}

	code, _, errOut = cli(t, "bench", exampleFile(t), "--concurrency", "0")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--concurrency must be at least 1")
}

func TestErrors(t *testing.T) {
	cases := []struct {
		args []string
		code int
		says string
	}{
		{[]string{"frobnicate"}, 2, "onnxvk: unknown command \"frobnicate\"\nRun 'onnxvk help' for the list of commands.\n"},
		{[]string{"run", "/nonexistent/model.onnx"}, 1, "no such file"},
		{[]string{"bench"}, 2, "onnxvk bench: no model given\nRun 'onnxvk bench --help' for usage.\n"},
		{[]string{"run", "-i", "x=y.npy"}, 2, "needs a MODEL"},
		{[]string{"run", "--profile", "t.json", "--seed", "3"}, 2, "--profile, --seed needs a MODEL: the built-in example takes only --device, --threads and -o"},
		{[]string{"run", "--device", "tpu"}, 1, `device "tpu"`},
		{[]string{"plan", "a.onnx", "b.onnx"}, 2, "one model expected"},
		{[]string{"plan", "--frobnicate", "a.onnx"}, 2, "onnxvk plan: flag provided but not defined: -frobnicate\nRun 'onnxvk plan --help' for usage.\n"},
		{[]string{"bench", "--runs", "x", "a.onnx"}, 2, `invalid value "x" for flag -runs`},
	}
	for _, c := range cases {
		code, _, errOut := cli(t, c.args...)
		require.Equal(t, c.code, code, c.args)
		require.Contains(t, errOut, c.says, c.args)
		require.NotContains(t, errOut, "onnxvk: onnxvk", c.args)
		require.NotContains(t, errOut, "Flags:", c.args)
	}
	// A library error is not prefixed twice.
	_, _, errOut := cli(t, "run", "/nonexistent/model.onnx")
	require.True(t, strings.HasPrefix(errOut, "onnxvk run: loader: "), errOut)

	// Help goes to stdout, with the flags as they are used.
	for _, args := range [][]string{{"run", "--help"}, {"help", "run"}, {"run", "-h"}} {
		code, out, errOut := cli(t, args...)
		require.Equal(t, 0, code, args)
		require.Empty(t, errOut, args)
		require.True(t, strings.HasPrefix(out, "Usage: onnxvk run [MODEL]"), out)
		require.Contains(t, out, "\n  --device string\n")
		require.Contains(t, out, "\n  -i NAME=FILE\n")
	}
	code, out, _ := cli(t, "help")
	require.Equal(t, 0, code)
	require.Contains(t, out, "Commands:")
	code, out, errOut = cli(t)
	require.Equal(t, 2, code)
	require.Empty(t, out)
	require.Contains(t, errOut, "Commands:")
}

func TestOutputFileNames(t *testing.T) {
	files := outputFiles([]string{"a/b:c d", "a/b", "a_b", "A_b", "a_b_2", "x"})
	require.Equal(t, map[string]string{"a/b:c d": "a_b_c_d.npy", "a/b": "a_b.npy", "a_b": "a_b_2.npy",
		"A_b": "A_b_3.npy", "a_b_2": "a_b_2_2.npy", "x": "x.npy"}, files, "distinct files, also where case does not count")

	// A symbolic link where an output goes is replaced, not followed.
	dir, outside := t.TempDir(), filepath.Join(t.TempDir(), "victim")
	require.NoError(t, os.WriteFile(outside, []byte("keep"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "x.npy")))
	file, err := writeOutput(dir, files["x"], graph.NewTensor(graph.Float, []int64{1}))
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "x.npy"), file)
	kept, err := os.ReadFile(outside)
	require.NoError(t, err)
	require.Equal(t, "keep", string(kept))
	st, err := os.Lstat(file)
	require.NoError(t, err)
	require.True(t, st.Mode().IsRegular())
	got, err := npy.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, []int64{1}, got.Shape)
}

// TestRunSizeFlags: a --dim that makes a random input's size overflow, or a
// --host-memory it exceeds, is an error, not a crash (issue 13, item 1).
func TestRunSizeFlags(t *testing.T) {
	model := exampleFile(t)
	code, _, errOut := cli(t, "run", model, "--device", "cpu", "--dim", "H=4611686018427387904")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, `input "image"`)
	require.Contains(t, errOut, "overflows int64")
	code, _, errOut = cli(t, "run", model, "--device", "cpu", "--dim", "H=65536", "--dim", "W=65536", "--host-memory", "1G")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "over the host memory limit of 1073741824 bytes")
	code, _, errOut = cli(t, "run", model, "--host-memory", "lots")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--host-memory")
}

func TestVersionCommand(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, out, errOut := cli(t, args...)
		require.Equal(t, 0, code, errOut)
		require.Equal(t, onnxvk.Build().String()+"\n", out)
	}
	code, _, errOut := cli(t, "version", "extra")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "no arguments expected")
}

func TestBenchCompare(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, r benchResult) string {
		data, err := json.Marshal(r)
		require.NoError(t, err)
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, data, 0o644))
		return path
	}
	a := write("a.json", benchResult{Model: "m.onnx", Device: "cpu", Runs: 10, MedianMS: 2, P99MS: 4, ThroughputPerS: 500})
	b := write("b.json", benchResult{Model: "m.onnx", Device: "vulkan:0", DeviceName: "GPU", Runs: 10, MedianMS: 1, P99MS: 1, ThroughputPerS: 1000})
	code, out, errOut := cli(t, "bench", "--compare", a, b)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "B  "+b+": m.onnx on vulkan:0 (GPU)")
	require.Regexp(t, `\nmedian +2\.000 ms +1\.000 ms +0\.500\n`, out)
	require.Regexp(t, `\np99 +4\.000 ms +1\.000 ms +0\.250\n`, out)
	require.Regexp(t, `\nthroughput +500\.000 /s +1000\.000 /s +2\.000\n`, out)
	require.NotContains(t, out, "GPU memory")

	code, _, errOut = cli(t, "bench", "--compare", a)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--compare wants two bench --json files")
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte("{}"), 0o644))
	code, _, errOut = cli(t, "bench", "--compare", a, bad)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "not a bench --json result")
}

func TestBenchReport(t *testing.T) {
	report := filepath.Join(t.TempDir(), "report.html")
	code, out, errOut := cli(t, "bench", exampleFile(t), "--runs", "12", "--warmup", "0", "--report", report, "--dim", "H=16", "--dim", "W=16")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "report     "+report+"\n")
	raw, err := os.ReadFile(report)
	require.NoError(t, err)
	page := string(raw)
	require.True(t, strings.HasPrefix(page, "<!DOCTYPE html>"))
	require.Equal(t, reportBins, strings.Count(page, `<rect class="bar"`), "one bar per histogram bin")
	require.Positive(t, strings.Count(page, `<rect class="op"`), "the time per op type")
	require.Contains(t, page, "<td>runs</td><td>12</td>")
	require.NotContains(t, page, "http", "a self-contained page fetches nothing")
	require.NotContains(t, page, "<script")
	if runtime.GOOS != "windows" {
		st, err := os.Stat(report)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o644), st.Mode().Perm())
	}
}

func TestHistogram(t *testing.T) {
	counts, lo, width := histogram([]float64{1, 1.5, 2, 2, 3}, 4)
	require.Equal(t, []int{1, 1, 2, 1}, counts)
	require.Equal(t, 1.0, lo)
	require.Equal(t, 0.5, width)
	counts, _, _ = histogram([]float64{2, 2, 2}, 4)
	require.Equal(t, 3, counts[2], "equal values land in one bin: %v", counts)
}
