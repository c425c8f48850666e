#!/bin/sh
# avx2.sh DIR makes DIR a copy of this folder's onnxruntime-node whose
# kernel library (MLAS) leaves its AVX-512 kernels alone, as on a CPU
# without AVX-512, and a copy of ort_bench.js that loads it: ONNX Runtime
# has no option that holds it to AVX2, and its kernels choose by CPUID at
# load. lib.sh runs it for ISA=avx2. Not a test; not run in CI.
#
# The patch is one instruction of MLAS's platform setup (MLAS_PLATFORM's
# constructor, lib/platform.cpp): the branch into its AVX-512F block, taken
# when CPUID reports AVX-512F and XCR0 has the AVX-512 state enabled
# (`not %rax; test $0xe0,%al; je`), becomes a 6-byte no-op, so the AVX2/FMA3
# kernels it chose just before stay. The byte sequence must occur exactly
# once in the library (it does in 1.30.0's linux/x64 build), else nothing
# is patched and avx2.sh fails. A DIR made from the same package-lock.json
# is kept (only ort_bench.js is copied again).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:?usage: avx2.sh DIR}
lib=node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1
[ -f "$here/$lib" ] || {
	echo "avx2.sh: $here/$lib missing: npm install --ignore-scripts in $here first" >&2
	exit 1
}
mkdir -p "$dir"
cp "$here/ort_bench.js" "$dir/ort_bench.js"
if [ -f "$dir/patched" ] && cmp -s "$dir/patched" "$here/package-lock.json"; then
	exit 0
fi
rm -rf "$dir/node_modules" "$dir/patched"
mkdir -p "$dir/node_modules"
cp -R "$here/node_modules/onnxruntime-node" "$here/node_modules/onnxruntime-common" "$dir/node_modules/"
at=$(LC_ALL=C grep -obUaP '\x48\xf7\xd0\xa8\xe0\x0f\x84' "$dir/$lib" | cut -d: -f1)
if [ "$(echo "$at" | grep -c .)" != 1 ]; then
	echo "avx2.sh: MLAS's AVX-512 branch not found exactly once in $lib (found at: ${at:-nowhere}); this onnxruntime-node is not 1.30.0's" >&2
	exit 1
fi
printf '\146\017\037\104\000\000' | dd of="$dir/$lib" bs=1 seek=$((at + 5)) conv=notrunc 2>/dev/null
cp "$here/package-lock.json" "$dir/patched"
echo "$dir/ort_bench.js: onnxruntime-node with MLAS held to AVX2/FMA3 (patched at byte $((at + 5)))"
