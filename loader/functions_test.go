package loader

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
)

// fd is the domain of the test functions.
const fd = "local.fn"

func fn(name string, ins, outs []string, nodes ...*graph.Node) *Function {
	return &Function{Domain: fd, Name: name, Inputs: ins, Outputs: outs, Nodes: nodes,
		AttrRefs: map[*graph.Node]map[string]string{}, Opsets: map[string]int64{td: 3}}
}

func call(name, f string, ins, outs []string, attrs ...*graph.Attribute) *graph.Node {
	n := nd(name, f, ins, outs, attrs...)
	n.Domain = fd
	return n
}

func fnModel(nodes ...*graph.Node) *graph.Model {
	m := model(gr("main", []string{"in"}, []string{"out"}, nodes...))
	m.Opsets[fd] = 1
	return m
}

type shortNode struct {
	name, op string
	ins      []string
	outs     []string
}

func short(nodes []*graph.Node) []shortNode {
	out := make([]shortNode, len(nodes))
	for i, n := range nodes {
		out[i] = shortNode{n.Name, n.OpType, n.Inputs, n.Outputs}
	}
	return out
}

func checkNodes(t *testing.T, got []*graph.Node, want []shortNode) {
	t.Helper()
	g := short(got)
	if !slices.EqualFunc(g, want, func(a, b shortNode) bool {
		return a.name == b.name && a.op == b.op && slices.Equal(a.ins, b.ins) && slices.Equal(a.outs, b.outs)
	}) {
		t.Fatalf("nodes:\n got %v\nwant %v", g, want)
	}
	for i, n := range got {
		if n.Index != i {
			t.Errorf("node %q has index %d, want %d", n.Name, n.Index, i)
		}
	}
}

func inlineValid(t *testing.T, m *graph.Model, fns ...*Function) {
	t.Helper()
	if err := inlineFunctions(m, fns); err != nil {
		t.Fatal(err)
	}
	if err := Validate(m); err != nil {
		t.Fatalf("inlined model is invalid: %v", err)
	}
}

// twoUnary is F(x) -> y = Unary(Unary(x, alpha=@a), alpha=@b).
func twoUnary() *Function {
	u1 := nd("u1", "Unary", []string{"x"}, []string{"t"})
	u2 := nd("", "Unary", []string{"t"}, []string{"y"})
	f := fn("F", []string{"x"}, []string{"y"}, u1, u2)
	f.AttrNames = []string{"a", "b"}
	f.AttrRefs[u1] = map[string]string{"alpha": "a"}
	f.AttrRefs[u2] = map[string]string{"alpha": "b"}
	return f
}

func TestInlineRenamesAndResolvesAttributes(t *testing.T) {
	m := fnModel(call("c", "F", []string{"in"}, []string{"out"}, fattr("a", 2)))
	f := twoUnary()
	f.ValueInfo = map[string]*graph.ValueInfo{"t": vis("t")[0]}
	inlineValid(t, m, f)
	if vi := m.Graph.ValueInfo["c/t"]; vi == nil || vi.Name != "c/t" || vi.Type.String() != "float32[2]" {
		t.Errorf("value info of c/t = %+v", vi)
	}
	checkNodes(t, m.Graph.Nodes, []shortNode{
		{"c/u1", "Unary", []string{"in"}, []string{"c/t"}},
		{"c/1", "Unary", []string{"c/t"}, []string{"out"}},
	})
	if a := m.Graph.Nodes[0].Attr("alpha"); a == nil || a.F != 2 || a.Name != "alpha" {
		t.Errorf("alpha of c/u1 = %+v, want 2 from the call", a)
	}
	if a := m.Graph.Nodes[1].Attr("alpha"); a != nil {
		t.Errorf("alpha of c/1 = %+v, want it dropped: the call does not set b and it has no default", a)
	}
	if f.Nodes[0].Inputs[0] != "x" || f.Nodes[0].Name != "u1" {
		t.Error("inlining modified the function body")
	}
}

