#!/bin/sh
# decode.sh DIR times the decoder and encoder of export_bench.py against ONNX
# Runtime's CPU provider (default threads): a decode step (one token) after a
# past of 40 and of 1000 positions, a 32-token prefill, and the BERT-base-sized
# encoder over 128 tokens at batch 1 and 8. Each case runs onnxvk and ONNX
# Runtime in turn, ROUNDS times (A, B, A, B, ...), and prints the median of
# each side's per-round medians and their ratio. Not a test; not run in CI.
#
# DIR holds the exported models; they are made there first when missing
# (/usr/bin/python3 with torch, see export_bench.py).
#
# Environment: ONNXVK (a built onnxvk binary; default: go build), RUNS (20),
# ROUNDS (3), CASES (a subset of: decode40 decode1000 prefill32 bert1 bert8),
# NODE_PATH or ./node_modules for onnxruntime-node (see README.md).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:?usage: decode.sh DIR}
runs=${RUNS:-20}
rounds=${ROUNDS:-3}
cases=${CASES:-decode40 decode1000 prefill32 bert1 bert8}
if [ -z "${ONNXVK:-}" ]; then
	ONNXVK=$(mktemp -d)/onnxvk
	(cd "$here/../.." && go build -o "$ONNXVK" ./cmd/onnxvk)
fi
median() { sed -n 's/.*"median_ms": *\([0-9.]*\).*/\1/p'; }
mid() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# feeds CASE prints the -i NAME=FILE arguments of a case.
feeds() {
	d=$dir/decoder
	case $1 in
	decode40) ids=ids1 past=past40 ;;
	decode1000) ids=ids1 past=past1000 ;;
	prefill32) ids=ids32 past=past0 ;;
	*)
		echo "-i input=$dir/$1/input.npy"
		return
		;;
	esac
	printf -- '-i ids=%s ' "$d/$ids.npy"
	for l in 0 1 2 3 4 5; do
		printf -- '-i past.%s.key=%s -i past.%s.value=%s ' "$l" "$d/$past.npy" "$l" "$d/$past.npy"
	done
}

printf '%-12s %12s %12s %8s\n' case 'onnxvk ms' 'ort ms' ratio
for c in $cases; do
	case $c in
	decode* | prefill*) model=$dir/decoder/model.onnx ;;
	*) model=$dir/$c/model.onnx ;;
	esac
	if [ ! -f "$model" ]; then
		/usr/bin/python3 "$here/export_bench.py" "$dir"
	fi
	f=$(feeds "$c")
	ours='' ort=''
	for _ in $(seq "$rounds"); do
		# shellcheck disable=SC2086 # $f is a list of arguments
		ours="$ours $("$ONNXVK" bench "$model" --device cpu --runs "$runs" --json $f 2>/dev/null | median)"
		# shellcheck disable=SC2086
		ort="$ort $(node "$here/ort_bench.js" "$model" --runs "$runs" $f | median)"
	done
	a=$(echo "$ours" | tr ' ' '\n' | grep . | mid)
	b=$(echo "$ort" | tr ' ' '\n' | grep . | mid)
	awk -v n="$c" -v a="$a" -v b="$b" 'BEGIN { printf "%-12s %12.2f %12.2f %8.2f\n", n, a, b, a / b }'
done
