#!/usr/bin/env bash
# The UCX network manager on a GPU machine that has no UCX: unpacks the
# Debian packages carried in .deps (libucx0, libucx-dev and what they need;
# apt-get download them there first) into .deps/root, builds against them,
# and runs the network-path semantics cases and the benchmark's peer rows
# with DCUDA_NET=ucx under mpirun -np 2 (network path forced). Logs under
# $OUT; rows last. Usage: tools/device_ucx.sh
set -uo pipefail
OUT=${OUT:-/tmp/dcuda-ucx}
mkdir -p "$OUT"
root=$PWD/.deps/root
rm -rf "$root" && mkdir -p "$root/pc"
for f in .deps/*.deb; do dpkg -x "$f" "$root"; done
lib=$root/usr/lib/x86_64-linux-gnu
for pc in "$lib"/pkgconfig/ucx*.pc; do
    sed "s|^prefix = /usr|prefix = $root/usr|" "$pc" >"$root/pc/$(basename "$pc")"
done
export PKG_CONFIG_PATH=$root/pc LD_LIBRARY_PATH=$lib:${LD_LIBRARY_PATH:-} UCX_MODULE_DIR=$lib/ucx
pkgconf=$(command -v pkg-config || echo "$root/usr/bin/pkgconf")
b=build-gpu-ucx
{ cmake -S . -B $b -DDCUDA_WERROR=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
        -DPKG_CONFIG_EXECUTABLE="$pkgconf" &&
    cmake --build $b -j "$(nproc)" --target dcuda_bench dcuda_test_semantics; } >"$OUT/ucx-build.log" 2>&1 ||
    { tail -20 "$OUT/ucx-build.log"; exit 1; }
grep "dcuda: CUDA backend" "$OUT/ucx-build.log"
export DCUDA_BACKEND=cuda DCUDA_NET_FORCE=1 DCUDA_NET=ucx DCUDA_WATCHDOG_CANCEL=1
mpi=(mpirun --allow-run-as-root -np 2 -x DCUDA_BACKEND -x DCUDA_NET_FORCE -x DCUDA_NET
     -x DCUDA_WATCHDOG_CANCEL -x DCUDA_RANKS -x LD_LIBRARY_PATH -x UCX_MODULE_DIR)
pass=0 fail=0
for c in visibility order flush barrier mix large; do
    if DCUDA_RANKS=8 timeout 120 "${mpi[@]}" $b/tests/dcuda_test_semantics $c >"$OUT/ucx-$c.log" 2>&1 &&
        [ "$(grep -c '^process [01] of 2: PASSED' "$OUT/ucx-$c.log")" = 2 ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1)); echo "FAIL $c"; tail -5 "$OUT/ucx-$c.log"
    fi
done
echo "ucx: gpu semantics on the network path: $pass passed, $fail failed"
DCUDA_RANKS=0 timeout 240 "${mpi[@]}" -x UCX_LOG_LEVEL $b/bench/dcuda_bench --quick --peer \
    --csv="$OUT/bench-ucx.csv" >"$OUT/bench-ucx.txt" 2>&1 || echo "bench failed (see bench-ucx.txt)"
UCX_LOG_LEVEL=info DCUDA_RANKS=2 timeout 60 "${mpi[@]}" -x UCX_LOG_LEVEL $b/bench/dcuda_bench --quick \
    --peer --latency 2>&1 | grep -iE "ucp_worker|transport|tls" | head -4
grep -E "^(latency|bandwidth) +peer_" "$OUT/bench-ucx.txt" | awk '$4 == 4 || $4 == 0 || $4 >= 1048576'
[ $fail -eq 0 ]
