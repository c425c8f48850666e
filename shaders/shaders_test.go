package shaders

import (
	"bytes"
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/onnxvk/onnxvk/internal/testenv"
)

// sumFile records, for each glslc line of shaders.go, a hash of the line
// and of the sources it compiles (the .comp and every file it includes)
// and a hash of the .spv it wrote: `go generate ./shaders` rewrites it
// (TestSPIRVSum with -update) after the glslc lines.
const sumFile = "spirv.sum"

var update = flag.Bool("update", false, "rewrite "+sumFile)

// glslcLines returns the go:generate glslc lines of shaders.go.
func glslcLines(t *testing.T) []string {
	gen, err := os.ReadFile("shaders.go")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for line := range strings.Lines(string(gen)) {
		if strings.HasPrefix(line, "//go:generate glslc") {
			lines = append(lines, strings.TrimSpace(line))
		}
	}
	if len(lines) == 0 {
		t.Fatal("shaders.go has no glslc lines")
	}
	return lines
}

// outputOf returns the .spv a glslc line writes (its -o argument) and its
// source, the last argument.
func outputOf(line string) (spv, src string) {
	args := strings.Fields(line)
	for i, a := range args {
		if a == "-o" && i+1 < len(args) {
			spv = args[i+1]
		}
	}
	return spv, args[len(args)-1]
}

var include = regexp.MustCompile(`(?m)^\s*#include\s+"([^"]+)"`)

