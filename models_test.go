package onnxvk_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/backend/vulkan"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/npy"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/internal/torchmodels"
	"github.com/onnxvk/onnxvk/loader"
)

// torchTolerance is the largest absolute difference allowed between
// PyTorch's output and the CPU path's.
const torchTolerance = 1e-4

// defaultTorchModels are the models of the export script's defaults that
// the PyTorch comparisons run outside the long suites (densenet_small's
// 1×1 convolutions are the CPU's NormConvs).
var defaultTorchModels = []string{"resnet18", "densenet_small", "transformer"}

// The models this package's default tests export (decoder_small for the
// decoder tests, decoder_gqa for TestDecoderGroupedQuery, squeezenet1_1
// for TestShardStagesTorchVulkan), exported
// in one run of the export script by whichever test needs one first; the
// long suites' other models are exported as their tests need them.
var _ = torchmodels.Want(append([]string{"decoder_small", "decoder_gqa", "transformer_fp16", "transformer_mixed", "transformer_keepio", "squeezenet1_1"}, defaultTorchModels...)...)

// cpuTorchModels returns the models TestTorchModels and
// TestTorchModelsFromArchive run: resnet18, densenet_small and the
// transformer, and in the long suites the rest of the export script's
// defaults, mobilenet_v2 and squeezenet1_1, whose kernels the node tests
// and resnet18 run too and whose export and runs cost seconds of a busy
// machine.
func cpuTorchModels() []string {
	if testenv.Long() {
		return torchmodels.Defaults
	}
	return defaultTorchModels
}

// TestTorchModels runs models exported from PyTorch on the CPU, loaded from
// their files as the CLI loads them, and compares their outputs with
// PyTorch's.
func TestTorchModels(t *testing.T) {
	testenv.SkipShort(t, "exports and runs whole PyTorch models")
	cache := torchmodels.Cache(t, ".")
	torchmodels.Export(t, ".", cache, cpuTorchModels())
	for _, name := range cpuTorchModels() {
		t.Run(name, func(t *testing.T) {
			sess, err := onnxvk.Load(filepath.Join(cache, name, "model.onnx"), onnxvk.WithDevice("cpu"))
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			checkTorchOutput(t, sess, filepath.Join(cache, name), torchTolerance)
		})
	}
}

// vulkanTorchModels returns the models that must run wholly on Vulkan,
// within vulkanTorchTolerance of PyTorch: resnet18, densenet_small and the
// transformer;
// squeezenet1_1, mobilenet_v2 (3 s on lavapipe on a busy 2-core machine;
// the kernel table covers its depthwise convolutions) and efficientnet_b0,
// exported for this test alone (8 s with its export), join them in the
// long suites.
func vulkanTorchModels() []string {
	if testenv.Long() {
		return append(slices.Clone(defaultTorchModels), "squeezenet1_1", "mobilenet_v2", "efficientnet_b0")
	}
	return defaultTorchModels
}

const vulkanTorchTolerance = 1e-3

// vulkanSchedules are the schedules model name runs under on Vulkan: the
// device's own choice and, in the long suites, each schedule and kernel
// variant another device could pick, forced (lavapipe itself picks the
// blocked MatMul and the direct Conv). resnet18 runs under every forced
// schedule (its convolutions and its Gemm), the transformer, which has no
// Conv, under the MatMul ones, mobilenet_v2 under the depthwise Conv
// (dwconv.comp, a GPU's choice); the other CNNs would repeat these
// kernels at several minutes of CI each.
func vulkanSchedules(name string) []vulkan.Schedule {
	out := []vulkan.Schedule{{}}
	if !testenv.Long() {
		return out
	}
	for _, s := range vulkan.ForcedSchedules() {
		if name == "resnet18" || name == "transformer" && s.MatMul != "" || name == "mobilenet_v2" && s.Conv == "depthwise" {
			out = append(out, s)
		}
	}
	return out
}

// TestTorchModelsVulkan runs the PyTorch models on the first Vulkan device
// (lavapipe in CI) under each of vulkanSchedules: every compute node of
// the plan must be placed on it, so that a Run is one submit, and the
// output must match PyTorch's.
func TestTorchModelsVulkan(t *testing.T) {
	testenv.SkipShort(t, "exports and runs whole PyTorch models")
	cache := torchmodels.Cache(t, ".")
	torchmodels.Export(t, ".", cache, vulkanTorchModels())
	for _, name := range vulkanTorchModels() {
		for _, s := range vulkanSchedules(name) {
			t.Run(name+"/"+s.String(), func(t *testing.T) { runTorchModelVulkan(t, cache, name, s) })
		}
	}
}

