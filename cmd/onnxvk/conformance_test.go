package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/loader"
	"github.com/onnxvk/onnxvk/loader/onnxpb"
)

// negTest writes a backend test folder for Neg over float32[2] whose
// expected output is want.
func negTest(t *testing.T, dir string, want ...float32) {
	t.Helper()
	g := graph.NewGraph("neg")
	g.Inputs = []*graph.ValueInfo{{Name: "x", Type: graph.TensorType(graph.Float, graph.ShapeOf(2))}}
	g.Outputs = []*graph.ValueInfo{{Name: "y", Type: graph.TensorType(graph.Float, graph.ShapeOf(2))}}
	g.Nodes = []*graph.Node{{OpType: "Neg", Inputs: []string{"x"}, Outputs: []string{"y"}}}
	set := filepath.Join(dir, "test_data_set_0")
	require.NoError(t, os.MkdirAll(set, 0o755))
	require.NoError(t, loader.Save(&graph.Model{Name: "neg", IRVersion: 8, Opsets: map[string]int64{"": 13}, Graph: g}, filepath.Join(dir, "model.onnx")))
	for name, v := range map[string][]float32{"input_0.pb": {1, -2}, "output_0.pb": want} {
		raw, err := proto.Marshal(&onnxpb.TensorProto{Dims: []int64{2}, DataType: proto.Int32(int32(graph.Float)), FloatData: v})
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(set, name), raw, 0o644))
	}
}

func TestConformanceCommand(t *testing.T) {
	suite := filepath.Join(t.TempDir(), "node")
	negTest(t, filepath.Join(suite, "test_neg"), -1, 2)
	negTest(t, filepath.Join(suite, "test_neg_wrong"), -1, 3)
	require.NoError(t, os.MkdirAll(filepath.Join(suite, "test_empty"), 0o755))

	code, out, errOut := cli(t, "conformance", "--device", "cpu", suite)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "PASS node/test_neg\n")
	require.Contains(t, out, "FAIL node/test_neg_wrong: test_data_set_0: output \"y\": 1 of 2 values differ")
	require.Contains(t, out, "SKIP node/test_empty: no model.onnx\n")
	require.Contains(t, out, "\n1 passed, 1 failed, 1 skipped\n")

	code, out, errOut = cli(t, "conformance", "--device", "cpu", "--filter", "neg$", filepath.Join(suite, "test_neg"))
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "PASS node/test_neg\n1 passed, 0 failed, 0 skipped\n", out)

	code, out, errOut = cli(t, "conformance", "--device", "cpu", "--json", suite)
	require.Equal(t, 0, code, errOut)
	var rep struct {
		Passed, Failed, Skipped int
		Results                 []struct{ Name, Status, Reason string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Equal(t, []int{1, 1, 1}, []int{rep.Passed, rep.Failed, rep.Skipped})
	require.Len(t, rep.Results, 3)
	require.Equal(t, "SKIP", rep.Results[0].Status, fmt.Sprint(rep.Results))

	for _, args := range [][]string{{"conformance"}, {"conformance", "--filter", "(", suite}, {"conformance", t.TempDir()}} {
		code, _, errOut = cli(t, args...)
		require.Equal(t, 1, code, args)
		require.Contains(t, errOut, "onnxvk conformance: ")
	}
}
