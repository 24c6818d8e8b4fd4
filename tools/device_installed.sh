#!/usr/bin/env bash
# The out-of-tree example against an installed dcuda, on the GPU: installs
# BUILD_DIR into a prefix, builds examples/installed there as a project of
# its own (CMake, find_package) and runs its ring on GPU ranks.
# Usage: tools/device_installed.sh BUILD_DIR PREFIX
set -euo pipefail
build=${1:-build-gpu}
prefix=${2:-/tmp/dcuda-prefix}
cmake --install "$build" --prefix "$prefix" >/dev/null
work=$(mktemp -d)
cmake -S examples/installed -B "$work" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null
cmake --build "$work" -j 4 >/dev/null
echo "installed example: $(wc -l < examples/installed/CMakeLists.txt) lines of CMakeLists.txt"
DCUDA_BACKEND=cuda "$work/ring"
