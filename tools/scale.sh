#!/usr/bin/env bash
# The scale benchmark (bench/dcuda_scale.c) over process counts, on one
# host: CPU ranks, every process a node of its own (DCUDA_NET_FORCE=1), the
# network path over MPI's TCP transport or over UCX. Writes a CSV (one row
# a process count) and prints it as a table.
# Usage: tools/scale.sh [BUILD_DIR] [mpi|ucx] [P ...]
#   (default build, mpi, 2 4 8 16); RANKS (ranks a process, 4) and ARGS
#   (dcuda_scale's options) from the environment; CSV=FILE names the output.
set -uo pipefail
build=${1:-build}
net=${2:-mpi}
shift 2 2>/dev/null || shift $#
counts=${*:-2 4 8 16}
ranks=${RANKS:-4}
csv=${CSV:-scale-$net.csv}
exe=$build/bench/dcuda_scale
[ -x "$exe" ] || { echo "no $exe: build with MPI first" >&2; exit 2; }
case $net in mpi | ucx) ;; *) echo "manager $net: mpi or ucx" >&2; exit 2 ;; esac
export DCUDA_BACKEND=cpu DCUDA_RANKS=$ranks DCUDA_NET_FORCE=1 DCUDA_NET=$net
# MPI's transport between the processes of one host: OMPI_MCA_btl (default
# TCP; hundreds of processes run out of loopback ports there: self,vader,tcp
# takes MPI's shared memory); dcuda's network path between them either way.
export OMPI_MCA_btl=${OMPI_MCA_btl:-self,tcp} UCX_TLS=tcp UCX_NET_DEVICES=lo DCUDA_WATCHDOG=60
fwd=(-x DCUDA_BACKEND -x DCUDA_RANKS -x DCUDA_NET_FORCE -x DCUDA_NET -x OMPI_MCA_btl -x UCX_TLS
     -x UCX_NET_DEVICES -x DCUDA_WATCHDOG)
header=--header
: >"$csv"
for p in $counts; do
    # shellcheck disable=SC2086
    if ! mpirun --oversubscribe --allow-run-as-root "${fwd[@]}" -np "$p" "$exe" $header \
        ${ARGS:-} >>"$csv" 2>"$csv.$p.err"; then
        echo "P=$p failed (see $csv.$p.err)" >&2
        continue
    fi
    rm -f "$csv.$p.err"
    header=
done
if command -v column >/dev/null; then column -s, -t <"$csv"; else cat "$csv"; fi