// runTorchModelVulkan runs the exported model name on the first Vulkan
// device under schedule s, as TestTorchModelsVulkan describes.
func runTorchModelVulkan(t *testing.T, cache, name string, s vulkan.Schedule) {
	sess, err := onnxvk.Load(filepath.Join(cache, name, "model.onnx"), onnxvk.WithDevice("vulkan"),
		onnxvk.WithVulkanOptions(vulkan.WithSchedule(s)))
	if errors.Is(err, backend.ErrDeviceUnavailable) {
		testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", err))
	}
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	in, err := npy.ReadFile(filepath.Join(cache, name, "input.npy"))
	if err != nil {
		t.Fatal(err)
	}
	checkOnDevice(t, sess, map[string]*graph.Type{"input": graph.TensorType(in.DType, graph.ShapeOf(in.Shape...))})
	checkTorchOutput(t, sess, filepath.Join(cache, name), vulkanTorchTolerance)
}

// checkTorchOutput runs sess on the exported model's input in dir and
// compares the output with PyTorch's, within tol.
func checkTorchOutput(t *testing.T, sess *onnxvk.Session, dir string, tol float64) {
	t.Helper()
	in, err := npy.ReadFile(filepath.Join(dir, "input.npy"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := npy.ReadFile(filepath.Join(dir, "output.npy"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	outs, err := sess.Run(context.Background(), map[string]*onnxvk.Tensor{"input": onnxvk.TensorFrom(in)})
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	out, ok := outs["output"]
	if !ok {
		t.Fatalf("no output named output among %d outputs", len(outs))
	}
	if !slices.Equal(out.Shape(), want.Shape) {
		t.Fatalf("output shape %v, PyTorch's %v", out.Shape(), want.Shape)
	}
	got, err := onnxvk.Data[float32](out)
	if err != nil {
		t.Fatal(err)
	}
	wantData, err := onnxvk.Data[float32](onnxvk.TensorFrom(want))
	if err != nil {
		t.Fatal(err)
	}
	var maxDiff, scale float64
	worst := 0
	for i := range got {
		scale = max(scale, math.Abs(float64(wantData[i])))
		d := math.Abs(float64(got[i]) - float64(wantData[i]))
		if d > maxDiff || math.IsNaN(d) {
			maxDiff, worst = d, i
		}
	}
	if !(scale >= 1e-2) {
		t.Fatalf("PyTorch's output peaks at %g: too small for an absolute tolerance of %g to mean anything", scale, tol)
	}
	t.Logf("max abs difference %.3g (element %d), run took %v", maxDiff, worst, elapsed.Round(time.Millisecond))
	if !(maxDiff <= tol) {
		t.Errorf("max abs difference %.3g at element %d (got %g, PyTorch %g) exceeds %g",
			maxDiff, worst, got[worst], wantData[worst], tol)
	}
}

// TestTorchModelsFromArchive converts each exported model to a zip archive
// and requires the archive to give the protobuf model's output bit for bit.
func TestTorchModelsFromArchive(t *testing.T) {
	testenv.SkipShort(t, "exports and runs whole PyTorch models")
	cache := torchmodels.Cache(t, ".")
	torchmodels.Export(t, ".", cache, cpuTorchModels())
	for _, name := range cpuTorchModels() {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(cache, name)
			in, err := npy.ReadFile(filepath.Join(dir, "input.npy"))
			require.NoError(t, err)
			m, err := loader.Load(filepath.Join(dir, "model.onnx"))
			require.NoError(t, err)
			archive := filepath.Join(t.TempDir(), "model.onnx")
			require.NoError(t, loader.SaveArchive(m, archive))
			require.NoError(t, m.Close())
			var outs [][]byte
			for _, path := range []string{filepath.Join(dir, "model.onnx"), archive} {
				sess, err := onnxvk.Load(path, onnxvk.WithDevice("cpu"))
				require.NoError(t, err)
				res, err := sess.Run(context.Background(), map[string]*onnxvk.Tensor{"input": onnxvk.TensorFrom(in)})
				require.NoError(t, err)
				outs = append(outs, res["output"].Bytes())
				require.NoError(t, sess.Close())
			}
			require.Equal(t, outs[0], outs[1])
		})
	}
}
