package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"

	"github.com/onnxvk/onnxvk/serve/kservepb"
)

// DefaultGRPCMaxMessageBytes bounds a gRPC request or response message
// when GRPCOptions leave it 0: DefaultMaxRequestBytes, HTTP's bound.
const DefaultGRPCMaxMessageBytes = DefaultMaxRequestBytes

// GRPCOptions configure the gRPC frontend.
type GRPCOptions struct {
	// MaxMessageBytes bounds the size of a request message, and of a
	// response message (0: DefaultGRPCMaxMessageBytes). A larger request
	// fails with RESOURCE_EXHAUSTED before it is decoded.
	MaxMessageBytes int
	// MaxInferCalls bounds the ModelInfer calls the frontend holds at
	// once, from their headers until their answer is sent (0: the
	// server's capacity, Server.InferCapacity, read at each call, and at
	// least 1). A call beyond it fails with RESOURCE_EXHAUSTED before its
	// message is read: gRPC reads a whole message before the handler
	// runs, so without this bound an overload would hold a message per
	// call in flight, refused by the queue only after it was read; with
	// it, at most MaxInferCalls messages of at most MaxMessageBytes. The
	// bound is the server's, not a model's (the model's name is in the
	// message), and its refusals count in the metrics under the model "".
	MaxInferCalls int
	// CertFile and KeyFile, when set, serve over TLS.
	CertFile, KeyFile string
}

// GRPCFrontend serves the protocol's GRPCInferenceService
// (grpc_predict_v2.proto). Errors go out as gRPC statuses with the code of
// CodeOf: NOT_FOUND for an unknown model, INVALID_ARGUMENT for a bad
// request, RESOURCE_EXHAUSTED when the model's queue is full,
// DEADLINE_EXCEEDED past the client's deadline, UNAVAILABLE while the
// server drains.
//
// ModelInfer answers with raw_output_contents when the request sent
// raw_input_contents, set the request parameter "binary_data_output" or an
// output's "binary_data" to true, or an output is FP16 or BF16 (which have
// no typed contents); otherwise with typed contents.
type GRPCFrontend struct {
	g     *grpc.Server
	ln    net.Listener
	calls *callLimit
}

// NewGRPC listens on addr ("127.0.0.1:8001"; port 0 picks one) and
// returns the frontend, to be served by Serve or Run.
func NewGRPC(s *Server, addr string, opts GRPCOptions) (*GRPCFrontend, error) {
	limit := opts.MaxMessageBytes
	if limit <= 0 {
		limit = DefaultGRPCMaxMessageBytes
	}
	calls := &callLimit{s: s, max: int64(opts.MaxInferCalls)}
	sopts := []grpc.ServerOption{grpc.MaxRecvMsgSize(limit), grpc.MaxSendMsgSize(limit), grpc.InTapHandle(calls.admit)}
	switch {
	case (opts.CertFile == "") != (opts.KeyFile == ""):
		return nil, errors.New("serve: TLS needs both a certificate and a key file")
	case opts.CertFile != "":
		creds, err := credentials.NewServerTLSFromFile(opts.CertFile, opts.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("serve: %w", err)
		}
		sopts = append(sopts, grpc.Creds(creds))
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	g := grpc.NewServer(sopts...)
	kservepb.RegisterGRPCInferenceServiceServer(g, &grpcService{s: s})
	return &GRPCFrontend{g: g, ln: ln, calls: calls}, nil
}

// callLimit counts the ModelInfer calls in progress and refuses those
// beyond its bound (see GRPCOptions.MaxInferCalls).
type callLimit struct {
	s *Server
	// max is the bound; 0 or less: s.InferCapacity().
	max   int64
	calls atomic.Int64
}

// admit is the server's tap handle, which gRPC calls with a stream's
// headers before it reads the stream's message. ctx ends with the stream,
// whatever ends it, which releases the call's place.
func (l *callLimit) admit(ctx context.Context, info *tap.Info) (context.Context, error) {
	if info.FullMethodName != kservepb.GRPCInferenceService_ModelInfer_FullMethodName {
		return ctx, nil
	}
	limit := l.max
	if limit <= 0 {
		limit = max(int64(l.s.InferCapacity()), 1)
	}
	if l.calls.Add(1) > limit {
		l.calls.Add(-1)
		err := Errorf(CodeResourceExhausted, "the server holds %d inference calls, its limit", limit)
		l.s.metrics.observe("", err.Code, 0)
		return nil, grpcError(err)
	}
	context.AfterFunc(ctx, func() { l.calls.Add(-1) })
	return ctx, nil
}

// Addr returns the address the frontend listens on.
func (f *GRPCFrontend) Addr() string { return f.ln.Addr().String() }

// Serve answers RPCs until Shutdown.
func (f *GRPCFrontend) Serve() error { return f.g.Serve(f.ln) }

// Shutdown stops accepting connections and waits for the RPCs in
// progress, until ctx ends: then it closes the connections that remain
// and returns ctx's error.
func (f *GRPCFrontend) Shutdown(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		f.g.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		f.g.Stop()
		<-done
		return ctx.Err()
	}
}

