#!/usr/bin/env bash
# Builds, tests and benchmarks dcuda on a GPU machine in one go, writing logs
# under $OUT and printing a short table last. Run from the repository root.
# The project's reference programs (tools/references.sh: raw floors, and
# NVSHMEM where found) run in the same call, for bench_compare.py; a copy
# of the shared anchors in ./anchors, where present, runs too, and its
# floors are compared as well (a check of the reference programs). With 2+
# GPUs visible the benchmark runs one process per GPU (its peer_* rows).
# After the build, tools/spills.py prints the bench kernels' registers and
# spills (a kernel over its budget fails the run).
# Usage: tools/device_run.sh [quick] [sanitize] [onegpu] [nobench]
#   quick     shorter benchmark runs
#   sanitize  also run GPU test cases under compute-sanitizer (several minutes)
#   onegpu    with 2+ GPUs, also run the GPU suite on GPU 0 alone
#   nobench   build, tests and demo only (tools/device_ab.sh compares builds)
set -uo pipefail
OUT=${OUT:-/tmp/dcuda-device}
mkdir -p "$OUT"
export NVSHMEM_DISABLE_NVLS=1
quick= sanitize= onegpu= nobench=
for arg in "$@"; do
    case $arg in
    quick) quick=1 ;;
    sanitize) sanitize=1 ;;
    onegpu) onegpu=1 ;;
    nobench) nobench=1 ;;
    *) echo "unknown argument $arg" >&2; exit 2 ;;
    esac
done
jobs=$(nproc)
status=0

nvidia-smi -L | tee "$OUT/gpus.txt"
ngpu=$(grep -c "^GPU " "$OUT/gpus.txt")
echo "== build"
if ! { cmake -S . -B build-gpu -DDCUDA_WERROR=ON -DCMAKE_CUDA_ARCHITECTURES=90 &&
       cmake --build build-gpu -j "$jobs" &&
       cmake --build build-gpu -j "$jobs" --target dcuda_references; } >"$OUT/build.log" 2>&1; then
    tail -40 "$OUT/build.log"
    exit 1
fi

echo "== the bench kernels' registers and spills (tools/spills.py)"
python3 tools/spills.py build-gpu --jobs "$jobs" >"$OUT/spills.txt" 2>&1 || status=1
cat "$OUT/spills.txt"

echo "== tests (gpu on $ngpu GPU(s), then cpu)"
(cd build-gpu && ctest -L gpu --output-on-failure -j 2 --timeout 300) >"$OUT/ctest-gpu.log" 2>&1 || status=1
tail -4 "$OUT/ctest-gpu.log"
if [ -n "$onegpu" ] && [ "$ngpu" -ge 2 ]; then
    echo "== tests (gpu on GPU 0 alone)"
    (cd build-gpu && CUDA_VISIBLE_DEVICES=0 ctest -L gpu --output-on-failure -j 2 --timeout 300) \
        >"$OUT/ctest-gpu1.log" 2>&1 || status=1
    tail -4 "$OUT/ctest-gpu1.log"
fi
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
if [ -n "$nobench" ]; then
    (cd "$OUT" && tar czf /tmp/dcuda-logs.tgz . 2>/dev/null && mv /tmp/dcuda-logs.tgz logs.tgz &&
         for f in *; do case " logs.tgz ctest-gpu.log ctest-gpu1.log " in *" $f "*) ;; *) rm -f "$f" ;; esac; done)
    exit $status
fi

echo "== benchmark and floors ($ngpu GPU(s); with 2+ dcuda_bench runs one process per GPU)"
./build-gpu/bench/dcuda_bench ${quick:+--quick} --csv="$OUT/bench.csv" >"$OUT/bench.txt" 2>&1 || status=1
tools/references.sh build-gpu "$OUT" ${quick:+--quick} >"$OUT/references.txt" 2>&1 || status=1
if [ -f anchors/run.sh ]; then
    OUT="$OUT" bash anchors/run.sh floors >"$OUT/floors.log" 2>&1 || status=1
    if [ "$ngpu" -ge 2 ]; then
        # NVSHMEM peer figures (needs NVSHMEM from pip and Open MPI); a machine
        # without them is not our failure: say so and go on.
        echo "== NVSHMEM anchor"
        OUT="$OUT" bash anchors/run.sh nvshmem >"$OUT/nvshmem.log" 2>&1 ||
            { echo "nvshmem anchor failed:"; tail -5 "$OUT/nvshmem.log"; }
    fi
fi
if [ -x build-gpu/bench/dcuda_probe_latency ]; then
    ./build-gpu/bench/dcuda_probe_latency >"$OUT/probe.txt" 2>&1 || status=1
    cat "$OUT/probe.txt"
fi
cat "$OUT/bench.txt"
cat "$OUT/references.txt"
python3 tools/bench_compare.py "$OUT/bench.csv" "$OUT/floors.csv" "$OUT/nvshmem.csv" |
    tee "$OUT/compare.txt"
if [ -f "$OUT/floors.txt" ]; then
    nvshmem_txt=
    [ -f "$OUT/nvshmem.txt" ] && nvshmem_txt=$OUT/nvshmem.txt
    python3 tools/bench_compare.py "$OUT/bench.csv" "$OUT/floors.txt" $nvshmem_txt \
        >"$OUT/compare-anchors.txt" 2>&1
fi
# Few files come back from the machine: the logs travel as one archive.
keep="bench.txt bench.csv compare.txt references.txt ctest-gpu.log"
(cd "$OUT" && tar czf /tmp/dcuda-logs.tgz --exclude=logs.tgz . 2>/dev/null
 mv /tmp/dcuda-logs.tgz logs.tgz &&
     for f in *; do case " $keep logs.tgz " in *" $f "*) ;; *) rm -f "$f" ;; esac; done)
exit $status
