package onnxvk_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/internal/sessionvalues"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/loader"
	"github.com/onnxvk/onnxvk/planner"
)

// The limits a fuzz model runs under: the session's host memory limit,
// the heap growth beyond it that counts as an allocation the limit missed,
// the Run's deadline and the time after it that counts as a hang.
const (
	fuzzHostLimit = 16 << 20
	fuzzHeapSlack = 256 << 20
	fuzzDeadline  = 2 * time.Second
	fuzzHang      = 20 * time.Second
)

// FuzzPipeline takes a small random model (see fuzzGen) through the whole
// pipeline on the CPU: serialized and loaded, planned (inference and
// constant folding included) and run under a small host memory limit and
// a deadline. An error is fine; a panic (or an error that is a recovered
// one), a hang or heap growth beyond the limit fails.
//
//	go test -run '^$' -fuzz FuzzPipeline -parallel 1 .
func FuzzPipeline(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		g := newFuzzGen(data)
		m := g.model()
		runFuzzModel(t, m, g.feeds, "cpu")
	})
}

// FuzzPipelineVulkan is FuzzPipeline's differential mode: a model that
// runs on the CPU and plans a node on Vulkan (lavapipe here) runs there
// too, and the outputs must agree within the tolerance of the op that
// made them, for models of ordinary float values (see fuzzGen.moderate).
// It has no corpus of its own: fuzzing starts from
// FuzzPipeline's, and go test without -fuzz runs nothing of it.
//
//	go test -run '^$' -fuzz FuzzPipelineVulkan -parallel 1 .
func FuzzPipelineVulkan(f *testing.F) {
	if flag.Lookup("test.fuzz").Value.String() != "" {
		addCorpus(f, "FuzzPipeline")
	}
	var (
		probe    sync.Once
		probeErr error
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		probe.Do(func() {
			var s *onnxvk.Session
			if s, probeErr = onnxvk.LoadBytes(identityModelBytes(t), onnxvk.WithDevice("vulkan")); probeErr == nil {
				s.Close()
			}
		})
		if probeErr != nil {
			testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", probeErr))
		}
		g := newFuzzGen(data)
		g.moderate = true
		m := g.model()
		want := runFuzzModel(t, m, g.feeds, "cpu")
		if want == nil || random(m.Graph) {
			return
		}
		got := runFuzzModel(t, m, g.feeds, "vulkan")
		if got == nil {
			return
		}
		for name, w := range want {
			compareFuzzOutput(t, m, name, w, got[name])
		}
	})
}

// random reports whether a node of gr or of its subgraphs draws random
// values: two Runs of it need not agree.
func random(gr *graph.Graph) bool {
	for _, n := range gr.Nodes {
		if ops.Has(n.Domain, n.OpType, ops.Nondeterministic) || slices.ContainsFunc(graph.NodeSubgraphs(n), random) {
			return true
		}
	}
	return false
}

// addCorpus adds the inputs of another fuzz target's corpus under
// testdata/fuzz to f's.
func addCorpus(f *testing.F, target string) {
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", target, "*"))
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		_, quoted, ok := strings.Cut(strings.TrimSpace(string(b)), "\n[]byte(")
		data, err := strconv.Unquote(strings.TrimSuffix(quoted, ")"))
		if !ok || err != nil {
			f.Fatalf("%s: not a corpus file of one []byte", file)
		}
		f.Add([]byte(data))
	}
}

// identityModelBytes is a model of one Identity, serialized.
func identityModelBytes(tb testing.TB) []byte {
	gr := graph.NewGraph("identity")
	gr.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(2))}}
	gr.Outputs = []*graph.ValueInfo{{Name: "y"}}
	gr.Nodes = []*graph.Node{{Name: "id", OpType: "Identity", Inputs: []string{"x"}, Outputs: []string{"y"}}}
	b, err := loader.Marshal(&graph.Model{Name: "identity", IRVersion: 8, Opsets: map[string]int64{"": 18}, Graph: gr})
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// fuzzResult is what a guarded Run gives back.
type fuzzResult struct {
	out   map[string]graph.Value
	err   error
	panic any
	stack []byte
	trace *backend.Trace
	// running is set once the model loaded and planned and its Run began.
	running bool
}

// runFuzzModel serializes m, loads it on device and runs it with feeds.
// It returns the outputs, or nil when a step failed with an error; it
// fails t on a panic, an error that reports a recovered panic, a hang or
// heap growth beyond the host memory limit. On Vulkan it returns nil
// unless the plan puts a node there.
func runFuzzModel(t *testing.T, m *graph.Model, feeds map[string]graph.Value, device string) map[string]graph.Value {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s on %s\nmodel:\n%s", fmt.Sprintf(format, args...), device, describeModel(m, feeds))
	}
	data, err := loader.Marshal(m)
	if err != nil {
		fail("a model made in Go does not marshal: %v", err)
	}
	base := heapBytes()
	res := watch(t, fail, base, func(r *fuzzResult) {
		sess, err := onnxvk.LoadBytes(data, onnxvk.WithDevice(device), onnxvk.WithName("fuzz"),
			onnxvk.WithHostMemoryLimit(fuzzHostLimit))
		if err != nil {
			r.err = err
			return
		}
		defer sess.Close()
		if device != "cpu" && !plannedOn(sess, feeds, device) {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), fuzzDeadline)
		defer cancel()
		r.running = true
		r.out, r.err = sessionvalues.Of(sess).RunValues(backend.WithTrace(ctx, r.trace), feeds)
	})
	if res.panic != nil && !res.running {
		fail("panic while loading or planning: %v\n%s", res.panic, res.stack)
	}
	if res.panic != nil {
		fail("panic%s: %v\n%s", panickedNode(m, feeds, device, res.trace), res.panic, res.stack)
	}
	if res.err != nil {
		if recoveredPanic(res.err) {
			fail("a recovered panic: %v", res.err)
		}
		return nil
	}
	return res.out
}

