package shaders

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxvk/onnxvk/internal/testenv"
)

// TestVariantsUpToDate recompiles every shader variant, a go:generate line
// of shaders.go with a -D define, and fails when its committed .spv
// differs or when the variant's flags differ from GlslcFlags.
func TestVariantsUpToDate(t *testing.T) {
	glslc, err := exec.LookPath("glslc")
	if err != nil {
		testenv.Skip(t, "glslc not installed: cannot check that the shader variants are up to date")
	}
	gen, err := os.ReadFile("shaders.go")
	if err != nil {
		t.Fatal(err)
	}
	prefix := "//go:generate glslc " + strings.Join(GlslcFlags, " ") + " -D"
	variants := 0
	for line := range strings.Lines(string(gen)) {
		if !strings.HasPrefix(line, "//go:generate glslc") || !strings.Contains(line, " -D") {
			continue
		}
		if !strings.HasPrefix(line, prefix) {
			t.Errorf("variant line %q does not start with %q", strings.TrimSpace(line), prefix)
			continue
		}
		variants++
		args := strings.Fields(strings.TrimPrefix(line, "//go:generate glslc "))
		var name, out string
		for i, a := range args {
			if a == "-o" && i+1 < len(args) {
				name = strings.TrimSuffix(args[i+1], ".spv")
				out = filepath.Join(t.TempDir(), args[i+1])
				args[i+1] = out
			}
		}
		if name == "" {
			t.Errorf("variant line %q has no -o", strings.TrimSpace(line))
			continue
		}
		if msg, err := exec.Command(glslc, args...).CombinedOutput(); err != nil {
			t.Fatalf("glslc %s: %v\n%s", name, err, msg)
		}
		fresh, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		committed, err := os.ReadFile(name + ".spv")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fresh, committed) {
			t.Errorf("%s.spv is stale: run go generate ./shaders", name)
		}
		if words, err := SPIRV(name); err != nil || len(words) == 0 || words[0] != 0x07230203 {
			t.Errorf("SPIRV(%q): no SPIR-V magic number (%v)", name, err)
		}
	}
	if variants == 0 {
		t.Error("shaders.go has no variant lines")
	}
}
