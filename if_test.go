package onnxvk_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/graph"
)

// ifModel is y = If(c, then: Squeeze(x, axes [0]), else: Identity(x)) over
// x [2, 3]: the then branch cannot squeeze an axis of size 2, so only a
// Run that takes the else branch can succeed.
func ifModel() *graph.Model {
	f := graph.TensorType(graph.Float, graph.ShapeOf(2, 3))
	then := graph.NewGraph("then")
	then.Initializers["axes"], _ = graph.FromSlice(graph.Int64, []int64{1}, []int64{0})
	then.Outputs = []*graph.ValueInfo{{Name: "t"}}
	then.Nodes = []*graph.Node{{Name: "squeeze", OpType: "Squeeze", Inputs: []string{"x", "axes"}, Outputs: []string{"t"}}}
	els := graph.NewGraph("else")
	els.Outputs = []*graph.ValueInfo{{Name: "e"}}
	els.Nodes = []*graph.Node{{Name: "identity", OpType: "Identity", Inputs: []string{"x"}, Outputs: []string{"e"}}}
	g := graph.NewGraph("if")
	g.Inputs = []*graph.ValueInfo{{Name: "c", Type: graph.TensorType(graph.Bool, graph.ShapeOf())}, {Name: "x", Type: f}}
	g.Outputs = []*graph.ValueInfo{{Name: "y"}}
	g.Nodes = []*graph.Node{{Name: "if", OpType: "If", Inputs: []string{"c"}, Outputs: []string{"y"}, Attrs: map[string]*graph.Attribute{
		"then_branch": {Name: "then_branch", Type: graph.AttrGraph, G: then},
		"else_branch": {Name: "else_branch", Type: graph.AttrGraph, G: els}}}}
	return &graph.Model{Name: "if", IRVersion: 8, Opsets: map[string]int64{"": 17}, Graph: g}
}

// TestIfBranchNotTaken loads and runs a model with an If whose then branch
// fails shape inference: the plan holds, the else branch runs, and taking
// the then branch fails that Run with the branch's error.
func TestIfBranchNotTaken(t *testing.T) {
	sess, err := onnxvk.NewSession(ifModel(), onnxvk.WithDevice("cpu"))
	require.NoError(t, err)
	defer sess.Close()
	x, err := onnxvk.NewTensor([]int64{2, 3}, []float32{1, 2, 3, 4, 5, 6})
	require.NoError(t, err)
	run := func(c bool) (map[string]*onnxvk.Tensor, error) {
		cond, err := onnxvk.NewTensor([]int64{}, []bool{c})
		require.NoError(t, err)
		return sess.Run(context.Background(), map[string]*onnxvk.Tensor{"c": cond, "x": x})
	}
	out, err := run(false)
	require.NoError(t, err)
	y, err := out["y"].Float32s()
	require.NoError(t, err)
	require.Equal(t, []float32{1, 2, 3, 4, 5, 6}, y)
	_, err = run(true)
	require.ErrorContains(t, err, "squeeze")
}
