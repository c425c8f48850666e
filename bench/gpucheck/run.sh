#!/usr/bin/env bash
# The one-shot GPU check (see main.go): builds gpucheck and the Vulkan
# kernel tests unless --bin gives them, exports the PyTorch models it needs
# unless they are already in the model cache, and runs the check.
#
# Usage: bench/gpucheck/run.sh [--quick] [--out FILE] [--bin DIR] [--models DIR]
#                              [--onnx-data DIR] [-- GPUCHECK FLAGS...]
#
#   --quick      small sizes and samples, for lavapipe in CI
#   --out FILE   the JSON report (default: gpucheck.json)
#   --bin DIR    use DIR/gpucheck and DIR/vulkan.test built beforehand
#                (CGO_ENABLED=0 go build ./bench/gpucheck;
#                 CGO_ENABLED=0 go test -c ./backend/vulkan), for a machine
#                without Go
#   --models DIR the exported models (default: the tests' model cache,
#                $ONNXVK_MODEL_CACHE or ~/.cache/onnxvk/torch-models, in the
#                folder named after the export script's hash)
#   --onnx-data DIR  the ONNX backend test suites
#                (default: /usr/share/libonnx-testdata/data)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)

quick=() out=gpucheck.json bin="" models="" data=/usr/share/libonnx-testdata/data
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=(--quick) ;;
	--out) out=$2; shift ;;
	--bin) bin=$2; shift ;;
	--models) models=$2; shift ;;
	--onnx-data) data=$2; shift ;;
	--) shift; break ;;
	-h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done

if [ -z "$bin" ]; then
	bin=$(mktemp -d)
	trap 'rm -rf "$bin"' EXIT
	(cd "$root" && CGO_ENABLED=0 go build -o "$bin/gpucheck" ./bench/gpucheck &&
		CGO_ENABLED=0 go test -c -o "$bin/vulkan.test" ./backend/vulkan)
fi

script=$root/testdata/torch/export.py
if [ -z "$models" ]; then
	hash=$(sha256sum "$script" | cut -c1-12)
	models=${ONNXVK_MODEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/onnxvk/torch-models}/$hash
fi
if [ ${#quick[@]} -gt 0 ]; then
	names=(squeezenet1_1 mobilenet_v2 transformer decoder decoder_gqa)
else
	names=(resnet18 mobilenet_v2 squeezenet1_1 transformer efficientnet_b0 resnet50 decoder decoder_gqa bert)
fi
missing=()
for n in "${names[@]}"; do
	[ -f "$models/$n/model.onnx" ] || missing+=("$n")
done
if [ ${#missing[@]} -gt 0 ]; then
	python=""
	for p in python3 /usr/bin/python3; do
		if "$p" -c 'import torch, torchvision' 2>/dev/null; then python=$p; break; fi
	done
	if [ -z "$python" ]; then
		echo "run.sh: models ${missing[*]} are not in $models and no python3 has torch and torchvision to export them" >&2
		exit 1
	fi
	# Where the export of them all fails (a model another torch release
	# cannot export, say), one at a time, so that the others are checked;
	# the parts that need a model missing then fail.
	if ! "$python" "$script" --out "$models" "${missing[@]}"; then
		for n in "${missing[@]}"; do
			"$python" "$script" --out "$models" "$n" || echo "run.sh: exporting $n failed" >&2
		done
	fi
fi

exec "$bin/gpucheck" "${quick[@]}" --out "$out" --models "$models" --onnx-data "$data" \
	--kernel-tests "$bin/vulkan.test" --kernel-dir "$root/backend/vulkan" "$@"
