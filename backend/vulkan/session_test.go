package vulkan_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/backend/vulkan"
	"github.com/onnxvk/onnxvk/backend/vulkan/internal/vk"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/hostfallback"
	"github.com/onnxvk/onnxvk/internal/sessionvalues"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/planner"
)

// chainModel computes y = Sigmoid(Dropout(Dropout(Relu(x + b))) * x) and
// also returns r = Relu(x + b). The Dropouts (identities at inference) run
// on the CPU, which is why they are there: the Vulkan device runs two
// segments and values cross between them.
func chainModel() *graph.Model {
	g := graph.NewGraph("chain")
	f32 := func(dims ...int64) *graph.Type { return graph.TensorType(graph.Float, graph.ShapeOf(dims...)) }
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: f32(4, 33)}}
	g.Outputs = []*graph.ValueInfo{{Name: "y", Type: f32(4, 33)}, {Name: "r", Type: f32(4, 33)}}
	b := graph.NewTensor(graph.Float, []int64{33})
	bs := graph.View[float32](b)
	for i := range bs {
		bs[i] = float32(i%7) - 3
	}
	g.Initializers["b"] = b
	g.Nodes = []*graph.Node{
		{OpType: "Add", Inputs: []string{"x", "b"}, Outputs: []string{"a"}},
		{OpType: "Relu", Inputs: []string{"a"}, Outputs: []string{"r"}},
		{OpType: "Dropout", Inputs: []string{"r"}, Outputs: []string{"t"}},
		{OpType: "Dropout", Inputs: []string{"t"}, Outputs: []string{"u"}},
		{OpType: "Mul", Inputs: []string{"u", "x"}, Outputs: []string{"m"}},
		{OpType: "Sigmoid", Inputs: []string{"m"}, Outputs: []string{"y"}},
	}
	for i, n := range g.Nodes {
		n.Index = i
	}
	return &graph.Model{Name: "chain", IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g}
}

func newSession(t *testing.T, device string) *onnxvk.Session {
	t.Helper()
	s, err := onnxvk.NewSession(chainModel(), onnxvk.WithDevice(device))
	if errors.Is(err, backend.ErrDeviceUnavailable) {
		testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", err))
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func input(t *testing.T, seed uint64) map[string]*onnxvk.Tensor {
	r := rand.New(rand.NewPCG(seed, 3))
	data := make([]float32, 4*33)
	for i := range data {
		data[i] = 8*r.Float32() - 4
	}
	x, err := onnxvk.NewTensor([]int64{4, 33}, data)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*onnxvk.Tensor{"x": x}
}

func match(t *testing.T, got, want map[string]*onnxvk.Tensor) {
	t.Helper()
	for name, w := range want {
		gv, _ := got[name].Float32s()
		wv, _ := w.Float32s()
		if len(gv) != len(wv) {
			t.Fatalf("%s: %d elements, want %d", name, len(gv), len(wv))
		}
		for i := range wv {
			if d := math.Abs(float64(gv[i] - wv[i])); d > 2e-5+5e-4*math.Abs(float64(wv[i])) {
				t.Fatalf("%s[%d] = %v, want %v", name, i, gv[i], wv[i])
			}
		}
	}
}

// TestSessionMatchesCPU runs a model end to end on Vulkan, from several
// goroutines at once, and compares with the CPU.
func TestSessionMatchesCPU(t *testing.T) {
	gpu, cpu := newSession(t, "vulkan"), newSession(t, "cpu")
	if gpu.Device() != "vulkan:0" && gpu.Device()[:7] != "vulkan:" {
		t.Fatalf("device %s", gpu.Device())
	}
	p, err := sessionvalues.Of(gpu).Plan(nil)
	if err != nil {
		t.Fatal(err)
	}
	onGPU := 0
	for _, st := range p.Steps {
		if st.Kind == planner.Compute && st.Device == gpu.Device() {
			onGPU++
		}
	}
	if onGPU != 4 {
		t.Fatalf("%d steps on %s, want 4", onGPU, gpu.Device())
	}
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			for i := range 10 {
				in := input(t, uint64(100*g+i))
				want, err := cpu.Run(context.Background(), in)
				if err != nil {
					t.Error(err)
					return
				}
				got, err := gpu.Run(context.Background(), in)
				if err != nil {
					t.Error(err)
					return
				}
				match(t, got, want)
			}
		})
	}
	wg.Wait()
}

