package vulkan_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/backend"
	"github.com/onnxvk/onnxvk/backend/vulkan"
	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/internal/testenv"
)

// node is a test graph node: op, inputs, output, attributes.
func node(op string, in []string, out string, attrs ...*graph.Attribute) *graph.Node {
	n := &graph.Node{OpType: op, Inputs: in, Outputs: []string{out}, Attrs: map[string]*graph.Attribute{}}
	for _, a := range attrs {
		n.Attrs[a.Name] = a
	}
	return n
}

func scalar(v float32) *graph.Tensor {
	t, _ := graph.FromSlice(graph.Float, nil, []float32{v})
	return t
}

// chainCase is a dispatchCase with constants.
type chainCase struct {
	name       string
	inputs     map[string]*graph.Type
	consts     map[string]*graph.Tensor
	nodes      []*graph.Node
	dispatches int64
}

// chainCases are chains of elementwise ops as models exporters write
// them, over float32 tensors, each with the dispatches a Run of it takes
// on Vulkan (chain.comp).
func chainCases() []chainCase {
	x := graph.TensorType(graph.Float, graph.ShapeOf(2, 3, 8, 8))
	cases := []chainCase{
		{"gelu-erf", map[string]*graph.Type{"x": x}, map[string]*graph.Tensor{"s2": scalar(1.4142135), "one": scalar(1), "half": scalar(0.5)},
			[]*graph.Node{node("Div", []string{"x", "s2"}, "a"), node("Erf", []string{"a"}, "b"), node("Add", []string{"b", "one"}, "c"),
				node("Mul", []string{"x", "c"}, "d"), node("Mul", []string{"d", "half"}, "y")}, 1},
		{"gelu-tanh", map[string]*graph.Type{"x": x}, map[string]*graph.Tensor{"three": scalar(3), "k": scalar(0.044715), "r": scalar(0.7978846), "one": scalar(1), "half": scalar(0.5)},
			[]*graph.Node{node("Pow", []string{"x", "three"}, "a"), node("Mul", []string{"k", "a"}, "b"), node("Add", []string{"x", "b"}, "c"),
				node("Mul", []string{"c", "r"}, "d"), node("Tanh", []string{"d"}, "e"), node("Add", []string{"e", "one"}, "f"),
				node("Mul", []string{"x", "f"}, "g"), node("Mul", []string{"half", "g"}, "y")}, 1},
		{"silu", map[string]*graph.Type{"x": x}, nil,
			[]*graph.Node{node("Sigmoid", []string{"x"}, "a"), node("Mul", []string{"x", "a"}, "y")}, 1},
		{"bias-leakyrelu", map[string]*graph.Type{"x": x, "bias": graph.TensorType(graph.Float, graph.ShapeOf(3, 1, 1))}, nil,
			[]*graph.Node{node("Add", []string{"x", "bias"}, "a"), node("LeakyRelu", []string{"a"}, "y", &graph.Attribute{Name: "alpha", Type: graph.AttrFloat, F: 0.3})}, 1},
		{"scale-mask", map[string]*graph.Type{"x": x, "mask": graph.TensorType(graph.Float, graph.ShapeOf(1, 1, 8, 8))}, map[string]*graph.Tensor{"d": scalar(8)},
			[]*graph.Node{node("Div", []string{"x", "d"}, "a"), node("Add", []string{"a", "mask"}, "y")}, 1},
		// Four inputs, each read twice, fit one dispatch; a fifth starts
		// another.
		{"four-inputs", map[string]*graph.Type{"x": x, "p": x, "q": x, "r": x}, nil,
			[]*graph.Node{node("Add", []string{"x", "p"}, "a"), node("Sub", []string{"a", "q"}, "b"), node("Mul", []string{"b", "r"}, "c"),
				node("Max", []string{"x", "c"}, "y1"), node("Div", []string{"y1", "p"}, "y2"), node("Min", []string{"q", "y2"}, "y3"),
				node("Pow", []string{"r", "y3"}, "y")}, 1},
		{"five-inputs-spill", map[string]*graph.Type{"x": x, "p": x, "q": x, "r": x, "s": x, "u": x}, nil,
			[]*graph.Node{node("Add", []string{"x", "p"}, "a"), node("Sub", []string{"a", "q"}, "b"), node("Mul", []string{"b", "r"}, "c"),
				node("Max", []string{"s", "c"}, "y1"), node("Min", []string{"y1", "u"}, "y")}, 2},
	}
	// Softmax written out: the planner may give Exp's output the memory of
	// ReduceMax's, dead by then unfused; fused, the broadcast max must
	// not be overwritten while it is read (the dispatch count depends on
	// the memory plan, so it is not checked).
	// ReduceMax takes its axes as the attribute of opset 17, ReduceSum as
	// the input it has had since 13.
	axes := &graph.Attribute{Name: "axes", Type: graph.AttrInts, Ints: []int64{-1}}
	last, _ := graph.FromSlice(graph.Int64, []int64{1}, []int64{-1})
	cases = append(cases, chainCase{"softmax-expanded", map[string]*graph.Type{"x": graph.TensorType(graph.Float, graph.ShapeOf(3, 4, 5))},
		map[string]*graph.Tensor{"last": last},
		[]*graph.Node{node("ReduceMax", []string{"x"}, "m", axes), node("Sub", []string{"x", "m"}, "a"), node("Exp", []string{"a"}, "e"),
			node("ReduceSum", []string{"e", "last"}, "s"), node("Div", []string{"e", "s"}, "y")}, -1})
	// Hard swish after a depthwise convolution, as paddle2onnx writes it
	// (PP-OCR's direction classifier): the memory plan gives Div's output
	// memory that starts before the convolution's output b, which Mul
	// reads last. Fused, invocations would overwrite elements of b that
	// others still read (lavapipe's result changed from run to run); so
	// Div is a dispatch of its own and Add, Relu and Mul one chain.
	ints := func(name string, v ...int64) *graph.Attribute {
		return &graph.Attribute{Name: name, Type: graph.AttrInts, Ints: v}
	}
	dw := make([]float32, 104*25)
	for i := range dw {
		dw[i] = float32(i%7-3) / 8
	}
	dwt, _ := graph.FromSlice(graph.Float, []int64{104, 1, 5, 5}, dw)
	cases = append(cases, chainCase{"hardswish-after-conv", map[string]*graph.Type{"x": graph.TensorType(graph.Float, graph.ShapeOf(1, 104, 3, 96))},
		map[string]*graph.Tensor{"w": dwt, "three": scalar(3), "six": scalar(6)},
		[]*graph.Node{node("Div", []string{"x", "six"}, "h"),
			node("Conv", []string{"h", "w"}, "b", ints("kernel_shape", 5, 5), ints("strides", 2, 1), ints("pads", 2, 2, 2, 2),
				&graph.Attribute{Name: "group", Type: graph.AttrInt, I: 104}),
			node("Add", []string{"b", "three"}, "p"), node("Relu", []string{"p"}, "q"), node("Mul", []string{"b", "q"}, "r"),
			node("Div", []string{"r", "six"}, "s"), node("GlobalAveragePool", []string{"s"}, "y")}, 5})
	// A chain of 20 unary ops: 16 in one dispatch, 4 in the next.
	long := []*graph.Node{}
	prev := "x"
	for i, op := range []string{"Tanh", "Sigmoid", "Neg", "Exp", "Softsign", "Abs", "Sqrt", "Sin", "Cos", "Relu",
		"Tanh", "Sigmoid", "Neg", "Exp", "Softsign", "Abs", "Sqrt", "Sin", "Cos", "Relu"} {
		out := fmt.Sprint("v", i)
		if i == 19 {
			out = "y"
		}
		long = append(long, node(op, []string{prev}, out))
		prev = out
	}
	return append(cases, chainCase{"long", map[string]*graph.Type{"x": x}, nil, long, 2})
}

