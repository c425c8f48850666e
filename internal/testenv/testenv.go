// Package testenv holds the only ways the module's tests skip: Skip when
// an optional tool, driver, device feature, file or disk space is missing
// (in CI, ONNXVK_REQUIRE_TOOLS=1 turns every such skip into a failure so
// that a missing install step cannot hide behind a green run), SkipShort
// under -short, SkipLong outside the long suites, SkipUnlessEnv for
// measurements that check nothing, SkipNotFetched for downloads a person
// opts into, SkipDeclined for a case the device under test declines and
// SkipToolTooOld for a file an installed tool is too old for.
// TestSkipsGoThroughTestenv fails on any other skip.
package testenv

import (
	"os"
	"testing"
)

// Skip skips the test with reason, or fails it when ONNXVK_REQUIRE_TOOLS is
// set.
func Skip(t testing.TB, reason string) {
	t.Helper()
	if os.Getenv("ONNXVK_REQUIRE_TOOLS") != "" {
		t.Fatalf("required tool missing (ONNXVK_REQUIRE_TOOLS is set): %s", reason)
	}
	t.Skip(reason)
}

// SkipShort skips the test under -short, saying why it is slow.
func SkipShort(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		t.Skip(why + " (skipped under -short)")
	}
}

// SkipUnlessEnv skips a measurement that checks nothing (a timing for
// people to read) unless the variable name is 1.
func SkipUnlessEnv(t testing.TB, name, what string) {
	t.Helper()
	if os.Getenv(name) != "1" {
		t.Skip(what + ": runs with " + name + "=1")
	}
}

// SkipNotFetched skips a test of files that a script downloads on request
// (testdata/exporters/fetch.sh) and that are not there, saying how to
// fetch them: data a person opts into, not a missing tool, so not a
// failure under ONNXVK_REQUIRE_TOOLS.
func SkipNotFetched(t testing.TB, how string) {
	t.Helper()
	t.Skip("not fetched: " + how)
}

// SkipDeclined skips a case that the device under test declines (reports
// unsupported): a capability answer, not a missing tool.
func SkipDeclined(t testing.TB, reason string) {
	t.Helper()
	t.Skip(reason)
}

// SkipToolTooOld skips a check of one file that the installed tool is too
// old for (Debian 12's glslc and spirv-val predate the cooperative matrix
// extension), where the CI's distribution has no newer one: installed, so
// not a failure under ONNXVK_REQUIRE_TOOLS; reason says what would do.
func SkipToolTooOld(t testing.TB, reason string) {
	t.Helper()
	t.Skip("tool too old: " + reason)
}

// lavapipe holds settings of Mesa's CPU Vulkan driver (lavapipe) that the
// tests' processes, and the programs they start, get unless the
// environment sets them: shaders compiled into 4-lane rather than 8-lane
// code (LP_NATIVE_VECTOR_WIDTH=128). Compiling the pipelines a test run
// creates is most of the CPU time of the Vulkan tests while Mesa's shader
// cache is cold, as on a fresh machine, and narrower code compiles faster:
// backend/vulkan's tests take 60 instead of 68 CPU seconds cold, the root
// package's 23 instead of 25. (GALLIVM_PERF=nopt, no LLVM optimization,
// compiles faster still but runs the models of the root package's tests
// slower than it saves.) Other drivers ignore it.
var lavapipe = map[string]string{"LP_NATIVE_VECTOR_WIDTH": "128"}

func init() {
	for k, v := range lavapipe {
		if _, ok := os.LookupEnv(k); !ok {
			os.Setenv(k, v)
		}
	}
}

// LongEnv names the variable that turns on the long suites: full sweeps
// and whole-suite runs that take minutes on a 2-core machine with
// lavapipe. .ci/run sets it; `go test ./...` runs without it.
const LongEnv = "ONNXVK_LONG"

// Long reports whether the long suites run: LongEnv is 1 and the tests
// are not -short.
func Long() bool { return !testing.Short() && os.Getenv(LongEnv) == "1" }

// SkipLong skips a test of the long suites unless they run.
func SkipLong(t testing.TB) {
	t.Helper()
	if !Long() {
		t.Skip("a long suite: runs with " + LongEnv + "=1")
	}
}

// Sampler picks the cases of a sweep: all of them in the long suites,
// otherwise every n-th one in the order they are offered, starting with
// the first. Nested loops that offer their cases to one Sampler see a
// different subset in each outer iteration.
type Sampler struct {
	n, seen int
}

// NewSampler returns a Sampler that keeps every n-th case outside the
// long suites.
func NewSampler(n int) *Sampler {
	if Long() || n < 1 {
		n = 1
	}
	return &Sampler{n: n}
}

// Take reports whether the next case runs.
func (s *Sampler) Take() bool {
	s.seen++
	return (s.seen-1)%s.n == 0
}
