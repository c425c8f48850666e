package onnxvk_test

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/internal/npy"
	"github.com/onnxvk/onnxvk/internal/sessionvalues"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/planner"
)

// exportersDir is testdata/exporters: the manifest of the models of other
// exporters, fetch.sh and ONNX Runtime's outputs (ref/).
const exportersDir = "testdata/exporters"

// exporterModel is one entry of testdata/exporters/manifest.json.
type exporterModel struct {
	Name string `json:"name"`
	// Model names the entry whose file this one runs, on other inputs.
	Model    string          `json:"model"`
	Producer string          `json:"producer"`
	Exporter string          `json:"exporter"`
	Long     bool            `json:"long"`
	Inputs   []exporterInput `json:"inputs"`
	// Tolerance is the largest difference allowed from ONNX Runtime's
	// outputs on the CPU, |got − want| ≤ abs + rel·|want|; Vulkan gets
	// VulkanTolerance (both default to exporterTolerance).
	Tolerance       *ops.Tolerance `json:"tolerance"`
	VulkanTolerance *ops.Tolerance `json:"vulkan_tolerance"`
}

// exporterInput is one input of a model: seeded uniform values in
// [Uniform[0], Uniform[1]), or Value everywhere.
type exporterInput struct {
	Name    string    `json:"name"`
	DType   string    `json:"dtype"`
	Shape   []int64   `json:"shape"`
	Uniform []float64 `json:"uniform"`
	Value   *float64  `json:"value"`
}

// exporterOutput is ONNX Runtime's output as ref/NAME.json keeps it: the
// shape, every stride-th element (all of them for stride 1) as float32
// (the models' outputs are float32) and the sum of all.
type exporterOutput struct {
	Name   string    `json:"name"`
	Shape  []int64   `json:"shape"`
	Stride int64     `json:"stride"`
	Values []float32 `json:"values"`
	Sum    float64   `json:"sum"`
}

// exporterSamples is the most elements ref/NAME.json keeps of an output,
// a quarter of that for the long models' 12 outputs of up to 16M
// elements.
const exporterSamples = 2048

// exporterTolerance is the default tolerance against ONNX Runtime: the
// accumulating ops' (Conv, MatMul, Softmax...).
var exporterTolerance = ops.Tolerance{Abs: 1e-4, Rel: 1e-3}

