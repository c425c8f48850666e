#!/usr/bin/env bash
# Runs a command against a newer Mesa than Debian 12's: lavapipe from Debian
# sid (Mesa 26 has VK_KHR_cooperative_matrix, which Debian 12's Mesa 22.3
# lacks), with sid's Vulkan loader, validation layers, glslc and
# spirv-tools, all unpacked into DIR (fetched once) and run through sid's
# own C library, without installing anything. For the matrix-unit code on a
# machine with no GPU (docs/GPU.md, "Matrix units on lavapipe"); not for CI,
# since sid changes every day.
#
# Usage: bench/gpucheck/lavapipe-next.sh DIR [--] COMMAND [ARGS...]
#
# COMMAND runs as DIR's ld.so COMMAND ARGS..., so it must be a binary
# (a test binary built with CGO_ENABLED=0, gpucheck, sid's glslc or
# spirv-val under DIR/root/usr/bin), with VK_DRIVER_FILES, VK_LAYER_PATH
# and LP_NATIVE_VECTOR_WIDTH=256 set (the tests set 128 where the
# environment does not, see internal/testenv, and lavapipe offers no
# cooperative matrix with 128-bit vectors).
#
#   bench/gpucheck/lavapipe-next.sh /tmp/sid /tmp/vulkan.test -test.run 'TestKernelsFloat16/matrix'
#   bench/gpucheck/lavapipe-next.sh /tmp/sid /tmp/sid/root/usr/bin/glslc --version
set -euo pipefail
if [ $# -lt 2 ]; then
	sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
fi
dir=$(mkdir -p "$1" && cd "$1" && pwd)
shift
[ "$1" = "--" ] && shift
root=$dir/root lib=$dir/root/usr/lib/x86_64-linux-gnu
if [ ! -e "$dir/done" ]; then
	mkdir -p "$dir/lists/partial" "$dir/debs" "$root"
	echo 'deb http://deb.debian.org/debian sid main' >"$dir/sources.list"
	: >"$dir/status"
	apt=(-oDir::State::Lists="$dir/lists" -oDir::Etc::SourceList="$dir/sources.list" -oDir::Etc::SourceParts=/nonexistent
		-oDir::State::status="$dir/status" -oAPT::Architecture=amd64 -oAPT::Architectures=amd64)
	apt-get "${apt[@]}" update -qq
	pkgs=$(apt-cache "${apt[@]}" depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
		--no-replaces --no-enhances glslc spirv-tools mesa-vulkan-drivers libvulkan1 vulkan-validationlayers |
		grep -v '^ ' | grep -v '<' | sort -u)
	(cd "$dir/debs" && apt-get "${apt[@]}" download $pkgs >/dev/null)
	for deb in "$dir"/debs/*.deb; do dpkg -x "$deb" "$root"; done
	touch "$dir/done"
fi
export VK_DRIVER_FILES=$root/usr/share/vulkan/icd.d/lvp_icd.json
export VK_LAYER_PATH=$root/usr/share/vulkan/explicit_layer.d
export LP_NATIVE_VECTOR_WIDTH=256
exec "$lib/ld-linux-x86-64.so.2" --library-path "$lib" "$@"
