package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	Whole   int                       `json:"whole"`
	Results []bench.ConformanceResult `json:"results"`
}

func cmdConformance(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("conformance", "conformance [--device ...] [--filter REGEX] [--json] DIR...", stderr)
	device := fs.String("device", "auto", "device: auto, cpu, vulkan or vulkan:N")
	filter := fs.String("filter", "", "run only the tests whose suite/name matches `REGEX`")
	asJSON := fs.Bool("json", false, "print one JSON object")
	dirs, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(dirs) == 0 {
		return errors.New("no test folder given (a suite folder of test_* folders, or one test folder)")
	}
	opts := bench.ConformanceOptions{Device: *device, Timeout: conformanceTimeout}
	if *filter != "" {
		if opts.Filter, err = regexp.Compile(*filter); err != nil {
			return fmt.Errorf("--filter: %w", err)
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
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(conformanceReport{Device: *device, Passed: sum.Passed, Failed: sum.Failed, Skipped: sum.Skipped, Whole: sum.Whole, Results: results})
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
	return nil
}
