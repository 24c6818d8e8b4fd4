#!/usr/bin/env bash
# Builds, tests and benchmarks dcuda on a GPU machine in one go, writing logs
# under $OUT and printing a short table last. Run from the repository root;
# the reference programs are expected in ./anchors (a copy of the shared
# anchors folder). Usage: tools/device_run.sh [quick] [sanitize]
#   quick     shorter benchmark runs
#   sanitize  also run GPU test cases under compute-sanitizer (several minutes)
set -uo pipefail
OUT=${OUT:-/tmp/dcuda-device}
mkdir -p "$OUT"
export NVSHMEM_DISABLE_NVLS=1
quick= sanitize=
for arg in "$@"; do
    case $arg in
    quick) quick=1 ;;
    sanitize) sanitize=1 ;;
    *) echo "unknown argument $arg" >&2; exit 2 ;;
    esac
done
jobs=$(nproc)
status=0

nvidia-smi -L | tee "$OUT/gpus.txt"
echo "== build"
if ! { cmake -S . -B build-gpu -DDCUDA_WERROR=ON -DCMAKE_CUDA_ARCHITECTURES=90 &&
       cmake --build build-gpu -j "$jobs"; } >"$OUT/build.log" 2>&1; then
    tail -40 "$OUT/build.log"
    exit 1
fi

echo "== tests (gpu, then cpu)"
(cd build-gpu && ctest -L gpu --output-on-failure -j 4 --timeout 300) >"$OUT/ctest-gpu.log" 2>&1 || status=1
tail -4 "$OUT/ctest-gpu.log"
(cd build-gpu && ctest -L cpu -j "$jobs" --timeout 300) >"$OUT/ctest-cpu.log" 2>&1 || status=1
tail -3 "$OUT/ctest-cpu.log"

echo "== demo on the GPU"
DCUDA_BACKEND=cuda ./build-gpu/apps/demo/dcuda_demo >"$OUT/demo.log" 2>&1 || status=1
grep -E "^(reduce|stencil|demo):" "$OUT/demo.log"

if [ -n "$sanitize" ]; then
    echo "== compute-sanitizer"
    tools/device_sanitize.sh build-gpu >"$OUT/sanitizer.log" 2>&1 || status=1
    tail -6 "$OUT/sanitizer.log"
fi

echo "== benchmark and floors"
./build-gpu/bench/dcuda_bench ${quick:+--quick} --csv="$OUT/bench.csv" >"$OUT/bench.txt" 2>&1 || status=1
if [ -f anchors/run.sh ]; then
    OUT="$OUT" bash anchors/run.sh floors >"$OUT/floors.log" 2>&1 || status=1
fi
if [ -x build-gpu/bench/dcuda_probe_latency ]; then
    ./build-gpu/bench/dcuda_probe_latency >"$OUT/probe.txt" 2>&1 || status=1
    cat "$OUT/probe.txt"
fi
cat "$OUT/bench.txt"
[ -f "$OUT/floors.txt" ] && python3 tools/bench_compare.py "$OUT/bench.csv" "$OUT/floors.txt"
exit $status
