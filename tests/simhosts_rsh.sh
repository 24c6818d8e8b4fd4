#!/usr/bin/env bash
# An rsh agent for Open MPI's mpirun (plm_rsh_agent) that "logs in" to a
# simulated host (tools/simhosts.sh): the host is named by its address,
# and the command runs in that host's namespaces. The cluster's name comes
# from SIMHOSTS_NAME.
#
# Usage (by mpirun): tests/simhosts_rsh.sh [ssh options...] ADDRESS COMMAND...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
simhosts="$here/../tools/simhosts.sh"
name=${SIMHOSTS_NAME:?SIMHOSTS_NAME names the simulated cluster}
while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do
    shift # ssh's options (-x and the like) mean nothing here
done
[ $# -ge 2 ] || { echo "usage: $0 ADDRESS COMMAND..." >&2; exit 2; }
addr=$1
shift
k=0
while addr_k=$("$simhosts" addr "$name" "$k" 2>/dev/null); do
    if [ "$addr_k" = "$addr" ]; then
        exec "$simhosts" exec "$name" "$k" -- /bin/sh -c "$*"
    fi
    k=$((k + 1))
done
echo "simhosts_rsh: no host of $name has address $addr" >&2
exit 255
