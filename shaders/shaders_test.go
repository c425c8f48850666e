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

// TestSPIRVUpToDate runs every glslc line of shaders.go's go:generate
// block (each .comp and each variant built with a -D define) into a
// temporary file and fails when the committed .spv differs, when a .comp
// has no line that builds it, or when a line's flags are not GlslcFlags.
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
	}
	prefix := "//go:generate glslc " + strings.Join(GlslcFlags, " ") + " "
	variants := 0
	for line := range strings.Lines(string(gen)) {
		if !strings.HasPrefix(line, "//go:generate glslc") {
			continue
		}
		if !strings.HasPrefix(line, prefix) {
			t.Errorf("line %q does not start with %q", strings.TrimSpace(line), prefix)
			continue
		}
		if strings.Contains(line, " -D") {
			variants++
		}
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
			t.Errorf("line %q has no -o", strings.TrimSpace(line))
			continue
		}
		// glslc runs take most of the test: as many at once as go test
		// runs parallel tests.
		t.Run(name, func(t *testing.T) {
			t.Parallel()
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
		})
	}
	if variants == 0 {
		t.Error("shaders.go has no variant lines")
	}
}
