# lib.sh: the timing loop shared by compare.sh and decode.sh (sourced).
#
# Needs: here (this folder), ONNXVK (a built onnxvk binary, or empty to
# build one), RUNS, ROUNDS, NODE_PATH or ./node_modules for
# onnxruntime-node; ISA=avx2 holds both runtimes to their AVX2/FMA kernels
# on a CPU with AVX-512 (onnxvk by GODEBUG=cpu.avx512f=off, ONNX Runtime by
# avx2.sh's copy in ./avx2), which stands in for a CPU without AVX-512.
runs=${RUNS:-20}
rounds=${ROUNDS:-3}
if [ -z "${ONNXVK:-}" ]; then
	ONNXVK=$(mktemp -d)/onnxvk
	(cd "$here/../.." && go build -o "$ONNXVK" ./cmd/onnxvk)
fi
ortbench=$here/ort_bench.js
case ${ISA:-} in
'') ;;
avx2)
	sh "$here/avx2.sh" "$here/avx2" >&2
	ortbench=$here/avx2/ort_bench.js
	GODEBUG=${GODEBUG:+$GODEBUG,}cpu.avx512f=off
	export GODEBUG
	;;
*)
	echo "ISA=$ISA: only avx2 is known" >&2
	exit 2
	;;
esac
ratios=''

median() { sed -n 's/.*"median_ms": *\([0-9.]*\).*/\1/p'; }
mid() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

header() { printf '%-20s %12s %12s %8s\n' "$1" 'onnxvk ms' 'ort ms' ratio; }

# timecase NAME MODEL ARGS... times MODEL with onnxvk (CPU) and with ONNX
# Runtime in turn, ROUNDS times (A, B, A, B, ...), each RUNS runs with the
# bench arguments ARGS (-i NAME=FILE.npy feeds), and prints the median of
# each side's per-round medians and their ratio.
timecase() {
	name=$1 model=$2
	shift 2
	ours='' ort=''
	for _ in $(seq "$rounds"); do
		ours="$ours $("$ONNXVK" bench "$model" --device cpu --runs "$runs" --json "$@" 2>/dev/null | median)"
		ort="$ort $(node "$ortbench" "$model" --runs "$runs" "$@" | median)"
	done
	a=$(echo "$ours" | tr ' ' '\n' | grep . | mid)
	b=$(echo "$ort" | tr ' ' '\n' | grep . | mid)
	ratios="$ratios $(awk -v a="$a" -v b="$b" 'BEGIN { print a / b }')"
	awk -v n="$name" -v a="$a" -v b="$b" 'BEGIN { printf "%-20s %12.2f %12.2f %8.2f\n", n, a, b, a / b }'
}

# geomean prints the geometric mean of the ratios timecase printed.
geomean() {
	echo "$ratios" | tr ' ' '\n' | grep . | awk '{ s += log($1); n++ } END { printf "%-20s %12s %12s %8.2f\n", "geometric mean", "", "", exp(s / n) }'
}
