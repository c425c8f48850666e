package serve_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/graph"
	"github.com/onnxvk/onnxvk/internal/example"
	"github.com/onnxvk/onnxvk/internal/npy"
	"github.com/onnxvk/onnxvk/internal/testenv"
	"github.com/onnxvk/onnxvk/serve"
	"github.com/onnxvk/onnxvk/serve/client"
)

// freePort returns a loopback address with a port free a moment ago.
func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

// TestSameOutputsEverywhere runs the built-in example model (an edge
// detector) on its picture with `onnxvk run`, then serves it with `onnxvk
// serve --http --grpc` and sends the same input through the Go client over
// gRPC (raw and typed contents) and HTTP (binary and JSON), and through a
// Python client made from the public proto with grpcio's stubs: every
// output is bit for bit run's. Then SIGTERM: the server exits 0.
func TestSameOutputsEverywhere(t *testing.T) {
	testenv.SkipShort(t, "builds cmd/onnxvk and runs it")
	// Building the command and the processes' start-ups: beside the other
	// tests.
	t.Parallel()
	bin := serve.BuildCommand(t)
	dir := t.TempDir()
	model := filepath.Join(dir, "edges.onnx")
	require.NoError(t, os.WriteFile(model, example.Model(), 0o644))
	in := example.Input()
	inPath := filepath.Join(dir, "image.npy")
	require.NoError(t, npy.WriteFile(inPath, in))
	out, err := exec.Command(bin, "run", "--device", "cpu", "-i", "image="+inPath, "-o", filepath.Join(dir, "run"), model).CombinedOutput()
	require.NoError(t, err, "%s", out)
	want, err := npy.ReadFile(filepath.Join(dir, "run", "edges.npy"))
	require.NoError(t, err)

	grpcAddr := freePort(t)
	cmd, httpURL, stderr := serve.StartServe(t, bin, "--grpc", grpcAddr, "--device", "cpu", model)
	urls := map[string]string{"grpc": "grpc://" + grpcAddr, "http": httpURL}
	ctx := context.Background()
	for _, c := range []struct {
		name, scheme string
		opts         client.Options
	}{{"grpc raw", "grpc", client.Options{}}, {"grpc typed", "grpc", client.Options{Listed: true}},
		{"http binary", "http", client.Options{}}, {"http json", "http", client.Options{Listed: true}}} {
		cl, err := client.New(urls[c.scheme], c.opts)
		require.NoError(t, err)
		// The gRPC port opens just after the HTTP one: wait for it.
		deadline := time.Now().Add(30 * time.Second)
		for live, _ := cl.Live(ctx); !live && time.Now().Before(deadline); live, _ = cl.Live(ctx) {
			time.Sleep(50 * time.Millisecond)
		}
		resp, err := cl.Infer(ctx, &serve.InferRequest{ModelName: "edges", Inputs: []serve.RequestTensor{
			{Name: "image", Datatype: "FP32", Shape: in.Shape, Raw: in.Data}}})
		require.NoError(t, err, c.name)
		require.Len(t, resp.Outputs, 1, c.name)
		assert.Equal(t, "edges", resp.Outputs[0].Name)
		assert.Equal(t, want.Shape, resp.Outputs[0].Shape, c.name)
		assert.Equal(t, want.Data, resp.Outputs[0].Tensor.Bytes(), c.name)
		require.NoError(t, cl.Close())
	}

	t.Run("python", func(t *testing.T) {
		const python = "/usr/bin/python3"
		if err := exec.Command(python, "-c", "import grpc, grpc_tools, numpy").Run(); err != nil {
			testenv.Skip(t, python+" lacks grpcio, grpc_tools or numpy (Debian: python3-grpcio python3-grpc-tools python3-numpy): "+err.Error())
		}
		stubs := t.TempDir()
		out, err := exec.Command(python, "-m", "grpc_tools.protoc", "-I", "kservepb", "--python_out="+stubs,
			"--grpc_python_out="+stubs, "grpc_predict_v2.proto").CombinedOutput()
		require.NoError(t, err, "%s", out)
		outDir := t.TempDir()
		out, err = exec.Command(python, "testdata/kserve_client.py", stubs, grpcAddr, "edges", "image", inPath, outDir).Output()
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			t.Fatalf("the Python client: %v\n%s", err, ee.Stderr)
		}
		require.NoError(t, err)
		var report struct {
			Inputs       []string           `json:"inputs"`
			Outputs      map[string][]int64 `json:"outputs"`
			UnknownModel string             `json:"unknown_model"`
		}
		require.NoError(t, json.Unmarshal(out, &report), "%s", out)
		assert.Equal(t, []string{"image"}, report.Inputs)
		assert.Equal(t, "NOT_FOUND", report.UnknownModel)
		for _, form := range []string{"raw", "typed"} {
			assert.Equal(t, want.Shape, report.Outputs[form+"_edges"], form)
			got, err := npy.ReadFile(filepath.Join(outDir, form+"_edges.npy"))
			require.NoError(t, err, form)
			assert.Equal(t, graph.Float, got.DType)
			assert.Equal(t, want.Data, got.Data, form)
		}
	})

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Wait(), "stderr:\n%s", stderr.String())
}