func TestInlineDefaults(t *testing.T) {
	f := twoUnary()
	f.AttrNames = []string{"b"}
	f.AttrDefaults = map[string]*graph.Attribute{"a": fattr("a", 0.5)}
	m := fnModel(call("", "F", []string{"in"}, []string{"out"}, fattr("b", 7)))
	inlineValid(t, m, f)
	checkNodes(t, m.Graph.Nodes, []shortNode{
		{"F_0/u1", "Unary", []string{"in"}, []string{"F_0/t"}},
		{"F_0/1", "Unary", []string{"F_0/t"}, []string{"out"}},
	})
	if a := m.Graph.Nodes[0].Attr("alpha"); a == nil || a.F != 0.5 || a.Name != "alpha" {
		t.Errorf("alpha = %+v, want the default 0.5", a)
	}
	if a := m.Graph.Nodes[1].Attr("alpha"); a == nil || a.F != 7 {
		t.Errorf("alpha = %+v, want 7 from the call", a)
	}
}

func TestInlineAvoidsNameClashes(t *testing.T) {
	m := fnModel(
		nd("pre", "Unary", []string{"in"}, []string{"c/t"}),
		call("c", "F", []string{"c/t"}, []string{"out"}),
	)
	inlineValid(t, m, twoUnary())
	checkNodes(t, m.Graph.Nodes, []shortNode{
		{"pre", "Unary", []string{"in"}, []string{"c/t"}},
		{"c/u1", "Unary", []string{"c/t"}, []string{"c/t_1"}},
		{"c/1", "Unary", []string{"c/t_1"}, []string{"out"}},
	})
}

func TestInlineNestedFunctions(t *testing.T) {
	f1 := call("f1", "F", []string{"x"}, []string{"m"})
	f2 := call("f2", "F", []string{"m"}, []string{"y"}, fattr("a", 3))
	g := fn("G", []string{"x"}, []string{"y"}, f1, f2)
	g.AttrNames = []string{"ga"}
	g.AttrRefs[f1] = map[string]string{"a": "ga"}
	m := fnModel(call("g", "G", []string{"in"}, []string{"out"}, fattr("ga", 9)))
	inlineValid(t, m, twoUnary(), g)
	checkNodes(t, m.Graph.Nodes, []shortNode{
		{"g/f1/u1", "Unary", []string{"in"}, []string{"g/f1/t"}},
		{"g/f1/1", "Unary", []string{"g/f1/t"}, []string{"g/m"}},
		{"g/f2/u1", "Unary", []string{"g/m"}, []string{"g/f2/t"}},
		{"g/f2/1", "Unary", []string{"g/f2/t"}, []string{"out"}},
	})
	if a := m.Graph.Nodes[0].Attr("alpha"); a == nil || a.F != 9 {
		t.Errorf("alpha of g/f1/u1 = %+v, want 9 passed down from the call of G", a)
	}
	if a := m.Graph.Nodes[2].Attr("alpha"); a == nil || a.F != 3 {
		t.Errorf("alpha of g/f2/u1 = %+v, want 3", a)
	}
}

func TestInlineRefusesRecursion(t *testing.T) {
	cases := []struct {
		name string
		fns  func() []*Function
		want string
	}{
		{"mutual", func() []*Function {
			return []*Function{
				fn("A", []string{"x"}, []string{"y"}, call("b", "B", []string{"x"}, []string{"y"})),
				fn("B", []string{"x"}, []string{"y"}, call("a", "A", []string{"x"}, []string{"y"})),
			}
		}, "recursive function call local.fn.A -> local.fn.B -> local.fn.A"},
		{"self through a subgraph", func() []*Function {
			then := gr("then", nil, []string{"r"}, call("again", "A", []string{"x"}, []string{"r"}))
			els := gr("else", nil, []string{"x"})
			return []*Function{
				fn("A", []string{"x"}, []string{"y"}, nd("cd", "Cond", []string{"x"}, []string{"y"}, branches(then, els)...)),
			}
		}, "recursive function call local.fn.A -> local.fn.A"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := fnModel(call("top", "A", []string{"in"}, []string{"out"}))
			err := inlineFunctions(m, tc.fns())
			if err == nil || !errors.Is(err, ErrInvalidModel) {
				t.Fatalf("err = %v, want an invalid-model error", err)
			}
			for _, w := range []string{tc.want, `"m.onnx"`, `node "top"`} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
		})
	}
}

func TestInlineOverloads(t *testing.T) {
	o1 := fn("F", []string{"x"}, []string{"y"}, nd("", "Unary", []string{"x"}, []string{"y"}))
	o1.Overload = "o1"
	o2 := fn("F", []string{"x"}, []string{"y"}, nd("", "Cast", []string{"x"}, []string{"y"}, iattr("to", 1)))
	o2.Overload = "o2"
	c1 := call("c1", "F", []string{"in"}, []string{"mid"})
	c1.Overload = "o1"
	c2 := call("c2", "F", []string{"mid"}, []string{"out"})
	c2.Overload = "o2"
	m := fnModel(c1, c2)
	inlineValid(t, m, o1, o2)
	checkNodes(t, m.Graph.Nodes, []shortNode{
		{"c1/0", "Unary", []string{"in"}, []string{"mid"}},
		{"c2/0", "Cast", []string{"mid"}, []string{"out"}},
	})
}

