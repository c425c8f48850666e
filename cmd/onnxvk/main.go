// Command onnxvk runs, benchmarks, inspects and plans ONNX models.
//
//	onnxvk run [MODEL] [-i NAME=FILE]... [-o DIR] [--device auto|cpu|vulkan] [--config NAME] [--devices LIST] [--fp16] [--seed N]
//	onnxvk bench MODEL [--device ...] [--config NAME] [--devices LIST] [--fp16] [--warmup N] [--runs N | --duration D] [--concurrency N] [--profile] [--report FILE.html] [--json]
//	onnxvk bench --server URL NAME [--warmup N] [--runs N | --duration D] [--concurrency N] [--json]
//	onnxvk bench --compare A.json B.json
//	onnxvk inspect MODEL [--json]
//	onnxvk plan MODEL [--device ...] [--config NAME] [--devices LIST] [--fp16] [--json]
//	onnxvk convert IN OUT [--to archive|protobuf]
//	onnxvk shard MODEL OUT --stages N | --tensor-parallel N [--config NAME] [--replace] [--to archive|protobuf]
//	onnxvk conformance [--device ...] [--filter REGEX] [--expect FILE] [--junit FILE] [--json] DIR...
//	onnxvk serve [--http ADDR] [--grpc ADDR] [--device ...] [--name NAME] [--max-batch-size N] [--max-queue-delay D] [--queue N] ... MODEL...|REPO_DIR
//	onnxvk devices [--json]
//	onnxvk version
//	onnxvk completion bash|zsh|fish
//
// onnxvk help CMD and onnxvk CMD --help print a command's usage. The exit
// status is 0 on success, 1 when the work failed and 2 when the command was
// called wrongly (an unknown command or flag, a missing argument).
package main

import (
	"bytes"
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

// commands are the subcommands, in the order help lists them. (Set in init:
// completion reads the list.)
var commands []command

func init() {
	commands = []command{
		{"run", "run a model (the built-in example when no model is given)", cmdRun},
		{"bench", "time a model: load, first run, latency percentiles, throughput; compare results", cmdBench},
		{"inspect", "describe a model: opsets, inputs, outputs, ops, parameters", cmdInspect},
		{"plan", "show the execution plan: steps, devices, transfers, memory", cmdPlan},
		{"convert", "convert a model between protobuf and the ONNX zip archive", cmdConvert},
		{"shard", "annotate a model for pipeline stages or tensor parallelism (IR 11)", cmdShard},
		{"serve", "serve models over the Open Inference Protocol (KServe v2): HTTP/REST and gRPC, batching, metrics", cmdServe},
		{"conformance", "run ONNX backend test folders and compare with their outputs", cmdConformance},
		{"devices", "list the Vulkan devices and their capabilities", cmdDevices},
		{"version", "print onnxvk's version, VCS revision and Go version", cmdVersion},
		{"completion", "print a shell completion script: bash, zsh or fish", cmdCompletion},
	}
}

func main() {
	os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr))
}

func realMain(args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		usage(stderr)
		return 2
	case args[0] == "-h" || args[0] == "--help" || args[0] == "help" && len(args) == 1:
		usage(stdout)
		return 0
	case args[0] == "help":
		args = []string{args[1], "--help"}
	case args[0] == "--version" || args[0] == "-version":
		args[0] = "version"
	}
	for _, c := range commands {
		if c.name != args[0] {
			continue
		}
		err := c.run(args[1:], stdout, stderr)
		var uerr usageError
		switch {
		case err == nil || errors.Is(err, flag.ErrHelp):
			return 0
		case errors.As(err, &uerr):
			fmt.Fprintf(stderr, "onnxvk %s: %s\nRun 'onnxvk %s --help' for usage.\n", c.name, message(err), c.name)
			return 2
		}
		fmt.Fprintf(stderr, "onnxvk %s: %s\n", c.name, message(err))
		return 1
	}
	fmt.Fprintf(stderr, "onnxvk: unknown command %q\nRun 'onnxvk help' for the list of commands.\n", args[0])
	return 2
}

// message is err's text without the "onnxvk: " the library's errors start
// with, which the command's own prefix already says.
func message(err error) string {
	return strings.TrimPrefix(err.Error(), "onnxvk: ")
}

// usageError is a command called wrongly (a flag, an argument): the command
// exits 2 and points at its help.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef returns a usageError with a formatted message.
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "onnxvk runs ONNX models on Vulkan GPUs and the CPU.")
	fmt.Fprintln(w, "\nUsage: onnxvk COMMAND [arguments]; onnxvk COMMAND --help for details.")
	fmt.Fprintln(w, "\nCommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
}

// newFlags returns a flag set that reports errors instead of exiting or
// printing them; --help prints the usage line and the flags to help.
func newFlags(name, usageLine string, help io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(&heldOutput{to: help})
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: onnxvk %s\n\nFlags:\n", usageLine)
		printFlags(fs.Output(), fs)
	}
	return fs
}

// heldOutput is a flag set's output: the flag package writes its messages
// and the usage there on every parse error, and parseArgs passes them on
// only for --help.
type heldOutput struct {
	to  io.Writer
	buf bytes.Buffer
}

func (h *heldOutput) Write(p []byte) (int, error) { return h.buf.Write(p) }

// printFlags lists fs's flags as the commands are used: --name for long
// names (a single dash works too), -x for one letter.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		arg, text := flag.UnquoteUsage(f)
		dash := "--"
		if len(f.Name) == 1 {
			dash = "-"
		}
		line := "  " + dash + f.Name
		if arg != "" {
			line += " " + arg
		}
		line += "\n    \t" + strings.ReplaceAll(text, "\n", "\n    \t")
		if def := f.DefValue; def != "" && def != "0" && def != "false" && def != "0s" && def != "[]" {
			if arg == "string" || strings.ContainsAny(def, " \t") {
				def = strconv.Quote(def)
			}
			line += fmt.Sprintf(" (default %s)", def)
		}
		fmt.Fprintln(w, line)
	})
}

// parseArgs parses flags that may come before, between or after positional
// arguments, and returns the positional ones. A flag error is a usage
// error; --help prints the usage and returns flag.ErrHelp.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		err := fs.Parse(args)
		if h, ok := fs.Output().(*heldOutput); ok {
			if errors.Is(err, flag.ErrHelp) {
				if _, werr := h.to.Write(h.buf.Bytes()); werr != nil {
					return nil, werr
				}
			}
			h.buf.Reset()
		}
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		if err != nil {
			return nil, usageError{err}
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
			return nil, usagef("--dim %q: want NAME=SIZE", kv)
		}
		dims[name] = n
	}
	return dims, nil
}

func oneModel(pos []string) (string, error) {
	switch len(pos) {
	case 0:
		return "", usagef("no model given")
	case 1:
		return pos[0], nil
	}
	return "", usagef("one model expected, got %d arguments: %s", len(pos), strings.Join(pos, " "))
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
	fs := newFlags("version", "version", stdout)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("no arguments expected, got %s", strings.Join(pos, " "))
	}
	fmt.Fprintln(stdout, onnxvk.Build())
	return nil
}
