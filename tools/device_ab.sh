#!/usr/bin/env bash
# A/B benchmark on a GPU machine, in one call: builds dcuda_bench from a
# baseline tree and from this one, runs them alternately ROUNDS times, and
# prints each row's medians, ratio and spread (tools/bench_ab.py); with
# anchors/run.sh present, the reference floors (and NVSHMEM with 2+ GPUs)
# run first, in the same call. Logs and CSVs go under $OUT.
# Usage: tools/device_ab.sh BASE_DIR [ROUNDS] [quick]
set -uo pipefail
base=${1:?usage: tools/device_ab.sh BASE_DIR [ROUNDS] [quick]}
rounds=${2:-2}
quick=${3:+--quick}
OUT=${OUT:-/tmp/dcuda-ab}
mkdir -p "$OUT"
export NVSHMEM_DISABLE_NVLS=1
jobs=$(nproc)
build() { # dir
    { cmake -S "$1" -B "$1/build-gpu" -DDCUDA_WERROR=ON -DCMAKE_CUDA_ARCHITECTURES=90 &&
      cmake --build "$1/build-gpu" -j "$jobs" --target dcuda_bench; } >"$OUT/build-$2.log" 2>&1 ||
        { tail -20 "$OUT/build-$2.log"; exit 1; }
}
build "$base" base &
build . new &
wait
if [ -f anchors/run.sh ]; then
    OUT="$OUT" bash anchors/run.sh floors >"$OUT/floors.log" 2>&1
    [ "$(nvidia-smi -L | grep -c '^GPU ')" -ge 2 ] &&
        OUT="$OUT" bash anchors/run.sh nvshmem >"$OUT/nvshmem.log" 2>&1
fi
for r in $(seq 1 "$rounds"); do
    for who in base new; do
        dir=$base; [ $who = new ] && dir=.
        "$dir/build-gpu/bench/dcuda_bench" $quick --csv="$OUT/$who-$r.csv" >"$OUT/$who-$r.txt" 2>&1 ||
            echo "bench $who round $r failed (see $OUT/$who-$r.txt)"
    done
done
python3 tools/bench_compare.py "$OUT/new-1.csv" "$OUT/floors.txt" $( [ -f "$OUT/nvshmem.txt" ] && echo "$OUT/nvshmem.txt") >"$OUT/compare.txt" 2>&1
python3 tools/bench_ab.py --base "$OUT"/base-*.csv --new "$OUT"/new-*.csv | tee "$OUT/ab.txt"
