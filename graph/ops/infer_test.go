package ops

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

// builder assembles small models for the whole-graph tests.
type builder struct{ g *graph.Graph }

func newBuilder() *builder { return &builder{g: graph.NewGraph("test")} }

func (b *builder) input(name string, t *graph.Type) {
	b.g.Inputs = append(b.g.Inputs, &graph.ValueInfo{Name: name, Type: t})
}

func (b *builder) output(name string, t *graph.Type) {
	b.g.Outputs = append(b.g.Outputs, &graph.ValueInfo{Name: name, Type: t})
}

func (b *builder) init(name string, t *graph.Tensor) { b.g.Initializers[name] = t }

func (b *builder) node(op string, in, out []string, attrs ...*graph.Attribute) *graph.Node {
	n := &graph.Node{Name: op + "_" + out[0], OpType: op, Inputs: in, Outputs: out,
		Attrs: map[string]*graph.Attribute{}, Index: len(b.g.Nodes)}
	for _, a := range attrs {
		n.Attrs[a.Name] = a
	}
	b.g.Nodes = append(b.g.Nodes, n)
	return n
}

func (b *builder) model() *graph.Model {
	return &graph.Model{Name: "test", Opsets: map[string]int64{"": 17}, Graph: b.g}
}

func tensorAttr(name string, t *graph.Tensor) *graph.Attribute {
	return &graph.Attribute{Name: name, Type: graph.AttrTensor, T: t}
}

func graphAttr(name string, g *graph.Graph) *graph.Attribute {
	return &graph.Attribute{Name: name, Type: graph.AttrGraph, G: g}
}

// shapeChain is the torch.onnx pattern that flattens x [N C H W] to
// [N, C*H*W]: Shape → Gather(0) → Unsqueeze → Concat([-1]) → Reshape.
func shapeChain() *graph.Model {
	b := newBuilder()
	b.input("x", f32("N", 3, 4, 5))
	b.output("y", f32("N", "?"))
	b.node("Constant", nil, []string{"zero"}, tensorAttr("value", int64Tensor(nil, []int64{0})))
	b.node("Constant", nil, []string{"axes0"}, tensorAttr("value", i64s(0)))
	b.init("minus1", i64s(-1))
	b.node("Shape", []string{"x"}, []string{"shape"})
	b.node("Gather", []string{"shape", "zero"}, []string{"batch"}, intAttr("axis", 0))
	b.node("Unsqueeze", []string{"batch", "axes0"}, []string{"batch1"})
	b.node("Concat", []string{"batch1", "minus1"}, []string{"target"}, intAttr("axis", 0))
	b.node("Reshape", []string{"x", "target"}, []string{"y"})
	return b.model()
}

func typeOf(m *graph.Model, name string) string { return m.Graph.TypeOf(name).String() }