// grpcService implements GRPCInferenceService on a Server.
type grpcService struct {
	kservepb.UnimplementedGRPCInferenceServiceServer
	s *Server
}

// grpcError converts an error to a gRPC status of its protocol code.
func grpcError(err error) error {
	return status.Error(codes.Code(CodeOf(err)), err.Error())
}

func (g *grpcService) ServerLive(context.Context, *kservepb.ServerLiveRequest) (*kservepb.ServerLiveResponse, error) {
	return &kservepb.ServerLiveResponse{Live: g.s.Live()}, nil
}

func (g *grpcService) ServerReady(context.Context, *kservepb.ServerReadyRequest) (*kservepb.ServerReadyResponse, error) {
	return &kservepb.ServerReadyResponse{Ready: g.s.Ready()}, nil
}

func (g *grpcService) ServerMetadata(context.Context, *kservepb.ServerMetadataRequest) (*kservepb.ServerMetadataResponse, error) {
	md := g.s.ServerMetadata()
	return &kservepb.ServerMetadataResponse{Name: md.Name, Version: md.Version, Extensions: md.Extensions}, nil
}

func (g *grpcService) ModelReady(ctx context.Context, req *kservepb.ModelReadyRequest) (*kservepb.ModelReadyResponse, error) {
	ready, err := g.s.ModelReady(ctx, req.GetName(), req.GetVersion())
	if err != nil {
		return nil, grpcError(err)
	}
	return &kservepb.ModelReadyResponse{Ready: ready}, nil
}

func (g *grpcService) ModelMetadata(ctx context.Context, req *kservepb.ModelMetadataRequest) (*kservepb.ModelMetadataResponse, error) {
	md, err := g.s.ModelMetadata(ctx, req.GetName(), req.GetVersion())
	if err != nil {
		return nil, grpcError(err)
	}
	return ModelMetadataToProto(md), nil
}

func (g *grpcService) ModelInfer(ctx context.Context, m *kservepb.ModelInferRequest) (*kservepb.ModelInferResponse, error) {
	req, err := InferRequestFromProto(m)
	if err != nil {
		return nil, grpcError(err)
	}
	raw := len(m.GetRawInputContents()) > 0
	if b, err := req.Parameters.Bool("binary_data_output"); err != nil {
		return nil, grpcError(err)
	} else if b {
		raw = true
	}
	for _, o := range req.Outputs {
		if b, err := o.Parameters.Bool("binary_data"); err != nil {
			return nil, grpcError(err)
		} else if b {
			raw = true
		}
	}
	resp, err := g.s.Infer(ctx, req)
	if err != nil {
		return nil, grpcError(err)
	}
	out, err := InferResponseToProto(resp, raw)
	if err != nil {
		return nil, grpcError(err)
	}
	return out, nil
}

// ModelMetadataToProto converts model metadata for gRPC.
func ModelMetadataToProto(md ModelMetadata) *kservepb.ModelMetadataResponse {
	out := &kservepb.ModelMetadataResponse{Name: md.Name, Versions: md.Versions, Platform: md.Platform}
	for _, side := range []struct {
		from []TensorMetadata
		to   *[]*kservepb.ModelMetadataResponse_TensorMetadata
	}{{md.Inputs, &out.Inputs}, {md.Outputs, &out.Outputs}} {
		for _, t := range side.from {
			*side.to = append(*side.to, &kservepb.ModelMetadataResponse_TensorMetadata{Name: t.Name, Datatype: t.Datatype, Shape: t.Shape})
		}
	}
	return out
}

// ModelMetadataFromProto converts gRPC's model metadata.
func ModelMetadataFromProto(m *kservepb.ModelMetadataResponse) ModelMetadata {
	md := ModelMetadata{Name: m.GetName(), Versions: m.GetVersions(), Platform: m.GetPlatform()}
	for _, t := range m.GetInputs() {
		md.Inputs = append(md.Inputs, TensorMetadata{Name: t.GetName(), Datatype: t.GetDatatype(), Shape: t.GetShape()})
	}
	for _, t := range m.GetOutputs() {
		md.Outputs = append(md.Outputs, TensorMetadata{Name: t.GetName(), Datatype: t.GetDatatype(), Shape: t.GetShape()})
	}
	return md
}
