#!/bin/sh
# compare.sh MODEL... times each model with `onnxvk bench --device cpu` and
# with ONNX Runtime's CPU provider (ort_bench.js), back to back, and prints
# a table of the median latencies. Not a test; not run in CI.
#
# Environment: ONNXVK (a built onnxvk binary; default: go run), RUNS (20),
# NODE_PATH or ./node_modules for onnxruntime-node (see README.md).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
runs=${RUNS:-20}
if [ -z "${ONNXVK:-}" ]; then
	ONNXVK=$(mktemp -d)/onnxvk
	(cd "$here/../.." && go build -o "$ONNXVK" ./cmd/onnxvk)
fi
median() { sed -n 's/.*"median_ms": *\([0-9.]*\).*/\1/p'; }
printf '%-24s %12s %12s %8s\n' model 'onnxvk ms' 'ort ms' ratio
for model in "$@"; do
	input=$(dirname "$model")/input.npy
	ours=$("$ONNXVK" bench "$model" --device cpu --runs "$runs" --json | median)
	ort=$(node "$here/ort_bench.js" "$model" --runs "$runs" --input "$input" | median)
	name=$(basename "$(dirname "$model")")/$(basename "$model")
	awk -v n="$name" -v a="$ours" -v b="$ort" 'BEGIN { printf "%-24s %12.2f %12.2f %8.2f\n", n, a, b, a / b }'
done
