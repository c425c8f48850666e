// Package client speaks the Open Inference Protocol (KServe v2) to a
// server such as `onnxvk serve`, Triton or MLServer: over gRPC
// (grpc_predict_v2.proto) or HTTP/REST, with tensors in the binary form
// (raw contents on gRPC, the binary tensor data extension on HTTP) or the
// listed one (typed contents, JSON arrays).
package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"google.golang.org/grpc"

	"github.com/onnxvk/onnxvk/serve"
)

// Client is a connection to one server. Its methods are safe for
// concurrent use. A request the server refuses fails with a *serve.Error
// carrying the protocol status (serve.CodeOf reads it), the same over
// gRPC and HTTP.
type Client interface {
	// Live and Ready report the server's health.
	Live(ctx context.Context) (bool, error)
	Ready(ctx context.Context) (bool, error)
	ServerMetadata(ctx context.Context) (serve.ServerMetadata, error)
	// ModelReady and ModelMetadata ask about a model; version "" lets the
	// server choose.
	ModelReady(ctx context.Context, name, version string) (bool, error)
	ModelMetadata(ctx context.Context, name, version string) (serve.ModelMetadata, error)
	// Infer runs a request. Its inputs give their elements as Raw or Data
	// (see serve.RequestTensor); the response's outputs hold theirs in
	// Tensor.
	Infer(ctx context.Context, req *serve.InferRequest) (*serve.InferResponse, error)
	// Close releases the connection.
	Close() error
}

// Options configure a Client.
type Options struct {
	// Listed sends inputs and asks for outputs in the listed form: typed
	// contents on gRPC, JSON arrays on HTTP. By default both go in the
	// binary form.
	Listed bool
	// MaxMessageBytes bounds a gRPC response (0: serve's default,
	// serve.DefaultGRPCMaxMessageBytes) and the requests it sends.
	MaxMessageBytes int
	// DialOptions are added to a gRPC connection's (which has insecure
	// transport credentials unless they give others).
	DialOptions []grpc.DialOption
	// HTTPClient makes HTTP requests (nil: a client of its own).
	HTTPClient *http.Client
}

// New returns a client for the server at rawURL: grpc://HOST:PORT for
// gRPC, http://HOST:PORT or https://HOST:PORT for HTTP/REST. It connects
// lazily: a server that is not there shows in the first call's error.
func New(rawURL string, opts Options) (Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("client: server URL %q: %w", rawURL, err)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("client: server URL %q has no host (want grpc://HOST:PORT or http://HOST:PORT)", rawURL)
	}
	switch u.Scheme {
	case "grpc":
		return newGRPC(u.Host, opts)
	case "http", "https":
		return newHTTP(u, opts), nil
	}
	return nil, fmt.Errorf("client: server URL %q: scheme %q is none of grpc, http, https", rawURL, u.Scheme)
}
