#!/usr/bin/env bash
# Runs a dcuda program under Open MPI's mpirun across H simulated hosts
# (tools/simhosts.sh, made for this run and removed after it): mpirun runs
# in host 0 and starts the others' daemons through tests/simhosts_rsh.sh,
# N processes placed round the hosts' slots (N / H each), MPI's TCP
# transports on the hosts' links. Every DCUDA_* and UCX_* variable reaches
# every process. Exits with mpirun's status, 77 when the hosts cannot be
# made here.
#
# Usage: tests/run_mpirun_hosts.sh H N PROGRAM [ARGS...]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
simhosts="$here/../tools/simhosts.sh"
[ $# -ge 3 ] || { echo "usage: $0 H N PROGRAM [ARGS...]" >&2; exit 2; }
hosts=$1
count=$2
shift 2
command -v mpirun >/dev/null || { echo "SKIP: no mpirun"; exit 77; }

name="m$(( $$ % 100000 ))"
trap '"$simhosts" destroy "$name" >/dev/null 2>&1' EXIT
"$simhosts" create "$name" "$hosts" >/dev/null
rc=$?
if [ $rc -ne 0 ]; then
    [ $rc -eq 77 ] && echo "SKIP: simulated hosts cannot be made here"
    exit $rc
fi
slots=$(( (count + hosts - 1) / hosts ))
list=""
for k in $(seq 0 $(( hosts - 1 ))); do
    list+="${list:+,}$("$simhosts" addr "$name" "$k"):$slots"
done
forward=(-x PATH)
[ -z "${LD_LIBRARY_PATH:-}" ] || forward+=(-x LD_LIBRARY_PATH)
for var in $(env | sed -n 's/^\(DCUDA_[A-Z0-9_]*\|UCX_[A-Z0-9_]*\)=.*/\1/p'); do
    forward+=(-x "$var")
done
export SIMHOSTS_NAME=$name
"$simhosts" exec "$name" 0 -- timeout -k 5 120 mpirun --allow-run-as-root --oversubscribe \
    --host "$list" -np "$count" --mca plm_rsh_agent "$here/simhosts_rsh.sh" \
    --mca oob_tcp_if_include eth0 --mca btl_tcp_if_include eth0 --mca btl self,vader,tcp \
    -x SIMHOSTS_NAME "${forward[@]}" "$@"
