package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/onnxvk/onnxvk/serve"
)

// startServers serves the example model as "edges" over gRPC and HTTP on
// loopback ports and returns their URLs.
func startServers(t *testing.T) (grpcURL, httpURL string) {
	s, err := serve.NewServer([]serve.ModelConfig{{Name: "edges", Path: exampleFile(t), Device: "cpu"}},
		serve.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	g, err := serve.NewGRPC(s, "127.0.0.1:0", serve.GRPCOptions{})
	require.NoError(t, err)
	h, err := serve.NewHTTP(s, "127.0.0.1:0", serve.HTTPOptions{})
	require.NoError(t, err)
	for _, f := range []serve.Frontend{g, h} {
		done := make(chan error, 1)
		go func() { done <- f.Serve() }()
		t.Cleanup(func() {
			require.NoError(t, f.Shutdown(context.Background()))
			require.NoError(t, <-done)
		})
	}
	t.Cleanup(func() { s.Close() })
	return "grpc://" + g.Addr(), "http://" + h.Addr()
}

func TestBenchServer(t *testing.T) {
	grpcURL, httpURL := startServers(t)
	for _, url := range []string{grpcURL, httpURL} {
		code, out, errOut := cli(t, "bench", "--server", url, "--runs", "3", "--warmup", "1", "--concurrency", "2", "--json", "edges")
		require.Equal(t, 0, code, errOut)
		var r map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &r))
		require.Equal(t, 6.0, r["runs"])
		require.Equal(t, 2.0, r["concurrency"])
		require.Equal(t, "server", r["device"])
		require.Equal(t, url, r["server"])
		require.Equal(t, "edges", r["model"])
		require.Equal(t, map[string]any{"image": []any{1.0, 3.0, 1.0, 1.0}}, r["inputs"])
		for _, k := range []string{"first_run_ms", "median_ms", "p99_ms", "min_ms", "max_ms", "throughput_per_s"} {
			require.Greater(t, r[k], 0.0, k)
		}
		require.LessOrEqual(t, r["min_ms"], r["p99_ms"])
		require.Contains(t, errOut, "onnxvk bench: first request\n")
	}

	code, out, errOut := cli(t, "bench", "--server", grpcURL, "--duration", "50ms", "edges")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "model      edges on server "+grpcURL)
	require.NotContains(t, out, "memory")

	code, _, errOut = cli(t, "bench", "--server", grpcURL, "--device", "cpu", "edges")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--device: not with --server")
	code, _, errOut = cli(t, "bench", "--server", grpcURL, "nope")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, `unknown model "nope"`)
	code, _, errOut = cli(t, "bench", "--server", "ftp://x", "edges")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "scheme")
}
