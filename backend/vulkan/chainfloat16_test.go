package vulkan_test

import (
	"context"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/x448/float16"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/backend/vulkan"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/internal/testenv"
)

// halfTensor returns the float16 tensor of the values of the float32
// tensor t, rounded to nearest even, and the float32 tensor of those
// rounded values.
func halfTensor(t *graph.Tensor) (half, wide *graph.Tensor) {
	half, wide = graph.NewTensor(graph.Float16, t.Shape), graph.NewTensor(graph.Float, t.Shape)
	for i, v := range graph.View[float32](t) {
		f := float16.Fromfloat32(v)
		graph.View[uint16](half)[i], graph.View[float32](wide)[i] = f.Bits(), f.Float32()
	}
	return half, wide
}

// checkDispatchesFloat16 is checkDispatches for the float16 form of the
// model (each float32 input and constant made float16) at opset: a Run of
// it on Vulkan must take dispatches dispatches, and its output must agree
// with the CPU's float32 run on the same values (the inputs and constants
// rounded to float16) within tol widened to float16
// (ops.Tolerance.WithinFloat16).
//
// That tolerance is the one of a single float16 op, for a chain of them:
// chain.comp keeps the running value in fp32 and rounds once, at the
// store, where the unfused float16 ops round after each op, an error that
// the ops after it may grow. It logs the largest relative error of the
// fused result and of the CPU's unfused float16 run, in units of
// ops.Float16Error.
func checkDispatchesFloat16(t *testing.T, name string, opset int64, inputs map[string]*graph.Type, consts map[string]*graph.Tensor, nodes []*graph.Node, dispatches int64, tol ops.Tolerance) {
	t.Helper()
	halfIn := map[string]*graph.Type{}
	for k, ty := range inputs {
		halfIn[k] = ty
		if ty.Elem == graph.Float {
			halfIn[k] = graph.TensorType(graph.Float16, ty.Shape)
		}
	}
	halfConsts, wideConsts := maps.Clone(consts), maps.Clone(consts)
	for k, c := range consts {
		if c.DType == graph.Float {
			halfConsts[k], wideConsts[k] = halfTensor(c)
		}
	}
	gpu := openGPU(t, testModel(name, opset, halfIn, halfConsts, nodes))
	ref, err := onnxvk.NewSession(testModel(name, opset, inputs, wideConsts, nodes), onnxvk.WithDevice("cpu"))
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	r := rand.New(rand.NewPCG(1, 2))
	half, wide := map[string]*onnxvk.Tensor{}, map[string]*onnxvk.Tensor{}
	for _, k := range slices.Sorted(maps.Keys(inputs)) {
		x := graph.NewTensor(graph.Float, inputs[k].Shape.Ints())
		for i := range graph.View[float32](x) {
			graph.View[float32](x)[i] = 4*r.Float32() - 2
		}
		h, w := halfTensor(x)
		half[k], wide[k] = onnxvk.TensorFrom(h), onnxvk.TensorFrom(w)
	}
	got := runCounted(t, gpu, half, dispatches)
	if dt := got["y"].DType(); dt != graph.Float16 {
		t.Fatalf("y is %s, want float16", dt)
	}
	want, err := ref.Run(context.Background(), wide)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := got["y"].Float32s()
	w, _ := want["y"].Float32s()
	for i := range w {
		a, b := float64(g[i]), float64(w[i])
		if !(math.IsNaN(a) && math.IsNaN(b)) && !tol.WithinFloat16(a, b) {
			t.Fatalf("y[%d] = %v, the CPU's float32 %v (tolerance %+v)", i, g[i], w[i], tol.Float16())
		}
	}
	cpu, err := onnxvk.NewSession(testModel(name, opset, halfIn, halfConsts, nodes), onnxvk.WithDevice("cpu"))
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	unfused, err := cpu.Run(context.Background(), half)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := unfused["y"].Float32s()
	t.Logf("largest relative error from float32, in units of 2^-11: fused %.3g, the CPU's unfused float16 ops %.3g", worstHalfError(g, w), worstHalfError(u, w))
}

// worstHalfError returns the largest |got-want|/max(|want|, 2^-14) over
// the elements where both are finite, in units of ops.Float16Error.
func worstHalfError(got, want []float32) float64 {
	worst := 0.0
	for i := range want {
		a, b := float64(got[i]), float64(want[i])
		if math.IsInf(a, 0) || math.IsNaN(a) || math.IsInf(b, 0) || math.IsNaN(b) {
			continue
		}
		worst = max(worst, math.Abs(a-b)/max(math.Abs(b), 1.0/(1<<14))/ops.Float16Error)
	}
	return worst
}

