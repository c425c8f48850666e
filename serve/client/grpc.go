package client

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/onnxvk/onnxvk/serve"
	"github.com/onnxvk/onnxvk/serve/kservepb"
)

// grpcClient speaks the protocol over gRPC.
type grpcClient struct {
	conn   *grpc.ClientConn
	svc    kservepb.GRPCInferenceServiceClient
	listed bool
}

func newGRPC(target string, opts Options) (*grpcClient, error) {
	limit := opts.MaxMessageBytes
	if limit <= 0 {
		limit = serve.DefaultGRPCMaxMessageBytes
	}
	dial := append([]grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(limit), grpc.MaxCallSendMsgSize(limit)),
	}, opts.DialOptions...)
	conn, err := grpc.NewClient(target, dial...)
	if err != nil {
		return nil, fmt.Errorf("client: %s: %w", target, err)
	}
	return &grpcClient{conn: conn, svc: kservepb.NewGRPCInferenceServiceClient(conn), listed: opts.Listed}, nil
}

// fromStatus converts a gRPC error to a *serve.Error of its code.
func fromStatus(err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	return &serve.Error{Code: serve.Code(st.Code()), Msg: st.Message(), Err: err}
}

func (c *grpcClient) Live(ctx context.Context) (bool, error) {
	r, err := c.svc.ServerLive(ctx, &kservepb.ServerLiveRequest{})
	if err != nil {
		return false, fromStatus(err)
	}
	return r.GetLive(), nil
}

func (c *grpcClient) Ready(ctx context.Context) (bool, error) {
	r, err := c.svc.ServerReady(ctx, &kservepb.ServerReadyRequest{})
	if err != nil {
		return false, fromStatus(err)
	}
	return r.GetReady(), nil
}

func (c *grpcClient) ServerMetadata(ctx context.Context) (serve.ServerMetadata, error) {
	r, err := c.svc.ServerMetadata(ctx, &kservepb.ServerMetadataRequest{})
	if err != nil {
		return serve.ServerMetadata{}, fromStatus(err)
	}
	return serve.ServerMetadata{Name: r.GetName(), Version: r.GetVersion(), Extensions: r.GetExtensions()}, nil
}

func (c *grpcClient) ModelReady(ctx context.Context, name, version string) (bool, error) {
	r, err := c.svc.ModelReady(ctx, &kservepb.ModelReadyRequest{Name: name, Version: version})
	if err != nil {
		return false, fromStatus(err)
	}
	return r.GetReady(), nil
}

func (c *grpcClient) ModelMetadata(ctx context.Context, name, version string) (serve.ModelMetadata, error) {
	r, err := c.svc.ModelMetadata(ctx, &kservepb.ModelMetadataRequest{Name: name, Version: version})
	if err != nil {
		return serve.ModelMetadata{}, fromStatus(err)
	}
	return serve.ModelMetadataFromProto(r), nil
}

func (c *grpcClient) Infer(ctx context.Context, req *serve.InferRequest) (*serve.InferResponse, error) {
	m, err := serve.InferRequestToProto(req, !c.listed)
	if err != nil {
		return nil, err
	}
	r, err := c.svc.ModelInfer(ctx, m)
	if err != nil {
		return nil, fromStatus(err)
	}
	return serve.InferResponseFromProto(r)
}

func (c *grpcClient) Close() error { return c.conn.Close() }
