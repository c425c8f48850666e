package onnxpb

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxvk/onnxvk/internal/testenv"
)

// findPlugin looks for protoc-gen-go in PATH, then in $(go env GOPATH)/bin.
func findPlugin(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("protoc-gen-go"); err == nil {
		return p
	}
	out, err := exec.Command("go", "env", "GOPATH").Output()
	if err != nil {
		return ""
	}
	for _, dir := range filepath.SplitList(strings.TrimSpace(string(out))) {
		p := filepath.Join(dir, "bin", "protoc-gen-go")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// withoutProtocVersion drops the header line naming protoc's version, which
// differs between machines without changing the generated code.
func withoutProtocVersion(src []byte) []byte {
	var out [][]byte
	for _, line := range bytes.Split(src, []byte("\n")) {
		if !bytes.HasPrefix(line, []byte("// \tprotoc ")) {
			out = append(out, line)
		}
	}
	return bytes.Join(out, []byte("\n"))
}

// TestGeneratedCodeIsCurrent regenerates onnx.pb.go into a temporary folder
// and fails when the committed file differs from it.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	protoc, err := exec.LookPath("protoc")
	if err != nil {
		testenv.Skip(t, "protoc not in PATH: cannot check that onnx.pb.go is current")
	}
	plugin := findPlugin(t)
	if plugin == "" {
		testenv.Skip(t, "protoc-gen-go not in PATH nor in $(go env GOPATH)/bin: cannot check that onnx.pb.go is current")
	}
	dir := t.TempDir()
	cmd := exec.Command(protoc, "--plugin=protoc-gen-go="+plugin, "--go_out="+dir,
		"--go_opt=paths=source_relative", "onnx.proto")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("protoc: %v\n%s", err, out)
	}
	fresh, err := os.ReadFile(filepath.Join(dir, "onnx.pb.go"))
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("onnx.pb.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(withoutProtocVersion(fresh), withoutProtocVersion(committed)) {
		t.Fatal("onnx.pb.go is stale or edited by hand: run `go generate ./loader/...` and commit the result")
	}
}