// sourcesHash hashes line and the text of src and of every file it
// includes, each once, in the order they are first included.
func sourcesHash(line, src string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", line)
	seen := map[string]bool{}
	var walk func(name string) error
	walk = func(name string) error {
		if seen[name] {
			return nil
		}
		seen[name] = true
		text, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d\n", name, len(text))
		h.Write(text)
		for _, m := range include.FindAllSubmatch(text, -1) {
			if err := walk(string(m[1])); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(src); err != nil {
		return "", err
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}

// TestSPIRVSum checks, without glslc, that every .spv was compiled from
// the sources and the glslc line it has now: the hashes of both must be
// what spirv.sum recorded when go generate last wrote them. Editing a
// .comp or a .glsl it includes, or a glslc line, without running go
// generate fails here; TestSPIRVUpToDate (long suites) runs glslc itself.
func TestSPIRVSum(t *testing.T) {
	var sum strings.Builder
	for _, line := range glslcLines(t) {
		spv, src := outputOf(line)
		srcHash, err := sourcesHash(line, src)
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.ReadFile(spv)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&sum, "%s %x %s\n", srcHash, sha256.Sum256(out), spv)
	}
	if *update {
		if err := os.WriteFile(sumFile, []byte(sum.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	committed, err := os.ReadFile(sumFile)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for line := range strings.Lines(string(committed)) {
		if f := strings.Fields(line); len(f) == 3 {
			want[f[2]] = f[0] + " " + f[1]
		}
	}
	for line := range strings.Lines(sum.String()) {
		f := strings.Fields(line)
		switch w, ok := want[f[2]]; {
		case !ok:
			t.Errorf("%s is not in %s: run go generate ./shaders", f[2], sumFile)
		case w != f[0]+" "+f[1]:
			t.Errorf("%s does not match its sources, its glslc line or %s: run go generate ./shaders", f[2], sumFile)
		}
		delete(want, f[2])
	}
	for spv := range want {
		t.Errorf("%s lists %s, which no glslc line builds: run go generate ./shaders", sumFile, spv)
	}
}

// TestGenerateLines checks shaders.go's go:generate block: every .comp has
// the line that builds NAME.spv from it, every glslc line starts with
// GlslcFlags and writes a .spv, there are variant lines (a -D define), and
// every .spv SPIRV returns starts with the SPIR-V magic number.
func TestGenerateLines(t *testing.T) {
	lines := glslcLines(t)
	sources, _ := filepath.Glob("*.comp")
	if len(sources) == 0 {
		t.Fatal("no shaders")
	}
	prefix := "//go:generate glslc " + strings.Join(GlslcFlags, " ") + " "
	for _, src := range sources {
		name := strings.TrimSuffix(src, ".comp")
		if line := prefix + "-o " + name + ".spv " + src; !slices.Contains(lines, line) {
			t.Errorf("shaders.go lacks %q", line)
		}
	}
	variants := 0
	for _, line := range lines {
		if !strings.HasPrefix(line, prefix) {
			t.Errorf("line %q does not start with %q", line, prefix)
		}
		if strings.Contains(line, " -D") {
			variants++
		}
		spv, _ := outputOf(line)
		if spv == "" {
			t.Errorf("line %q has no -o", line)
			continue
		}
		name := strings.TrimSuffix(spv, ".spv")
		if words, err := SPIRV(name); err != nil || len(words) == 0 || words[0] != 0x07230203 {
			t.Errorf("SPIRV(%q): no SPIR-V magic number (%v)", name, err)
		}
	}
	if variants == 0 {
		t.Error("shaders.go has no variant lines")
	}
}

// TestSPIRVUpToDate runs every glslc line of shaders.go's go:generate
// block into a temporary file and fails when the committed .spv differs.
// A long suite: TestSPIRVSum checks the same from hashes.
func TestSPIRVUpToDate(t *testing.T) {
	testenv.SkipLong(t)
	glslc, err := exec.LookPath("glslc")
	if err != nil {
		testenv.Skip(t, "glslc not installed: cannot check that the .spv files are up to date")
	}
	for _, line := range glslcLines(t) {
		spv, _ := outputOf(line)
		if spv == "" {
			continue // TestGenerateLines reports it
		}
		out := filepath.Join(t.TempDir(), spv)
		args := strings.Fields(strings.TrimPrefix(line, "//go:generate glslc "))
		args[slices.Index(args, "-o")+1] = out
		// glslc runs take most of the test: as many at once as go test
		// runs parallel tests.
		t.Run(strings.TrimSuffix(spv, ".spv"), func(t *testing.T) {
			t.Parallel()
			if msg, err := exec.Command(glslc, args...).CombinedOutput(); err != nil {
				if bytes.Contains(msg, []byte("extension not supported: GL_KHR_cooperative_matrix")) {
					// Debian 12's glslc (shaderc 2023.2) predates the
					// extension; TestSPIRVSum still checks the committed
					// file against its sources.
					testenv.SkipToolTooOld(t, "this glslc cannot compile GL_KHR_cooperative_matrix (Debian 13's, shaderc 2025.2, can): "+spv+" not rebuilt")
				}
				t.Fatalf("glslc %s: %v\n%s", spv, err, msg)
			}
			fresh, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			committed, err := os.ReadFile(spv)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(fresh, committed) {
				t.Errorf("%s is stale: run go generate ./shaders", spv)
			}
		})
	}
}

// TestSPIRVValid runs spirv-val on every committed .spv for the target
// environment GlslcFlags names. A spirv-val older than the cooperative
// matrix capability (Debian 12's, SPIRV-Tools 2023.1, does not know
// capability 6022, CooperativeMatrixKHR) skips the files that declare it.
func TestSPIRVValid(t *testing.T) {
	val, err := exec.LookPath("spirv-val")
	if err != nil {
		testenv.Skip(t, "spirv-val not installed (spirv-tools): cannot validate the .spv files")
	}
	env := strings.TrimPrefix(GlslcFlags[0], "--target-env=")
	files, _ := filepath.Glob("*.spv")
	for _, spv := range files {
		t.Run(strings.TrimSuffix(spv, ".spv"), func(t *testing.T) {
			t.Parallel()
			msg, err := exec.Command(val, "--target-env", env, spv).CombinedOutput()
			switch {
			case err == nil:
			case bytes.Contains(msg, []byte("Invalid capability operand: 6022")):
				testenv.SkipToolTooOld(t, "this spirv-val does not know the cooperative matrix capability (Debian 13's does): "+spv+" not validated")
			default:
				t.Errorf("spirv-val --target-env %s %s: %v\n%s", env, spv, err, msg)
			}
		})
	}
}

// SPIR-V opcodes TestMatrixFragmentsAreValues reads.
const (
	opTypeArray                = 28
	opTypePointer              = 32
	opVariable                 = 59
	opTypeCooperativeMatrixKHR = 4456
)

// TestMatrixFragmentsAreValues checks that the matrix-unit shaders hold no
// variable that is an array of cooperative matrices: such an array is
// indexed at run time, and a driver may keep it in memory (an H200 ran
// float16 4096³ products at 29 TFLOP/s with such arrays and 63 without,
// docs/GPU.md). The shaders index their fragments by constants, so
// spirv-opt replaces the arrays with values.
func TestMatrixFragmentsAreValues(t *testing.T) {
	for _, name := range []string{"matmul_f16_cm", "convgemm_f16_cm"} {
		words, err := SPIRV(name)
		if err != nil {
			t.Fatal(err)
		}
		matrices, arrays, pointers := map[uint32]bool{}, map[uint32]bool{}, map[uint32]bool{}
		for i := 5; i < len(words); {
			n, op := int(words[i]>>16), words[i]&0xffff
			if n == 0 || i+n > len(words) {
				t.Fatalf("%s.spv: bad instruction at word %d", name, i)
			}
			args := words[i+1 : i+n]
			switch op {
			case opTypeCooperativeMatrixKHR:
				matrices[args[0]] = true
			case opTypeArray:
				arrays[args[0]] = matrices[args[1]]
			case opTypePointer:
				pointers[args[0]] = arrays[args[2]]
			case opVariable:
				if pointers[args[0]] {
					t.Errorf("%s.spv: variable %%%d is an array of cooperative matrices", name, args[1])
				}
			}
			i += n
		}
		if len(matrices) == 0 {
			t.Errorf("%s.spv declares no cooperative matrix type", name)
		}
	}
}