// chainTolerance is the loosest tolerance of the ops of nodes at opset.
func chainTolerance(nodes []*graph.Node, opset int64) ops.Tolerance {
	tol := ops.Tolerance{}
	for _, n := range nodes {
		nt := ops.Lookup("", n.OpType, opset).Tolerance()
		tol.Abs, tol.Rel = max(tol.Abs, nt.Abs), max(tol.Rel, nt.Rel)
	}
	return tol
}

// TestChainsMatchCPU requires each of chainCases to be the expected
// number of dispatches on Vulkan and to match the unfused CPU ops within
// the loosest tolerance of the ops involved.
func TestChainsMatchCPU(t *testing.T) {
	for _, c := range chainCases() {
		t.Run(c.name, func(t *testing.T) {
			checkDispatches(t, c.name, c.inputs, c.consts, c.nodes, c.dispatches, chainTolerance(c.nodes, 17))
		})
	}
}

// dispatchCase is a model of nodes over inputs (output y) and the
// dispatches a Run of it must take on Vulkan.
type dispatchCase struct {
	name       string
	inputs     map[string]*graph.Type
	nodes      []*graph.Node
	dispatches int64
}

// runDispatchCases runs checkDispatches on each case, with consts and tol.
func runDispatchCases(t *testing.T, cases []dispatchCase, consts map[string]*graph.Tensor, tol ops.Tolerance, opts ...vulkan.OpenOption) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkDispatches(t, c.name, c.inputs, consts, c.nodes, c.dispatches, tol, opts...)
		})
	}
}

