package loader

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/loader/onnxpb"
)

// fixtureValue is one expected element: a number, "nan", "inf", "-inf", a
// string, or a [real, imag] pair.
type fixtureValue = any

func fixtureFloat(t *testing.T, v fixtureValue) float64 {
	t.Helper()
	switch x := v.(type) {
	case float64:
		return x
	case string:
		switch x {
		case "nan":
			return math.NaN()
		case "inf":
			return math.Inf(1)
		case "-inf":
			return math.Inf(-1)
		}
	}
	t.Fatalf("bad fixture value %v", v)
	return 0
}

func sameValue(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return a == b && math.Signbit(a) == math.Signbit(b)
}

// TestNumpyFixtures decodes TensorProtos written by onnx.numpy_helper and
// onnx.helper.make_tensor (testdata/gen_fixtures.py) and compares every
// element with the values numpy held.
func TestNumpyFixtures(t *testing.T) {
	raw, err := os.ReadFile("testdata/numpy/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var expected map[string]struct {
		DataType int32          `json:"data_type"`
		Dims     []int64        `json:"dims"`
		Values   []fixtureValue `json:"values"`
	}
	if err := json.Unmarshal(raw, &expected); err != nil {
		t.Fatal(err)
	}
	if len(expected) < 30 {
		t.Fatalf("only %d fixtures", len(expected))
	}
	for name, want := range expected {
		b, err := os.ReadFile(filepath.Join("testdata/numpy", name+".pb"))
		if err != nil {
			t.Fatal(err)
		}
		tp := &onnxpb.TensorProto{}
		if err := proto.Unmarshal(b, tp); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := decodeTensorPB(tp)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if int32(got.DType) != want.DataType || got.NumElements() != int64(len(want.Values)) || len(got.Shape) != len(want.Dims) {
			t.Errorf("%s: got %s%v, want type %d dims %v", name, got.DType, got.Shape, want.DataType, want.Dims)
			continue
		}
		for i, w := range want.Values {
			switch {
			case got.DType == graph.String:
				if got.Strings[i] != w {
					t.Errorf("%s[%d] = %q, want %q", name, i, got.Strings[i], w)
				}
			case got.DType == graph.Complex64 || got.DType == graph.Complex128:
				pair := w.([]any)
				var re, im float64
				if got.DType == graph.Complex64 {
					c := graph.View[complex64](got)[i]
					re, im = float64(real(c)), float64(imag(c))
				} else {
					c := graph.View[complex128](got)[i]
					re, im = real(c), imag(c)
				}
				if !sameValue(re, fixtureFloat(t, pair[0])) || !sameValue(im, fixtureFloat(t, pair[1])) {
					t.Errorf("%s[%d] = %g%+gi, want %v", name, i, re, im, pair)
				}
			default:
				if v, wf := got.Float64At(int64(i)), fixtureFloat(t, w); !sameValue(v, wf) {
					t.Errorf("%s[%d] = %g, want %g", name, i, v, wf)
				}
			}
		}
	}
}

// TestPythonModelFixture loads a model saved by onnx.save_model with its
// weights in external data, a local function, an If and a sparse
// initializer.
func TestPythonModelFixture(t *testing.T) {
	m, err := Load("testdata/pymodel/model.onnx")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.IRVersion != 8 || m.ProducerName != "gen_fixtures.py" || len(m.ExternalFiles) != 1 || m.ExternalFiles[0] != "model.data" {
		t.Errorf("model header: IR %d, producer %q, external files %v", m.IRVersion, m.ProducerName, m.ExternalFiles)
	}
	big := m.Graph.Initializers["big"]
	if big == nil || big.NumElements() != 1000 || big.Float64At(999) != 999 {
		t.Fatalf("external initializer big: %v", big)
	}
	if w2 := m.Graph.Initializers["w2"]; w2 == nil || w2.Float64At(3) != -3 {
		t.Errorf("inline initializer w2: %v", w2)
	}
	sp := m.Graph.SparseInitializers["sp"]
	if sp == nil || sp.Values.Float64At(1) != 6 || graph.View[int64](sp.Indices)[1] != 3 {
		t.Errorf("sparse initializer: %+v", sp)
	}
	var ops []string
	for _, n := range m.Graph.Nodes {
		ops = append(ops, n.OpType)
	}
	if got := strings.Join(ops, " "); got != "LeakyRelu Relu If Add" {
		t.Errorf("nodes after inlining: %s", got)
	}
	if m.Graph.Nodes[0].AttrFloat("alpha", 0) != 0.5 {
		t.Errorf("inlined LeakyRelu: %v", m.Graph.Nodes[0].Attrs)
	}
	if then := m.Graph.Nodes[2].AttrGraph("then_branch"); then == nil || then.Parent != m.Graph {
		t.Error("If's then_branch is missing or not parented to the main graph")
	}
	if s := m.Graph.Inputs[0].Type.Shape; len(s) != 1 || s[0].Param != "N" {
		t.Errorf("symbolic input shape: %v", s)
	}
}

// TestPythonReadsSavedModel checks our writer against the reference reader:
// onnx.checker accepts a model saved with external data, and numpy_helper
// reads back the same weights. It needs /usr/bin/python3 with onnx.
func TestPythonReadsSavedModel(t *testing.T) {
	const python = "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import onnx").Run(); err != nil {
		testenv.Skip(t, "needs /usr/bin/python3 with the onnx package to cross-check the writer")
	}
	m, err := Load("testdata/pymodel/model.onnx")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	dir := t.TempDir()
	path := filepath.Join(dir, "out.onnx")
	if err := Save(m, path, WithExternalData("weights/out.bin", 64, 0)); err != nil {
		t.Fatal(err)
	}
	script := `
import sys, onnx, numpy as np
from onnx import numpy_helper
m = onnx.load(sys.argv[1])
onnx.checker.check_model(m)
inits = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
assert inits["big"].shape == (1000,) and inits["big"][999] == 999, inits["big"]
assert list(inits["w2"]) == [0, -1, -2, -3]
assert [n.op_type for n in m.graph.node] == ["LeakyRelu", "Relu", "If", "Add"]
print("ok")
`
	out, err := exec.Command(python, "-c", script, path).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("python onnx rejects our output: %v\n%s", err, out)
	}
}
