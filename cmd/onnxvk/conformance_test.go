package main

import (
	"encoding/json"
	"encoding/xml"
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
	dir := t.TempDir()
	suite := filepath.Join(dir, "node")
	negTest(t, filepath.Join(suite, "test_neg"), -1, 2)
	negTest(t, filepath.Join(suite, "test_neg_wrong"), -1, 3)
	require.NoError(t, os.MkdirAll(filepath.Join(suite, "test_empty"), 0o755))
	expect := filepath.Join(dir, "expect.txt")
	require.NoError(t, os.WriteFile(expect, []byte("# known\nnode/test_neg_wrong\twrong on purpose\n"), 0o644))

	// test_neg_wrong is not on onnxvk's own list: an unexpected failure.
	code, out, errOut := cli(t, "conformance", "--device", "cpu", suite)
	require.Equal(t, 1, code, errOut)
	require.Contains(t, out, "PASS node/test_neg\n")
	require.Contains(t, out, "FAIL node/test_neg_wrong: test_data_set_0: output \"y\": 1 of 2 values differ")
	require.Contains(t, out, "SKIP node/test_empty: no model.onnx\n")
	require.Contains(t, out, "\n1 passed, 1 failed, 1 skipped\n0 failures expected, 1 unexpected: node/test_neg_wrong\n")
	require.Equal(t, "onnxvk conformance: 1 unexpected failures\n", errOut)

	junit := filepath.Join(dir, "report.xml")
	code, out, errOut = cli(t, "conformance", "--device", "cpu", "--expect", expect, "--junit", junit, suite)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "\n1 failures expected\n")
	raw, err := os.ReadFile(junit)
	require.NoError(t, err)
	var rep struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
				Skipped *struct {
					Message string `xml:"message,attr"`
				} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal(raw, &rep))
	require.Equal(t, 3, rep.Tests)
	require.Equal(t, 0, rep.Failures)
	require.Len(t, rep.Suites, 1)
	require.Equal(t, "onnx-backend.node on cpu", rep.Suites[0].Name)
	require.Len(t, rep.Suites[0].Cases, 3)
	for _, c := range rep.Suites[0].Cases {
		switch c.Name {
		case "test_neg":
			require.Nil(t, c.Failure)
			require.Nil(t, c.Skipped)
		case "test_neg_wrong":
			require.Equal(t, "expected failure: wrong on purpose", c.Skipped.Message)
		case "test_empty":
			require.Equal(t, "no model.onnx", c.Skipped.Message)
		default:
			t.Errorf("unexpected test case %s", c.Name)
		}
	}

	// With no expectations, the failure fails the run; a listed test that
	// passes is reported.
	code, _, _ = cli(t, "conformance", "--device", "cpu", "--expect", "none", suite)
	require.Equal(t, 1, code)
	require.NoError(t, os.WriteFile(expect, []byte("node/test_neg\tthought broken\n"), 0o644))
	code, out, errOut = cli(t, "conformance", "--device", "cpu", "--expect", expect, "--filter", "neg$", filepath.Join(suite, "test_neg"))
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "PASS node/test_neg\n1 passed, 0 failed, 0 skipped\n0 failures expected\n1 tests expected to fail passed: node/test_neg\n", out)

	code, out, errOut = cli(t, "conformance", "--device", "cpu", "--json", suite)
	require.Equal(t, 1, code, errOut)
	var js struct {
		Passed, Failed, Skipped int
		Unexpected              []string `json:"unexpected_failures"`
		Results                 []struct{ Name, Status, Reason string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &js))
	require.Equal(t, []int{1, 1, 1}, []int{js.Passed, js.Failed, js.Skipped})
	require.Equal(t, []string{"node/test_neg_wrong"}, js.Unexpected)
	require.Len(t, js.Results, 3)
	require.Equal(t, "SKIP", js.Results[0].Status, fmt.Sprint(js.Results))

	require.NoError(t, os.WriteFile(expect, []byte("node/test_neg\n"), 0o644))
	for _, args := range [][]string{{"conformance"}, {"conformance", "--filter", "(", suite}} {
		code, _, errOut = cli(t, args...)
		require.Equal(t, 2, code, args)
		require.Contains(t, errOut, "onnxvk conformance: ")
		require.Contains(t, errOut, "Run 'onnxvk conformance --help' for usage.")
	}
	for _, args := range [][]string{{"conformance", t.TempDir()}, {"conformance", "--expect", expect, suite}, {"conformance", "--expect", filepath.Join(dir, "missing"), suite}} {
		code, _, errOut = cli(t, args...)
		require.Equal(t, 1, code, args)
		require.Contains(t, errOut, "onnxvk conformance: ")
	}
}
