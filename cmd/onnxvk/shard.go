package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/onnxvk/onnxvk"
	"github.com/onnxvk/onnxvk/loader"
	"github.com/onnxvk/onnxvk/planner"
)

const shardHelp = `Annotates a model for pipeline or tensor parallelism and writes it to OUT as
an ONNX IR 11 model with a device configuration of N logical devices. Give
exactly one of --stages and --tensor-parallel.

--stages N gives every node of the main graph a pipeline stage: the nodes,
in topological order, are split into N contiguous stages balanced by
estimated cost (multiply-adds of MatMul, Gemm and the convolutions, elements
read and written by the other ops, from the inferred shapes; symbolic
dimensions count as 1).

--tensor-parallel N splits Megatron-style pairs over N devices: a MatMul or
Gemm with a constant 2-D weight, zero or more elementwise nodes with
constant other operands (a bias, an activation), then a MatMul or Gemm with
a constant 2-D weight. The first weight is split by output features, the
second by input features (the sizes need not divide evenly); pairs whose
hidden size is below N are skipped, and the other nodes stay unannotated
and run unsharded.

The configuration is named "pipeline" or "tensor-parallel" unless --config
says otherwise. Run the result with onnxvk run or bench, --devices mapping
its logical devices. OUT is written in IN's format (protobuf or ONNX zip
archive) unless --to says otherwise.`

func cmdShard(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("shard", "shard MODEL OUT (--stages N | --tensor-parallel N) [--config NAME] [--replace] [--to archive|protobuf]", stdout)
	usage := fs.Usage
	fs.Usage = func() {
		usage()
		fmt.Fprintf(fs.Output(), "\n%s\n", shardHelp)
	}
	stages := fs.Int("stages", 0, "number of pipeline stages `N` (logical devices)")
	ways := fs.Int("tensor-parallel", 0, "split MatMul/Gemm pairs over `N` logical devices (tensor parallelism)")
	config := fs.String("config", "", "`NAME` of the device configuration to add (default: pipeline, or tensor-parallel with --tensor-parallel)")
	replace := fs.Bool("replace", false, "replace the model's device configurations and node annotations")
	to := fs.String("to", "", "output format: archive or protobuf (default: IN's)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("want MODEL and OUT, got %d arguments", len(pos))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["stages"] == set["tensor-parallel"] {
		return usagef("give exactly one of --stages N (pipeline parallelism) and --tensor-parallel N")
	}
	tensorParallel := set["tensor-parallel"]
	if *config == "" {
		*config = planner.DefaultShardConfiguration
		if tensorParallel {
			*config = planner.DefaultTensorParallelConfiguration
		}
	}
	in, out := pos[0], pos[1]
	format, err := outputFormat(*to, func() (string, error) { return fileFormat(in) })
	if err != nil {
		return err
	}
	m, err := loader.Load(in)
	if err != nil {
		return err
	}
	defer m.Close()
	opts := onnxvk.ShardOptions{Configuration: *config, Replace: *replace}
	if tensorParallel {
		pairs, err := onnxvk.ShardTensorParallel(m, *ways, opts)
		if err != nil {
			return err
		}
		var share float64
		for _, p := range pairs {
			share += p.Share
		}
		fmt.Fprintf(stdout, "%s: %d nodes, %d tensor-parallel pairs over %d devices (%.1f%% of the estimated cost; the other nodes run unsharded), device configuration %q\n",
			filepath.Base(in), len(m.Graph.Nodes), len(pairs), *ways, 100*share, *config)
		for k, p := range pairs {
			split := make([]string, len(p.Shards))
			for d, n := range p.Shards {
				split[d] = strconv.FormatInt(n, 10)
			}
			fmt.Fprintf(stdout, "pair %d: hidden %d split %s, %.1f%% of the estimated cost (%s: %s axis %d .. %s: %s axis %d)\n",
				k, p.Hidden, strings.Join(split, "+"), 100*p.Share, p.First, p.FirstWeight, p.FirstAxis, p.Second, p.SecondWeight, p.SecondAxis)
		}
		return saveModel(stdout, m, out, format)
	}
	report, err := onnxvk.ShardStages(m, *stages, opts)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d nodes in %d pipeline stages, device configuration %q\n", filepath.Base(in), len(m.Graph.Nodes), len(report), *config)
	for k, st := range report {
		fmt.Fprintf(stdout, "stage %d: %4d nodes, %5.1f%% of the estimated cost (%s .. %s)\n", k, st.Nodes, 100*st.Share, st.First, st.Last)
	}
	return saveModel(stdout, m, out, format)
}