// checkDispatches builds a model of nodes over inputs and consts with
// output y, runs it on Vulkan and on the CPU with seeded inputs in
// [-2, 2), and requires dispatches dispatches per Run (any number when
// negative) and y within tol of the CPU's (equal values, infinities
// included, and NaN against NaN pass). The Vulkan device opens with
// opts.
func checkDispatches(t *testing.T, name string, inputs map[string]*graph.Type, consts map[string]*graph.Tensor, nodes []*graph.Node, dispatches int64, tol ops.Tolerance, opts ...vulkan.OpenOption) {
	t.Helper()
	gpu := openGPU(t, testModel(name, 17, inputs, consts, nodes), opts...)
	cpu, err := onnxvk.NewSession(testModel(name, 17, inputs, consts, nodes), onnxvk.WithDevice("cpu"))
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	r := rand.New(rand.NewPCG(1, 2))
	in := map[string]*onnxvk.Tensor{}
	for _, name := range slices.Sorted(maps.Keys(inputs)) {
		shape := inputs[name].Shape.Ints()
		vs := make([]float32, graph.NumElements(shape))
		for i := range vs {
			vs[i] = 4*r.Float32() - 2
		}
		in[name], _ = onnxvk.NewTensor(shape, vs)
	}
	got := runCounted(t, gpu, in, dispatches)
	want, err := cpu.Run(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := got["y"].Float32s()
	w, _ := want["y"].Float32s()
	for i := range w {
		d := math.Abs(float64(g[i] - w[i]))
		if g[i] != w[i] && !(d <= tol.Abs+tol.Rel*math.Abs(float64(w[i]))) && !(math.IsNaN(float64(g[i])) && math.IsNaN(float64(w[i]))) {
			t.Fatalf("y[%d] = %v, the CPU's %v (tolerance %+v)", i, g[i], w[i], tol)
		}
	}
}

// testModel returns a model of nodes over inputs and consts at opset,
// with output y.
func testModel(name string, opset int64, inputs map[string]*graph.Type, consts map[string]*graph.Tensor, nodes []*graph.Node) *graph.Model {
	g := graph.NewGraph(name)
	for _, in := range slices.Sorted(maps.Keys(inputs)) {
		g.Inputs = append(g.Inputs, &graph.ValueInfo{Name: in, Type: inputs[in]})
	}
	maps.Copy(g.Initializers, consts)
	// Each model gets its own nodes: loading brings them to their
	// canonical forms in place.
	for i, n := range nodes {
		c := *n
		c.Index = i
		g.Nodes = append(g.Nodes, &c)
	}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	return &graph.Model{Name: name, IRVersion: 8, Opsets: map[string]int64{"": opset}, Graph: g}
}

// openGPU opens m on Vulkan, with opts, closed when the test ends; it
// skips the test where there is no Vulkan device.
func openGPU(t *testing.T, m *graph.Model, opts ...vulkan.OpenOption) *onnxvk.Session {
	t.Helper()
	gpu, err := onnxvk.NewSession(m, onnxvk.WithDevice("vulkan"), onnxvk.WithVulkanOptions(opts...))
	if errors.Is(err, backend.ErrDeviceUnavailable) {
		testenv.Skip(t, fmt.Sprintf("no Vulkan device: %v", err))
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gpu.Close() })
	return gpu
}

