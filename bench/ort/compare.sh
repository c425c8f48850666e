#!/bin/sh
# compare.sh MODEL... times each model with `onnxvk bench --device cpu` and
# with ONNX Runtime's CPU provider (ort_bench.js) in turn, ROUNDS times
# (A, B, A, B, ...), and prints a table of the median latencies, their
# ratios and the ratios' geometric mean. Each model is fed input.npy from
# its folder. Not a test; not run in CI.
#
# Environment: ONNXVK (a built onnxvk binary; default: go build), RUNS (20),
# ROUNDS (3), NODE_PATH or ./node_modules for onnxruntime-node (see README.md),
# ISA=avx2 for both runtimes' AVX2 kernels on an AVX-512 CPU (see lib.sh).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
header model
for model in "$@"; do
	timecase "$(basename "$(dirname "$model")")" "$model" -i "input=$(dirname "$model")/input.npy"
done
geomean