// TestCloseDestroysEverything counts Vulkan objects: after Close, every
// object the device created, the shared instance included, is destroyed.
func TestCloseDestroysEverything(t *testing.T) {
	before := vk.Live()
	d, err := vulkan.Open("vulkan")
	if errors.Is(err, backend.ErrDeviceUnavailable) {
		testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", err))
	}
	if err != nil {
		t.Fatal(err)
	}
	m := chainModel()
	cpu := hostfallback.NewDevice(nil)
	p, err := planner.New(m, planner.Options{Devices: []planner.Device{d, cpu}})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := backend.NewExecutor(p, []backend.Device{d, cpu})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, err := ex.Run(context.Background(), map[string]graph.Value{"x": input(t, 1)["x"].Graph()}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if vk.Live() <= before+1 {
		t.Fatalf("%d live objects after runs, want more than %d", vk.Live(), before+1)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if got := vk.Live(); got != before {
		t.Fatalf("%d Vulkan objects live after Close, want %d", got, before)
	}
	if _, err := ex.Run(context.Background(), map[string]graph.Value{"x": input(t, 1)["x"].Graph()}); err == nil {
		t.Fatal("Run after Close succeeded")
	}
}

// TestDeviceTime checks the timestamp queries of a Program.
func TestDeviceTime(t *testing.T) {
	d, err := vulkan.Open("vulkan")
	if errors.Is(err, backend.ErrDeviceUnavailable) {
		testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", err))
	}
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if !d.Info().Timestamps {
		testenv.Skip(t, d.Info().Name+" has no timestamp queries")
	}
	p, err := planner.New(chainModel(), planner.Options{Devices: []planner.Device{d, hostfallback.NewDevice(nil)}})
	if err != nil {
		t.Fatal(err)
	}
	var steps []planner.Step
	for _, st := range p.Steps {
		if st.Kind == planner.Compute && st.Device == d.Name() {
			steps = append(steps, st)
			break
		}
	}
	prog, err := d.Compile(p, steps)
	if err != nil {
		t.Fatal(err)
	}
	f := &backend.Frame{Plan: p, Values: map[string][]graph.Value{d.Name(): make([]graph.Value, len(p.Values))}}
	f.Values[d.Name()][p.ValueIndex["x"]] = input(t, 2)["x"].Graph()
	if err := prog.Run(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	timed, ok := prog.(interface{ DeviceTime() time.Duration })
	if !ok || timed.DeviceTime() <= 0 {
		t.Fatalf("no device time after a run (%v)", ok)
	}
}

// attentionModel is a transformer-like block on x [2, 5, 16]:
// h = LayerNormalization(x); q, k, v = h·Wq + bq, h·Wk, h·Wv;
// y = Softmax(q·Transpose(k) * scale)·v, m = ReduceMean(y, -1) and
// z = Gemm(m, W2, b2, transB) are the outputs.
func attentionModel() *graph.Model {
	g := graph.NewGraph("attention")
	f32 := func(dims ...int64) *graph.Type { return graph.TensorType(graph.Float, graph.ShapeOf(dims...)) }
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: f32(2, 5, 16)}}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}, {Name: "m"}, {Name: "z"}}
	r := rand.New(rand.NewPCG(5, 5))
	weight := func(name string, dims ...int64) {
		w := graph.NewTensor(graph.Float, dims)
		ws := graph.View[float32](w)
		for i := range ws {
			ws[i] = r.Float32() - 0.5
		}
		g.Initializers[name] = w
	}
	weight("gamma", 16)
	weight("beta", 16)
	weight("wq", 16, 16)
	weight("bq", 16)
	weight("wk", 16, 16)
	weight("wv", 16, 16)
	weight("scale")
	weight("w2", 7, 5)
	weight("b2", 7)
	attrs := func(kv ...any) map[string]*graph.Attribute {
		m := map[string]*graph.Attribute{}
		for i := 0; i < len(kv); i += 2 {
			name := kv[i].(string)
			switch v := kv[i+1].(type) {
			case int64:
				m[name] = &graph.Attribute{Name: name, Type: graph.AttrInt, I: v}
			case []int64:
				m[name] = &graph.Attribute{Name: name, Type: graph.AttrInts, Ints: v}
			}
		}
		return m
	}
	g.Nodes = []*graph.Node{
		{OpType: "LayerNormalization", Inputs: []string{"x", "gamma", "beta"}, Outputs: []string{"h"}, Attrs: attrs("axis", int64(-1))},
		{OpType: "MatMul", Inputs: []string{"h", "wq"}, Outputs: []string{"q0"}},
		{OpType: "Add", Inputs: []string{"q0", "bq"}, Outputs: []string{"q"}},
		{OpType: "MatMul", Inputs: []string{"h", "wk"}, Outputs: []string{"k"}},
		{OpType: "MatMul", Inputs: []string{"h", "wv"}, Outputs: []string{"v"}},
		{OpType: "Transpose", Inputs: []string{"k"}, Outputs: []string{"kt"}, Attrs: attrs("perm", []int64{0, 2, 1})},
		{OpType: "MatMul", Inputs: []string{"q", "kt"}, Outputs: []string{"s0"}},
		{OpType: "Mul", Inputs: []string{"s0", "scale"}, Outputs: []string{"s"}},
		{OpType: "Softmax", Inputs: []string{"s"}, Outputs: []string{"p"}, Attrs: attrs("axis", int64(-1))},
		{OpType: "MatMul", Inputs: []string{"p", "v"}, Outputs: []string{"y"}},
		{OpType: "ReduceMean", Inputs: []string{"y"}, Outputs: []string{"m"}, Attrs: attrs("axes", []int64{-1}, "keepdims", int64(0))},
		{OpType: "Gemm", Inputs: []string{"m", "w2", "b2"}, Outputs: []string{"z"}, Attrs: attrs("transB", int64(1))},
	}
	for i, n := range g.Nodes {
		n.Index = i
	}
	return &graph.Model{Name: "attention", IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g}
}

