package onnxvk_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/npy"
	"github.com/onnxvk/onnxvk/internal/testenv"
)

// quantDir holds testdata/quant/gen.py's dynamic-quantized CNN, its input
// and ONNX Runtime's output for it.
const quantDir = "testdata/quant"

// dynQuantTolerance bounds the difference of the dynamic-quantized CNN's
// output from ONNX Runtime's, as a fraction of its peak. The quantized
// convolutions are exact, but float sums outside them (ReduceMean, the
// bias and residual Adds) may round differently, and a value one ulp
// across a rounding tie of the next DynamicQuantizeLinear moves by a
// whole quantization step. On lavapipe the output differs from ONNX
// Runtime's by 7e-8 of its peak, and the CPU's not at all.
const dynQuantTolerance = 1e-2

// quantInput returns the inputs of the dynamic-quantized CNN.
func quantInput(t *testing.T) map[string]*onnxvk.Tensor {
	t.Helper()
	in, err := npy.ReadFile(filepath.Join(quantDir, "input.npy"))
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*onnxvk.Tensor{"input": onnxvk.TensorFrom(in)}
}

// runQuantCNN runs the dynamic-quantized CNN in sess and returns its
// output.
func runQuantCNN(t *testing.T, sess *onnxvk.Session) []float32 {
	t.Helper()
	outs, err := sess.Run(context.Background(), quantInput(t))
	if err != nil {
		t.Fatal(err)
	}
	got, err := onnxvk.Data[float32](outs["output"])
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// ortOutput reads the output of ONNX Runtime stored at path.
func ortOutput(t *testing.T, path string) []float32 {
	t.Helper()
	ref, err := npy.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return graph.View[float32](ref)[:ref.NumElements()]
}

// TestDynamicQuantizedCNNVulkan runs the CNN that gen.py quantizes as
// ONNX Runtime's quantize_dynamic does (DynamicQuantizeLinear, ConvInteger
// with uint8 and int8 weights, depthwise and pointwise, MatMulInteger,
// Cast and the Mul scale-back) on the first Vulkan device: every compute
// node must be placed on it, every node must match the CPU's run of it
// alone within its op's tolerance (the integer ones exactly), and the
// output must match the CPU's and ONNX Runtime's within dynQuantTolerance
// of its peak.
func TestDynamicQuantizedCNNVulkan(t *testing.T) {
	model := filepath.Join(quantDir, "cnn_dynquant.onnx")
	sess := openVulkan(t, func() (*onnxvk.Session, error) { return onnxvk.Load(model, onnxvk.WithDevice("vulkan")) })
	checkOnDevice(t, sess, map[string]*graph.Type{"input": graph.TensorType(graph.Float, graph.ShapeOf(1, 3, 32, 32))})
	got := runQuantCNN(t, sess)

	cpu, err := onnxvk.Load(model, onnxvk.WithDevice("cpu"))
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	t.Run("cpu", func(t *testing.T) { compareToPeak(t, got, runQuantCNN(t, cpu), dynQuantTolerance) })
	t.Run("ort", func(t *testing.T) {
		compareToPeak(t, got, ortOutput(t, filepath.Join(quantDir, "ort_output.npy")), dynQuantTolerance)
	})

	checks, err := sess.Verify(context.Background(), quantInput(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		if !c.OK {
			t.Errorf("%s on %s: differs from the CPU by %.3g (rel %.3g), beyond %+v", c.Node, c.Device, c.MaxAbs, c.MaxRel, c.Tol)
		}
	}
	t.Logf("%d nodes checked one by one", len(checks))
}

// TestDynamicQuantizedCNNMatchesORT runs the CNN on ONNX Runtime through
// node (bench/ort/outputs.js) and requires the output that
// testdata/quant keeps, which TestDynamicQuantizedCNNVulkan compares
// with, to be the one ONNX Runtime gives now; and the CPU's output within
// dynQuantTolerance of it.
func TestDynamicQuantizedCNNMatchesORT(t *testing.T) {
	testenv.SkipUnlessEnv(t, "ONNXVK_ORT", "compares with ONNX Runtime through node")
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Skip(t, fmt.Sprintf("no node: %v", err))
	}
	prefix := filepath.Join(t.TempDir(), "ort_")
	model := filepath.Join(quantDir, "cnn_dynquant.onnx")
	out, err := exec.Command(node, filepath.Join("bench", "ort", "outputs.js"), model, filepath.Join(quantDir, "input.npy"), prefix).CombinedOutput()
	if err != nil {
		t.Fatalf("node outputs.js: %v\n%s", err, out)
	}
	fresh := ortOutput(t, prefix+"output.npy")
	compareToPeak(t, ortOutput(t, filepath.Join(quantDir, "ort_output.npy")), fresh, 0)
	cpu, err := onnxvk.Load(model, onnxvk.WithDevice("cpu"))
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	compareToPeak(t, runQuantCNN(t, cpu), fresh, dynQuantTolerance)
}

// staticQuantTolerance bounds the difference of the statically quantized
// CNNs' outputs (gen_static.py) from ONNX Runtime's, as a fraction of
// the peak: float sums (ReduceMean, the Adds, the QDQ form's float Conv)
// may round differently. The QLinear form's output equals ONNX Runtime's
// and the QDQ form's differs by 1.4e-7 of its peak. (With weights of the
// full int8 range instead of gen_static.py's reduced one, ONNX Runtime's
// saturating AVX2 kernel moves its outputs by up to 2 quantization units.)
const staticQuantTolerance = 1e-6

// TestStaticQuantizedCNNs runs the CNN quantized statically in the
// QOperator form (QLinearConv, QLinearMatMul) and in the QDQ form
// (QuantizeLinear/DequantizeLinear around float Conv and MatMul) on the
// CPU and compares each output with ONNX Runtime's (gen_static.py).
func TestStaticQuantizedCNNs(t *testing.T) {
	for _, name := range []string{"qlinear", "qdq"} {
		t.Run(name, func(t *testing.T) {
			cpu, err := onnxvk.Load(filepath.Join(quantDir, "cnn_"+name+".onnx"), onnxvk.WithDevice("cpu"))
			if err != nil {
				t.Fatal(err)
			}
			defer cpu.Close()
			compareToPeak(t, runQuantCNN(t, cpu), ortOutput(t, filepath.Join(quantDir, "ort_"+name+"_output.npy")), staticQuantTolerance)
		})
	}
}
