package planner_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/x448/float16"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/planner"
)

// TestPlanFloat16 plans y = Pow(Relu(ReduceSum(x·w + b)), 2) and
// s = (x + x)·x in the float16 mode: the product and the bias run on
// float16 tensors with float16 copies of w (values beyond ±65504
// saturated; the copy shared by a second plan) and b; ReduceSum and Pow,
// kept float32 by the policy, read float16 values through Casts back to
// float32, Relu between them runs float16; the graph input x is cast to
// float16 once though two nodes read it, and the Mul writing the graph
// output s stays float32.
func TestPlanFloat16(t *testing.T) {
	g := graph.NewGraph("half")
	w := graph.NewTensor(graph.Float, []int64{4, 3})
	copy(graph.View[float32](w), []float32{1, 0.1, -2, 70000, -70000, 1e-8, 0.5, 0.25, 3, 1, 1, 1})
	b := graph.NewTensor(graph.Float, []int64{3})
	g.Initializers = map[string]*graph.Tensor{"w": w, "b": b, "two": graph.Scalar(graph.Float, float32(2)),
		"axes": graph.Scalar(graph.Int64, int64(1))}
	g.Initializers["axes"].Shape = []int64{1}
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(2, 4))}}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}, {Name: "s"}}
	g.Nodes = []*graph.Node{
		{Name: "mm", OpType: "MatMul", Inputs: []string{"x", "w"}, Outputs: []string{"m"}},
		{Name: "add", OpType: "Add", Inputs: []string{"m", "b"}, Outputs: []string{"a"}, Index: 1},
		{Name: "sum", OpType: "ReduceSum", Inputs: []string{"a", "axes"}, Outputs: []string{"r"}, Index: 3},
		{Name: "relu", OpType: "Relu", Inputs: []string{"r"}, Outputs: []string{"u"}, Index: 4},
		{Name: "pow", OpType: "Pow", Inputs: []string{"u", "two"}, Outputs: []string{"y"}, Index: 5},
		{Name: "skip", OpType: "Add", Inputs: []string{"x", "x"}, Outputs: []string{"x2"}, Index: 6},
		{Name: "out", OpType: "Mul", Inputs: []string{"x2", "x"}, Outputs: []string{"s"}, Index: 7},
	}
	m := &graph.Model{Name: "half", IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g}
	dev := fakeDevice{"gpu", map[string]bool{"MatMul": true, "Add": true, "ReduceSum": true, "Relu": true, "Pow": true, "Cast": true, "Mul": true}}
	consts := &planner.HalfConstants{}
	p, err := planner.New(m, planner.Options{Devices: []planner.Device{dev}, Float16: consts})
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, st := range p.Steps {
		if st.Kind != planner.Compute {
			continue
		}
		var in []string
		for _, i := range st.In {
			in = append(in, fmt.Sprintf("%s:%s", p.Values[i], p.Types[i].Elem))
		}
		steps = append(steps, fmt.Sprintf("%s(%v)->%s", st.Node.OpType, in, p.Types[st.Out[0]].Elem))
	}
	want := []string{
		"Cast([x:float32])->float16",
		"MatMul([x_fp16:float16 w_fp16:float16])->float16",
		"Add([m:float16 b_fp16:float16])->float16",
		"Cast([a:float16])->float32",
		"ReduceSum([a_fp32:float32 axes:int64])->float32",
		"Cast([r:float32])->float16",
		"Relu([r_fp16:float16])->float16",
		"Cast([u:float16])->float32",
		"Pow([u_fp32:float32 two:float32])->float32",
		"Add([x_fp16:float16 x_fp16:float16])->float16",
		"Cast([x2:float16])->float32",
		"Mul([x2_fp32:float32 x:float32])->float32",
	}
	if !slices.Equal(steps, want) {
		t.Errorf("steps\n%q\nwant\n%q", steps, want)
	}
	if p.Half != 4 {
		t.Errorf("Half = %d, want 4", p.Half)
	}
	h := p.Constants[p.ValueIndex["w_fp16"]]
	if h == nil || h.DType != graph.Float16 {
		t.Fatalf("w_fp16 is %v", h)
	}
	for i, f := range graph.View[float32](w) {
		want := float16.Fromfloat32(min(max(f, -65504), 65504))
		if got := float16.Frombits(graph.View[uint16](h)[i]); got != want {
			t.Errorf("w[%d] = %v became %v, want %v", i, f, got, want)
		}
	}
	again, err := planner.New(m, planner.Options{Devices: []planner.Device{dev}, Float16: consts})
	if err != nil {
		t.Fatal(err)
	}
	if again.Constants[again.ValueIndex["w_fp16"]] != h {
		t.Error("a second plan made its own float16 copy of w")
	}
	if m.Graph.Initializers["w_fp16"] != nil || len(m.Graph.Nodes) != 7 || m.Graph.TypeOf("m") != nil && m.Graph.TypeOf("m").Elem != graph.Float {
		t.Error("planning changed the model")
	}
}