// runCounted runs gpu on in twice and returns the outputs of the second
// Run, which must take dispatches dispatches (any number when negative).
func runCounted(t *testing.T, gpu *onnxvk.Session, in map[string]*onnxvk.Tensor, dispatches int64) map[string]*onnxvk.Tensor {
	t.Helper()
	if _, err := gpu.Run(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	before := gpu.Counters()
	got, err := gpu.Run(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if n := gpu.Counters().Sub(before).Dispatches; dispatches >= 0 && n != dispatches {
		t.Errorf("%d dispatches, want %d", n, dispatches)
	}
	return got
}

// TestTransposeIntoMatMul checks products that read a Transpose's output:
// attention's Q·Kᵀ with batch and head axes, a transposed A, a transposed
// operand also read elsewhere and one whose memory the product's output
// takes (neither folded). Each must match
// the CPU, in the expected number of dispatches.
func TestTransposeIntoMatMul(t *testing.T) {
	perm := func(p ...int64) *graph.Attribute {
		return &graph.Attribute{Name: "perm", Type: graph.AttrInts, Ints: p}
	}
	f32 := func(s ...int64) *graph.Type { return graph.TensorType(graph.Float, graph.ShapeOf(s...)) }
	cases := []dispatchCase{
		{"q-kT", map[string]*graph.Type{"q": f32(2, 3, 5, 8), "k": f32(2, 3, 7, 8)},
			[]*graph.Node{node("Transpose", []string{"k"}, "kt", perm(0, 1, 3, 2)), node("MatMul", []string{"q", "kt"}, "y")}, 1},
		{"heads", map[string]*graph.Type{"x": f32(2, 5, 3, 8), "w": f32(3, 8, 4)},
			[]*graph.Node{node("Transpose", []string{"x"}, "xt", perm(0, 2, 1, 3)), node("MatMul", []string{"xt", "w"}, "y")}, 1},
		{"aT-default-perm", map[string]*graph.Type{"a": f32(6, 4), "b": f32(6, 5)},
			[]*graph.Node{node("Transpose", []string{"a"}, "at"), node("MatMul", []string{"at", "b"}, "y")}, 1},
		{"read-twice", map[string]*graph.Type{"a": f32(4, 4), "b": f32(4, 4)},
			// The Add is the product's residual (see TestProductTails).
			[]*graph.Node{node("Transpose", []string{"a"}, "at"), node("MatMul", []string{"at", "b"}, "p"), node("Add", []string{"p", "at"}, "y")}, 2},
		// Unfused, the Transpose's input is dead after the Transpose, and
		// the memory plan gave the product's output its memory (PP-OCRv4's
		// recognizer from paddle2onnx: Kᵀ of a slice of the QKV product),
		// where the folded product would overwrite the input it still
		// reads. The planner keeps that input alive until the product
		// (TestTransposedOperandOutlivesProduct), so it folds, correctly.
		{"output-over-input", map[string]*graph.Type{"q": f32(2, 3, 5, 8), "k": f32(2, 3, 7, 8)},
			[]*graph.Node{node("Relu", []string{"k"}, "kr"), node("Transpose", []string{"kr"}, "kt", perm(0, 1, 3, 2)),
				node("MatMul", []string{"q", "kt"}, "p"), node("Neg", []string{"p"}, "y")}, 3},
	}
	runDispatchCases(t, cases, nil, ops.Lookup("", "MatMul", 13).Tolerance())
}

// TestProductTails checks what matmul.comp's store absorbs after a
// product: a scale by a constant and a residual of the result's shape, in
// that order, after MatMul and after FusedMatMul (MatMul + bias); a scale
// after the residual stays a dispatch of its own.
func TestProductTails(t *testing.T) {
	f32 := func(s ...int64) *graph.Type { return graph.TensorType(graph.Float, graph.ShapeOf(s...)) }
	w := graph.NewTensor(graph.Float, []int64{8, 6})
	ws := graph.View[float32](w)
	for i := range ws {
		ws[i] = float32(i%7)/7 - 0.5
	}
	bias, _ := graph.FromSlice(graph.Float, []int64{6}, []float32{0.1, -0.2, 0.3, -0.4, 0.5, -0.6})
	consts := map[string]*graph.Tensor{"s": scalar(0.125), "w": w, "bias": bias}
	cases := []dispatchCase{
		{"scale-residual", map[string]*graph.Type{"a": f32(2, 3, 5, 8), "b": f32(2, 3, 8, 7), "r": f32(2, 3, 5, 7)},
			[]*graph.Node{node("MatMul", []string{"a", "b"}, "p"), node("Mul", []string{"s", "p"}, "q"), node("Add", []string{"q", "r"}, "y")}, 1},
		{"bias-residual", map[string]*graph.Type{"x": f32(4, 8), "r": f32(4, 6)},
			[]*graph.Node{node("MatMul", []string{"x", "w"}, "p"), node("Add", []string{"p", "bias"}, "q"), node("Add", []string{"r", "q"}, "y")}, 1},
		{"residual-scale", map[string]*graph.Type{"x": f32(4, 8), "r": f32(4, 6)},
			[]*graph.Node{node("MatMul", []string{"x", "w"}, "p"), node("Add", []string{"p", "r"}, "q"), node("Mul", []string{"q", "s"}, "y")}, 2},
		{"broadcast-add", map[string]*graph.Type{"x": f32(4, 8), "r": f32(1, 6)},
			[]*graph.Node{node("MatMul", []string{"x", "w"}, "p"), node("Add", []string{"p", "r"}, "y")}, 2},
	}
	runDispatchCases(t, cases, consts, ops.Lookup("", "MatMul", 13).Tolerance())
}

// TestProductFoldsEachSchedule checks the folds into matmul.comp (a
// transposed operand, a scale, a bias, a residual) on products of few rows
// with each schedule forced: attention's Q·Kᵀ at one query, whose Kᵀ is
// read along k, a transposed A, and bias and residual on 1 to 3 rows.
func TestProductFoldsEachSchedule(t *testing.T) {
	perm := func(p ...int64) *graph.Attribute {
		return &graph.Attribute{Name: "perm", Type: graph.AttrInts, Ints: p}
	}
	f32 := func(s ...int64) *graph.Type { return graph.TensorType(graph.Float, graph.ShapeOf(s...)) }
	r := rand.New(rand.NewPCG(3, 4))
	w := graph.NewTensor(graph.Float, []int64{65, 129})
	bias := graph.NewTensor(graph.Float, []int64{129})
	for _, x := range []*graph.Tensor{w, bias} {
		for i := range graph.View[float32](x) {
			graph.View[float32](x)[i] = 2*r.Float32() - 1
		}
	}
	consts := map[string]*graph.Tensor{"s": scalar(0.125), "w": w, "bias": bias}
	cases := []dispatchCase{
		{"q-kT", map[string]*graph.Type{"q": f32(1, 8, 1, 64), "k": f32(1, 8, 129, 64)},
			[]*graph.Node{node("Transpose", []string{"k"}, "kt", perm(0, 1, 3, 2)), node("MatMul", []string{"q", "kt"}, "y")}, 1},
		{"aT", map[string]*graph.Type{"a": f32(65, 3), "b": f32(65, 33)},
			[]*graph.Node{node("Transpose", []string{"a"}, "at"), node("MatMul", []string{"at", "b"}, "y")}, 1},
		{"scale-residual", map[string]*graph.Type{"a": f32(2, 3, 1, 65), "b": f32(2, 3, 65, 33), "r": f32(2, 3, 1, 33)},
			[]*graph.Node{node("MatMul", []string{"a", "b"}, "p"), node("Mul", []string{"s", "p"}, "q"), node("Add", []string{"q", "r"}, "y")}, 1},
		{"bias-residual", map[string]*graph.Type{"x": f32(3, 65), "r": f32(3, 129)},
			[]*graph.Node{node("MatMul", []string{"x", "w"}, "p"), node("Add", []string{"p", "bias"}, "q"), node("Add", []string{"r", "q"}, "y")}, 1},
		{"bias-residual-one-row", map[string]*graph.Type{"x": f32(1, 65), "r": f32(1, 129)},
			[]*graph.Node{node("MatMul", []string{"x", "w"}, "p"), node("Add", []string{"p", "bias"}, "q"), node("Add", []string{"r", "q"}, "y")}, 1},
	}
	for _, name := range vulkan.MatMulSchedules() {
		if name == "blocked" && !testenv.Long() {
			// lavapipe's default: TestProductTails and
			// TestTransposeIntoMatMul cover it.
			continue
		}
		t.Run(name, func(t *testing.T) {
			runDispatchCases(t, cases, consts, ops.Lookup("", "MatMul", 13).Tolerance(), vulkan.WithSchedule(vulkan.Schedule{MatMul: name}))
		})
	}
}

// TestConcatInPlace checks Concats whose inputs their producers write
// straight into the output (no copy) and Concats that must copy: batch 2
// (the inputs are not contiguous blocks of the output), an input that is
// a graph input, and an input read by another node too; and an empty
// input, which the GPU skips.
func TestConcatInPlace(t *testing.T) {
	f32 := func(s ...int64) *graph.Type { return graph.TensorType(graph.Float, graph.ShapeOf(s...)) }
	axis := &graph.Attribute{Name: "axis", Type: graph.AttrInt, I: 1}
	fire := func(batch int64) ([]*graph.Node, map[string]*graph.Type) {
		return []*graph.Node{node("Relu", []string{"x"}, "a"), node("Sigmoid", []string{"x"}, "b"), node("Tanh", []string{"x"}, "c"),
				node("Concat", []string{"a", "b", "c"}, "y", axis)},
			map[string]*graph.Type{"x": f32(batch, 16, 4, 4)}
	}
	one, oneIn := fire(1)
	two, twoIn := fire(2)
	cases := []dispatchCase{
		{"in-place", oneIn, one, 3},
		{"batch-2", twoIn, two, 6},
		{"empty-part", map[string]*graph.Type{"x": f32(1, 16, 4, 4), "e": f32(1, 0, 4, 4)},
			[]*graph.Node{node("Relu", []string{"x"}, "a"), node("Concat", []string{"e", "a"}, "y", axis)}, 2},
		{"graph-input", map[string]*graph.Type{"x": f32(1, 16, 4, 4)},
			[]*graph.Node{node("Relu", []string{"x"}, "a"), node("Concat", []string{"a", "x"}, "y", axis)}, 3},
		{"read-twice", map[string]*graph.Type{"x": f32(1, 16, 4, 4)},
			[]*graph.Node{node("Relu", []string{"x"}, "a"), node("Neg", []string{"x"}, "b"), node("Concat", []string{"a", "b"}, "c", axis),
				node("Add", []string{"c", "c"}, "d"), node("Concat", []string{"d", "a"}, "y", axis)}, 7},
	}
	runDispatchCases(t, cases, nil, ops.Lookup("", "Tanh", 13).Tolerance())
}

// TestSplitIntoTransposes checks attention's head split: a product's
// output split in three, each part reshaped into heads and transposed,
// copied straight from the product's output (one copy per part, no Split);
// and a split whose part is also read elsewhere, which stays.
func TestSplitIntoTransposes(t *testing.T) {
	f32 := func(s ...int64) *graph.Type { return graph.TensorType(graph.Float, graph.ShapeOf(s...)) }
	axis := &graph.Attribute{Name: "axis", Type: graph.AttrInt, I: 2}
	perm := &graph.Attribute{Name: "perm", Type: graph.AttrInts, Ints: []int64{0, 2, 1, 3}}
	heads, _ := graph.FromSlice(graph.Int64, []int64{4}, []int64{2, 3, 4, 4})
	consts := map[string]*graph.Tensor{"heads": heads}
	split := func(extra ...*graph.Node) []*graph.Node {
		nodes := []*graph.Node{node("Relu", []string{"x"}, "qkv"), {OpType: "Split", Inputs: []string{"qkv"}, Outputs: []string{"q", "k", "v"},
			Attrs: map[string]*graph.Attribute{"axis": axis}}}
		for _, p := range []string{"q", "k", "v"} {
			nodes = append(nodes, node("Reshape", []string{p, "heads"}, p+"r"), node("Transpose", []string{p + "r"}, p+"t", perm))
		}
		nodes = append(nodes, node("Add", []string{"qt", "kt"}, "s"), node("Add", []string{"s", "vt"}, "y"))
		return append(nodes, extra...)
	}
	cases := []struct {
		name       string
		nodes      []*graph.Node
		dispatches int64
	}{
		// Relu, three copies, the two Adds as one chain.
		{"heads", split(), 5},
		// k read by a Neg too: the Split stays (3 copies) beside the three
		// Transposes and the Neg.
		{"part-read-twice", split(node("Neg", []string{"k"}, "kn")), 9},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkDispatches(t, c.name, map[string]*graph.Type{"x": f32(2, 3, 48)}, consts, c.nodes, c.dispatches, ops.Lookup("", "Add", 13).Tolerance())
		})
	}
}

