package onnxvk_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/internal/npy"
	"github.com/onnxvk/onnxvk/internal/sessionvalues"
	"github.com/onnxvk/onnxvk/internal/testenv"
)

// mixedTolerance bounds, as a fraction of the output's peak, how far a
// mixed-precision model's output on the GPU may lie from the same model's
// run on the CPU and from ONNX Runtime's: the _mixed models compute in
// float32 on the same float16 weights, so only the order of float32 sums
// differs (about 1e-7 of the peak); the _keepio models
// compute in float16, where each device rounds every activation (2.4e-4
// of the peak against ONNX Runtime for squeezenet1_1, 1.1e-3 for the
// transformer).
var mixedTolerance = map[string]float64{"mixed": 1e-4, "keepio": ops.Float16ModelTolerance}

// TestMixedPrecisionVulkan runs the mixed-precision models of
// testdata/torch/export.py on the first Vulkan device: NAME_mixed, whose
// float32 Conv and Gemm read float16 weights through Cast nodes (folded
// at load: no Cast is left in the plan, and the weights stay float16 on
// the GPU, which then holds less memory than for the float32 model), and
// NAME_keepio, onnxconverter-common's keep_io_types form (float32
// input cast to float16, a float16 body, the output cast back, those
// Casts listed last). Every compute node must be placed on the GPU; the
// output must match the CPU's run of the same model within
// mixedTolerance, the float32 model's within ops.Float16ModelTolerance, and,
// with ONNXVK_ORT=1, ONNX Runtime's (bench/ort/outputs.js) within
// mixedTolerance. The transformer's run by default, squeezenet1_1's and
// resnet18's (13 s and 40 s each on lavapipe) in the long suites.
func TestMixedPrecisionVulkan(t *testing.T) {
	cache, names := exportModels(t, []string{"transformer_mixed", "transformer_keepio"},
		"squeezenet1_1_mixed", "squeezenet1_1_keepio", "resnet18_mixed", "resnet18_keepio")
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(cache, name)
			model := filepath.Join(dir, "model.onnx")
			tol := mixedTolerance[name[strings.LastIndex(name, "_")+1:]]
			sess := openVulkan(t, func() (*onnxvk.Session, error) { return onnxvk.Load(model, onnxvk.WithDevice("vulkan")) })
			in, err := npy.ReadFile(filepath.Join(dir, "input.npy"))
			if err != nil {
				t.Fatal(err)
			}
			inputs := map[string]*graph.Type{"input": graph.TensorType(in.DType, graph.ShapeOf(in.Shape...))}
			checkOnDevice(t, sess, inputs)
			p, err := sessionvalues.Of(sess).Plan(inputs)
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range p.Steps {
				if st.Node != nil && st.Node.OpType == "Cast" && len(st.In) == 1 && p.Constants[st.In[0]] != nil {
					t.Errorf("%s casts a constant at every Run", st.Node.Name)
				}
			}
			feed := map[string]*onnxvk.Tensor{"input": onnxvk.TensorFrom(in)}
			got := runOutput(t, sess, feed)
			if strings.HasSuffix(name, "_mixed") {
				// The weights widened from float16 stay float16 on the GPU.
				fp32 := openVulkan(t, func() (*onnxvk.Session, error) {
					return onnxvk.Load(filepath.Join(dir, "model_fp32.onnx"), onnxvk.WithDevice("vulkan"))
				})
				runOutput(t, fp32, feed)
				if got, full := sess.DeviceMemoryInUse(), fp32.DeviceMemoryInUse(); got >= full {
					t.Errorf("%d bytes of GPU memory, %d for the float32 model", got, full)
				} else {
					t.Logf("%d bytes of GPU memory, %d for the float32 model", got, full)
				}
			}
			compareToPeak(t, got, cpuOutput(t, model, feed), tol)
			compareToPeak(t, got, cpuOutput(t, filepath.Join(dir, "model_fp32.onnx"), feed), ops.Float16ModelTolerance)
			if os.Getenv("ONNXVK_ORT") == "1" {
				compareToPeak(t, got, ortRun(t, model, filepath.Join(dir, "input.npy")), tol)
			}
		})
	}
}

