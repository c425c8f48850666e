package vulkan

import (
	"strings"
	"testing"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/hostfallback"
	"github.com/onnxvk/onnxvk/planner"
	"github.com/onnxvk/onnxvk/shaders"
)

// The tests of this file check that the layers agree on each op: the
// schema in graph/ops, the CPU kernel, the shader's op codes and the
// Vulkan lowering. They need no Vulkan device.

// accepts reports whether schema s admits n inputs.
func accepts(s *ops.Schema, n int) bool {
	return s.MinInputs <= n && (s.MaxInputs < 0 || n <= s.MaxInputs)
}

// TestShaderOpCodes checks that every op code unary.glsl and binary.glsl
// declare is in unaryOps or binaryOps under the ONNX op its name spells,
// that each of those ops is elementwise, takes one (unary) or two (binary)
// inputs and has a CPU kernel to be compared with, and that every
// activation code of act.glsl is in convActs, ACT_NONE being 0.
func TestShaderOpCodes(t *testing.T) {
	for _, c := range []struct {
		file, prefix string
		table        map[string]int32
		inputs       int
	}{
		{"unary.glsl", "U_", unaryOps, 1},
		{"binary.glsl", "B_", binaryOps, 2},
	} {
		codes, err := shaders.Constants(c.file, c.prefix)
		if err != nil {
			t.Fatal(err)
		}
		for name, code := range codes {
			op := opSpelt(c.table, name)
			if op == "" {
				t.Errorf("%s: %s%s names no ONNX op", c.file, c.prefix, name)
			} else if c.table[op] != code {
				t.Errorf("%s: %s%s is %d, but %s lowers with %d", c.file, c.prefix, name, code, op, c.table[op])
			}
		}
		if len(c.table) != len(codes) {
			t.Errorf("%s declares %d codes, the Vulkan backend lowers %d ops with them", c.file, len(codes), len(c.table))
		}
		for op := range c.table {
			versions := ops.Versions(graph.DefaultDomain, op)
			if latest := versions[len(versions)-1]; !latest.Has(ops.Elementwise) || !accepts(latest, c.inputs) {
				t.Errorf("%s: %s is lowered with %d inputs, but its schema is elementwise %v with %d to %d inputs",
					c.file, op, c.inputs, latest.Has(ops.Elementwise), latest.MinInputs, latest.MaxInputs)
			}
			if hostfallback.Lookup(graph.DefaultDomain, op) == nil {
				t.Errorf("%s: %s has no CPU kernel", c.file, op)
			}
		}
	}
	acts, err := shaders.Constants("act.glsl", "ACT_")
	if err != nil {
		t.Fatal(err)
	}
	if acts["NONE"] != 0 {
		t.Errorf("act.glsl: ACT_NONE is %d, but FusedConv without an activation gets 0", acts["NONE"])
	}
	delete(acts, "NONE")
	for name, code := range acts {
		if act := opSpelt(convActs, name); act == "" {
			t.Errorf("act.glsl: ACT_%s names no activation", name)
		} else if convActs[act] != code {
			t.Errorf("act.glsl: ACT_%s is %d, but FusedConv's %s lowers with %d", name, code, act, convActs[act])
		}
	}
	if len(convActs) != len(acts) {
		t.Errorf("act.glsl declares %d activations, FusedConv lowers %d", len(acts), len(convActs))
	}
}

// opSpelt returns the key of table that name spells in capitals, or "".
func opSpelt(table map[string]int32, name string) string {
	for op := range table {
		if strings.ToUpper(op) == name {
			return op
		}
	}
	return ""
}

// TestLoweredOpsHaveSchemas checks that every op the Vulkan backend
// registers a lowering for has a schema and a CPU kernel, in the default
// domain or, for the planner's fused ops, ops.FusedDomain.
func TestLoweredOpsHaveSchemas(t *testing.T) {
	for domain, table := range map[string]map[string]lowerFunc{graph.DefaultDomain: lowerers, ops.FusedDomain: fusedLowerers} {
		if len(table) == 0 {
			t.Errorf("no lowering registered in domain %q", domain)
		}
		for op := range table {
			if len(ops.Versions(domain, op)) == 0 {
				t.Errorf("the Vulkan backend lowers %s (domain %q), which has no schema", op, domain)
			}
			if hostfallback.Lookup(domain, op) == nil {
				t.Errorf("the Vulkan backend lowers %s (domain %q), which has no CPU kernel", op, domain)
			}
		}
	}
}

// TestFusableActivationsHaveEpilogues checks that every activation the
// planner may fold into a Conv (ops.FusableActivation, and ops.ActSwish
// from Sigmoid and Mul) is applied by both FusedConv implementations: the
// Vulkan lowering accepts it and the CPU kernel runs it.
func TestFusableActivationsHaveEpilogues(t *testing.T) {
	acts := []string{ops.ActSwish}
	for _, op := range ops.Names(graph.DefaultDomain) {
		if ops.Has(graph.DefaultDomain, op, ops.FusableActivation) {
			acts = append(acts, op)
		}
	}
	x, w := graph.NewTensor(graph.Float, []int64{1, 1, 2, 2}), graph.NewTensor(graph.Float, []int64{1, 1, 1, 1})
	types := []*graph.Type{graph.TensorType(graph.Float, graph.ShapeOf(x.Shape...)), graph.TensorType(graph.Float, graph.ShapeOf(w.Shape...))}
	cpu := hostfallback.Lookup(ops.FusedDomain, "FusedConv")
	for _, act := range acts {
		n := &graph.Node{Name: "f", OpType: "FusedConv", Domain: ops.FusedDomain, Inputs: []string{"x", "w"}, Outputs: []string{"y"},
			Attrs: map[string]*graph.Attribute{
				"activation": {Name: "activation", Type: graph.AttrString, S: []byte(act)},
				"alpha":      {Name: "alpha", Type: graph.AttrFloat, F: -1},
				"beta":       {Name: "beta", Type: graph.AttrFloat, F: 1},
			}}
		if _, ok := convActs[act]; !ok {
			t.Errorf("%s: conv.comp and convgemm.comp have no code for it", act)
		}
		if _, ok := lower(planner.Query{Node: n, Opset: 1, Inputs: types, Consts: []*graph.Tensor{nil, w}}, caps{maxElems: 1 << 20}); !ok {
			t.Errorf("%s: the Vulkan backend does not lower FusedConv with it", act)
		}
		if err := cpu(&hostfallback.Call{Node: n, Opset: 1, In: []graph.Value{x, w}, Out: make([]graph.Value, 1)}); err != nil {
			t.Errorf("%s: the CPU's FusedConv fails: %v", act, err)
		}
	}
}
