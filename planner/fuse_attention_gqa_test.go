package planner_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/planner"
)

// groupedChain builds a grouped-query attention as Hugging Face's Llama
// exports it: q [1, 4, 5, 8] against keys and values k0 and v0 [1, 2, S,
// 8] (S symbolic), each repeated by repeat_kv (Unsqueeze at axis, Expand
// to [1, 2, rep, S, 8] (rep the third of expand, whose others only say
// that it repeats; nil leaves that operand a plain input of the repeated
// shape), Reshape to [1, 4, S, 8]), Kᵀ by a Transpose, then MatMul,
// Softmax and MatMul. The Expand's and the Reshape's targets come from
// shape arithmetic over k0's shape, as torch writes them.
func groupedChain(axis int64, expandK, expandV []int64) *graph.Model {
	g := graph.NewGraph("gqa")
	f32 := func(s ...graph.Dim) *graph.Type { return graph.TensorType(graph.Float, graph.Shape(s)) }
	d := graph.DimOf
	s := graph.SymDim("S")
	g.Inputs = []*graph.ValueInfo{{Name: "q", Type: f32(d(1), d(4), d(5), d(8))}}
	i64 := func(v ...int64) *graph.Tensor {
		t, _ := graph.FromSlice(graph.Int64, []int64{int64(len(v))}, v)
		return t
	}
	g.Initializers["axis"] = i64(axis)
	g.Initializers["two"] = i64(2)
	g.Initializers["heads"] = i64(1, 4)
	g.Initializers["len"] = i64(2)
	g.Initializers["lead"] = i64(1, 2)
	g.Initializers["last"] = i64(8)
	// repeat adds the nodes repeating x0 (named after o) into o, or makes
	// o an input.
	repeat := func(o string, expand []int64) {
		if expand == nil {
			g.Inputs = append(g.Inputs, &graph.ValueInfo{Name: o, Type: f32(d(1), d(4), s, d(8))})
			return
		}
		x0 := o + "0"
		g.Inputs = append(g.Inputs, &graph.ValueInfo{Name: x0, Type: f32(d(1), d(2), s, d(8))})
		g.Initializers[o+"rep"] = i64(expand[2])
		g.Nodes = append(g.Nodes,
			&graph.Node{Name: o + "shape", OpType: "Shape", Inputs: []string{x0}, Outputs: []string{o + "s"}},
			&graph.Node{Name: o + "len", OpType: "Gather", Inputs: []string{o + "s", "len"}, Outputs: []string{o + "n"}},
			&graph.Node{Name: o + "target", OpType: "Concat", Inputs: []string{"lead", o + "rep", o + "n", "last"}, Outputs: []string{o + "target"},
				Attrs: map[string]*graph.Attribute{"axis": {Name: "axis", Type: graph.AttrInt}}},
			&graph.Node{Name: o + "merged", OpType: "Concat", Inputs: []string{"heads", o + "n", "last"}, Outputs: []string{o + "merged"},
				Attrs: map[string]*graph.Attribute{"axis": {Name: "axis", Type: graph.AttrInt}}},
			&graph.Node{Name: o + "unsqueeze", OpType: "Unsqueeze", Inputs: []string{x0, "axis"}, Outputs: []string{o + "u"}},
			&graph.Node{Name: o + "expand", OpType: "Expand", Inputs: []string{o + "u", o + "target"}, Outputs: []string{o + "e"}},
			&graph.Node{Name: o + "reshape", OpType: "Reshape", Inputs: []string{o + "e", o + "merged"}, Outputs: []string{o}})
	}
	repeat("k", expandK)
	repeat("v", expandV)
	g.Nodes = append(g.Nodes,
		&graph.Node{Name: "kt", OpType: "Transpose", Inputs: []string{"k"}, Outputs: []string{"kt"},
			Attrs: map[string]*graph.Attribute{"perm": {Name: "perm", Type: graph.AttrInts, Ints: []int64{0, 1, 3, 2}}}},
		&graph.Node{Name: "qk", OpType: "MatMul", Inputs: []string{"q", "kt"}, Outputs: []string{"scores"}},
		&graph.Node{Name: "sm", OpType: "Softmax", Inputs: []string{"scores"}, Outputs: []string{"p"},
			Attrs: map[string]*graph.Attribute{"axis": {Name: "axis", Type: graph.AttrInt, I: -1}}},
		&graph.Node{Name: "pv", OpType: "MatMul", Inputs: []string{"p", "v"}, Outputs: []string{"y"}})
	for i, n := range g.Nodes {
		n.Index = i
	}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	return &graph.Model{Name: "gqa", IRVersion: 8, Opsets: map[string]int64{"": 13}, Graph: g}
}

// TestPlanFusesGroupedQueryAttention checks that keys and values whose
// heads repeat_kv repeats fuse unrepeated (kv_repeat), the Expand's shape
// arithmetic going with them, and that other repeats keep their Expand:
// heads repeated as a block (the new axis before the heads, head h
// reading head h mod 2), keys repeated and values not.
func TestPlanFusesGroupedQueryAttention(t *testing.T) {
	dev := fakeDevice{"cpu", map[string]bool{"MatMul": true, "Softmax": true, "Transpose": true, "Unsqueeze": true, "Expand": true,
		"Reshape": true, "Shape": true, "Gather": true, "Concat": true, "ScaledDotProductAttention": true}}
	rep := []int64{1, 2, 2, -1, 8}
	p, err := planner.New(groupedChain(2, rep, rep), planner.Options{Devices: []planner.Device{dev}})
	require.NoError(t, err)
	require.Len(t, p.Steps, 1, "steps left")
	f := p.Steps[0].Node
	require.Equal(t, "ScaledDotProductAttention", f.OpType)
	require.Equal(t, []string{"q", "k0", "v0"}, f.Inputs)
	params := ops.Params[ops.ScaledDotProductAttentionParams](f, 1)
	require.Equal(t, int64(2), params.KvRepeat)
	require.Equal(t, []int64{0, 1, 3, 2}, params.PermK)

	for _, tc := range []struct {
		name             string
		axis             int64
		expandK, expandV []int64
	}{
		{"heads repeated as a block", 1, []int64{1, 2, 2, -1, 8}, []int64{1, 2, 2, -1, 8}},
		{"values not repeated", 2, rep, nil},
	} {
		m := groupedChain(tc.axis, tc.expandK, tc.expandV)
		if tc.axis == 1 {
			// Unsqueeze at 1 makes [1, 1, 2, S, 8]: expand its first axis.
			for _, n := range m.Graph.Nodes {
				if n.Name == "ktarget" || n.Name == "vtarget" {
					n.Inputs = []string{"one", n.Inputs[1], "two", n.Inputs[2], "last"}
				}
			}
			m.Graph.Initializers["one"], _ = graph.FromSlice(graph.Int64, []int64{1}, []int64{1})
		}
		p, err := planner.New(m, planner.Options{Devices: []planner.Device{dev}})
		require.NoError(t, err, tc.name)
		expands := 0
		for _, st := range p.Steps {
			if st.Node.OpType == "Expand" {
				expands++
			}
			if st.Node.OpType == "ScaledDotProductAttention" {
				require.Equal(t, int64(1), ops.Params[ops.ScaledDotProductAttentionParams](st.Node, 1).KvRepeat, tc.name)
			}
		}
		require.NotZero(t, expands, "%s: Expand nodes left", tc.name)
	}
}