// runOutput runs sess on feed and returns its float32 output "output".
func runOutput(t *testing.T, sess *onnxvk.Session, feed map[string]*onnxvk.Tensor) []float32 {
	t.Helper()
	outs, err := sess.Run(context.Background(), feed)
	if err != nil {
		t.Fatal(err)
	}
	v, err := onnxvk.Data[float32](outs["output"])
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// cpuOutput runs the model at path on the CPU on feed and returns its
// float32 output "output".
func cpuOutput(t *testing.T, path string, feed map[string]*onnxvk.Tensor) []float32 {
	t.Helper()
	sess, err := onnxvk.Load(path, onnxvk.WithDevice("cpu"))
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	return runOutput(t, sess, feed)
}

// ortRun runs the model at path on ONNX Runtime (bench/ort/outputs.js)
// on the input in the .npy file input and returns its float32 output
// "output".
func ortRun(t *testing.T, path, input string) []float32 {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Skip(t, fmt.Sprintf("no node: %v", err))
	}
	prefix := filepath.Join(t.TempDir(), "ort_")
	if out, err := exec.Command(node, filepath.Join("bench", "ort", "outputs.js"), path, input, prefix).CombinedOutput(); err != nil {
		t.Fatalf("node outputs.js: %v\n%s", err, out)
	}
	return ortOutput(t, prefix+"output.npy")
}

// TestFP16ModeVulkan runs float32 models in the float16 mode (WithFP16)
// on the first Vulkan device and compares their outputs with the float32
// run on the CPU: the largest difference within ops.Float16ModelTolerance of
// the output's peak, and the same top-1 class per row. Every compute node
// must be placed on the GPU, and the transformer's attentions fused and
// computed on float16 tensors. The transformer runs by default, resnet18 in
// the long suites.
func TestFP16ModeVulkan(t *testing.T) {
	cache, names := exportModels(t, []string{"transformer"}, "resnet18")
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			model := filepath.Join(cache, name, "model.onnx")
			sess := openVulkan(t, func() (*onnxvk.Session, error) {
				return onnxvk.Load(model, onnxvk.WithDevice("vulkan"), onnxvk.WithFP16())
			})
			if p := sess.Precision(); p.Mode != onnxvk.PrecisionFP16 {
				testenv.Skip(t, "device without the float16 mode: "+p.String())
			}
			t.Logf("precision: %s", sess.Precision())
			in, err := npy.ReadFile(filepath.Join(cache, name, "input.npy"))
			if err != nil {
				t.Fatal(err)
			}
			p := checkOnDevice(t, sess, map[string]*graph.Type{"input": graph.TensorType(in.DType, graph.ShapeOf(in.Shape...))})
			if name == "transformer" {
				checkAttentionFused(t, p, graph.Float16)
			}
			feed := map[string]*onnxvk.Tensor{"input": onnxvk.TensorFrom(in)}
			got := runOutput(t, sess, feed)
			want := cpuOutput(t, model, feed)
			compareToPeak(t, got, want, ops.Float16ModelTolerance)
			var diff, mag float64
			for i := range want {
				diff += math.Abs(float64(got[i] - want[i]))
				mag += math.Abs(float64(want[i]))
			}
			row := int(in.Shape[len(in.Shape)-1])
			if name == "resnet18" {
				row = len(want)
			}
			agree := 0
			for r := 0; r < len(want); r += row {
				if argmax(got[r:r+row]) == argmax(want[r:r+row]) {
					agree++
				}
			}
			t.Logf("mean difference %.3g of the mean magnitude; top-1 agrees in %d of %d rows", diff/mag, agree, len(want)/row)
			if agree != len(want)/row {
				t.Errorf("top-1 differs from float32 in %d of %d rows", len(want)/row-agree, len(want)/row)
			}
		})
	}
}

// argmax returns the index of v's largest element.
func argmax(v []float32) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}