// TestExporterModels runs models that other exporters made (paddle2onnx,
// tf2onnx, spox, ONNX Runtime's quantizer, onnxconverter-common's float16
// converter, PyTorch 1.11 to 2.8; see testdata/exporters/manifest.json)
// on the CPU and on Vulkan, on seeded inputs, and compares their outputs
// with ONNX Runtime 1.30's on the same inputs (testdata/exporters/ref).
// The models are not in the repository: testdata/exporters/fetch.sh DIR
// downloads them. The test runs when ONNXVK_EXPORTERS names that folder,
// or in the long suites from the model cache's exporters folder when the
// models are there (a missing one is skipped, not a failure, even in CI:
// .ci/run does not fetch them); the models marked long (1024×1024
// networks) only in the long suites. With
// ONNXVK_EXPORTERS_REFS=1 it first writes ref/ anew from ONNX Runtime
// (node and NODE_PATH as bench/ort/README.md says).
func TestExporterModels(t *testing.T) {
	dir := exporterModelsDir(t)
	var manifest struct {
		Models []exporterModel `json:"models"`
	}
	src, err := os.ReadFile(filepath.Join(exportersDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(src, &manifest); err != nil {
		t.Fatal(err)
	}
	for _, m := range manifest.Models {
		t.Run(m.Name, func(t *testing.T) {
			if m.Long {
				testenv.SkipLong(t)
			}
			file := m.Model
			if file == "" {
				file = m.Name
			}
			path := filepath.Join(dir, file+".onnx")
			if _, err := os.Stat(path); err != nil {
				if os.Getenv("ONNXVK_EXPORTERS") != "" {
					t.Fatalf("%v (ONNXVK_EXPORTERS names a folder without it: fetch the models with %s/fetch.sh)", err, exportersDir)
				}
				testenv.SkipNotFetched(t, fmt.Sprintf("%v: fetch the models with %s/fetch.sh %s", err, exportersDir, dir))
			}
			feeds := exporterFeeds(t, m)
			refFile := filepath.Join(exportersDir, "ref", m.Name+".json")
			if os.Getenv("ONNXVK_EXPORTERS_REFS") == "1" {
				samples := int64(exporterSamples)
				if m.Long {
					samples /= 4
				}
				writeExporterRef(t, path, feeds, refFile, samples)
			}
			var want []exporterOutput
			src, err := os.ReadFile(refFile)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(src, &want); err != nil {
				t.Fatalf("%s: %v", refFile, err)
			}
			t.Logf("%s (%s): %s", m.Name, m.Producer, m.Exporter)
			t.Run("cpu", func(t *testing.T) {
				sess, err := onnxvk.Load(path, onnxvk.WithDevice("cpu"))
				if err != nil {
					t.Fatal(err)
				}
				defer sess.Close()
				tol := exporterTolerance
				if m.Tolerance != nil {
					tol = *m.Tolerance
				}
				checkExporterOutputs(t, sess, feeds, want, tol)
			})
			if m.Long {
				// 1024×1024 networks take minutes on lavapipe.
				return
			}
			t.Run("vulkan", func(t *testing.T) {
				sess := openVulkan(t, func() (*onnxvk.Session, error) { return onnxvk.Load(path, onnxvk.WithDevice("vulkan")) })
				logPlacement(t, sess, feeds)
				tol := exporterTolerance
				if m.VulkanTolerance != nil {
					tol = *m.VulkanTolerance
				}
				checkExporterOutputs(t, sess, feeds, want, tol)
			})
		})
	}
}

// exporterModelsDir returns the folder of the fetched models: the one
// ONNXVK_EXPORTERS names, else, in the long suites, the model cache's
// exporters folder (ONNXVK_MODEL_CACHE's, or the user cache's
// onnxvk/exporters).
func exporterModelsDir(t *testing.T) string {
	if dir := os.Getenv("ONNXVK_EXPORTERS"); dir != "" {
		return dir
	}
	testenv.SkipLong(t)
	if dir := os.Getenv("ONNXVK_MODEL_CACHE"); dir != "" {
		return filepath.Join(dir, "exporters")
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		testenv.Skip(t, fmt.Sprint("no cache folder for the models (set ONNXVK_EXPORTERS): ", err))
	}
	return filepath.Join(dir, "onnxvk", "exporters")
}

// exporterFeeds makes m's inputs: each input's values come from a PCG
// seeded with the FNV-1a hashes of the model's and the input's names.
func exporterFeeds(t *testing.T, m exporterModel) map[string]*onnxvk.Tensor {
	t.Helper()
	hash := func(s string) uint64 {
		h := fnv.New64a()
		h.Write([]byte(s))
		return h.Sum64()
	}
	feeds := map[string]*onnxvk.Tensor{}
	for _, in := range m.Inputs {
		n := graph.NumElements(in.Shape)
		r := rand.New(rand.NewPCG(hash(m.Name), hash(in.Name)))
		value := func() float64 {
			if in.Value != nil {
				return *in.Value
			}
			return in.Uniform[0] + (in.Uniform[1]-in.Uniform[0])*r.Float64()
		}
		var x *onnxvk.Tensor
		var err error
		switch in.DType {
		case "float32":
			vs := make([]float32, n)
			for i := range vs {
				vs[i] = float32(value())
			}
			x, err = onnxvk.NewTensor(in.Shape, vs)
		case "int64":
			vs := make([]int64, n)
			for i := range vs {
				vs[i] = int64(value())
			}
			x, err = onnxvk.NewTensor(in.Shape, vs)
		default:
			t.Fatalf("input %s: dtype %q", in.Name, in.DType)
		}
		if err != nil {
			t.Fatal(err)
		}
		feeds[in.Name] = x
	}
	return feeds
}

// writeExporterRef runs the model at path on ONNX Runtime through node
// (bench/ort/outputs.js) with feeds and writes its outputs to refFile,
// each as up to samples elements.
func writeExporterRef(t *testing.T, path string, feeds map[string]*onnxvk.Tensor, refFile string, samples int64) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Skip(t, fmt.Sprintf("no node: %v", err))
	}
	tmp := t.TempDir()
	args := []string{filepath.Join("bench", "ort", "outputs.js"), path, "-", filepath.Join(tmp, "out.")}
	for name, x := range feeds {
		file := filepath.Join(tmp, fmt.Sprintf("in%d.npy", len(args)))
		if err := npy.WriteFile(file, x.Graph()); err != nil {
			t.Fatal(err)
		}
		args = append(args, name+"="+file)
	}
	if out, err := exec.Command(node, args...).CombinedOutput(); err != nil {
		t.Fatalf("node outputs.js: %v\n%s", err, out)
	}
	sess, err := onnxvk.Load(path, onnxvk.WithDevice("cpu"))
	if err != nil {
		t.Fatal(err)
	}
	outputs := sess.Outputs()
	sess.Close()
	var outs []exporterOutput
	for _, vi := range outputs {
		name := vi.Name
		x, err := npy.ReadFile(filepath.Join(tmp, "out."+name+".npy"))
		if err != nil {
			t.Fatal(err)
		}
		n := x.NumElements()
		o := exporterOutput{Name: name, Shape: x.Shape, Stride: max(1, (n+samples-1)/samples)}
		for i := range n {
			v := x.Float64At(i)
			o.Sum += v
			if i%o.Stride == 0 {
				o.Values = append(o.Values, float32(v))
			}
		}
		outs = append(outs, o)
	}
	src, err := json.Marshal(outs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(refFile, append(src, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkExporterOutputs runs sess on feeds and requires each output to have
// want's shape, its sampled elements within tol of want's and its sum
// within tol of want's sum scaled to the output's size; it logs the
// largest difference.
func checkExporterOutputs(t *testing.T, sess *onnxvk.Session, feeds map[string]*onnxvk.Tensor, want []exporterOutput, tol ops.Tolerance) {
	t.Helper()
	got, err := sess.Run(context.Background(), feeds)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		x := got[w.Name]
		if x == nil {
			t.Fatalf("no output %q", w.Name)
		}
		if !slices.Equal(x.Shape(), w.Shape) {
			t.Fatalf("output %q has shape %v, ONNX Runtime's %v", w.Name, x.Shape(), w.Shape)
		}
		g := x.Graph()
		worst, sum, mag := 0.0, 0.0, 0.0
		for i := range g.NumElements() {
			v := g.Float64At(i)
			sum += v
			mag += math.Abs(v)
			if i%w.Stride != 0 {
				continue
			}
			ref := float64(w.Values[i/w.Stride])
			if d := math.Abs(v - ref); d > worst || math.IsNaN(d) {
				worst = d
			}
			if !tol.Within(v, ref) {
				t.Errorf("output %q[%d] = %v, ONNX Runtime's %v (tolerance %+v)", w.Name, i, v, ref, tol)
				return
			}
		}
		n := float64(g.NumElements())
		if d := math.Abs(sum - w.Sum); d > tol.Abs*n+tol.Rel*mag {
			t.Errorf("output %q sums to %v, ONNX Runtime's to %v", w.Name, sum, w.Sum)
		}
		t.Logf("output %q %v: largest difference from ONNX Runtime %.3g (of %d elements compared)", w.Name, w.Shape, worst, len(w.Values))
	}
}

// logPlacement logs how many compute nodes of sess's plan for feeds run
// on each device, naming the ops left on another device than sess's.
func logPlacement(t *testing.T, sess *onnxvk.Session, feeds map[string]*onnxvk.Tensor) {
	t.Helper()
	types := map[string]*graph.Type{}
	for name, x := range feeds {
		types[name] = x.Graph().ValueType()
	}
	p, err := sessionvalues.Of(sess).Plan(types)
	if err != nil {
		t.Fatal(err)
	}
	on := map[string]int{}
	var elsewhere []string
	for _, st := range p.Steps {
		if st.Kind != planner.Compute {
			continue
		}
		on[st.Device]++
		if st.Device != sess.Device() && !slices.Contains(elsewhere, st.Node.OpType) {
			elsewhere = append(elsewhere, st.Node.OpType)
		}
	}
	t.Logf("compute nodes by device %v; elsewhere than %s: %v", on, sess.Device(), elsewhere)
}
