package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/backend/vulkan"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/loader"
	"github.com/onnxvk/onnxvk/loader/onnxpb"
)

var update = flag.Bool("update", false, "rewrite testdata/conformance_{pass,excluded,vulkan}.txt from this run")

// onnxTestData is where Debian's libonnx-testdata installs the ONNX backend
// tests.
const onnxTestData = "/usr/share/libonnx-testdata/data"

// conformanceSuites are the suites the CPU must pass. The "real" suite (whole
// downloaded models such as resnet50) is left out, as the issue says: it is
// slow and belongs to the model tests.
var conformanceSuites = []string{"node", "pytorch-converted", "pytorch-operator", "simple"}

const (
	vulkanList     = "testdata/conformance_vulkan.txt"
	vulkanHeader   = "# ONNX backend tests that pass on Vulkan with every node on the Vulkan device (TestConformanceVulkan); this list only grows.\n# Update: go test ./bench -run TestConformanceVulkan -update"
	passList       = "testdata/conformance_pass.txt"
	excludedList   = "testdata/conformance_excluded.txt"
	passHeader     = "# ONNX backend tests that pass on the CPU (TestConformanceCPU); this list only grows.\n# Update: go test ./bench -run TestConformanceCPU -update"
	excludedHeader = "# ONNX backend tests that do not pass on the CPU: NAME<TAB>REASON, a reason on every line.\n# Update: go test ./bench -run TestConformanceCPU -update (new entries get the failure as reason)\n# A reason starting with " + randomReason + " marks a test whose reference is random: it may pass by chance and stays here."
)

// readList reads a list file (see parseList).
func readList(t *testing.T, path string, wantReason bool) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out, err := parseList(f, path, wantReason)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// oneLine shortens a failure message to one line for the excluded list.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// suiteDirs returns the folders of the conformance suites, skipping the
// test where the test data is not installed.
func suiteDirs(t *testing.T) []string {
	var dirs []string
	for _, s := range conformanceSuites {
		d := filepath.Join(onnxTestData, s)
		if _, err := os.Stat(d); err != nil {
			testenv.Skip(t, "ONNX backend test data not installed (Debian package libonnx-testdata): "+err.Error())
		}
		dirs = append(dirs, d)
	}
	return dirs
}

