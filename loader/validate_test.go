package loader

import (
	"errors"
	"strings"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
)

// td is a private operator domain: the real catalog never registers it.
const td = "test.onnxvk.validate"

func init() {
	ops.Register(
		&ops.Schema{Domain: td, Name: "Unary", Since: 1, MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
			Attrs: []ops.AttrSpec{{Name: "alpha", Type: graph.AttrFloat}}},
		&ops.Schema{Domain: td, Name: "Binary", Since: 1, MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1},
		&ops.Schema{Domain: td, Name: "Opt", Since: 1, MinInputs: 1, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 2},
		&ops.Schema{Domain: td, Name: "Concat", Since: 1, MinInputs: 1, MaxInputs: -1, MinOutputs: 1, MaxOutputs: 1},
		&ops.Schema{Domain: td, Name: "Cast", Since: 1, MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
			Attrs: []ops.AttrSpec{{Name: "to", Type: graph.AttrInt, Required: true}}},
		&ops.Schema{Domain: td, Name: "Cond", Since: 1, MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: -1,
			Attrs: []ops.AttrSpec{
				{Name: "then_branch", Type: graph.AttrGraph, Required: true},
				{Name: "else_branch", Type: graph.AttrGraph, Required: true}}},
		&ops.Schema{Domain: td, Name: "Ver", Since: 1, MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
			Attrs: []ops.AttrSpec{{Name: "old", Type: graph.AttrInt}}},
		&ops.Schema{Domain: td, Name: "Ver", Since: 3, MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
			Attrs: []ops.AttrSpec{{Name: "new", Type: graph.AttrInt}}},
		&ops.Schema{Domain: td, Name: "Later", Since: 5, MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1},
	)
}

// nd returns a node of the test domain.
func nd(name, op string, ins, outs []string, attrs ...*graph.Attribute) *graph.Node {
	n := &graph.Node{Name: name, OpType: op, Domain: td, Inputs: ins, Outputs: outs}
	for _, a := range attrs {
		if n.Attrs == nil {
			n.Attrs = map[string]*graph.Attribute{}
		}
		n.Attrs[a.Name] = a
	}
	return n
}

func vis(names ...string) []*graph.ValueInfo {
	out := make([]*graph.ValueInfo, len(names))
	for i, n := range names {
		out[i] = &graph.ValueInfo{Name: n, Type: graph.TensorType(graph.Float, graph.ShapeOf(2))}
	}
	return out
}

// gr returns a graph with the given boundary values and nodes, indexed.
func gr(name string, ins, outs []string, nodes ...*graph.Node) *graph.Graph {
	g := graph.NewGraph(name)
	g.Inputs, g.Outputs, g.Nodes = vis(ins...), vis(outs...), nodes
	for i, n := range nodes {
		n.Index = i
	}
	return g
}

func fattr(name string, f float32) *graph.Attribute {
	return &graph.Attribute{Name: name, Type: graph.AttrFloat, F: f}
}

func iattr(name string, i int64) *graph.Attribute {
	return &graph.Attribute{Name: name, Type: graph.AttrInt, I: i}
}

func gattr(name string, g *graph.Graph) *graph.Attribute {
	return &graph.Attribute{Name: name, Type: graph.AttrGraph, G: g}
}

func model(g *graph.Graph) *graph.Model {
	return &graph.Model{Name: "m.onnx", IRVersion: 10, Opsets: map[string]int64{td: 3}, Graph: g}
}

func withInit(g *graph.Graph, names ...string) *graph.Graph {
	for _, n := range names {
		g.Initializers[n] = graph.NewTensor(graph.Float, []int64{2})
	}
	return g
}

func branches(thenG, elseG *graph.Graph) []*graph.Attribute {
	return []*graph.Attribute{gattr("then_branch", thenG), gattr("else_branch", elseG)}
}

func validModel() *graph.Model {
	thenG := gr("then", nil, []string{"t1"}, nd("t", "Unary", []string{"a"}, []string{"t1"}))
	elseG := gr("else", []string{"x"}, []string{"w"}) // a subgraph input may shadow an outer value
	g := withInit(gr("main", []string{"x", "w"}, []string{"b", "c"},
		nd("n0", "Unary", []string{"x"}, []string{"a"}, fattr("alpha", 1)),
		nd("n1", "Binary", []string{"a", "w"}, []string{"b"}),
		nd("n2", "Cond", []string{"b"}, []string{"c"}, branches(thenG, elseG)...),
		nd("n3", "Opt", []string{"x", "", "c"}, []string{"", "d"}),
		nd("n4", "Cast", []string{"d"}, []string{"e"}, iattr("to", 1)),
		nd("n5", "Concat", []string{"a", "b", "c", "d", "e"}, []string{"f"}),
		nd("n6", "Ver", []string{"f"}, []string{"h"}, iattr("new", 1)),
	), "w", "k")
	return model(g)
}

