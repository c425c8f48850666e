// Package kservepb holds the Go types and the gRPC service generated from
// grpc_predict_v2.proto, the Open Inference Protocol (KServe v2) as KServe
// publishes it. The .proto is kept as published; its Go package is given on
// protoc's command line.
package kservepb

//go:generate sh -c "PATH=\"$PATH:$(go env GOPATH)/bin\" protoc --go_out=. --go_opt=paths=source_relative --go_opt=Mgrpc_predict_v2.proto=github.com/onnxvk/onnxvk/serve/kservepb --go-grpc_out=. --go-grpc_opt=paths=source_relative --go-grpc_opt=Mgrpc_predict_v2.proto=github.com/onnxvk/onnxvk/serve/kservepb grpc_predict_v2.proto"
