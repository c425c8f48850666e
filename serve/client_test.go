package serve_test

import (
	"context"
	"crypto/x509"
	"maps"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/onnxvk/onnxvk/serve"
	"github.com/onnxvk/onnxvk/serve/client"
)

// transport is a way for a client to reach the server: a frontend on a
// loopback port and the client's options.
type transport struct {
	name  string
	start func(t *testing.T, s *serve.Server) string
	opts  client.Options
}

// serveFrontend serves f until the end of the test and returns its address.
func serveFrontend(t *testing.T, f serve.Frontend) string {
	done := make(chan error, 1)
	go func() { done <- f.Serve() }()
	t.Cleanup(func() {
		require.NoError(t, f.Shutdown(context.Background()))
		require.NoError(t, <-done)
	})
	return f.Addr()
}

func startGRPCURL(t *testing.T, s *serve.Server) string {
	f, err := serve.NewGRPC(s, "127.0.0.1:0", serve.GRPCOptions{})
	require.NoError(t, err)
	return "grpc://" + serveFrontend(t, f)
}

func startHTTPURL(t *testing.T, s *serve.Server) string {
	f, err := serve.NewHTTP(s, "127.0.0.1:0", serve.HTTPOptions{})
	require.NoError(t, err)
	return "http://" + serveFrontend(t, f)
}

var transports = []transport{
	{"grpc raw", startGRPCURL, client.Options{}},
	{"grpc typed", startGRPCURL, client.Options{Listed: true}},
	{"http binary", startHTTPURL, client.Options{}},
	{"http json", startHTTPURL, client.Options{Listed: true}},
}

// TestClient drives every call of the client through each frontend and
// form: health, metadata, inference of every datatype and the errors,
// which carry the same codes whatever the transport.
func TestClient(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			s := serve.NewTestServer(t, 0, 8)
			c, err := client.New(tr.start(t, s), tr.opts)
			require.NoError(t, err)
			defer c.Close()
			ctx := context.Background()

			live, err := c.Live(ctx)
			require.NoError(t, err)
			assert.True(t, live)
			ready, err := c.Ready(ctx)
			require.NoError(t, err)
			assert.True(t, ready)
			md, err := c.ServerMetadata(ctx)
			require.NoError(t, err)
			assert.Equal(t, s.ServerMetadata(), md)
			mr, err := c.ModelReady(ctx, "affine", "")
			require.NoError(t, err)
			assert.True(t, mr)
			_, err = c.ModelReady(ctx, "nope", "")
			assert.Equal(t, serve.CodeNotFound, serve.CodeOf(err), "%v", err)
			mm, err := c.ModelMetadata(ctx, "echo", "1")
			require.NoError(t, err)
			want, err := s.ModelMetadata(ctx, "echo", "1")
			require.NoError(t, err)
			assert.Equal(t, want, mm)
			_, err = c.ModelMetadata(ctx, "echo", "7")
			assert.Equal(t, serve.CodeNotFound, serve.CodeOf(err), "%v", err)

			echo := func(values map[string]any) *serve.InferRequest {
				req := &serve.InferRequest{ModelName: "echo", ID: "e1"}
				for _, dt := range serve.AllDatatypes {
					req.Inputs = append(req.Inputs, serve.RequestTensor{Name: "in_" + dt, Datatype: dt, Shape: []int64{2, 2}, Data: values[dt]})
				}
				return req
			}
			values := serve.DatatypeValues
			if tr.name == "http json" {
				// JSON carries text only: bytes that are not UTF-8 are
				// refused rather than mangled; every other form carries them.
				_, err := c.Infer(ctx, echo(values))
				assert.ErrorContains(t, err, "not UTF-8")
				values = maps.Clone(values)
				values["BYTES"] = []string{"a", "", "héllo", "tab\there"}
			}
			resp, err := c.Infer(ctx, echo(values))
			require.NoError(t, err)
			assert.Equal(t, "e1", resp.ID)
			assert.Equal(t, "echo", resp.ModelName)
			require.Len(t, resp.Outputs, len(serve.AllDatatypes))
			for i, dt := range serve.AllDatatypes {
				o := resp.Outputs[i]
				assert.Equal(t, "out_"+dt, o.Name)
				assert.Equal(t, dt, o.Datatype)
				assert.Equal(t, []int64{2, 2}, o.Shape)
				assert.Equal(t, values[dt], o.Values(), dt)
			}

			rows := [][]float32{{1, 2, 3, 4}, {5, 6, 7, 8}}
			req := &serve.InferRequest{ModelName: "affine", Inputs: []serve.RequestTensor{{Name: "x", Datatype: "FP32", Shape: []int64{2, 4}, Data: append(rows[0], rows[1]...)}},
				Outputs: []serve.RequestedOutput{{Name: "y"}}}
			resp, err = c.Infer(ctx, req)
			require.NoError(t, err)
			require.Len(t, resp.Outputs, 1)
			assert.Equal(t, serve.AffineWant(rows), resp.Outputs[0].Values())

			for _, bad := range []struct {
				req  *serve.InferRequest
				code serve.Code
			}{
				{&serve.InferRequest{ModelName: "nope"}, serve.CodeNotFound},
				{&serve.InferRequest{ModelName: "affine", Inputs: []serve.RequestTensor{{Name: "x", Datatype: "FP32", Shape: []int64{1, 3}, Data: []float32{1, 2, 3}}}}, serve.CodeInvalidArgument},
				{&serve.InferRequest{ModelName: "affine", Inputs: []serve.RequestTensor{{Name: "x", Datatype: "INT64", Shape: []int64{1, 4}, Data: []int64{1, 2, 3, 4}}}}, serve.CodeInvalidArgument},
			} {
				_, err := c.Infer(ctx, bad.req)
				assert.Equal(t, bad.code, serve.CodeOf(err), "%v", err)
			}

			s.Drain()
			ready, err = c.Ready(ctx)
			require.NoError(t, err)
			assert.False(t, ready)
			_, err = c.Infer(ctx, req)
			assert.Equal(t, serve.CodeUnavailable, serve.CodeOf(err), "%v", err)
		})
	}
}

func TestClientURLs(t *testing.T) {
	for _, u := range []string{"localhost:8001", "ftp://127.0.0.1:1", "grpc://", "http://[::1"} {
		_, err := client.New(u, client.Options{})
		assert.Error(t, err, u)
	}
}

// TestClientGRPCTLS serves gRPC over TLS: a client trusting the
// certificate gets answers, one without TLS does not.
func TestClientGRPCTLS(t *testing.T) {
	s := serve.NewTestServer(t, 0, 8)
	certFile, keyFile, cert := serve.SelfSigned(t)
	_, err := serve.NewGRPC(s, "127.0.0.1:0", serve.GRPCOptions{CertFile: certFile})
	assert.ErrorContains(t, err, "both a certificate and a key")
	f, err := serve.NewGRPC(s, "127.0.0.1:0", serve.GRPCOptions{CertFile: certFile, KeyFile: keyFile})
	require.NoError(t, err)
	url := "grpc://" + serveFrontend(t, f)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	c, err := client.New(url, client.Options{DialOptions: []grpc.DialOption{grpc.WithTransportCredentials(credentials.NewClientTLSFromCert(pool, ""))}})
	require.NoError(t, err)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	live, err := c.Live(ctx)
	require.NoError(t, err)
	assert.True(t, live)
	plain, err := client.New(url, client.Options{})
	require.NoError(t, err)
	defer plain.Close()
	_, err = plain.Live(ctx)
	assert.Equal(t, serve.CodeUnavailable, serve.CodeOf(err), "%v", err)
}
