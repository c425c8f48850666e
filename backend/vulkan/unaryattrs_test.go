package vulkan

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/internal/kerneltest"
)

// TestUnaryAttrsMatchCPU checks the unary.comp ops whose attributes
// TestUnaryMatchesCPU leaves at their defaults, Round on exact halves and
// Mod on operands whose quotients are whole numbers.
func TestUnaryAttrsMatchCPU(t *testing.T) {
	d := openTest(t)
	float := func(name string, v float32) *graph.Attribute {
		return &graph.Attribute{Name: name, Type: graph.AttrFloat, F: v}
	}
	halves := func(r *rand.Rand) float32 { return float32(r.IntN(21)-10) / 2 }
	cases := []struct {
		op    string
		opset int64
		attrs []*graph.Attribute
		gen   func(*rand.Rand) float32
	}{
		{"Gelu", 20, []*graph.Attribute{{Name: "approximate", Type: graph.AttrString, S: []byte("tanh")}}, uniform(-6, 6)},
		{"Gelu", 20, []*graph.Attribute{{Name: "approximate", Type: graph.AttrString, S: []byte("none")}}, uniform(-6, 6)},
		{"Celu", 12, []*graph.Attribute{float("alpha", 0.6)}, uniform(-4, 4)},
		{"Shrink", 9, []*graph.Attribute{float("lambd", 1.5), float("bias", 0.3)}, uniform(-4, 4)},
		{"ThresholdedRelu", 10, []*graph.Attribute{float("alpha", -0.5)}, uniform(-4, 4)},
		{"Round", 11, nil, halves},
		{"Mish", 18, nil, uniform(-30, 30)},
	}
	for _, c := range cases {
		attrs := map[string]*graph.Attribute{}
		for _, a := range c.attrs {
			attrs[a.Name] = a
		}
		for i, shape := range oddShapes {
			n := &graph.Node{OpType: c.op, Inputs: []string{"x"}, Outputs: []string{"y"}, Attrs: attrs}
			gpu, cpu, ok := runRandom(t, d, n, c.opset, []input{{shape: shape}}, c.gen, uint64(i))
			what := fmt.Sprintf("%s %v %v", c.op, c.attrs, shape)
			if !ok {
				t.Fatalf("%s unsupported", what)
			}
			kerneltest.CompareFloats(t, what, gpu, cpu, ops.Lookup("", c.op, c.opset).Tolerance())
		}
	}
	multiples := func(r *rand.Rand) float32 { return float32(r.IntN(41)-20) * []float32{0.1, 0.7, 3}[r.IntN(3)] }
	fmod := map[string]*graph.Attribute{"fmod": {Name: "fmod", Type: graph.AttrInt, I: 1}}
	for i, pair := range broadcastPairs {
		n := &graph.Node{OpType: "Mod", Inputs: []string{"a", "b"}, Outputs: []string{"y"}, Attrs: fmod}
		gpu, cpu, ok := runRandom(t, d, n, 13, []input{{shape: pair[0]}, {shape: pair[1]}}, multiples, uint64(i))
		if !ok {
			t.Fatalf("Mod %v unsupported", pair)
		}
		kerneltest.CompareFloats(t, fmt.Sprintf("Mod %v", pair), gpu, cpu, ops.Lookup("", "Mod", 13).Tolerance())
	}
	// Operands whose quotient is a whole number, equal operands among them:
	// a driver's x/y may be a few ULP off (on an NVIDIA H100, 13.3/13.3
	// came out below 1), which must not change the remainder.
	xs := []float32{13.3, -13.3, 13.3, 2.1, -2.1, 7, 0.7, 1e-3, 3e7, 0, -5}
	ys := []float32{13.3, 13.3, -0.7, 0.7, 0.3, 7, 0.1, 1e-3, 3, 2, 5}
	n := &graph.Node{OpType: "Mod", Inputs: []string{"a", "b"}, Outputs: []string{"y"}, Attrs: fmod}
	b, err := graph.FromSlice(graph.Float, []int64{int64(len(ys))}, ys)
	if err != nil {
		t.Fatal(err)
	}
	next := 0
	gen := func(*rand.Rand) float32 { next++; return xs[next-1] }
	gpu, cpu, ok := runRandom(t, d, n, 13, []input{{shape: b.Shape}, {value: b}}, gen, 0)
	if !ok {
		t.Fatal("Mod of whole-number quotients unsupported")
	}
	kerneltest.CompareFloats(t, fmt.Sprintf("Mod %v %v", xs, ys), gpu, cpu, ops.Lookup("", "Mod", 13).Tolerance())
}