func TestInlineOmittedOptionals(t *testing.T) {
	f := fn("F", []string{"x", "bias"}, []string{"y", "z"}, nd("o", "Opt", []string{"x", "bias"}, []string{"y", "z"}))
	for _, ins := range [][]string{{"in"}, {"in", ""}} {
		m := fnModel(call("c", "F", ins, []string{"out"}))
		inlineValid(t, m, f)
		checkNodes(t, m.Graph.Nodes, []shortNode{{"c/o", "Opt", []string{"in", ""}, []string{"out", "c/z"}}})
	}
}

func TestInlineRefInSubgraph(t *testing.T) {
	s := nd("s", "Unary", []string{"t"}, []string{"s1"})
	then := gr("th", nil, []string{"s1"}, s)
	els := gr("el", nil, []string{"s1"}, nd("s", "Unary", []string{"x"}, []string{"s1"}))
	f := fn("F", []string{"x"}, []string{"y"},
		nd("u", "Unary", []string{"x"}, []string{"t"}),
		nd("cd", "Cond", []string{"t"}, []string{"y"}, branches(then, els)...))
	f.AttrNames = []string{"a"}
	f.AttrRefs[s] = map[string]string{"alpha": "a"}
	m := fnModel(call("c", "F", []string{"in"}, []string{"out"}, fattr("a", 4)))
	inlineValid(t, m, f)
	checkNodes(t, m.Graph.Nodes, []shortNode{
		{"c/u", "Unary", []string{"in"}, []string{"c/t"}},
		{"c/cd", "Cond", []string{"c/t"}, []string{"out"}},
	})
	// Attributes are copied in name order: else_branch defines c/s1 first.
	th := m.Graph.Nodes[1].AttrGraph("then_branch")
	checkNodes(t, th.Nodes, []shortNode{{"s", "Unary", []string{"c/t"}, []string{"c/s1_1"}}})
	if th.Outputs[0].Name != "c/s1_1" || th.Parent != m.Graph || th == then {
		t.Errorf("then branch not copied and renamed: outputs %v, parent %p", th.Outputs[0].Name, th.Parent)
	}
	if a := th.Nodes[0].Attr("alpha"); a == nil || a.F != 4 {
		t.Errorf("alpha in the subgraph = %+v, want 4", a)
	}
	el := m.Graph.Nodes[1].AttrGraph("else_branch")
	checkNodes(t, el.Nodes, []shortNode{{"s", "Unary", []string{"in"}, []string{"c/s1"}}})
}

func TestInlineGraphAttributeReference(t *testing.T) {
	cd := nd("cd", "Cond", []string{"x"}, []string{"y"})
	f := fn("F", []string{"x"}, []string{"y"}, cd)
	f.AttrNames = []string{"body"}
	f.AttrRefs[cd] = map[string]string{"then_branch": "body", "else_branch": "body"}
	body := gr("body", nil, []string{"b1"}, nd("b", "Unary", []string{"in"}, []string{"b1"}))
	m := fnModel(call("c", "F", []string{"in"}, []string{"out"}, gattr("body", body)))
	inlineValid(t, m, f)
	for _, k := range []string{"then_branch", "else_branch"} {
		g := m.Graph.Nodes[0].AttrGraph(k)
		if g == nil || g == body || g.Parent != m.Graph {
			t.Fatalf("%s = %p, want a copy of the call's graph inside the main graph", k, g)
		}
		checkNodes(t, g.Nodes, []shortNode{{"b", "Unary", []string{"in"}, []string{"b1"}}})
	}
}

func TestInlineInsideSubgraph(t *testing.T) {
	then := gr("then", nil, []string{"r"}, call("c", "F", []string{"in"}, []string{"r"}))
	els := gr("else", nil, []string{"in"})
	m := fnModel(nd("mc", "Cond", []string{"in"}, []string{"out"}, branches(then, els)...))
	inlineValid(t, m, twoUnary())
	checkNodes(t, then.Nodes, []shortNode{
		{"c/u1", "Unary", []string{"in"}, []string{"c/t"}},
		{"c/1", "Unary", []string{"c/t"}, []string{"r"}},
	})
}