// watch runs f in a goroutine, recovering its panic, and fails when it
// has not returned fuzzHang after its deadline or when the heap grows by
// more than the host memory limit allows.
func watch(t *testing.T, fail func(string, ...any), base uint64, f func(*fuzzResult)) *fuzzResult {
	t.Helper()
	r := &fuzzResult{trace: backend.NewTrace()}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil {
				r.panic, r.stack = p, debug.Stack()
			}
		}()
		f(r)
	}()
	hang := time.After(fuzzDeadline + fuzzHang)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return r
		case <-hang:
			buf := make([]byte, 1<<20)
			fail("no return %v after the deadline:\n%s", fuzzHang, buf[:runtime.Stack(buf, true)])
		case <-tick.C:
			if h := heapBytes(); h > base+fuzzHostLimit+fuzzHeapSlack {
				fail("the heap grew by %d bytes under a host memory limit of %d", h-base, fuzzHostLimit)
			}
		}
	}
}

var heapSample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}

// heapBytes is the memory of the heap's objects, live or not yet swept:
// garbage adds at most the live heap's size before the collector runs,
// far less than fuzzHeapSlack.
func heapBytes() uint64 {
	metrics.Read(heapSample)
	return heapSample[0].Value.Uint64()
}

// recoveredPanic reports whether err is a panic that something recovered
// on the way (an inference rule's, a kernel's): each is a bug to fix.
func recoveredPanic(err error) bool {
	return errors.Is(err, ops.ErrRulePanicked) || strings.Contains(err.Error(), "panic")
}

// plannedOn reports whether the session's plan for feeds puts a compute
// step on device.
func plannedOn(sess *onnxvk.Session, feeds map[string]graph.Value, device string) bool {
	p, err := sessionvalues.Of(sess).Plan(feedTypes(feeds))
	if err != nil {
		return false
	}
	for _, st := range p.Steps {
		if st.Kind == planner.Compute && strings.HasPrefix(st.Device, device) {
			return true
		}
	}
	return false
}

func feedTypes(feeds map[string]graph.Value) map[string]*graph.Type {
	types := make(map[string]*graph.Type, len(feeds))
	for name, v := range feeds {
		types[name] = v.ValueType()
	}
	return types
}

// panickedNode names the node whose step was running when a Run
// panicked: the first compute step of the plan that the trace has no
// event of; "while planning" when planning again panics, "" when it fails.
func panickedNode(m *graph.Model, feeds map[string]graph.Value, device string, tr *backend.Trace) (where string) {
	defer func() {
		if recover() != nil {
			where = " while planning"
		}
	}()
	data, err := loader.Marshal(m)
	if err != nil {
		return ""
	}
	sess, err := onnxvk.LoadBytes(data, onnxvk.WithDevice(device), onnxvk.WithName("fuzz"))
	if err != nil {
		return ""
	}
	defer sess.Close()
	p, err := sessionvalues.Of(sess).Plan(feedTypes(feeds))
	if err != nil {
		return ""
	}
	ran := map[string]bool{}
	for _, ev := range tr.Events() {
		ran[ev.Name] = true
	}
	for _, st := range p.Steps {
		if st.Kind == planner.Compute && !ran[st.Node.Name] {
			return " in " + st.Node.String()
		}
	}
	return ""
}

// compareFuzzOutput checks a Vulkan output against the CPU's within the
// tolerance of the op that made it.
func compareFuzzOutput(t *testing.T, m *graph.Model, name string, want, got graph.Value) {
	t.Helper()
	wt, ok1 := want.(*graph.Tensor)
	gt, ok2 := got.(*graph.Tensor)
	if !ok1 || !ok2 {
		return
	}
	if wt.DType != gt.DType || !slices.Equal(wt.Shape, gt.Shape) {
		t.Fatalf("output %q: CPU gives %s%v, Vulkan %s%v\nmodel:\n%s", name, wt.DType, wt.Shape, gt.DType, gt.Shape, describeModel(m, nil))
	}
	tol := ops.DefaultTolerance
	for _, n := range m.Graph.Nodes {
		if slices.Contains(n.Outputs, name) {
			if s := ops.Lookup(n.Domain, n.OpType, m.Opset(n.Domain)); s != nil {
				tol = s.Tolerance()
			}
		}
	}
	if wt.DType == graph.String {
		return
	}
	if wt.DType == graph.Float16 {
		// Both devices compute float16 in fp32 and round: a result may
		// land on either float16 neighbour.
		tol = tol.Float16()
	}
	for k := range wt.NumElements() {
		a, b := gt.Float64At(k), wt.Float64At(k)
		if math.IsNaN(a) && math.IsNaN(b) || a == b {
			continue
		}
		if !wt.DType.IsFloat() || math.IsNaN(a) || math.IsNaN(b) || math.Abs(a-b) > tol.Abs+tol.Rel*math.Abs(b) {
			t.Fatalf("output %q element %d: Vulkan %v, CPU %v (tolerance %+v)\nmodel:\n%s", name, k, a, b, tol, describeModel(m, nil))
		}
	}
}
