package onnxvk_test

import (
	"context"
	"math"
	"testing"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/loader"
)

// TestSwishOpset24 loads a model that imports ai.onnx opset 24 (newer
// than the catalog's other schemas: Add keeps its opset-14 schema) with
// Swish after an Add, once with alpha 0.5 and once with the default 1,
// and checks that on the CPU and on Vulkan every compute node runs on
// the session's device and the outputs match a naive float64 loop within
// Swish's tolerance.
func TestSwishOpset24(t *testing.T) {
	const n = 1000
	g := graph.NewGraph("swish")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(n))}}
	g.Outputs = []*graph.ValueInfo{{Name: "half"}, {Name: "one"}}
	g.Initializers["b"], _ = graph.FromSlice(graph.Float, []int64{1}, []float32{0.25})
	g.Nodes = []*graph.Node{
		{Index: 0, Name: "add", OpType: "Add", Inputs: []string{"x", "b"}, Outputs: []string{"s"}},
		{Index: 1, Name: "swish_half", OpType: "Swish", Inputs: []string{"s"}, Outputs: []string{"half"},
			Attrs: map[string]*graph.Attribute{"alpha": {Name: "alpha", Type: graph.AttrFloat, F: 0.5}}},
		{Index: 2, Name: "swish", OpType: "Swish", Inputs: []string{"s"}, Outputs: []string{"one"}},
	}
	data, err := loader.Marshal(&graph.Model{Name: "swish", IRVersion: 10, Opsets: map[string]int64{"": 24}, Graph: g})
	if err != nil {
		t.Fatal(err)
	}
	xs := make([]float32, n)
	for i := range xs {
		xs[i] = float32(i-n/2) / 25 // -20 to 20
	}
	xs[0], xs[1], xs[2] = 0, -90, 90
	tol := ops.Lookup("", "Swish", 24).Tolerance()
	for _, dev := range []string{"cpu", "vulkan"} {
		t.Run(dev, func(t *testing.T) {
			sess, _ := placedSession(t, func() (*onnxvk.Session, error) { return onnxvk.LoadBytes(data, onnxvk.WithDevice(dev)) })
			x, err := onnxvk.NewTensor([]int64{n}, xs)
			if err != nil {
				t.Fatal(err)
			}
			out, err := sess.Run(context.Background(), map[string]*onnxvk.Tensor{"x": x})
			if err != nil {
				t.Fatal(err)
			}
			for name, alpha := range map[string]float64{"half": 0.5, "one": 1} {
				got, err := onnxvk.Data[float32](out[name])
				if err != nil {
					t.Fatal(err)
				}
				bad := 0
				for i, v := range xs {
					s := float64(v + 0.25)
					want := s * (1 / (1 + math.Exp(-alpha*s)))
					if d := math.Abs(float64(got[i]) - want); !(d <= tol.Abs+tol.Rel*math.Abs(want)) && bad < 3 {
						t.Errorf("%s: Swish(%g) with alpha %g = %g, want %g", dev, s, alpha, got[i], want)
						bad++
					}
				}
			}
		})
	}
}