// conformanceNames returns the names of the conformance tests in dirs,
// in order.
func conformanceNames(t *testing.T, dirs []string) []string {
	var names []string
	for _, dir := range dirs {
		tests, err := FindConformanceTests(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, test := range tests {
			names = append(names, ConformanceTestName(test))
		}
	}
	return names
}

// runVulkanConformance runs the conformance tests of dirs that filter
// matches (all when nil) on the first Vulkan device with the session
// options, skipping the test where there is no Vulkan device.
func runVulkanConformance(t *testing.T, dirs []string, filter *regexp.Regexp, session ...onnxvk.Option) []ConformanceResult {
	t.Helper()
	d, err := vulkan.Open("vulkan")
	if errors.Is(err, backend.ErrDeviceUnavailable) {
		testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", err))
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	results, err := RunConformance(context.Background(), dirs, ConformanceOptions{Device: "vulkan", Filter: filter,
		Timeout: 2 * time.Minute, Session: session})
	if err != nil {
		t.Fatal(err)
	}
	return results
}

// notWholeOnVulkan returns how r, a test on the Vulkan list, failed it:
// "" when it passed with every node on the Vulkan device.
func notWholeOnVulkan(r ConformanceResult) string {
	switch {
	case r.Status != Pass:
		return fmt.Sprintf("does not pass on Vulkan: %s %s", r.Status, r.Reason)
	case len(r.Fallback) > 0:
		return "ran " + strings.Join(r.Fallback, ", ") + " on the CPU"
	}
	return ""
}

// TestConformanceVulkan runs the ONNX backend tests on the first Vulkan
// device (lavapipe in CI): every test that passes on the CPU (the committed
// pass list) must pass, and every test on the committed Vulkan list must
// pass with every node on the Vulkan device. A test that newly runs wholly
// on Vulkan is reported so that it joins the list (-update adds it).
// Outside the long suites every fourth test runs, and -update needs them.
func TestConformanceVulkan(t *testing.T) {
	dirs := suiteDirs(t)
	var filter *regexp.Regexp
	if !testenv.Long() && !*update {
		sampler := testenv.NewSampler(4)
		var run []string
		for _, name := range conformanceNames(t, dirs) {
			if sampler.Take() {
				run = append(run, regexp.QuoteMeta(name))
			}
		}
		filter = regexp.MustCompile("^(" + strings.Join(run, "|") + ")$")
	}
	results := runVulkanConformance(t, dirs, filter)
	cpuPass := readList(t, passList, false)
	whole := readList(t, vulkanList, false)
	var newWhole []string
	for _, r := range results {
		_, onCPU := cpuPass[r.Name]
		_, listed := whole[r.Name]
		why := notWholeOnVulkan(r)
		switch {
		case why == "":
			newWhole = append(newWhole, r.Name)
			if !listed && !*update {
				t.Errorf("%s runs wholly on %s now: add it to %s, or run with -update", r.Name, r.Device, vulkanList)
			}
		case listed:
			newWhole = append(newWhole, r.Name)
			t.Errorf("%s is on the Vulkan list but %s", r.Name, why)
		case onCPU && r.Status != Pass:
			t.Errorf("%s passes on the CPU but not on Vulkan: %s %s", r.Name, r.Status, r.Reason)
		}
	}
	s := Summarize(results)
	t.Logf("conformance on Vulkan: %s; %d with every node on Vulkan", s, s.Whole)
	if *update {
		writeList(t, vulkanList, vulkanHeader, newWhole)
	}
}

// scheduledOps matches the conformance tests of the ops whose Vulkan
// kernels have schedules and variants (matmul.comp, conv.comp,
// convgemm.comp): MatMul, Gemm, Conv, ConvTranspose and their integer
// and quantized forms.
var scheduledOps = regexp.MustCompile(`/test_(basic_conv|conv|gemm|matmul|qlinearconv|qlinearmatmul)`)

// TestConformanceVulkanSchedules runs the conformance tests of the ops
// with schedules on the first Vulkan device under each schedule and
// kernel variant forced in turn (vulkan.ForcedSchedules), which a device
// picks by its type and the shape: lavapipe itself runs only the blocked
// MatMul and the direct Conv. Every such test on the committed Vulkan
// list must pass there with every node on Vulkan. Outside the long suites
// one test in four runs under each schedule, a different set each time.
func TestConformanceVulkanSchedules(t *testing.T) {
	dirs := suiteDirs(t)
	whole := readList(t, vulkanList, false)
	var names []string
	for _, name := range conformanceNames(t, dirs) {
		if _, ok := whole[name]; ok && scheduledOps.MatchString(name) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		t.Fatalf("no test of %v on %s", scheduledOps, vulkanList)
	}
	sampler := testenv.NewSampler(4)
	for _, s := range vulkan.ForcedSchedules() {
		t.Run(s.String(), func(t *testing.T) {
			var run []string
			for _, name := range names {
				if sampler.Take() {
					run = append(run, regexp.QuoteMeta(name))
				}
			}
			filter := regexp.MustCompile("^(" + strings.Join(run, "|") + ")$")
			results := runVulkanConformance(t, dirs, filter, onnxvk.WithVulkanOptions(vulkan.WithSchedule(s)))
			ran := map[string]bool{}
			for _, r := range results {
				ran[r.Name] = true
				if why := notWholeOnVulkan(r); why != "" {
					t.Errorf("%s under %v %s", r.Name, s, why)
				}
			}
			if len(ran) != len(run) {
				t.Errorf("%d of the %d tests chosen ran", len(ran), len(run))
			}
			t.Logf("%d conformance tests under %v", len(results), s)
		})
	}
}

// TestConformanceVulkanStaged runs the conformance tests that pass on the
// CPU on the first Vulkan device with its inputs and outputs staged
// (vulkan.WithStaging), a discrete GPU's path, which lavapipe's unified
// memory would otherwise skip: each must pass, and each on the committed
// Vulkan list with every node on Vulkan. Outside the long suites one test
// in eight runs.
func TestConformanceVulkanStaged(t *testing.T) {
	dirs := suiteDirs(t)
	cpuPass := readList(t, passList, false)
	whole := readList(t, vulkanList, false)
	sampler := testenv.NewSampler(8)
	var run []string
	for _, name := range conformanceNames(t, dirs) {
		if _, ok := cpuPass[name]; ok && sampler.Take() {
			run = append(run, regexp.QuoteMeta(name))
		}
	}
	if len(run) == 0 {
		t.Fatalf("no test of %s chosen", passList)
	}
	filter := regexp.MustCompile("^(" + strings.Join(run, "|") + ")$")
	results := runVulkanConformance(t, dirs, filter, onnxvk.WithVulkanOptions(vulkan.WithStaging()))
	for _, r := range results {
		_, listed := whole[r.Name]
		why := notWholeOnVulkan(r)
		switch {
		case r.Status != Pass:
			t.Errorf("%s with staged inputs and outputs: %s %s", r.Name, r.Status, r.Reason)
		case listed && why != "":
			t.Errorf("%s with staged inputs and outputs %s", r.Name, why)
		}
	}
	if len(results) != len(run) {
		t.Errorf("%d of the %d tests chosen ran", len(results), len(run))
	}
	t.Logf("%d conformance tests with staged inputs and outputs", len(results))
}

// TestConformanceCPU runs the ONNX backend tests on the CPU and checks the
// results against the committed lists: every listed pass must pass, every
// other test must be excluded with a reason, and an excluded test that now
// passes is reported so that it moves to the pass list. Run with -update to
// rewrite the lists from the results: the pass list only grows, and
// excluded tests keep their written reasons.
func TestConformanceCPU(t *testing.T) {
	dirs := suiteDirs(t)
	results, err := RunConformance(context.Background(), dirs, ConformanceOptions{Device: "cpu", Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	pass := readList(t, passList, false)
	excluded := readList(t, excludedList, true)
	seen := map[string]bool{}
	var newPass, newExcluded []string
	for _, r := range results {
		seen[r.Name] = true
		_, listedPass := pass[r.Name]
		_, listedExcluded := excluded[r.Name]
		switch {
		case listedExcluded && strings.HasPrefix(excluded[r.Name], randomReason):
			newExcluded = append(newExcluded, r.Name+"\t"+excluded[r.Name])
		case r.Status == Pass:
			newPass = append(newPass, r.Name)
			if !listedPass && !*update {
				t.Errorf("%s passes now: add it to %s (and drop it from %s), or run with -update", r.Name, passList, excludedList)
			}
		case listedPass:
			newPass = append(newPass, r.Name)
			t.Errorf("%s is on the pass list but does not pass: %s %s", r.Name, r.Status, r.Reason)
		default:
			reason := excluded[r.Name]
			if !listedExcluded {
				reason = fmt.Sprintf("%s: %s", r.Status, oneLine(r.Reason))
			}
			newExcluded = append(newExcluded, r.Name+"\t"+reason)
			if !listedExcluded && !*update {
				t.Errorf("%s neither passes nor is excluded: %s %s", r.Name, r.Status, r.Reason)
			}
		}
	}
	for name := range pass {
		if !seen[name] {
			t.Errorf("%s is on the pass list but was not found in %s", name, onnxTestData)
		}
		if _, ok := excluded[name]; ok {
			t.Errorf("%s is on both lists", name)
		}
	}
	for name := range excluded {
		if !seen[name] && !*update {
			t.Errorf("%s is excluded but was not found in %s: drop it from %s", name, onnxTestData, excludedList)
		}
	}
	s := Summarize(results)
	t.Logf("conformance on the CPU: %s", s)
	if *update {
		writeList(t, passList, passHeader, newPass)
		writeList(t, excludedList, excludedHeader, newExcluded)
	}
}

func writeList(t *testing.T, path, header string, lines []string) {
	t.Helper()
	slices.Sort(lines)
	data := header + "\n" + strings.Join(lines, "\n") + "\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCompareValues(t *testing.T) {
	f32 := func(v ...float32) *graph.Tensor {
		x, err := graph.FromSlice(graph.Float, []int64{int64(len(v))}, v)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	i64 := func(v ...int64) *graph.Tensor {
		x, err := graph.FromSlice(graph.Int64, []int64{int64(len(v))}, v)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	seq := func(v ...graph.Value) *graph.Sequence {
		return &graph.Sequence{Elem: graph.TensorType(graph.Float, nil), Items: v}
	}
	cases := []struct {
		name      string
		got, want graph.Value
		ok        bool
	}{
		{"equal", f32(1, 2), f32(1, 2), true},
		{"within rtol", f32(1000.5), f32(1000), true},
		{"outside rtol", f32(1002), f32(1000), false},
		{"nan equals nan", f32(nan), f32(nan), true},
		{"nan vs number", f32(nan), f32(1), false},
		{"inf", f32(inf), f32(inf), true},
		{"inf vs -inf", f32(-inf), f32(inf), false},
		{"shape", f32(1, 2), f32(1), false},
		{"dtype", i64(1), f32(1), false},
		{"ints exact", i64(1 << 60), i64(1<<60 + 1), false},
		{"ints equal", i64(7, -3), i64(7, -3), true},
		{"strings", &graph.Tensor{DType: graph.String, Shape: []int64{1}, Strings: []string{"a"}}, &graph.Tensor{DType: graph.String, Shape: []int64{1}, Strings: []string{"b"}}, false},
		{"sequence", seq(f32(1), f32(2)), seq(f32(1), f32(2)), true},
		{"sequence length", seq(f32(1)), seq(f32(1), f32(2)), false},
		{"sequence vs tensor", f32(1), seq(f32(1)), false},
		{"empty optionals", &graph.Optional{}, &graph.Optional{}, true},
		{"optional presence", &graph.Optional{V: f32(1)}, &graph.Optional{}, false},
		{"missing", nil, f32(1), false},
	}
	for _, c := range cases {
		err := CompareValues(c.got, c.want, DefaultRTol, DefaultATol)
		if (err == nil) != c.ok {
			t.Errorf("%s: CompareValues = %v, want ok=%v", c.name, err, c.ok)
		}
	}
}

func TestFindConformanceTests(t *testing.T) {
	suite := t.TempDir()
	for _, d := range []string{"test_b", "test_a/test_data_set_0", "other"} {
		if err := os.MkdirAll(filepath.Join(suite, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tests, err := FindConformanceTests(suite)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(suite, "test_a"), filepath.Join(suite, "test_b")}
	if !slices.Equal(tests, want) {
		t.Fatalf("FindConformanceTests = %v, want %v", tests, want)
	}
	rs, err := RunConformance(context.Background(), []string{suite}, ConformanceOptions{Device: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	if s := Summarize(rs); s.String() != "0 passed, 0 failed, 2 skipped" {
		t.Fatalf("summary %q", s)
	}
	if _, err := FindConformanceTests(filepath.Join(suite, "other")); err == nil {
		t.Fatal("a folder without tests was accepted")
	}
}

// writeTestFolder writes an ONNX backend test folder: model.onnx and
// test_data_set_0 with the given serialized inputs and outputs.
func writeTestFolder(t *testing.T, dir string, m *graph.Model, ins, outs []proto.Message) {
	t.Helper()
	set := filepath.Join(dir, "test_data_set_0")
	if err := os.MkdirAll(set, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := loader.Save(m, filepath.Join(dir, "model.onnx")); err != nil {
		t.Fatal(err)
	}
	write := func(prefix string, msgs []proto.Message) {
		for k, msg := range msgs {
			raw, err := proto.Marshal(msg)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(set, fmt.Sprintf("%s_%d.pb", prefix, k)), raw, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("input", ins)
	write("output", outs)
}

// splitModel splits a float32[4] input into a sequence of four [1] pieces.
func splitModel() *graph.Model {
	g := graph.NewGraph("split")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(4))}}
	g.Outputs = []*graph.ValueInfo{{Name: "s", Type: &graph.Type{Kind: graph.SequenceKind, Inner: graph.TensorType(graph.Float, nil)}}}
	g.Nodes = []*graph.Node{{OpType: "SplitToSequence", Inputs: []string{"x"}, Outputs: []string{"s"}}}
	return &graph.Model{Name: "split", IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g}
}

func TestRunConformanceSequences(t *testing.T) {
	suite := t.TempDir()
	x := &onnxpb.TensorProto{Name: proto.String("x"), Dims: []int64{4}, DataType: proto.Int32(int32(graph.Float)), FloatData: []float32{1, 2, 3, 4}}
	piece := func(v float32) *onnxpb.TensorProto {
		return &onnxpb.TensorProto{Dims: []int64{1}, DataType: proto.Int32(int32(graph.Float)), FloatData: []float32{v}}
	}
	seq := func(v ...float32) *onnxpb.SequenceProto {
		s := &onnxpb.SequenceProto{Name: proto.String("s"), ElemType: proto.Int32(int32(onnxpb.SequenceProto_TENSOR))}
		for _, f := range v {
			s.TensorValues = append(s.TensorValues, piece(f))
		}
		return s
	}
	writeTestFolder(t, filepath.Join(suite, "test_split_ok"), splitModel(), []proto.Message{x}, []proto.Message{seq(1, 2, 3, 4)})
	writeTestFolder(t, filepath.Join(suite, "test_split_wrong"), splitModel(), []proto.Message{x}, []proto.Message{seq(1, 2, 3, 5)})
	writeTestFolder(t, filepath.Join(suite, "test_split_short"), splitModel(), []proto.Message{x}, []proto.Message{seq(1, 2)})
	var progress []int
	rs, err := RunConformance(context.Background(), []string{suite}, ConformanceOptions{Device: "cpu",
		Progress: func(done, total int, _ ConformanceResult) { progress = append(progress, done, total) }})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]ConformanceResult{}
	for _, r := range rs {
		got[strings.TrimPrefix(r.Name, filepath.Base(suite)+"/")] = r
	}
	if r := got["test_split_ok"]; r.Status != Pass {
		t.Errorf("test_split_ok: %s %s", r.Status, r.Reason)
	}
	if r := got["test_split_wrong"]; r.Status != Fail || !strings.Contains(r.Reason, "sequence element 3") {
		t.Errorf("test_split_wrong: %s %s", r.Status, r.Reason)
	}
	if r := got["test_split_short"]; r.Status != Fail || !strings.Contains(r.Reason, "sequence of 4 values, want 2") {
		t.Errorf("test_split_short: %s %s", r.Status, r.Reason)
	}
	if !slices.Equal(progress, []int{1, 3, 2, 3, 3, 3}) {
		t.Errorf("progress calls %v", progress)
	}
	rs, err = RunConformance(context.Background(), []string{suite}, ConformanceOptions{Device: "cpu", Filter: regexp.MustCompile("_ok$")})
	if err != nil || len(rs) != 1 {
		t.Fatalf("filtered run: %v, %d results", err, len(rs))
	}
}

// pairModel returns x as y = Relu(x) and z = Neg(x), two outputs.
func pairModel() *graph.Model {
	g := graph.NewGraph("pair")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(2))}}
	g.Outputs = []*graph.ValueInfo{{Name: "y", Type: graph.TensorType(graph.Float, graph.ShapeOf(2))},
		{Name: "z", Type: graph.TensorType(graph.Float, graph.ShapeOf(2))}}
	g.Nodes = []*graph.Node{{OpType: "Relu", Inputs: []string{"x"}, Outputs: []string{"y"}},
		{OpType: "Neg", Inputs: []string{"x"}, Outputs: []string{"z"}, Index: 1}}
	return &graph.Model{Name: "pair", IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g}
}

// TestRunConformanceOutputCount checks that a data set must hold one
// reference file per model output: an output without one fails the test
// instead of going unchecked, and so does a file without an output.
func TestRunConformanceOutputCount(t *testing.T) {
	suite := t.TempDir()
	tensor := func(v ...float32) *onnxpb.TensorProto {
		return &onnxpb.TensorProto{Dims: []int64{2}, DataType: proto.Int32(int32(graph.Float)), FloatData: v}
	}
	x, y, z := tensor(-1, 2), tensor(0, 2), tensor(1, -2)
	writeTestFolder(t, filepath.Join(suite, "test_pair_ok"), pairModel(), []proto.Message{x}, []proto.Message{y, z})
	writeTestFolder(t, filepath.Join(suite, "test_pair_one"), pairModel(), []proto.Message{x}, []proto.Message{y})
	writeTestFolder(t, filepath.Join(suite, "test_pair_three"), pairModel(), []proto.Message{x}, []proto.Message{y, z, z})
	rs, err := RunConformance(context.Background(), []string{suite}, ConformanceOptions{Device: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"test_pair_ok":    "",
		"test_pair_one":   "1 output files for a model with 2 outputs",
		"test_pair_three": "3 output files for a model with 2 outputs",
	}
	for _, r := range rs {
		name := strings.TrimPrefix(r.Name, filepath.Base(suite)+"/")
		reason, ok := want[name]
		switch {
		case !ok:
			t.Errorf("unexpected test %s", name)
		case reason == "" && r.Status != Pass:
			t.Errorf("%s: %s %s, want a pass", name, r.Status, r.Reason)
		case reason != "" && (r.Status != Fail || !strings.Contains(r.Reason, reason)):
			t.Errorf("%s: %s %s, want a failure: %s", name, r.Status, r.Reason, reason)
		}
		delete(want, name)
	}
	if len(want) > 0 {
		t.Errorf("tests not run: %v", want)
	}
}