func TestInlinePassThroughOutput(t *testing.T) {
	f := fn("F", []string{"x"}, []string{"x", "y"}, nd("", "Unary", []string{"x"}, []string{"y"}))
	m := fnModel(call("c", "F", []string{"in"}, []string{"o1", "out"}))
	if err := inlineFunctions(m, []*Function{f}); err != nil {
		t.Fatal(err)
	}
	checkNodes(t, m.Graph.Nodes, []shortNode{
		{"c/0", "Unary", []string{"in"}, []string{"out"}},
		{"c/x", "Identity", []string{"in"}, []string{"o1"}},
	})
	if m.Graph.Nodes[1].Domain != graph.DefaultDomain {
		t.Errorf("Identity is in domain %q", m.Graph.Nodes[1].Domain)
	}
}

func TestInlineMergesOpsets(t *testing.T) {
	f := twoUnary()
	f.Opsets = map[string]int64{td: 3, "extra.dom": 2}
	m := fnModel(call("c", "F", []string{"in"}, []string{"out"}))
	inlineValid(t, m, f, fn("Unused", nil, nil))
	if m.Opsets["extra.dom"] != 2 || m.Opsets[td] != 3 {
		t.Errorf("opsets = %v", m.Opsets)
	}
}

func TestInlineErrors(t *testing.T) {
	cases := []struct {
		name string
		fns  func() []*Function
		call *graph.Node
		want string
	}{
		{"opset conflict", func() []*Function {
			f := twoUnary()
			f.Opsets[td] = 2
			return []*Function{f}
		}, call("c", "F", []string{"in"}, []string{"out"}), "function local.fn.F imports test.onnxvk.validate version 2, but version 3"},
		{"too many inputs", func() []*Function { return []*Function{twoUnary()} },
			call("c", "F", []string{"in", "in"}, []string{"out"}), `node "c" (local.fn.F, #0): function local.fn.F: 2 inputs given, the function takes 1`},
		{"too many outputs", func() []*Function { return []*Function{twoUnary()} },
			call("c", "F", []string{"in"}, []string{"out", "o2"}), "2 outputs given, the function has 1"},
		{"defined twice", func() []*Function { return []*Function{twoUnary(), twoUnary()} },
			call("c", "F", []string{"in"}, []string{"out"}), "function local.fn.F is defined twice"},
		{"undefined body value", func() []*Function {
			return []*Function{fn("F", []string{"x"}, []string{"y"}, nd("g", "Unary", []string{"ghost"}, []string{"y"}))}
		}, call("c", "F", []string{"in"}, []string{"out"}), `body node "g" (Unary): value "ghost" is not defined in the function`},
		{"output not computed", func() []*Function {
			return []*Function{fn("F", []string{"x"}, []string{"y", "w"}, nd("g", "Unary", []string{"x"}, []string{"y"}))}
		}, call("c", "F", []string{"in"}, []string{"out"}), `output "w" is not computed by the body`},
		{"body redefines input", func() []*Function {
			return []*Function{fn("F", []string{"x"}, []string{"y"}, nd("g", "Unary", []string{"x"}, []string{"x"}))}
		}, call("c", "F", []string{"in"}, []string{"out"}), `value "x" is defined twice`},
		{"duplicate parameter", func() []*Function {
			return []*Function{fn("F", []string{"x", "x"}, []string{"y"})}
		}, call("c", "F", []string{"in"}, []string{"out"}), `parameter "x" is declared twice`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := inlineFunctions(fnModel(tc.call), tc.fns())
			if !errors.Is(err, ErrInvalidModel) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `"m.onnx"`) {
				t.Fatalf("err = %v, want an invalid-model error naming %q", err, tc.want)
			}
		})
	}
}

func TestInlineDefaultDomainFunction(t *testing.T) {
	f := fn("Relu", []string{"x"}, []string{"y"}, nd("", "Unary", []string{"x"}, []string{"y"}))
	f.Domain = "ai.onnx"
	c := call("c", "Relu", []string{"in"}, []string{"out"})
	c.Domain = graph.DefaultDomain
	m := fnModel(c)
	inlineValid(t, m, f)
	checkNodes(t, m.Graph.Nodes, []shortNode{{"c/0", "Unary", []string{"in"}, []string{"out"}}})
}
