package bench

import (
	"bufio"
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"strings"
)

// knownFailures is the project's list of the ONNX backend tests that do
// not pass on the CPU, each with its reason (TestConformanceCPU keeps it
// current).
//
//go:embed testdata/conformance_excluded.txt
var knownFailures []byte

// randomReason starts the reason of a test whose expected output was drawn
// at random (an unseeded random op): onnxvk draws other values, which may
// match by chance, so such a test neither fails nor passes unexpectedly.
const randomReason = "random:"

// Expectations maps the names of backend tests (ConformanceTestName) that
// are expected to fail to the reason.
type Expectations map[string]string

// KnownFailures returns the project's expected failures: the ONNX backend
// tests of Debian's libonnx-testdata that onnxvk does not pass, and why.
func KnownFailures() Expectations {
	e, err := ParseExpectations(bytes.NewReader(knownFailures), "conformance_excluded.txt")
	if err != nil {
		panic("bench: the embedded list of known failures is malformed: " + err.Error())
	}
	return e
}

// ParseExpectations reads an expectation list: one test per line, its name,
// a tab and the reason it fails; blank lines and lines starting with # are
// ignored. name names the list in errors.
func ParseExpectations(r io.Reader, name string) (Expectations, error) {
	m, err := parseList(r, name, true)
	return Expectations(m), err
}

// parseList reads a list of test names, each optionally followed by a tab
// and a reason (required when wantReason is set); blank lines and lines
// starting with # are ignored.
func parseList(r io.Reader, name string, wantReason bool) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		test, reason, _ := strings.Cut(text, "\t")
		if wantReason && strings.TrimSpace(reason) == "" {
			return nil, fmt.Errorf("%s:%d: %s has no reason (want NAME<TAB>REASON)", name, line, test)
		}
		if _, dup := out[test]; dup {
			return nil, fmt.Errorf("%s:%d: %s is listed twice", name, line, test)
		}
		out[test] = reason
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// Verdict sorts conformance results against expectations.
type Verdict struct {
	// Unexpected are the failures of tests not expected to fail.
	Unexpected []ConformanceResult
	// Expected are the failures of tests expected to fail.
	Expected []ConformanceResult
	// NewPasses are the passes of tests expected to fail (except those
	// whose reference is random, which may pass by chance).
	NewPasses []ConformanceResult
}

// Judge sorts rs against e.
func (e Expectations) Judge(rs []ConformanceResult) Verdict {
	var v Verdict
	for _, r := range rs {
		reason, listed := e[r.Name]
		switch {
		case r.Status == Fail && listed:
			v.Expected = append(v.Expected, r)
		case r.Status == Fail:
			v.Unexpected = append(v.Unexpected, r)
		case r.Status == Pass && listed && !strings.HasPrefix(reason, randomReason):
			v.NewPasses = append(v.NewPasses, r)
		}
	}
	return v
}
