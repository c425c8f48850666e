package onnxpb

import (
	"testing"

	"github.com/onnxvk/onnxvk/internal/protocheck"
)

// TestGeneratedCodeIsCurrent regenerates onnx.pb.go into a temporary folder
// and fails when the committed file differs from it.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	protocheck.Current(t, []string{"protoc-gen-go"},
		[]string{"--go_out=OUT", "--go_opt=paths=source_relative", "onnx.proto"},
		[]string{"onnx.pb.go"}, "go generate ./loader/...")
}
