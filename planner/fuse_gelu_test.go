package planner_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/graph/ops"
	"github.com/onnxvk/onnxvk/planner"
)

// geluChain builds the exact GELU of x[2, 3] written out in five nodes to
// y: PyTorch's form (Div by √2, Erf, Add 1, Mul by x, Mul by ½) or, with
// halfFirst, x·(1/√2) and ½ applied before x.
func geluChain(halfFirst bool) *graph.Model {
	g := graph.NewGraph("gelu")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(2, 3))}}
	for name, v := range map[string]float32{"sqrt2": 1.4142135, "isqrt2": 0.70710677, "one": 1, "half": 0.5} {
		g.Initializers[name], _ = graph.FromSlice(graph.Float, nil, []float32{v})
	}
	node := func(op string, in []string, out string, index int) *graph.Node {
		return &graph.Node{Name: out, OpType: op, Inputs: in, Outputs: []string{out}, Index: index}
	}
	g.Nodes = []*graph.Node{
		node("Div", []string{"x", "sqrt2"}, "s", 0),
		node("Erf", []string{"s"}, "e", 1),
		node("Add", []string{"one", "e"}, "a", 2),
		node("Mul", []string{"x", "a"}, "m", 3),
		node("Mul", []string{"m", "half"}, "y", 4),
	}
	if halfFirst {
		g.Nodes[0] = node("Mul", []string{"isqrt2", "x"}, "s", 0)
		g.Nodes[3] = node("Mul", []string{"a", "half"}, "m", 3)
		g.Nodes[4] = node("Mul", []string{"m", "x"}, "y", 4)
	}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	return &graph.Model{Name: "gelu", IRVersion: 8, Opsets: map[string]int64{"": 13}, Graph: g}
}

func TestPlanFusesGelu(t *testing.T) {
	five := map[string]bool{"Div": true, "Erf": true, "Add": true, "Mul": true}
	withGelu := map[string]bool{"Gelu": true}
	for op := range five {
		withGelu[op] = true
	}
	for _, halfFirst := range []bool{false, true} {
		m := geluChain(halfFirst)
		p, err := planner.New(m, planner.Options{Devices: []planner.Device{fakeDevice{"cpu", withGelu}}})
		require.NoError(t, err)
		require.Equal(t, 4, p.Fused, "halfFirst %v", halfFirst)
		require.Len(t, p.Steps, 1)
		f := p.Steps[0].Node
		require.Equal(t, ops.FusedDomain, f.Domain)
		require.Equal(t, "Gelu", f.OpType)
		require.Equal(t, []string{"x"}, f.Inputs)
		require.Equal(t, []string{"y"}, f.Outputs)
		require.Len(t, m.Graph.Nodes, 5)
	}

	// A device without the fused op keeps the nodes apart.
	p, err := planner.New(geluChain(false), planner.Options{Devices: []planner.Device{fakeDevice{"cpu", five}}})
	require.NoError(t, err)
	require.Zero(t, p.Fused)
	require.Len(t, p.Steps, 5)

	// So does an intermediate value read elsewhere, or another constant.
	m := geluChain(false)
	m.Graph.Outputs = append(m.Graph.Outputs, &graph.ValueInfo{Name: "e"})
	p, err = planner.New(m, planner.Options{Devices: []planner.Device{fakeDevice{"cpu", withGelu}}})
	require.NoError(t, err)
	require.Zero(t, p.Fused)
	m = geluChain(false)
	m.Graph.Initializers["half"], _ = graph.FromSlice(graph.Float, nil, []float32{0.25})
	p, err = planner.New(m, planner.Options{Devices: []planner.Device{fakeDevice{"cpu", withGelu}}})
	require.NoError(t, err)
	require.Zero(t, p.Fused)
}