func TestValidateAcceptsValidModel(t *testing.T) {
	if err := Validate(validModel()); err != nil {
		t.Fatal(err)
	}
}

func TestValidateRejects(t *testing.T) {
	cases := []struct {
		name    string
		edit    func(m *graph.Model)
		want    []string
		unknown bool
	}{
		{"no opsets", func(m *graph.Model) { m.Opsets = nil }, []string{"imports no opset"}, false},
		{"opset version 0", func(m *graph.Model) { m.Opsets["x.y"] = 0 }, []string{"domain x.y", "version 0"}, false},
		{"no graph", func(m *graph.Model) { m.Graph = nil }, []string{"no graph"}, false},
		{"undefined input", func(m *graph.Model) { m.Graph.Nodes[1].Inputs[1] = "nope" },
			[]string{`graph "main"`, `node "n1" (test.onnxvk.validate.Binary, #1)`, `input "nope" is not defined`}, false},
		{"not topological", func(m *graph.Model) { m.Graph.Nodes[0].Inputs[0] = "b" },
			[]string{`node "n0"`, `input "b"`, "topological"}, false},
		{"own output as input", func(m *graph.Model) { m.Graph.Nodes[0].Inputs[0] = "a" },
			[]string{`node "n0"`, `input "a"`, "topological"}, false},
		{"output defined twice", func(m *graph.Model) { m.Graph.Nodes[1].Outputs[0] = "a" },
			[]string{`node "n1"`, `output "a" is already defined`}, false},
		{"output shadows initializer", func(m *graph.Model) { m.Graph.Nodes[0].Outputs[0] = "k" },
			[]string{`node "n0"`, `output "k" is already defined`}, false},
		{"input declared twice", func(m *graph.Model) { m.Graph.Inputs = append(m.Graph.Inputs, vis("x")...) },
			[]string{`graph "main"`, `input "x" is declared twice`}, false},
		{"graph output undefined", func(m *graph.Model) { m.Graph.Outputs = append(m.Graph.Outputs, vis("zz")...) },
			[]string{`graph "main"`, `output "zz" is not produced`}, false},
		{"domain not imported", func(m *graph.Model) { m.Graph.Nodes[3].Domain = "other.dom" },
			[]string{`node "n3" (other.dom.Opt, #3)`, "domain other.dom is not imported"}, false},
		{"too few inputs", func(m *graph.Model) { m.Graph.Nodes[1].Inputs = []string{"a"} },
			[]string{`node "n1"`, "1 inputs", "Binary (test.onnxvk.validate v1) takes at least 2"}, false},
		{"too many inputs", func(m *graph.Model) { m.Graph.Nodes[3].Inputs = []string{"x", "x", "x", "x"} },
			[]string{`node "n3"`, "4 inputs", "at most 3"}, false},
		{"required input omitted", func(m *graph.Model) { m.Graph.Nodes[3].Inputs = []string{"", "x"} },
			[]string{`node "n3"`, "required input #0"}, false},
		{"too many outputs", func(m *graph.Model) { m.Graph.Nodes[1].Outputs = []string{"b", "b2"} },
			[]string{`node "n1"`, "2 outputs", "at most 1"}, false},
		{"attribute type", func(m *graph.Model) { m.Graph.Nodes[0].Attrs["alpha"] = iattr("alpha", 1) },
			[]string{`node "n0"`, `attribute "alpha" is of type int`, "wants float"}, false},
		{"unknown attribute", func(m *graph.Model) { m.Graph.Nodes[1].Attrs = map[string]*graph.Attribute{"beta": fattr("beta", 1)} },
			[]string{`node "n1"`, `unknown attribute "beta"`}, false},
		{"attribute of another version", func(m *graph.Model) { m.Graph.Nodes[6].Attrs["old"] = iattr("old", 1) },
			[]string{`node "n6"`, `unknown attribute "old"`, "Ver (test.onnxvk.validate v3)"}, false},
		{"required attribute missing", func(m *graph.Model) { delete(m.Graph.Nodes[4].Attrs, "to") },
			[]string{`node "n4"`, `required attribute "to"`}, false},
		{"untyped attribute", func(m *graph.Model) { m.Graph.Nodes[0].Attrs["alpha"].Type = graph.AttrUndefined },
			[]string{`node "n0"`, `attribute "alpha" has no type`}, false},
		{"nil node", func(m *graph.Model) { m.Graph.Nodes = append(m.Graph.Nodes, nil) },
			[]string{`graph "main"`, "node #7 is nil"}, false},
		{"subgraph sees only earlier values", func(m *graph.Model) {
			m.Graph.Nodes[2].Attrs["then_branch"].G.Nodes[0].Inputs[0] = "d"
		}, []string{`node "n2" (test.onnxvk.validate.Cond, #2): attribute "then_branch": graph "then": node "t"`,
			`input "d" is not defined`}, false},
		{"subgraph output shadows outer value", func(m *graph.Model) {
			sub := m.Graph.Nodes[2].Attrs["then_branch"].G
			sub.Nodes[0].Outputs[0], sub.Outputs[0].Name = "x", "x"
		}, []string{`graph "then": node "t"`, `output "x" is already defined`}, false},
		{"subgraph output undefined", func(m *graph.Model) {
			m.Graph.Nodes[2].Attrs["else_branch"].G.Outputs[0].Name = "q"
		}, []string{`attribute "else_branch": graph "else"`, `output "q" is not produced`}, false},
		{"unknown ops", func(m *graph.Model) {
			m.Graph.Nodes = append(m.Graph.Nodes,
				nd("u1", "Later", []string{"h"}, []string{"u1o"}),
				nd("u2", "Nope", []string{"h"}, []string{"u2o"}),
				nd("u3", "Later", []string{"h"}, []string{"u3o"}))
			for i, n := range m.Graph.Nodes {
				n.Index = i
			}
		}, []string{"Later (test.onnxvk.validate v3): 2 nodes, first graph \"main\": node \"u1\"",
			"Nope (test.onnxvk.validate v3): 1 node, first graph \"main\": node \"u2\""}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := validModel()
			tc.edit(m)
			err := Validate(m)
			if err == nil {
				t.Fatal("Validate accepted the model")
			}
			if !errors.Is(err, ErrInvalidModel) {
				t.Errorf("error does not wrap ErrInvalidModel: %v", err)
			}
			if errors.Is(err, ErrUnknownOp) != tc.unknown {
				t.Errorf("errors.Is(err, ErrUnknownOp) = %v: %v", !tc.unknown, err)
			}
			msg := err.Error()
			if !strings.Contains(msg, `"m.onnx"`) {
				t.Errorf("error does not name the model: %v", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error lacks %q:\n%s", w, msg)
				}
			}
		})
	}
}

