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

// TestSPIRVUpToDate recompiles every .comp with glslc and fails when the
// committed .spv differs, or when go generate would not build it.
func TestSPIRVUpToDate(t *testing.T) {
	glslc, err := exec.LookPath("glslc")
	if err != nil {
		testenv.Skip(t, "glslc not installed: cannot check that the .spv files are up to date")
	}
	gen, err := os.ReadFile("shaders.go")
	if err != nil {
		t.Fatal(err)
	}
	sources, _ := filepath.Glob("*.comp")
	if len(sources) == 0 {
		t.Fatal("no shaders")
	}
	for _, src := range sources {
		name := strings.TrimSuffix(src, ".comp")
		line := "//go:generate glslc " + strings.Join(GlslcFlags, " ") + " -o " + name + ".spv " + src + "\n"
		if !bytes.Contains(gen, []byte(line)) {
			t.Errorf("shaders.go lacks %q", line)
		}
		out := filepath.Join(t.TempDir(), name+".spv")
		if msg, err := exec.Command(glslc, append(append([]string{}, GlslcFlags...), "-o", out, src)...).CombinedOutput(); err != nil {
			t.Fatalf("glslc %s: %v\n%s", src, err, msg)
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
		words, err := SPIRV(name)
		if err != nil || len(words) == 0 || words[0] != 0x07230203 {
			t.Errorf("SPIRV(%q): no SPIR-V magic number (%v)", name, err)
		}
	}
}
