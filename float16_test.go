package onnxvk_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/x448/float16"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/internal/npy"
	"github.com/onnxvk/onnxvk/internal/sessionvalues"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/internal/torchmodels"
	"github.com/onnxvk/onnxvk/planner"
)

// openVulkan loads the model at path on the first Vulkan device, skipping
// the test when there is none.
func openVulkan(t *testing.T, load func() (*onnxvk.Session, error)) *onnxvk.Session {
	t.Helper()
	sess, err := load()
	if errors.Is(err, backend.ErrDeviceUnavailable) {
		testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", err))
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

// checkOnDevice requires every compute node of sess's plan for inputs to
// be placed on sess's device, and returns the plan.
func checkOnDevice(t *testing.T, sess *onnxvk.Session, inputs map[string]*graph.Type) *planner.Plan {
	t.Helper()
	p, err := sessionvalues.Of(sess).Plan(inputs)
	if err != nil {
		t.Fatal(err)
	}
	nodes := 0
	for _, st := range p.Steps {
		if st.Kind != planner.Compute {
			continue
		}
		nodes++
		if st.Device != sess.Device() {
			t.Errorf("%s (%s) is placed on %s, not %s", st.Node.Name, st.Node.OpType, st.Device, sess.Device())
		}
	}
	t.Logf("%d compute nodes on %s", nodes, sess.Device())
	return p
}

// checkAttentionFused requires plan p of a transformer to compute each of
// its attentions as one ScaledDotProductAttention on dt tensors: at least
// one such step and no Softmax left apart.
func checkAttentionFused(t *testing.T, p *planner.Plan, dt graph.DType) {
	t.Helper()
	fused := 0
	for _, st := range p.Steps {
		if st.Kind != planner.Compute {
			continue
		}
		switch st.Node.OpType {
		case "Softmax":
			t.Errorf("%s: a Softmax left out of the fused attention", st.Node.Name)
		case "ScaledDotProductAttention":
			fused++
			if e := p.Types[st.Out[0]].Elem; e != dt {
				t.Errorf("%s computes on %s, want %s", st.Node.Name, e, dt)
			}
		}
	}
	if fused == 0 {
		t.Error("no ScaledDotProductAttention step: the attention is not fused")
	}
	t.Logf("%d attentions fused", fused)
}

// widen returns the float32 values of a float16 tensor.
func widen(t *testing.T, x *onnxvk.Tensor) []float32 {
	t.Helper()
	h, err := onnxvk.Data[float16.Float16](x)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float32, len(h))
	for i, v := range h {
		out[i] = v.Float32()
	}
	return out
}

// TestFloat16ModelsVulkan runs float16 models (testdata/torch/export.py's
// resnet18_fp16 and transformer_fp16: the float32 models with every
// weight, activation, input and output made float16) on the first Vulkan
// device: every compute node must be placed on it, the transformer's
// attentions fused (a float16 ScaledDotProductAttention each), the output
// must match the float32 model's run on the CPU within
// ops.Float16ModelTolerance of its peak, and every node must agree with the
// CPU's run of it alone within its op's float16 tolerance
// (Session.Verify). resnet18_fp16 runs in the
// long suites: its export and runs take about a minute on a 2-core
// machine, and its check node by node (float16 convolutions on the CPU)
// more.
func TestFloat16ModelsVulkan(t *testing.T) {
	cache, names := exportModels(t, []string{"transformer_fp16"}, "resnet18_fp16")
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(cache, name)
			sess := openVulkan(t, func() (*onnxvk.Session, error) {
				return onnxvk.Load(filepath.Join(dir, "model.onnx"), onnxvk.WithDevice("vulkan"))
			})
			in, err := npy.ReadFile(filepath.Join(dir, "input.npy"))
			if err != nil {
				t.Fatal(err)
			}
			if in.DType != graph.Float16 {
				t.Fatalf("input.npy holds %s, want float16", in.DType)
			}
			p := checkOnDevice(t, sess, map[string]*graph.Type{"input": graph.TensorType(in.DType, graph.ShapeOf(in.Shape...))})
			if name == "transformer_fp16" {
				checkAttentionFused(t, p, graph.Float16)
			}
			outs, err := sess.Run(context.Background(), map[string]*onnxvk.Tensor{"input": onnxvk.TensorFrom(in)})
			if err != nil {
				t.Fatal(err)
			}
			got := widen(t, outs["output"])

			wide := graph.NewTensor(graph.Float, in.Shape)
			for i, b := range graph.View[uint16](in) {
				graph.View[float32](wide)[i] = float16.Frombits(b).Float32()
			}
			cpu, err := onnxvk.Load(filepath.Join(dir, "model_fp32.onnx"), onnxvk.WithDevice("cpu"))
			if err != nil {
				t.Fatal(err)
			}
			defer cpu.Close()
			ref, err := cpu.Run(context.Background(), map[string]*onnxvk.Tensor{"input": onnxvk.TensorFrom(wide)})
			if err != nil {
				t.Fatal(err)
			}
			want, err := onnxvk.Data[float32](ref["output"])
			if err != nil {
				t.Fatal(err)
			}
			compareToPeak(t, got, want, ops.Float16ModelTolerance)

			checks, err := sess.Verify(context.Background(), map[string]*onnxvk.Tensor{"input": onnxvk.TensorFrom(in)})
			if err != nil {
				t.Fatal(err)
			}
			worst := 0.0
			for _, c := range checks {
				worst = max(worst, c.MaxAbs)
				if !c.OK {
					t.Errorf("%s on %s: differs from the CPU by %.3g (rel %.3g), beyond %+v", c.Node, c.Device, c.MaxAbs, c.MaxRel, c.Tol)
				}
			}
			t.Logf("%d nodes checked one by one, largest difference %.3g", len(checks), worst)
		})
	}
}

