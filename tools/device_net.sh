#!/usr/bin/env bash
# GPU ranks on the network path in one call: the GPU suites' loopback
# entries (ctest -L loop: every WORLD put, notification and barrier through
# the proxies and MPI, on one GPU), and with two GPUs the demo, the
# benchmark's peer rows (then remote: through both proxies and MPI,
# shared-memory transport) with DCUDA_NET_FORCE=1, the staging probe and
# the proxies' MPI hop alone. Logs under $OUT; a short table last. Run from
# the repository root after a GPU build in build-gpu (tools/device_run.sh
# makes one).
# Usage: tools/device_net.sh [suites] [bench] [trace] (default: suites bench)
#   suites  the loopback entries of the GPU suites; the demo on two GPUs
#   bench   the peer rows of the benchmark, the staging and MPI probes
#   trace   the latency rows again from a build that timestamps the proxies'
#           hops (DCUDA_PROXY_TRACE), and the hops (tools/trace_hops.py)
set -uo pipefail
OUT=${OUT:-/tmp/dcuda-net}
mkdir -p "$OUT"
b=build-gpu
[ -x $b/tests/dcuda_test_semantics ] || {
    cmake -S . -B $b -DDCUDA_WERROR=ON -DCMAKE_CUDA_ARCHITECTURES=90 >"$OUT/build.log" 2>&1 &&
        cmake --build $b -j "$(nproc)" >>"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
}
parts=" ${*:-suites bench} "
export DCUDA_BACKEND=cuda DCUDA_NET_FORCE=1 DCUDA_WATCHDOG_CANCEL=1
mpi=(mpirun --allow-run-as-root -np 2 -x DCUDA_BACKEND -x DCUDA_NET_FORCE
     -x DCUDA_WATCHDOG_CANCEL -x DCUDA_RANKS)
fail=0
if [[ $parts == *" suites "* ]]; then
    (cd $b && ctest -L loop -LE cpu -R "^gpu" --timeout 200 -j 2) >"$OUT/loop.log" 2>&1 || fail=1
    grep -E "tests passed|\*\*\*Failed|Timeout" "$OUT/loop.log"
    DCUDA_RANKS=0 timeout 120 "${mpi[@]}" $b/apps/demo/dcuda_demo >"$OUT/demo.log" 2>&1
    grep -E "^(reduce|stencil|demo):" "$OUT/demo.log"
fi
if [[ $parts == *" bench "* ]]; then
    DCUDA_RANKS=0 timeout "${NET_BENCH_S:-300}" "${mpi[@]}" $b/bench/dcuda_bench --quick --peer \
        --csv="$OUT/bench-net.csv" >"$OUT/bench-net.txt" 2>&1 || echo "bench failed (see bench-net.txt)"
    $b/bench/dcuda_probe_staging | tee "$OUT/staging.txt"
    mpirun --allow-run-as-root -np 2 $b/bench/dcuda_probe_mpi | tee -a "$OUT/staging.txt"
    grep -E "^(latency|bandwidth) +peer_" "$OUT/bench-net.txt" |
        awk '$4 == 4 || $4 == 0 || $4 >= 1048576'
fi
if [[ $parts == *" trace "* ]]; then
    t=build-gpu-trace
    { cmake -S . -B $t -DDCUDA_WERROR=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DDCUDA_PROXY_TRACE=ON &&
        cmake --build $t -j "$(nproc)" --target dcuda_bench; } >"$OUT/trace-build.log" 2>&1 ||
        tail -20 "$OUT/trace-build.log"
    mkdir -p /tmp/dcuda-trace && rm -f /tmp/dcuda-trace/*
    (cd /tmp/dcuda-trace && DCUDA_RANKS=0 timeout 240 "${mpi[@]}" "$OLDPWD/$t/bench/dcuda_bench" \
        --quick --peer --latency >"$OUT/trace-bench.txt" 2>&1)
    grep -E "^latency +peer_" "$OUT/trace-bench.txt"
    python3 tools/trace_hops.py /tmp/dcuda-trace | tee "$OUT/trace-hops.txt"
fi
(cd "$OUT" && tar czf /tmp/net-logs.tgz . && mv /tmp/net-logs.tgz logs.tgz &&
     for f in *; do case " logs.tgz bench-net.txt bench-net.csv staging.txt trace-hops.txt " in
         *" $f "*) ;; *) rm -f "$f" ;; esac; done)
[ $fail -eq 0 ]
