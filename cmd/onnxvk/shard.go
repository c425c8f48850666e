package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/loader"
)

const shardHelp = `Annotates a model for pipeline parallelism and writes it to OUT as an ONNX
IR 11 model: a device configuration of N logical devices, and for every node
of the main graph a pipeline stage. The nodes, in topological order, are
split into N contiguous stages balanced by estimated cost (multiply-adds of
MatMul, Gemm and the convolutions, elements read and written by the other
ops, from the inferred shapes; symbolic dimensions count as 1). Run the
result with onnxvk run or bench, --devices mapping its logical devices.
OUT is written in IN's format (protobuf or ONNX zip archive) unless --to
says otherwise.`

func cmdShard(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("shard", "shard MODEL OUT --stages N [--config NAME] [--replace] [--to archive|protobuf]", stderr)
	usage := fs.Usage
	fs.Usage = func() {
		usage()
		fmt.Fprintf(fs.Output(), "\n%s\n", shardHelp)
	}
	stages := fs.Int("stages", 0, "number of pipeline stages `N` (logical devices)")
	config := fs.String("config", "pipeline", "name of the device configuration to add")
	replace := fs.Bool("replace", false, "replace the model's device configurations and node annotations")
	to := fs.String("to", "", "output format: archive or protobuf (default: IN's)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return fmt.Errorf("want MODEL and OUT, got %d arguments", len(pos))
	}
	in, out := pos[0], pos[1]
	format := *to
	if format == "" {
		format = "protobuf"
		if archive, err := isArchiveFile(in); err != nil {
			return err
		} else if archive {
			format = "archive"
		}
	}
	if format != "archive" && format != "protobuf" {
		return fmt.Errorf("--to %q: want archive or protobuf", format)
	}
	m, err := loader.Load(in)
	if err != nil {
		return err
	}
	defer m.Close()
	report, err := onnxvk.ShardStages(m, *stages, onnxvk.ShardOptions{Configuration: *config, Replace: *replace})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d nodes in %d pipeline stages, device configuration %q\n", filepath.Base(in), len(m.Graph.Nodes), len(report), *config)
	for k, st := range report {
		fmt.Fprintf(stdout, "stage %d: %4d nodes, %5.1f%% of the estimated cost (%s .. %s)\n", k, st.Nodes, 100*st.Share, st.First, st.Last)
	}
	return saveModel(stdout, m, out, format)
}
