// Package protocheck lets a test check that Go code generated from a .proto
// file and committed beside it is what protoc and its plugins make of the
// .proto today.
package protocheck

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxvk/onnxvk/internal/testenv"
)

// findPlugin looks for the named protoc plugin in PATH, then in
// $(go env GOPATH)/bin, where go install puts it.
func findPlugin(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	out, err := exec.Command("go", "env", "GOPATH").Output()
	if err != nil {
		return ""
	}
	for _, dir := range filepath.SplitList(strings.TrimSpace(string(out))) {
		p := filepath.Join(dir, "bin", name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// withoutProtocVersion drops the header line naming protoc's version, which
// differs between machines without changing the generated code
// (protoc-gen-go writes "// \tprotoc vX", protoc-gen-go-grpc "// - protoc   vX").
func withoutProtocVersion(src []byte) []byte {
	var out [][]byte
	for _, line := range bytes.Split(src, []byte("\n")) {
		if !bytes.HasPrefix(line, []byte("// \tprotoc ")) && !bytes.HasPrefix(line, []byte("// - protoc ")) {
			out = append(out, line)
		}
	}
	return bytes.Join(out, []byte("\n"))
}

// Current runs protoc in the current folder with plugins (names such as
// "protoc-gen-go") and args, writing into a temporary folder that stands
// for "OUT" in args, and fails t when one of the committed files generated
// differs from its fresh copy. It skips, through testenv, where protoc or a
// plugin is missing. regen is the command that brings them up to date.
func Current(t *testing.T, plugins []string, args []string, generated []string, regen string) {
	t.Helper()
	protoc, err := exec.LookPath("protoc")
	if err != nil {
		testenv.Skip(t, "protoc not in PATH: cannot check that "+strings.Join(generated, ", ")+" are current")
	}
	dir := t.TempDir()
	var argv []string
	for _, name := range plugins {
		p := findPlugin(name)
		if p == "" {
			testenv.Skip(t, name+" not in PATH nor in $(go env GOPATH)/bin: cannot check that "+
				strings.Join(generated, ", ")+" are current")
		}
		argv = append(argv, "--plugin="+name+"="+p)
	}
	for _, a := range args {
		argv = append(argv, strings.ReplaceAll(a, "OUT", dir))
	}
	if out, err := exec.Command(protoc, argv...).CombinedOutput(); err != nil {
		t.Fatalf("protoc %s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	for _, name := range generated {
		fresh, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		committed, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(withoutProtocVersion(fresh), withoutProtocVersion(committed)) {
			t.Errorf("%s is stale or edited by hand: run `%s` and commit the result", name, regen)
		}
	}
}