func TestValidateNilModel(t *testing.T) {
	if err := Validate(nil); !errors.Is(err, ErrInvalidModel) {
		t.Fatalf("Validate(nil) = %v", err)
	}
}

func TestValidateReportsEverything(t *testing.T) {
	m := validModel()
	m.Graph.Nodes[0].Inputs[0] = "nope"
	delete(m.Graph.Nodes[4].Attrs, "to")
	m.Graph.Nodes = append(m.Graph.Nodes, nd("u", "Later", []string{"h"}, []string{"uo"}))
	m.Graph.Nodes[7].Index = 7
	err := Validate(m)
	msg := err.Error()
	for _, w := range []string{`node "n0"`, `node "n4"`, `node "u"`} {
		if !strings.Contains(msg, w) {
			t.Errorf("error lacks %q:\n%s", w, msg)
		}
	}
	if !errors.Is(err, ErrUnknownOp) {
		t.Errorf("the unknown op is not reported with ErrUnknownOp: %v", err)
	}
}

func TestValidateCapsErrors(t *testing.T) {
	m := validModel()
	for i := range 30 {
		m.Graph.Nodes = append(m.Graph.Nodes, nd("bad", "Unary", []string{"undefined"}, []string{"o" + string(rune('A'+i))}))
	}
	err := Validate(m)
	if err == nil {
		t.Fatal("Validate accepted the model")
	}
	msg := err.Error()
	if got := strings.Count(msg, `input "undefined" is not defined`); got != maxErrors {
		t.Errorf("%d errors shown, want %d", got, maxErrors)
	}
	if !strings.Contains(msg, "10 more errors not shown") {
		t.Errorf("error does not count the rest:\n%s", msg)
	}
}
