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
# NODE_PATH or ./node_modules for onnxruntime-node (see README.md), ISA=avx2
# for both runtimes' AVX2 kernels on an AVX-512 CPU (see lib.sh).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:?usage: decode.sh DIR}
cases=${CASES:-decode40 decode1000 prefill32 bert1 bert8}
. "$here/lib.sh"

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

header case
for c in $cases; do
	case $c in
	decode* | prefill*) model=$dir/decoder/model.onnx ;;
	*) model=$dir/$c/model.onnx ;;
	esac
	if [ ! -f "$model" ]; then
		/usr/bin/python3 "$here/export_bench.py" "$dir"
	fi
	# shellcheck disable=SC2046 # feeds prints a list of arguments
	timecase "$c" "$model" $(feeds "$c")
done
