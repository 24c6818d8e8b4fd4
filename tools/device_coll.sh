#!/usr/bin/env bash
# The collectives on a GPU machine in one call: builds this tree's
# collective suites, dcuda_bench and the reference programs, and a base
# tree's dcuda_bench, both at once; runs the GPU entries of the
# collective, mismatch and communicator suites; the references (NVSHMEM
# with one PE a GPU, up to 4); then dcuda_bench of base and of this tree
# (one process a GPU), and prints the A/B of every row (tools/bench_ab.py)
# and the collectives beside NVSHMEM's (tools/bench_compare.py). Logs and
# CSVs go under $OUT/coll (tarred into $OUT/coll.tgz).
# Usage: tools/device_coll.sh BASE_DIR [quick]
set -uo pipefail
base=${1:?usage: tools/device_coll.sh BASE_DIR [quick]}
quick=${2:+--quick}
OUT=${OUT:-/tmp/dcuda-coll}
log=$OUT/coll
mkdir -p "$log"
export NVSHMEM_DISABLE_NVLS=1
jobs=$(( $(nproc) / 2 ))
t0=$(date +%s)
stamp() { echo "== $1 ($(( $(date +%s) - t0 )) s)"; }
configure() { cmake -S "$1" -B "$1/build-gpu" -DDCUDA_WERROR=ON -DCMAKE_CUDA_ARCHITECTURES=90; }
{ configure "$base" && cmake --build "$base/build-gpu" -j "$jobs" --target dcuda_bench; } \
    >"$log/build-base.log" 2>&1 &
{ configure . && cmake --build build-gpu -j "$jobs" --target dcuda_bench dcuda_references \
    dcuda_test_coll dcuda_test_mismatch dcuda_test_comms; } >"$log/build-new.log" 2>&1 ||
    { tail -30 "$log/build-new.log"; exit 1; }
wait || { tail -30 "$log/build-base.log"; exit 1; }
stamp built
(cd build-gpu && ctest -L gpu -R "coll|mismatch|comms" -j 4 --timeout 150) >"$log/ctest.log" 2>&1
grep -E "tests passed|\*\*\*" "$log/ctest.log"
stamp tested
tools/references.sh build-gpu "$log" $quick >"$log/references.txt" 2>&1
for who in base new; do
    dir=$base
    [ $who = new ] && dir=.
    "$dir/build-gpu/bench/dcuda_bench" $quick --csv="$log/$who.csv" >"$log/$who.txt" 2>&1 ||
        echo "bench $who failed (see $log/$who.txt)"
done
stamp benched
python3 tools/bench_ab.py --base "$log/base.csv" --new "$log/new.csv" >"$log/ab.txt" 2>&1
python3 tools/bench_compare.py "$log/new.csv" "$log/floors.csv" \
    $([ -f "$log/nvshmem.csv" ] && echo "$log/nvshmem.csv") >"$log/compare.txt" 2>&1
(cd "$OUT" && tar czf coll.tgz coll)
grep -E "^(collective|runtime|latency) +(peer_)?(allreduce_sum|broadcast |allgather |alltoall |world_barrier|node_barrier|notified_put +2 |notify +2 |put_8B)" \
    "$log/ab.txt"
grep -iE "nvshmem|collective" "$log/compare.txt" | head -40