// maskedSoftmaxCases are attention's masks before Softmax and
// LogSoftmax, over float32 tensors: Where(causal, -inf, x) and Where(keep,
// x, -1e9) of a constant bool mask, folded into the Softmax, and a mask
// computed at run time (not folded); with their constants.
func maskedSoftmaxCases() ([]dispatchCase, map[string]*graph.Tensor) {
	f32 := func(s ...int64) *graph.Type { return graph.TensorType(graph.Float, graph.ShapeOf(s...)) }
	causal := graph.NewTensor(graph.Bool, []int64{1, 1, 4, 6})
	keep := graph.NewTensor(graph.Bool, []int64{1, 1, 4, 6})
	for i := range 4 {
		for j := range 6 {
			if j > i+2 {
				causal.Data[i*6+j] = 1
			} else {
				keep.Data[i*6+j] = 1
			}
		}
	}
	consts := map[string]*graph.Tensor{"causal": causal, "keep": keep, "ninf": scalar(float32(math.Inf(-1))), "low": scalar(-1e9)}
	axis := &graph.Attribute{Name: "axis", Type: graph.AttrInt, I: -1}
	cases := []dispatchCase{
		{"softmax", map[string]*graph.Type{"x": f32(2, 3, 4, 6)},
			[]*graph.Node{node("Where", []string{"causal", "ninf", "x"}, "m"), node("Softmax", []string{"m"}, "y", axis)}, 1},
		{"logsoftmax-else", map[string]*graph.Type{"x": f32(2, 3, 4, 6)},
			[]*graph.Node{node("Where", []string{"keep", "x", "low"}, "m"), node("LogSoftmax", []string{"m"}, "y", axis)}, 1},
		{"runtime-mask", map[string]*graph.Type{"x": f32(2, 3, 4, 6), "z": f32(1, 1, 4, 6)},
			[]*graph.Node{node("Greater", []string{"z", "low"}, "c"), node("Where", []string{"c", "ninf", "x"}, "m"), node("Softmax", []string{"m"}, "y", axis)}, 3},
	}
	return cases, consts
}

// TestMaskedSoftmax checks maskedSoftmaxCases.
func TestMaskedSoftmax(t *testing.T) {
	cases, consts := maskedSoftmaxCases()
	runDispatchCases(t, cases, consts, ops.Lookup("", "Softmax", 13).Tolerance())
}
