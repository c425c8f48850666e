package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/onnxvk/onnxvk/bench"
	"github.com/onnxvk/onnxvk/planner"
)

// conformanceTimeout bounds each backend test.
const conformanceTimeout = 2 * time.Minute

type conformanceReport struct {
	Device  string `json:"device"`
	Passed  int    `json:"passed"`
	Failed  int    `json:"failed"`
	Skipped int    `json:"skipped"`
	// Whole counts the passes with every node on the session's device.
	Whole int `json:"whole"`
	// Unexpected names the failures the expectations do not list,
	// Expected those they do, NewPasses the listed tests that passed.
	Unexpected []string                  `json:"unexpected_failures"`
	Expected   []string                  `json:"expected_failures"`
	NewPasses  []string                  `json:"unexpected_passes"`
	Results    []bench.ConformanceResult `json:"results"`
}

// names returns the names of rs.
func names(rs []bench.ConformanceResult) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Name
	}
	return out
}

// readExpectations returns the expected failures: the project's list when
// path is empty, none when it is "none", else the list in the file.
func readExpectations(path string) (bench.Expectations, error) {
	switch path {
	case "":
		return bench.KnownFailures(), nil
	case "none":
		return bench.Expectations{}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--expect: %w", err)
	}
	defer f.Close()
	return bench.ParseExpectations(f, path)
}

func cmdConformance(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("conformance", "conformance [--device ...] [--filter REGEX] [--expect FILE] [--junit FILE] [--json] DIR...", stdout)
	device := fs.String("device", "auto", "device: auto, cpu, vulkan or vulkan:N")
	filter := fs.String("filter", "", "run only the tests whose suite/name matches `REGEX`")
	expect := fs.String("expect", "", "the tests expected to fail, NAME<TAB>REASON per line, from `FILE` (default: onnxvk's own list of the tests it does not pass; none: no test)")
	junit := fs.String("junit", "", "also write a JUnit XML report to `FILE`")
	asJSON := fs.Bool("json", false, "print one JSON object")
	dirs, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(dirs) == 0 {
		return usagef("no test folder given (a suite folder of test_* folders, or one test folder)")
	}
	expected, err := readExpectations(*expect)
	if err != nil {
		return err
	}
	opts := bench.ConformanceOptions{Device: *device, Timeout: conformanceTimeout}
	if *filter != "" {
		if opts.Filter, err = regexp.Compile(*filter); err != nil {
			return usagef("--filter: %w", err)
		}
	}
	var bar *progress
	opts.Progress = func(done, total int, _ bench.ConformanceResult) {
		if bar == nil {
			bar = newProgress(stderr, total, false)
		}
		bar.step()
	}
	results, err := bench.RunConformance(context.Background(), dirs, opts)
	if bar != nil {
		bar.done()
	}
	if err != nil {
		return err
	}
	sum := bench.Summarize(results)
	verdict := expected.Judge(results)
	if *junit != "" {
		if err := writeJUnit(*junit, *device, results, expected); err != nil {
			return err
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(conformanceReport{Device: *device, Passed: sum.Passed, Failed: sum.Failed, Skipped: sum.Skipped, Whole: sum.Whole,
			Unexpected: names(verdict.Unexpected), Expected: names(verdict.Expected), NewPasses: names(verdict.NewPasses), Results: results}); err != nil {
			return err
		}
		return unexpectedError(verdict)
	}
	accel := ""
	for _, r := range results {
		switch {
		case r.Reason != "":
			fmt.Fprintf(stdout, "%s %s: %s\n", r.Status, r.Name, r.Reason)
		case len(r.Fallback) > 0:
			fmt.Fprintf(stdout, "%s %s (on the CPU: %s)\n", r.Status, r.Name, strings.Join(r.Fallback, ", "))
		default:
			fmt.Fprintf(stdout, "%s %s\n", r.Status, r.Name)
		}
		if r.Device != "" && r.Device != planner.HostDevice {
			accel = r.Device
		}
	}
	fmt.Fprintln(stdout, sum)
	if accel != "" {
		fmt.Fprintf(stdout, "%d of the %d passes ran every node on %s\n", sum.Whole, sum.Passed, accel)
	}
	fmt.Fprintf(stdout, "%d failures expected", len(verdict.Expected))
	if n := len(verdict.Unexpected); n > 0 {
		fmt.Fprintf(stdout, ", %d unexpected: %s", n, strings.Join(names(verdict.Unexpected), ", "))
	}
	fmt.Fprintln(stdout)
	if len(verdict.NewPasses) > 0 {
		fmt.Fprintf(stdout, "%d tests expected to fail passed: %s\n", len(verdict.NewPasses), strings.Join(names(verdict.NewPasses), ", "))
	}
	return unexpectedError(verdict)
}

// unexpectedError is the error of a run with unexpected failures, which
// makes the command exit 1.
func unexpectedError(v bench.Verdict) error {
	if len(v.Unexpected) > 0 {
		return fmt.Errorf("%d unexpected failures", len(v.Unexpected))
	}
	return nil
}

// writeJUnit writes the JUnit report to path.
func writeJUnit(path, device string, results []bench.ConformanceResult, e bench.Expectations) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--junit: %w", err)
	}
	if err := bench.WriteJUnit(f, device, results, e); err != nil {
		f.Close()
		return fmt.Errorf("--junit: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--junit: %w", err)
	}
	return nil
}
