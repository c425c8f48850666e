package kservepb

import (
	"testing"

	"github.com/onnxvk/onnxvk/internal/protocheck"
)

// TestGeneratedCodeIsCurrent regenerates both generated files into a
// temporary folder and fails when a committed one differs from its copy.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	const m = "Mgrpc_predict_v2.proto=github.com/onnxvk/onnxvk/serve/kservepb"
	protocheck.Current(t, []string{"protoc-gen-go", "protoc-gen-go-grpc"},
		[]string{"--go_out=OUT", "--go_opt=paths=source_relative", "--go_opt=" + m,
			"--go-grpc_out=OUT", "--go-grpc_opt=paths=source_relative", "--go-grpc_opt=" + m,
			"grpc_predict_v2.proto"},
		[]string{"grpc_predict_v2.pb.go", "grpc_predict_v2_grpc.pb.go"}, "go generate ./serve/kservepb")
}
