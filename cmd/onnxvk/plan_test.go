package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/loader"
)

// TestPlanSaysWhyNodeIsUnsupported checks that `plan` refuses a node whose
// element type the CPU kernel lacks (a Conv on int32), naming the node, its
// input types and the CPU's reason.
func TestPlanSaysWhyNodeIsUnsupported(t *testing.T) {
	g := graph.NewGraph("intconv")
	x := graph.TensorType(graph.Int32, graph.ShapeOf(1, 1, 3, 3))
	y := graph.TensorType(graph.Int32, graph.ShapeOf(1, 1, 1, 1))
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: x}, {Name: "w", Type: x}}
	g.Outputs = []*graph.ValueInfo{{Name: "y", Type: y}}
	g.Nodes = []*graph.Node{{Name: "conv", OpType: "Conv", Inputs: []string{"x", "w"}, Outputs: []string{"y"}}}
	path := filepath.Join(t.TempDir(), "intconv.onnx")
	require.NoError(t, loader.Save(&graph.Model{Name: "intconv", IRVersion: 8, Opsets: map[string]int64{"": 13}, Graph: g}, path))
	code, _, errOut := cli(t, "plan", path, "--device", "cpu")
	require.NotEqual(t, 0, code)
	require.Contains(t, errOut, `node "conv" (Conv, #0) with inputs (int32[1 1 3 3], int32[1 1 3 3]): cpu: input 0 of element type int32`)
}
