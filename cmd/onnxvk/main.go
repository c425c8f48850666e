// Command onnxvk runs, benchmarks, inspects and plans ONNX models.
//
//	onnxvk run [MODEL] [-i NAME=FILE]... [-o DIR] [--device auto|cpu|vulkan] [--config NAME] [--devices LIST] [--fp16] [--seed N]
//	onnxvk bench MODEL [--device ...] [--config NAME] [--devices LIST] [--fp16] [--warmup N] [--runs N] [--json]
//	onnxvk inspect MODEL [--json]
//	onnxvk plan MODEL [--device ...] [--config NAME] [--devices LIST] [--json]
//	onnxvk shard MODEL OUT --stages N | --tensor-parallel N [--config NAME] [--replace] [--to archive|protobuf]
//	onnxvk conformance [--device ...] [--filter REGEX] [--json] DIR...
//	onnxvk devices [--json]
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/onnxvk/onnxvk"
)

type command struct {
	name, summary string
	run           func(args []string, stdout, stderr io.Writer) error
}

var commands = []command{
	{"run", "run a model (the built-in example when no model is given)", cmdRun},
	{"bench", "time a model: load, first run, median and p90 per run", cmdBench},
	{"inspect", "describe a model: opsets, inputs, outputs, ops, parameters", cmdInspect},
	{"plan", "show the execution plan: steps, devices, transfers, memory", cmdPlan},
	{"convert", "convert a model between protobuf and the ONNX zip archive", cmdConvert},
	{"shard", "annotate a model for pipeline stages or tensor parallelism (IR 11)", cmdShard},
	{"conformance", "run ONNX backend test folders and compare with their outputs", cmdConformance},
	{"devices", "list the Vulkan devices and their capabilities", cmdDevices},
	{"version", "print onnxvk's version, VCS revision and Go version", cmdVersion},
}

func main() {
	os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
}

func realMain(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" {
		args[0] = "version"
	}
	for _, c := range commands {
		if c.name == args[0] {
			err := c.run(args[1:], stdout, stderr)
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			if err != nil {
				fmt.Fprintf(stderr, "onnxvk %s: %v\n", c.name, err)
				return 1
			}
			return 0
		}
	}
	fmt.Fprintf(stderr, "onnxvk: unknown command %q\n\n", args[0])
	usage(stderr)
	return 1
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "onnxvk runs ONNX models on Vulkan GPUs and the CPU.")
	fmt.Fprintln(w, "\nUsage: onnxvk COMMAND [arguments]; onnxvk COMMAND --help for details.")
	fmt.Fprintln(w, "\nCommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
}

// newFlags returns a flag set that reports errors instead of exiting.
func newFlags(name, usageLine string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: onnxvk %s\n\nFlags:\n", usageLine)
		fs.PrintDefaults()
	}
	return fs
}

// parseArgs parses flags that may come before, between or after positional
// arguments, and returns the positional ones.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// listFlag collects a repeatable flag's values.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// parseDims turns NAME=SIZE pairs into a map of symbolic dimension sizes.
func parseDims(list []string) (map[string]int64, error) {
	dims := map[string]int64{}
	for _, kv := range list {
		name, val, ok := strings.Cut(kv, "=")
		n, err := strconv.ParseInt(val, 10, 64)
		if !ok || err != nil || n < 0 {
			return nil, fmt.Errorf("--dim %q: want NAME=SIZE", kv)
		}
		dims[name] = n
	}
	return dims, nil
}

func oneModel(pos []string) (string, error) {
	switch len(pos) {
	case 0:
		return "", errors.New("no model given")
	case 1:
		return pos[0], nil
	}
	return "", fmt.Errorf("one model expected, got %d arguments: %s", len(pos), strings.Join(pos, " "))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// cmdVersion prints the build information (onnxvk.Build).
func cmdVersion(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("version", "version", stderr)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("no arguments expected, got %s", strings.Join(pos, " "))
	}
	fmt.Fprintln(stdout, onnxvk.Build())
	return nil
}
