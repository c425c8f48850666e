// Package onnxpb holds the Go types generated from onnx.proto, the ONNX
// model format up to IR version 11 (plus the later FLOAT8E8M0, UINT2 and
// INT2 element types). The loader converts them to and from graph.Model.
package onnxpb

//go:generate sh -c "PATH=\"$PATH:$(go env GOPATH)/bin\" protoc --go_out=. --go_opt=paths=source_relative onnx.proto"