// TestChainsFloat16MatchCPU runs chainCases on float16 tensors, which
// chain.comp's HALF variant fuses as it fuses float32 ones (the same
// dispatches), and a chain ending in each op chain.comp runs: each unary
// op after a product of mutually broadcast inputs of odd sizes (and what
// brings it into its domain), each binary op on a broadcast input and on
// an immediate on either side.
func TestChainsFloat16MatchCPU(t *testing.T) {
	for _, c := range chainCases() {
		t.Run(c.name, func(t *testing.T) {
			checkDispatchesFloat16(t, c.name, 17, c.inputs, c.consts, c.nodes, c.dispatches, chainTolerance(c.nodes, 17))
		})
	}
	const opset = 24
	f32 := func(s ...int64) *graph.Type { return graph.TensorType(graph.Float, graph.ShapeOf(s...)) }
	float := func(name string, v float32) *graph.Attribute {
		return &graph.Attribute{Name: name, Type: graph.AttrFloat, F: v}
	}
	attrs := map[string][]*graph.Attribute{
		"LeakyRelu": {float("alpha", 0.3)}, "Elu": {float("alpha", 0.7)}, "Selu": {float("alpha", 1.5), float("gamma", 1.1)},
		"HardSigmoid": {float("alpha", 0.3), float("beta", 0.4)}, "ThresholdedRelu": {float("alpha", 0.5)}, "Celu": {float("alpha", 0.6)},
		"Shrink": {float("lambd", 0.5), float("bias", 0.3)}, "Swish": {float("alpha", 0.8)},
		"Gelu": {{Name: "approximate", Type: graph.AttrString, S: []byte("tanh")}}, "Mod": {{Name: "fmod", Type: graph.AttrInt, I: 1}},
	}
	// domain holds the ops between the product and the op that bring
	// the product into the op's domain.
	domain := map[string][]*graph.Node{
		"Sqrt":  {node("Abs", []string{"a"}, "b"), node("Add", []string{"b", "small"}, "c")},
		"Log":   {node("Abs", []string{"a"}, "b"), node("Add", []string{"b", "small"}, "c")},
		"Acosh": {node("Abs", []string{"a"}, "b"), node("Add", []string{"b", "one"}, "c")},
		"Asin":  {node("Mul", []string{"a", "quarter"}, "c")},
		"Acos":  {node("Mul", []string{"a", "quarter"}, "c")},
		"Atanh": {node("Mul", []string{"a", "quarter"}, "c")},
	}
	consts := map[string]*graph.Tensor{"small": scalar(0.01), "one": scalar(1), "quarter": scalar(0.24), "k": scalar(1.25), "three": scalar(3)}
	with := func(n *graph.Node) *graph.Node {
		for _, a := range attrs[n.OpType] {
			n.Attrs[a.Name] = a
		}
		return n
	}
	// Each op compiles a chain of its own: outside the long suites every
	// second one runs.
	sample := testenv.NewSampler(2)
	unary, binary := vulkan.ElementwiseOps()
	for _, op := range unary {
		if !sample.Take() {
			continue
		}
		t.Run(op, func(t *testing.T) {
			nodes := []*graph.Node{node("Mul", []string{"x", "p"}, "a")}
			in := "a"
			if pre, ok := domain[op]; ok {
				nodes, in = append(nodes, pre...), "c"
			}
			nodes = append(nodes, with(node(op, []string{in}, "y")))
			checkDispatchesFloat16(t, op, opset, map[string]*graph.Type{"x": f32(3, 1, 7), "p": f32(1, 5, 1)}, consts, nodes, 1, chainTolerance(nodes, opset))
		})
	}
	for _, op := range binary {
		imm := "k"
		if op == "Pow" {
			imm = "three"
		}
		variants := map[string][]string{"input": {"n", "p"}, "immediate-b": {"n", imm}, "immediate-a": {imm, "n"}}
		if op == "PRelu" {
			// PRelu's slope broadcasts to its input, not the other way.
			delete(variants, "immediate-a")
		}
		for _, v := range slices.Sorted(maps.Keys(variants)) {
			if !sample.Take() {
				continue
			}
			t.Run(op+"/"+v, func(t *testing.T) {
				nodes := []*graph.Node{node("Neg", []string{"x"}, "n"), with(node(op, variants[v], "y"))}
				checkDispatchesFloat16(t, op, opset, map[string]*graph.Type{"x": f32(2, 3, 5, 7), "p": f32(3, 1, 1)}, consts, nodes, 1, chainTolerance(nodes, opset))
			})
		}
	}
}

// TestMaskedSoftmaxFloat16 checks maskedSoftmaxCases on float16 tensors
// (-1e9 becomes float16's -inf), and the fill float16 models write,
// -65504, which softmax.comp's HALF variant takes as it takes float32
// masks.
func TestMaskedSoftmaxFloat16(t *testing.T) {
	cases, consts := maskedSoftmaxCases()
	consts["lowest"] = scalar(-65504)
	cases = append(cases, dispatchCase{"lowest", cases[0].inputs, []*graph.Node{node("Where", []string{"keep", "x", "lowest"}, "m"),
		node("Softmax", []string{"m"}, "y", &graph.Attribute{Name: "axis", Type: graph.AttrInt, I: -1})}, 1})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkDispatchesFloat16(t, c.name, 17, c.inputs, consts, c.nodes, c.dispatches, ops.Lookup("", "Softmax", 13).Tolerance())
		})
	}
}
