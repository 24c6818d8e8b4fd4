#!/usr/bin/env bash
# Runs the randomized model test (tests/model_host.c) for many seeds on
# every path of CPU ranks: one process, forked processes on shared memory,
# forked processes over the UCX manager, mpirun on shared memory, and mpirun
# with the network path over MPI and over UCX; `model` (sizes up to 72 KiB),
# `large` (up to 1.25 MiB, several network chunks) and `split` (`model` on
# the communicators of a seeded split of WORLD). Prints a row a path
# (seeds, runs passed, operations, notifications, bytes checked) and exits
# nonzero if any run failed; each failing run's output is kept in $OUT.
# Usage: tools/model_soak.sh [BUILD_DIR] [SEEDS] [FIRST_SEED]
#   SEEDS seeds a path for `model` and `split`, a quarter of them for `large` (at least 1).
set -uo pipefail
build=${1:-build}
seeds=${2:-25}
first=${3:-1}
OUT=${OUT:-/tmp/dcuda-model-soak}
exe=$build/tests/dcuda_test_model
[ -x "$exe" ] || { echo "no $exe: build the tests first" >&2; exit 2; }
mkdir -p "$OUT"
large_seeds=$(( seeds / 4 > 0 ? seeds / 4 : 1 ))
ucx_env=(UCX_TLS=tcp UCX_NET_DEVICES=lo)
mpirun=(mpirun --oversubscribe --allow-run-as-root)
info=$build/tools/dcuda_info
# The library's own word on its managers (dcuda_info --json, "managers"; grep
# -c reads it all: -q would end the pipe early, which pipefail counts as failure).
have_ucx=$([ -x "$info" ] && "$info" --json 2>/dev/null | grep -Ec '"managers": "[^"]*\bucx\b' >/dev/null &&
    echo 1)
have_mpi=$(command -v mpirun >/dev/null && echo 1)
failed=0

# One path: name, case, seed count, then the command's prefix (env and
# launcher). Sums the model's own counts over the runs.
soak() {
    local name=$1 case=$2 n=$3
    shift 3
    local ok=0 ops=0 notes=0 bytes=0 n_ops n_notes n_bytes
    for s in $(seq "$first" $((first + n - 1))); do
        local log="$OUT/$name-$case-$s.log"
        if timeout 300 "$@" "$exe" "$case" "$s" 1 >"$log" 2>&1 && grep -q PASSED "$log" &&
            ! grep -qE "FAILED|SKIP" "$log"; then
            ok=$((ok + 1))
            read -r n_ops n_notes n_bytes < <(awk '/issued/ { for (i = 1; i <= NF; i++) {
                    if ($(i+1) ~ /^operations/) o += $i; if ($(i+1) ~ /^notifications/) c += $i;
                    if ($(i+1) ~ /^bytes;/) b += $i } } END { print o + 0, c + 0, b + 0 }' "$log")
            ops=$((ops + n_ops)) notes=$((notes + n_notes)) bytes=$((bytes + n_bytes))
            rm -f "$log"
        else
            failed=$((failed + 1))
            echo "FAIL $name $case seed $s (log $log)" >&2
        fi
    done
    printf '%-22s %-6s %6d %6d %10d %12d %14d\n' "$name" "$case" "$n" "$ok" "$ops" "$notes" "$bytes"
}

printf '%-22s %-6s %6s %6s %10s %12s %14s\n' path case seeds passed operations notifications \
    bytes_checked
# Processes and ranks a process: `large` runs at most 8 ranks in all.
for c in model large split; do
    n=$seeds one=16 np=3 nr=5 mp=4 mr=3
    [ $c = large ] && n=$large_seeds one=8 np=2 nr=4 mp=2 mr=4
    cpu=(DCUDA_BACKEND=cpu DCUDA_WATCHDOG_CANCEL=1)
    fwd=(-x DCUDA_BACKEND -x DCUDA_WATCHDOG_CANCEL -x DCUDA_RANKS)
    soak one_process $c "$n" env "${cpu[@]}" DCUDA_RANKS=$one DCUDA_PROCESSES=1
    soak forked_shm $c "$n" env "${cpu[@]}" DCUDA_RANKS=$nr DCUDA_PROCESSES=$np
    [ -n "$have_ucx" ] && soak forked_net_ucx $c "$n" env "${cpu[@]}" DCUDA_RANKS=$nr \
        DCUDA_PROCESSES=$np DCUDA_NET_FORCE=1 DCUDA_NET=ucx "${ucx_env[@]}"
    if [ -n "$have_mpi" ]; then
        soak mpirun_shm $c "$n" env "${cpu[@]}" DCUDA_RANKS=$mr "${mpirun[@]}" -np $mp "${fwd[@]}"
        soak mpirun_net_mpi $c "$n" env "${cpu[@]}" DCUDA_RANKS=$mr DCUDA_NET_FORCE=1 \
            OMPI_MCA_btl=self,tcp "${mpirun[@]}" -np $mp "${fwd[@]}" -x DCUDA_NET_FORCE \
            -x OMPI_MCA_btl
        [ -n "$have_ucx" ] && soak mpirun_net_ucx $c "$n" env "${cpu[@]}" DCUDA_RANKS=$mr \
            DCUDA_NET_FORCE=1 DCUDA_NET=ucx OMPI_MCA_btl=self,tcp "${ucx_env[@]}" \
            "${mpirun[@]}" -np $mp "${fwd[@]}" -x DCUDA_NET_FORCE -x DCUDA_NET -x OMPI_MCA_btl \
            -x UCX_TLS -x UCX_NET_DEVICES
    fi
done
[ -z "$have_ucx" ] && echo "# the UCX manager is not built or cannot run: its paths left out"
[ -z "$have_mpi" ] && echo "# no mpirun: the mpirun paths left out"
echo "# failed runs: $failed"
[ "$failed" -eq 0 ]
