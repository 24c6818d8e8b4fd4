#!/usr/bin/env bash
# The semantics suite and the randomized model at a process count CI does
# not run (CI runs 64: ctest -L scale), on one host: CPU ranks, one rank a
# process, every process a node of its own (DCUDA_NET_FORCE=1), over MPI's
# TCP transport or over UCX. Prints one line a case; exit status 1 if any
# failed (its output is kept in scale-suite-<manager>-<P>/); a case that
# every process skipped (the model above 64 ranks) is said so, and is no
# failure.
# Usage: tools/scale_suite.sh [BUILD_DIR] [mpi|ucx] [P] [case ...]
#   (default build, mpi, 256, every case). Needs open files and processes
#   for P processes: ulimit -n 65536 for 1,024 over MPI.
set -uo pipefail
build=${1:-build}
net=${2:-mpi}
procs=${3:-256}
shift 3 2>/dev/null || shift $#
cases=${*:-visibility order tags many wrap overlap flush barrier size0 windows user ack
    notify_release mix burst tiny stale model}
case $net in mpi | ucx) ;; *) echo "manager $net: mpi or ucx" >&2; exit 2 ;; esac
export DCUDA_BACKEND=cpu DCUDA_RANKS=1 DCUDA_NET_FORCE=1 DCUDA_NET=$net DCUDA_WATCHDOG_CANCEL=1
# MPI's own transport between the processes of one host: its shared memory
# by default (over TCP, hundreds of processes run out of loopback ports);
# dcuda's network path between them either way.
export OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader,tcp} UCX_TLS=${UCX_TLS:-tcp} UCX_NET_DEVICES=lo
fwd=(-x DCUDA_BACKEND -x DCUDA_RANKS -x DCUDA_NET_FORCE -x DCUDA_NET -x DCUDA_WATCHDOG_CANCEL
     -x OMPI_MCA_btl -x UCX_TLS -x UCX_NET_DEVICES)
# A UCX (or MPI) outside the system's paths: where the processes find it.
for v in LD_LIBRARY_PATH UCX_MODULE_DIR UCX_LOG_LEVEL; do
    [ -n "${!v:-}" ] && fwd+=(-x "$v")
done
out=scale-suite-$net-$procs
mkdir -p "$out"
failed=0
for c in $cases; do
    exe=$build/tests/dcuda_test_semantics
    [ "$c" = model ] && exe=$build/tests/dcuda_test_model
    start=$(date +%s%N)
    mpirun --oversubscribe --allow-run-as-root "${fwd[@]}" -np "$procs" "$exe" "$c" \
        >"$out/$c.log" 2>&1
    rc=$?
    passed=$(grep -c "PASSED $c" "$out/$c.log")
    skipped=$(grep -c "^SKIP $c" "$out/$c.log")
    ms=$((($(date +%s%N) - start) / 1000000))
    printf '%-15s P=%d %-3s rc=%d passed=%d/%d %d.%03d s' "$c" "$procs" "$net" "$rc" "$passed" \
        "$procs" $((ms / 1000)) $((ms % 1000))
    if [ "$skipped" -eq "$procs" ]; then # the case says why (the model: at most 64 ranks)
        printf ' skipped: %s\n' "$(grep -m1 "^SKIP $c" "$out/$c.log")"
        continue
    fi
    printf '\n'
    [ "$rc" -eq 0 ] && [ "$passed" -eq "$procs" ] || failed=1
done
exit $failed