// TestAttentionMatchesCPU runs attentionModel through sessions on Vulkan
// and on the CPU: every node must be placed on Vulkan and the outputs must
// agree within MatMul's tolerance.
func TestAttentionMatchesCPU(t *testing.T) {
	open := func(device string) *onnxvk.Session {
		s, err := onnxvk.NewSession(attentionModel(), onnxvk.WithDevice(device))
		if errors.Is(err, backend.ErrDeviceUnavailable) {
			testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", err))
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	gpu, cpu := open("vulkan"), open("cpu")
	p, err := sessionvalues.Of(gpu).Plan(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range p.Steps {
		if st.Kind == planner.Compute && st.Device != gpu.Device() {
			t.Errorf("%s placed on %s", st.Node, st.Device)
		}
	}
	tol := ops.Lookup("", "MatMul", 17).Tolerance()
	for seed := range uint64(3) {
		in := attentionInput(t, seed)
		want, err := cpu.Run(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := gpu.Run(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		for name, w := range want {
			gv, _ := got[name].Float32s()
			wv, _ := w.Float32s()
			if fmt.Sprint(got[name].Shape()) != fmt.Sprint(w.Shape()) {
				t.Fatalf("%s: shape %v, want %v", name, got[name].Shape(), w.Shape())
			}
			for i := range wv {
				if d := math.Abs(float64(gv[i] - wv[i])); d > tol.Abs+tol.Rel*math.Abs(float64(wv[i])) {
					t.Fatalf("%s[%d] = %v, want %v", name, i, gv[i], wv[i])
				}
			}
		}
	}
}

// attentionInput is attentionModel's input x, [2,5,16], uniform in [-2,2)
// from the seed.
func attentionInput(t *testing.T, seed uint64) map[string]*onnxvk.Tensor {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 9))
	data := make([]float32, 2*5*16)
	for i := range data {
		data[i] = 4*r.Float32() - 2
	}
	x, err := onnxvk.NewTensor([]int64{2, 5, 16}, data)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*onnxvk.Tensor{"x": x}
}

// TestAttentionFloat16Folds runs attentionModel in the float16 mode
// (onnxvk.WithFP16): the compile-time folds take float16 products as they
// take float32 ones, so the Transpose of k has no dispatch of its own (the
// product reads k through its strides), and the outputs agree with the
// CPU's float32 run within 1e-2 of their peak. (The scale's Mul folds
// into the product's store as in float32 unless the planner gave its
// output memory the product still reads, which the smaller float16
// tensors' arena makes the case here.)
func TestAttentionFloat16Folds(t *testing.T) {
	open := func(opts ...onnxvk.Option) *onnxvk.Session {
		// The scores are an output too, so that the planner leaves the
		// attention unfused: a ScaledDotProductAttention reads k through
		// strides of its own.
		m := attentionModel()
		m.Graph.Outputs = append(m.Graph.Outputs, &graph.ValueInfo{Name: "s"})
		s, err := onnxvk.NewSession(m, opts...)
		if errors.Is(err, backend.ErrDeviceUnavailable) {
			testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", err))
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	cpu, gpu := open(onnxvk.WithDevice("cpu")), open(onnxvk.WithDevice("vulkan"), onnxvk.WithFP16())
	if p := gpu.Precision(); p.Mode != onnxvk.PrecisionFP16 {
		testenv.Skip(t, "device without the float16 mode: "+p.String())
	}
	in := attentionInput(t, 1)
	tr := backend.NewTrace()
	got, err := gpu.Run(backend.WithTrace(context.Background(), tr), in)
	if err != nil {
		t.Fatal(err)
	}
	transposes := 0
	for _, ev := range tr.Events() {
		if ev.Op == "Transpose" {
			transposes++
			if !strings.HasPrefix(ev.Note, "fused into") {
				t.Errorf("the Transpose of k has a dispatch of its own (%+v)", ev)
			}
		}
	}
	if transposes != 1 {
		t.Errorf("%d Transposes traced, want 1", transposes)
	}
	want, err := cpu.Run(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for name, w := range want {
		gv, _ := got[name].Float32s()
		wv, _ := w.Float32s()
		var peak, diff float64
		for i := range wv {
			peak, diff = max(peak, math.Abs(float64(wv[i]))), max(diff, math.Abs(float64(gv[i]-wv[i])))
		}
		if diff > 1e-2*peak {
			t.Errorf("%s differs from the CPU's float32 by %g, beyond 1e-2 of its peak %g", name, diff, peak)
		}
	}
}