func TestShapeChainPropagation(t *testing.T) {
	m := shapeChain()
	known, err := InferModel(m, map[string]*graph.Type{"x": f32(2, 3, 4, 5)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := typeOf(m, "y"); got != "float32[2 60]" {
		t.Errorf("y = %s, want float32[2 60]", got)
	}
	target := known["target"]
	if target == nil {
		t.Fatalf("target not known; known = %v", known)
	}
	if v, _ := target.Int64s(); len(v) != 2 || v[0] != 2 || v[1] != -1 {
		t.Errorf("target = %v, want [2 -1]", v)
	}
	if known["minus1"] == nil {
		t.Errorf("initializer minus1 not among the known values")
	}
	if m.Graph.Inputs[0].Type.String() != "float32[N 3 4 5]" {
		t.Errorf("declared input type changed to %s", m.Graph.Inputs[0].Type)
	}
	if got := typeOf(m, "x"); got != "float32[2 3 4 5]" {
		t.Errorf("x = %s in ValueInfo", got)
	}

	removed := FoldConstants(m, known)
	if removed != 6 {
		t.Errorf("FoldConstants removed %d nodes, want 6", removed)
	}
	if len(m.Graph.Nodes) != 1 || m.Graph.Nodes[0].OpType != "Reshape" || m.Graph.Nodes[0].Index != 6 {
		t.Fatalf("nodes after folding: %v", m.Graph.Nodes)
	}
	if m.Graph.Initializers["target"] == nil {
		t.Errorf("target did not become an initializer")
	}
	for _, name := range []string{"shape", "batch", "batch1", "zero"} {
		if m.Graph.Initializers[name] != nil {
			t.Errorf("unused folded value %q became an initializer", name)
		}
	}
}

func TestShapeChainSymbolic(t *testing.T) {
	m := shapeChain()
	known, err := InferModel(m, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if known["target"] != nil || known["shape"] != nil {
		t.Errorf("symbolic shape known: %v", known["target"])
	}
	if known["zero"] == nil {
		t.Errorf("constant not known")
	}
	if got := typeOf(m, "y"); got != "float32[N 60]" {
		t.Errorf("y = %s, want float32[N 60] through symbolic propagation", got)
	}
	if got := typeOf(m, "batch1"); got != "int64[1]" {
		t.Errorf("batch1 = %s", got)
	}
	if n := FoldConstants(m, known); n != 2 {
		t.Errorf("folded %d nodes, want the 2 constants", n)
	}
}

// TestValuePropagation covers the arithmetic that shape subgraphs use.
func TestValuePropagation(t *testing.T) {
	b := newBuilder()
	b.input("x", f32("B", "S", 768))
	b.init("two", int64Tensor(nil, []int64{2}))
	b.init("ax", i64s(0))
	b.node("Shape", []string{"x"}, []string{"s"})
	b.node("Slice", []string{"s", "ax1", "ax2"}, []string{"bs"})
	b.init("ax1", i64s(0))
	b.init("ax2", i64s(2))
	b.node("Cast", []string{"bs"}, []string{"bsf"}, intAttr("to", int64(graph.Float)))
	b.node("Div", []string{"bsf", "twof"}, []string{"half"})
	b.init("twof", graph.Scalar(graph.Float, float32(2)))
	b.node("Cast", []string{"half"}, []string{"halfi"}, intAttr("to", int64(graph.Int64)))
	b.node("Mul", []string{"halfi", "two"}, []string{"again"})
	b.node("Equal", []string{"again", "bs"}, []string{"eq"})
	b.node("Where", []string{"eq", "again", "bs"}, []string{"w"})
	b.node("ConstantOfShape", []string{"w"}, []string{"zeros"}, tensorAttr("value", graph.Scalar(graph.Int64, int64(7))))
	b.node("Size", []string{"zeros"}, []string{"size"})
	b.node("Range", []string{"zero", "size", "three"}, []string{"r"})
	b.init("zero", int64Tensor(nil, []int64{0}))
	b.init("three", int64Tensor(nil, []int64{3}))
	b.node("Expand", []string{"two", "w"}, []string{"twos"})
	b.node("ReduceProd", []string{"w"}, []string{"prod"}, intAttr("keepdims", 0))
	b.node("Sub", []string{"prod", "size"}, []string{"diff"})
	b.node("Identity", []string{"diff"}, []string{"id"})
	b.node("Squeeze", []string{"ax"}, []string{"sq"})
	b.output("id", nil)
	m := b.model()
	known, err := InferModel(m, map[string]*graph.Type{"x": f32(4, 6, 768)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, want ...int64) {
		t.Helper()
		v := known[name]
		if v == nil {
			t.Errorf("%s not known", name)
			return
		}
		got, err := v.Int64s()
		if err != nil {
			got = nil
			for i := range v.NumElements() {
				got = append(got, int64(v.Float64At(i)))
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s = %v, want %v", name, got, want)
			return
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s = %v, want %v", name, got, want)
				return
			}
		}
	}
	check("bs", 4, 6)
	check("half", 2, 3)
	check("again", 4, 6)
	check("eq", 1, 1)
	check("w", 4, 6)
	check("size", 24)
	check("r", 0, 3, 6, 9, 12, 15, 18, 21)
	check("twos", 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2)
	check("prod", 24)
	check("diff", 0)
	check("id", 0)
	check("sq", 0)
	if got := typeOf(m, "zeros"); got != "int64[4 6]" {
		t.Errorf("zeros = %s", got)
	}
	if got := typeOf(m, "r"); got != "int64[8]" {
		t.Errorf("r = %s", got)
	}
}

func TestDeclaredTypes(t *testing.T) {
	build := func(declared *graph.Type) *graph.Model {
		b := newBuilder()
		b.input("x", f32("N", 3))
		b.node("Relu", []string{"x"}, []string{"y"})
		b.output("y", declared)
		return b.model()
	}
	m := build(f32("batch", 3))
	if _, err := InferModel(m, map[string]*graph.Type{"x": f32(5, 3)}, nil); err != nil {
		t.Fatal(err)
	}
	if got := typeOf(m, "y"); got != "float32[5 3]" {
		t.Errorf("concrete inferred over symbolic declared: y = %s", got)
	}

	m = build(f32(2, 4))
	_, err := InferModel(m, nil, nil)
	if err == nil || !strings.Contains(err.Error(), `node "Relu_y" (Relu, #0)`) || !strings.Contains(err.Error(), `"y"`) {
		t.Errorf("conflict error = %v", err)
	}

	m = build(f32(7, 3))
	if _, err := InferModel(m, nil, nil); err != nil {
		t.Fatal(err)
	}
	if got := typeOf(m, "y"); got != "float32[7 3]" {
		t.Errorf("declared known over inferred symbol: y = %s", got)
	}

	m = build(nil)
	if _, err := InferModel(m, map[string]*graph.Type{"x": f32(5, 4)}, nil); err == nil {
		t.Errorf("override [5 4] of declared [N 3] accepted")
	}
}

func TestSymbolBindings(t *testing.T) {
	b := newBuilder()
	b.input("x", f32("N", 3))
	b.node("NonZero", []string{"x"}, []string{"nz"})
	b.node("Custom", []string{"x"}, []string{"c"}).Domain = "com.example"
	b.g.ValueInfo["c"] = &graph.ValueInfo{Name: "c", Type: f32("N", 8)}
	m := b.model()
	if _, err := InferModel(m, map[string]*graph.Type{"x": f32(6, 3)}, nil); err != nil {
		t.Fatal(err)
	}
	if got := typeOf(m, "c"); got != "float32[6 8]" {
		t.Errorf("custom op output = %s, want the declared type with N bound to 6", got)
	}
	if got := typeOf(m, "nz"); got != "int64[2 ?]" {
		t.Errorf("nz = %s", got)
	}
}

func TestIfAndLoop(t *testing.T) {
	thenG := graph.NewGraph("then")
	thenG.Nodes = []*graph.Node{{Name: "t", OpType: "Relu", Inputs: []string{"x"}, Outputs: []string{"tx"}}}
	thenG.Outputs = []*graph.ValueInfo{{Name: "tx"}}
	elseG := graph.NewGraph("else")
	elseG.Nodes = []*graph.Node{{Name: "e", OpType: "Concat", Inputs: []string{"x", "x"}, Outputs: []string{"ex"},
		Attrs: map[string]*graph.Attribute{"axis": intAttr("axis", 0)}}}
	elseG.Outputs = []*graph.ValueInfo{{Name: "ex"}}

	body := graph.NewGraph("body")
	body.Inputs = []*graph.ValueInfo{{Name: "i"}, {Name: "cond_in"}, {Name: "acc"}}
	body.Nodes = []*graph.Node{
		{Name: "cat", OpType: "Concat", Inputs: []string{"acc", "x"}, Outputs: []string{"acc2"},
			Attrs: map[string]*graph.Attribute{"axis": intAttr("axis", 0)}},
		{Name: "sh", OpType: "Shape", Inputs: []string{"acc"}, Outputs: []string{"accshape"}},
		{Name: "id", OpType: "Identity", Inputs: []string{"cond_in"}, Outputs: []string{"cond_out"}},
		{Name: "sc", OpType: "Relu", Inputs: []string{"x"}, Outputs: []string{"scan"}},
	}
	body.Outputs = []*graph.ValueInfo{{Name: "cond_out"}, {Name: "acc2"}, {Name: "scan"}}

	b := newBuilder()
	b.input("x", f32(2, 3))
	b.input("c", graph.TensorType(graph.Bool, shp()))
	b.init("trips", int64Tensor(nil, []int64{4}))
	b.node("If", []string{"c"}, []string{"ify"}, graphAttr("then_branch", thenG), graphAttr("else_branch", elseG))
	b.node("Loop", []string{"trips", "", "x"}, []string{"final", "scans"}, graphAttr("body", body))
	m := b.model()
	known, err := InferModel(m, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := typeOf(m, "ify"); got != "float32[? 3]" {
		t.Errorf("If output = %s, want the union float32[? 3]", got)
	}
	if got := thenG.TypeOf("tx").String(); got != "float32[2 3]" {
		t.Errorf("then branch value = %s", got)
	}
	if got := typeOf(m, "final"); got != "float32[? 3]" {
		t.Errorf("Loop carried = %s", got)
	}
	if got := typeOf(m, "scans"); got != "float32[4 2 3]" {
		t.Errorf("Loop scan output = %s", got)
	}
	if known["accshape"] != nil {
		t.Errorf("loop-variant shape known: %v", known["accshape"])
	}
}

func TestInferErrorsNameNode(t *testing.T) {
	b := newBuilder()
	b.input("a", f32(2, 3))
	b.input("b", f32(4, 5))
	b.node("MatMul", []string{"a", "b"}, []string{"c"})
	_, err := InferModel(b.model(), nil, nil)
	if err == nil || !strings.Contains(err.Error(), "MatMul") || !strings.Contains(err.Error(), `"a" float32[2 3]`) {
		t.Errorf("error = %v", err)
	}
	if _, err := InferModel(&graph.Model{}, nil, nil); err == nil {
		t.Errorf("model without graph accepted")
	}
}

func TestFoldKeepsRandomAndLarge(t *testing.T) {
	b := newBuilder()
	big := graph.NewTensor(graph.Float, []int64{100, 100})
	b.node("Constant", nil, []string{"big"}, tensorAttr("value", big))
	b.node("RandomNormal", nil, []string{"rnd"}, ints("shape", 2))
	b.node("Add", []string{"big", "big"}, []string{"y"})
	b.output("y", nil)
	m := b.model()
	known, err := InferModel(m, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if known["big"] != big {
		t.Errorf("constant value not known")
	}
	known["rnd"] = graph.NewTensor(graph.Float, []int64{2})
	if n := FoldConstants(m, known); n != 0 {
		t.Errorf("folded %d nodes", n)
	}
}

func TestInferAgainWithOtherShapes(t *testing.T) {
	body := graph.NewGraph("body")
	body.Nodes = []*graph.Node{{Name: "r", OpType: "Relu", Inputs: []string{"x"}, Outputs: []string{"rx"}}}
	body.Outputs = []*graph.ValueInfo{{Name: "rx"}}
	b := newBuilder()
	b.input("x", f32("N", 3))
	b.input("c", graph.TensorType(graph.Bool, shp()))
	b.node("If", []string{"c"}, []string{"y"}, graphAttr("then_branch", body), graphAttr("else_branch", body))
	b.node("Relu", []string{"y"}, []string{"z"})
	m := b.model()
	for _, n := range []int64{2, 5, 3} {
		if _, err := InferModel(m, map[string]*graph.Type{"x": f32(int(n), 3)}, nil); err != nil {
			t.Fatalf("batch %d: %v", n, err)
		}
		if got, want := typeOf(m, "z"), f32(int(n), 3).String(); got != want {
			t.Errorf("batch %d: z = %s, want %s", n, got, want)
		}
		if got, want := body.TypeOf("rx").String(), f32(int(n), 3).String(); got != want {
			t.Errorf("batch %d: subgraph value = %s, want %s", n, got, want)
		}
	}
}

func TestUnknownOverride(t *testing.T) {
	b := newBuilder()
	b.input("x", f32(2))
	if _, err := InferModel(b.model(), map[string]*graph.Type{"y": f32(2)}, nil); err == nil || !strings.Contains(err.Error(), `"y"`) {
		t.Errorf("error = %v", err)
	}
}

func TestSymbolicElements(t *testing.T) {
	b := newBuilder()
	b.input("x", f32("B", "S", 64))
	b.init("last", i64s(-1))
	b.init("heads", i64s(4, -1))
	b.init("zero", int64Tensor(nil, []int64{0}))
	b.init("one", i64s(1))
	b.node("Shape", []string{"x"}, []string{"s"})
	b.node("Gather", []string{"s", "last"}, []string{"hidden"})
	b.node("Slice", []string{"s", "zero1", "two"}, []string{"bs"})
	b.init("zero1", i64s(0))
	b.init("two", i64s(2))
	b.node("Mul", []string{"bs", "one"}, []string{"bs1"})
	b.node("Concat", []string{"bs1", "heads"}, []string{"target"}, intAttr("axis", 0))
	b.node("Reshape", []string{"x", "target"}, []string{"y"})
	b.node("ConstantOfShape", []string{"bs"}, []string{"mask"})
	b.node("Expand", []string{"zero", "s"}, []string{"e"})
	b.node("Cast", []string{"bs"}, []string{"bs32"}, intAttr("to", int64(graph.Int32)))
	b.node("Slice", []string{"x", "zero1", "hidden", "last"}, []string{"sl"})
	// arange over a dimension (a causal mask's rows) and over another
	// start or step, whose length is not the dimension.
	b.init("first", i64s(1))
	b.node("Gather", []string{"s", "first"}, []string{"seq"})
	b.node("Squeeze", []string{"seq"}, []string{"seq0"})
	b.node("Range", []string{"zero", "seq0", "one0"}, []string{"rows"})
	b.node("Range", []string{"one0", "seq0", "one0"}, []string{"from1"})
	b.init("one0", int64Tensor(nil, []int64{1}))
	// torch's Expand export: Where(Equal(target, -1), 1, target).
	b.init("four", i64s(4))
	b.init("minus", int64Tensor(nil, []int64{-1}))
	b.node("Concat", []string{"bs", "four"}, []string{"tgt"}, intAttr("axis", 0))
	b.node("Shape", []string{"tgt"}, []string{"tgtShape"})
	b.node("ConstantOfShape", []string{"tgtShape"}, []string{"ones"}, tensorAttr("value", i64s(1)))
	b.node("Mul", []string{"ones", "minus"}, []string{"negs"})
	b.node("Equal", []string{"tgt", "negs"}, []string{"free"})
	b.node("Where", []string{"free", "ones", "tgt"}, []string{"wt"})
	b.node("Expand", []string{"zero", "wt"}, []string{"ex"})
	b.node("Equal", []string{"tgt", "ones"}, []string{"undecided"})
	m := b.model()
	known, err := InferModel(m, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := known["hidden"]; v == nil || v.Float64At(0) != 64 {
		t.Errorf("hidden = %v, want the known element 64", v)
	}
	for name, want := range map[string]string{
		"y": "float32[B S 4 16]", "mask": "float32[B S]", "e": "int64[B S 64]", "bs32": "int32[2]",
		"sl": "float32[B S 64]", "rows": "int64[S]", "from1": "int64[?]", "ex": "int64[B S 4]",
	} {
		if got := typeOf(m, name); got != want {
			t.Errorf("%s = %s, want %s", name, got, want)
		}
	}
	if known["target"] != nil || known["bs"] != nil || known["undecided"] != nil {
		t.Errorf("symbolic values reported as known")
	}
	if v := known["free"]; v == nil || v.Float64At(0) != 0 || v.Float64At(2) != 0 {
		t.Errorf("free = %v, want dimensions unequal to -1", v)
	}
}

func TestScanAndSequences(t *testing.T) {
	body := graph.NewGraph("scan")
	body.Inputs = []*graph.ValueInfo{{Name: "state"}, {Name: "slice"}}
	body.Nodes = []*graph.Node{
		{Name: "add", OpType: "Add", Inputs: []string{"state", "slice"}, Outputs: []string{"next"}},
		{Name: "id", OpType: "Identity", Inputs: []string{"next"}, Outputs: []string{"out"}},
	}
	body.Outputs = []*graph.ValueInfo{{Name: "next"}, {Name: "out"}}
	b := newBuilder()
	b.input("init", f32(4))
	b.input("xs", f32(4, 10))
	b.node("Scan", []string{"init", "xs"}, []string{"final", "stacked"}, graphAttr("body", body),
		intAttr("num_scan_inputs", 1), ints("scan_input_axes", 1), ints("scan_output_axes", -1))
	b.node("SequenceConstruct", []string{"init", "final"}, []string{"seq"})
	b.node("SequenceAt", []string{"seq", "pos"}, []string{"item"})
	b.init("pos", int64Tensor(nil, []int64{0}))
	b.node("SplitToSequence", []string{"xs"}, []string{"split"}, intAttr("axis", 1), intAttr("keepdims", 0))
	b.node("ConcatFromSequence", []string{"split"}, []string{"stack"}, intAttr("axis", 0), intAttr("new_axis", 1))
	b.node("SequenceLength", []string{"seq"}, []string{"len"})
	b.node("Optional", []string{"init"}, []string{"opt"})
	b.node("OptionalGetElement", []string{"opt"}, []string{"got"})
	b.node("OptionalHasElement", []string{"opt"}, []string{"has"})
	m := b.model()
	if _, err := InferModel(m, nil, nil); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"final": "float32[4]", "stacked": "float32[4 10]", "seq": "seq(float32[4])", "item": "float32[4]",
		"split": "seq(float32[4])", "stack": "float32[? 4]", "len": "int64[]", "opt": "optional(float32[4])",
		"got": "float32[4]", "has": "bool[]",
	} {
		if got := typeOf(m, name); got != want {
			t.Errorf("%s = %s, want %s", name, got, want)
		}
	}
}

func TestConstantAttributes(t *testing.T) {
	b := newBuilder()
	b.node("Constant", nil, []string{"f"}, &graph.Attribute{Name: "value_float", Type: graph.AttrFloat, F: 1.5})
	b.node("Constant", nil, []string{"fs"}, &graph.Attribute{Name: "value_floats", Type: graph.AttrFloats, Floats: []float32{1, 2}})
	b.node("Constant", nil, []string{"i"}, intAttr("value_int", 3))
	b.node("Constant", nil, []string{"is"}, ints("value_ints", 1, 2, 3))
	b.node("Constant", nil, []string{"s"}, strAttr("value_string", "a"))
	b.node("Constant", nil, []string{"ss"}, &graph.Attribute{Name: "value_strings", Type: graph.AttrStrings,
		Strings: [][]byte{[]byte("a"), []byte("b")}})
	b.node("Constant", nil, []string{"sp"}, &graph.Attribute{Name: "sparse_value", Type: graph.AttrSparseTensor,
		Sparse: &graph.SparseTensor{Values: mustFloats(1), Indices: i64s(3), Dims: []int64{2, 5}}})
	m := b.model()
	known, err := InferModel(m, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"f": "float32[]", "fs": "float32[2]", "i": "int64[]", "is": "int64[3]", "s": "string[]", "ss": "string[2]",
		"sp": "float32[2 5]",
	} {
		if got := typeOf(m, name); got != want {
			t.Errorf("%s = %s, want %s", name, got, want)
		}
		if known[name] == nil && name != "sp" {
			t.Errorf("%s not known", name)
		}
	}
	if known["is"].Float64At(2) != 3 || known["ss"].Strings[1] != "b" {
		t.Errorf("constant values: %v %v", known["is"], known["ss"])
	}
	b.node("Constant", nil, []string{"bad"})
	if _, err := InferModel(b.model(), nil, nil); err == nil {
		t.Errorf("Constant without a value accepted")
	}
}

func TestFoldInSubgraph(t *testing.T) {
	body := graph.NewGraph("then")
	body.Nodes = []*graph.Node{
		{Name: "sh", OpType: "Shape", Inputs: []string{"x"}, Outputs: []string{"xs"}},
		{Name: "rs", OpType: "Reshape", Inputs: []string{"x", "xs"}, Outputs: []string{"y"}},
	}
	body.Outputs = []*graph.ValueInfo{{Name: "y"}}
	b := newBuilder()
	b.input("x", f32(2, 3))
	b.input("c", graph.TensorType(graph.Bool, shp()))
	b.node("If", []string{"c"}, []string{"out"}, graphAttr("then_branch", body), graphAttr("else_branch", body))
	m := b.model()
	known, err := InferModel(m, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ifNode := m.Graph.Nodes[0]
	if n := FoldConstants(m, known); n != 2 {
		t.Errorf("folded %d nodes, want the Shape of each branch", n)
	}
	if len(body.Nodes) != 2 || len(body.Initializers) != 0 || ifNode.Attr("then_branch").G != body {
		t.Errorf("FoldConstants changed the shared subgraph or node")
	}
	folded := m.Graph.Nodes[0].Attr("then_branch").G
	if folded == body || folded.Initializers["xs"] == nil || len(folded.Nodes) != 1 || folded.Nodes[0].OpType != "Reshape" {
		t.Errorf("folded branch: nodes %v, initializers %v", folded.Nodes, folded.Initializers)
	}
}

// TestRangeLengthFolding folds Range over values whose difference
// overflows int64 as the kernel counts it: too long fails inference, a
// whole span folds to its elements, and infinite bounds fail.
func TestRangeLengthFolding(t *testing.T) {
	infer := func(start, limit, delta *graph.Tensor) (map[string]*graph.Tensor, error) {
		b := newBuilder()
		b.init("start", start)
		b.init("limit", limit)
		b.init("delta", delta)
		b.node("Range", []string{"start", "limit", "delta"}, []string{"r"})
		b.output("r", nil)
		return InferModel(b.model(), nil, nil)
	}
	_, err := infer(graph.Scalar(graph.Int64, int64(-1<<62)), graph.Scalar(graph.Int64, int64(1<<62)), graph.Scalar(graph.Int64, int64(1)))
	if err == nil || !strings.Contains(err.Error(), "too long") {
		t.Errorf("Range(-2^62, 2^62, 1): %v, want too long", err)
	}
	known, err := infer(graph.Scalar(graph.Int64, int64(math.MinInt64)), graph.Scalar(graph.Int64, int64(math.MaxInt64)), graph.Scalar(graph.Int64, int64(1<<62)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := known["r"].Int64s()
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{math.MinInt64, -1 << 62, 0, 1 << 62}; !slices.Equal(got, want) {
		t.Errorf("Range(-2^63, 2^63-1, 2^62) folds to %v, want %v", got, want)
	}
	_, err = infer(graph.Scalar(graph.Float, float32(0)), graph.Scalar(graph.Float, float32(math.Inf(1))), graph.Scalar(graph.Float, float32(1)))
	if err == nil {
		t.Error("Range(0, inf, 1) inferred")
	}
	if n, err := RangeLength(5, 5, -1); n != 0 || err != nil {
		t.Errorf("RangeLength(5, 5, -1) = %d, %v", n, err)
	}
	if n, err := RangeLength(10, 0, -3); n != 4 || err != nil {
		t.Errorf("RangeLength(10, 0, -3) = %d, %v", n, err)
	}
}

// TestHugeDeclaredShapeLength infers the ops whose output rank is the
// length of a shape-like input from that input's declared length: a length
// of 2^40 leaves the rank unknown instead of making a shape of 2^40
// dimensions (Col2Im's made the process die of "out of memory").
func TestHugeDeclaredShapeLength(t *testing.T) {
	for _, tc := range []struct {
		op     string
		inputs []string
	}{
		{"Col2Im", []string{"x", "shape", "block"}},
		{"ConstantOfShape", []string{"shape"}},
		{"Reshape", []string{"x", "shape"}},
		{"Expand", []string{"x", "shape"}},
		{"Unsqueeze", []string{"x", "shape"}},
		{"MaxRoiPool", []string{"x", "shape"}},
		{"AffineGrid", []string{"x", "shape"}},
	} {
		b := newBuilder()
		b.input("x", f32(2, 3, 4))
		b.input("block", graph.TensorType(graph.Int64, shp(2)))
		b.input("shape", graph.TensorType(graph.Int64, shp(1<<40)))
		b.node(tc.op, tc.inputs, []string{"y"})
		m := b.model()
		if _, err := InferModel(m, nil, nil); err != nil {
			continue
		}
		if got := m.Graph.TypeOf("y"); got != nil && len(got.Shape) > maxValueElems {
			t.Errorf("%s: output of rank %d", tc.op, len(got.Shape))
		}
	}
}

// TestRefusedAsTheKernelsRefuse infers nodes that the CPU kernels refuse:
// inference fails too, with an error naming the node and the reason
// (issue 13, item 12: these were accepted; SplitToSequence's split 0
// divided by zero in its rule).
func TestRefusedAsTheKernelsRefuse(t *testing.T) {
	ints := func(name string, v ...int64) *graph.Attribute {
		return &graph.Attribute{Name: name, Type: graph.AttrInts, Ints: v}
	}
	for _, tc := range []struct {
		name, op string
		x        *graph.Type
		second   *graph.Tensor
		attrs    []*graph.Attribute
		want     string
	}{
		{"Expand to a negative size", "Expand", f32(2, 3), i64s(-2, 3), nil, "negative dimension"},
		{"Expand to -1", "Expand", f32(2, 3), i64s(-1, 3), nil, "negative dimension"},
		{"ConvTranspose output_padding = stride", "ConvTranspose", f32(1, 1, 4, 4), mustFloats(make([]float32, 9)...),
			[]*graph.Attribute{ints("strides", 2, 2), ints("output_padding", 2, 1)}, "output_padding [2 1] must be smaller"},
		{"ConvTranspose output_padding with output_shape", "ConvTranspose", f32(1, 1, 4, 4), mustFloats(make([]float32, 9)...),
			[]*graph.Attribute{ints("output_padding", 1, 0), ints("output_shape", 7, 7)}, "output_padding [1 0] must be smaller"},
		{"MaxPool pads beyond the kernel", "MaxPool", f32(1, 1, 4, 4), nil,
			[]*graph.Attribute{ints("kernel_shape", 2, 2), ints("pads", 3, 0, 0, 0)}, "pads [3 0 0 0] must be smaller"},
		{"AveragePool pads as large as the kernel", "AveragePool", f32(1, 1, 4, 4), nil,
			[]*graph.Attribute{ints("kernel_shape", 2, 2), ints("pads", 0, 0, 0, 2)}, "pads [0 0 0 2] must be smaller"},
		{"SplitToSequence split 0", "SplitToSequence", f32(4, 3), int64Tensor(nil, []int64{0}), nil, "split size 0 is not positive"},
		{"SplitToSequence split -1", "SplitToSequence", f32(4, 3), int64Tensor(nil, []int64{-1}), nil, "split size -1 is not positive"},
	} {
		b := newBuilder()
		b.input("x", tc.x)
		in := []string{"x"}
		if tc.second != nil {
			if tc.op == "ConvTranspose" {
				tc.second = reshaped(tc.second, []int64{1, 1, 3, 3})
			}
			b.init("s", tc.second)
			in = append(in, "s")
		}
		b.node(tc.op, in, []string{"y"}, tc.attrs...)
		b.output("y", nil)
		_, err := InferModel(b.model(), nil, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `"`+tc.op+`_y"`) || errors.Is(err, ErrRulePanicked) {
			t.Errorf("%s: %v, want an error naming the node: %s", tc.name, err, tc.want)
		}
	}
}

// TestBlockSizeOverflow infers DepthToSpace with a blocksize whose square
// overflows: an error, where the rule divided by the wrapped square, 0,
// and panicked (found by FuzzPipeline).
func TestBlockSizeOverflow(t *testing.T) {
	b := newBuilder()
	b.input("x", f32(0, 1, 1, 1))
	b.node("DepthToSpace", []string{"x"}, []string{"y"}, &graph.Attribute{Name: "blocksize", Type: graph.AttrInt, I: 1 << 40})
	if _, err := InferModel(b.model(), nil, nil); err == nil || errors.Is(err, ErrRulePanicked) {
		t.Errorf("DepthToSpace blocksize 2^40: %v", err)
	}
}
