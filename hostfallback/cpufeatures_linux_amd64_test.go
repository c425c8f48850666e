package hostfallback

import (
	"bufio"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/onnxvk/onnxvk/internal/testenv"
)

// TestCPUFeatures checks the CPUID probe against the flags Linux reports
// in /proc/cpuinfo, less what GODEBUG turns off: every GEMM kernel, float or integer, whose features the
// CPU has runs (a wrong probe would skip it silently), and no other.
func TestCPUFeatures(t *testing.T) {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		testenv.Skip(t, "no /proc/cpuinfo to check the CPU features against: "+err.Error())
	}
	defer f.Close()
	var flags []string
	for sc := bufio.NewScanner(f); sc.Scan(); {
		if name, value, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(name) == "flags" {
			flags = strings.Fields(value)
			break
		}
	}
	if flags == nil {
		t.Fatal("/proc/cpuinfo has no flags line")
	}
	// GODEBUG's cpu options take features away from the kernels too.
	avx2, avx512 := godebugCPU(os.Getenv("GODEBUG"), true, true)
	flags = slices.DeleteFunc(flags, func(f string) bool {
		return (!avx2 && (f == "avx2" || f == "fma")) || (!avx512 && f == "avx512f")
	})
	type variant struct {
		name  string
		needs []string
		runs  bool
	}
	var variants []variant
	for _, v := range sgemmVariants() {
		variants = append(variants, variant{v.kernel.name, v.needs, v.runs})
	}
	for _, v := range qgemmVariants() {
		variants = append(variants, variant{v.kernel.name, v.needs, v.runs})
	}
	for _, v := range variants {
		want := true
		for _, f := range v.needs {
			want = want && slices.Contains(flags, f)
		}
		if v.runs != want {
			t.Errorf("%s runs: %v, but /proc/cpuinfo has all of %v: %v", v.name, v.runs, v.needs, want)
		}
	}
}