// exportModels makes sure testdata/torch/export.py's models names, and
// in the long suites long too, are exported, and returns the cache folder
// holding them and their names; it skips in short mode.
func exportModels(t *testing.T, names []string, long ...string) (string, []string) {
	t.Helper()
	testenv.SkipShort(t, "exports and runs whole PyTorch models")
	if testenv.Long() {
		names = append(names, long...)
	}
	cache := torchmodels.Cache(t, ".")
	torchmodels.Export(t, ".", cache, names)
	return cache, names
}

// compareToPeak requires every element of got within tol·max|want| of
// want.
func compareToPeak(t *testing.T, got, want []float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d elements, want %d", len(got), len(want))
	}
	var peak, diff float64
	at := 0
	for i := range want {
		peak = max(peak, math.Abs(float64(want[i])))
		if d := math.Abs(float64(got[i]) - float64(want[i])); d > diff || math.IsNaN(d) {
			diff, at = d, i
		}
	}
	t.Logf("largest difference from the reference %.3g at element %d (%.3g of the peak %.3g)", diff, at, diff/peak, peak)
	if !(peak > 0) || !(diff <= tol*peak) {
		t.Errorf("element %d: %g, the reference gives %g: beyond %g of the peak %g", at, got[at], want[at], tol, peak)
	}
}

// matMulModel returns a model of one MatMul of input a [M, k] by a
// constant weight w [k, n] of element type dt, holding the values of w32.
func matMulModel(dt graph.DType, w32 []float32, k, n int64) *graph.Model {
	g := graph.NewGraph("matmul")
	g.Inputs = []*graph.ValueInfo{{Name: "a", Type: graph.TensorType(dt, graph.Shape{{Param: "M"}, {Value: k}})}}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	g.Initializers["w"] = tensorOf(dt, []int64{k, n}, w32)
	g.Nodes = []*graph.Node{{Name: "matmul", OpType: "MatMul", Inputs: []string{"a", "w"}, Outputs: []string{"y"}}}
	return &graph.Model{Name: "matmul", IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g}
}

// tensorOf returns a tensor of type dt (float32 or float16) and shape
// holding v.
func tensorOf(dt graph.DType, shape []int64, v []float32) *graph.Tensor {
	x := graph.NewTensor(dt, shape)
	if dt == graph.Float {
		copy(graph.View[float32](x), v)
		return x
	}
	for i, f := range v {
		graph.View[uint16](x)[i] = float16.Fromfloat32(f).Bits()
	}
	return x
}

// TestFloat16MatMulVulkan plans a float16 MatMul of [4096, 4096] by a
// [4096, 4096] weight on the first Vulkan device, which must take it, and
// runs it (on 16 rows; all 4096 in the long suites) against the float32
// product of the same float16 values on the CPU, within MatMul's float16
// tolerance element by element.
func TestFloat16MatMulVulkan(t *testing.T) {
	const k, n = 4096, 4096
	r := rand.New(rand.NewPCG(16, 1))
	w := make([]float32, k*n)
	for i := range w {
		w[i] = float16.Fromfloat32(r.Float32()*2 - 1).Float32()
	}
	sess := openVulkan(t, func() (*onnxvk.Session, error) {
		return onnxvk.NewSession(matMulModel(graph.Float16, w, k, n), onnxvk.WithDevice("vulkan"))
	})
	checkOnDevice(t, sess, map[string]*graph.Type{"a": graph.TensorType(graph.Float16, graph.ShapeOf(4096, k))})
	rows := int64(16)
	if testenv.Long() {
		rows = 4096
	}
	a := make([]float32, rows*k)
	for i := range a {
		a[i] = float16.Fromfloat32(r.Float32()*2 - 1).Float32()
	}
	outs, err := sess.Run(context.Background(), map[string]*onnxvk.Tensor{"a": onnxvk.TensorFrom(tensorOf(graph.Float16, []int64{rows, k}, a))})
	if err != nil {
		t.Fatal(err)
	}
	got := widen(t, outs["y"])
	cpu, err := onnxvk.NewSession(matMulModel(graph.Float, w, k, n), onnxvk.WithDevice("cpu"))
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	ref, err := cpu.Run(context.Background(), map[string]*onnxvk.Tensor{"a": onnxvk.TensorFrom(tensorOf(graph.Float, []int64{rows, k}, a))})
	if err != nil {
		t.Fatal(err)
	}
	want, err := onnxvk.Data[float32](ref["y"])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(outs["y"].Shape(), []int64{rows, n}) {
		t.Fatalf("shape %v, want [%d %d]", outs["y"].Shape(), rows, n)
	}
	tol := ops.Lookup("", "MatMul", 17).Tolerance()
	bad, worst := 0, 0.0
	for i := range want {
		worst = max(worst, math.Abs(float64(got[i])-float64(want[i])))
		if !tol.WithinFloat16(float64(got[i]), float64(want[i])) {
			if bad < 3 {
				t.Errorf("element %d: %g, float32 gives %g: beyond %+v", i, got[i], want[i], tol.Float16())
			}
			bad++
		}
	}
	t.Logf("%d×%d×%d: largest difference %.3g; %d elements beyond the tolerance", rows, k, n, worst, bad)
}
