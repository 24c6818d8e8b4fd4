#!/usr/bin/env bash
# Checks tools/device.sh where there is no GPU (ctest tools.device): both
# of its files parse, --help lists every subcommand, -n takes each
# subcommand's arguments and says what would run (running nothing), and
# wrong arguments are refused with exit status 2.
# Usage: tools/device_check.sh WORK_DIR (a folder to stand in for a base tree)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dev=$here/device.sh
base=${1:?usage: tools/device_check.sh WORK_DIR}
mkdir -p "$base"
fail=0

for f in "$dev" "$here/device_lib.sh"; do
    bash -n "$f" || { echo "FAIL: bash -n $f"; fail=1; }
done
help=$("$dev" --help) || { echo "FAIL: --help exits $?"; fail=1; }
for s in run ab coll net ucx sanitize installed probes ncu help; do
    grep -q "^  $s\b" <<<"$help" || { echo "FAIL: --help lists no $s"; fail=1; }
done

# expect STATUS ARG...: device.sh -n ARG... exits STATUS; 0 says what it would run.
expect() {
    local want=$1 out rc
    shift
    out=$(OUT= "$dev" -n "$@" 2>&1)
    rc=$?
    if [ $rc -ne "$want" ]; then
        echo "FAIL: device.sh -n $* exits $rc, not $want: $out"
        fail=1
    elif [ "$want" = 0 ] && ! grep -q "^device.sh $1: " <<<"$out"; then
        echo "FAIL: device.sh -n $* says: $out"
        fail=1
    else
        echo "ok   $want: $* -> $(head -1 <<<"$out")"
    fi
}
expect 0 run
expect 0 run quick sanitize onegpu nobench
expect 0 run nocpu nobench
expect 0 run notests quick
expect 2 run notests nobench
expect 0 ab "$base"
expect 0 ab "$base" 3 quick
expect 0 coll "$base" quick
expect 0 coll "$base" pushed
expect 0 net
expect 0 net suites bench trace
expect 0 ucx
expect 0 cases
expect 0 cases hosts 1 hdiff,particles
expect 2 cases 0
expect 0 sanitize build-x
expect 0 installed build-x prefix-x
expect 0 probes
expect 0 probes latency launch queue staging mpi
expect 0 ncu
expect 0 ncu 24
expect 0 ncu "$base" 6 10
expect 2 run fast
expect 2 ab
expect 2 ab "$base" 0
expect 2 ab "$here/.."
expect 2 coll "$base" slow
expect 2 coll "$base" quick pushed
expect 2 net everything
expect 2 ucx now
expect 2 sanitize a b
expect 2 installed a b c
expect 2 probes eager
expect 2 ncu "$base" six
expect 2 ncu "$here/.."
expect 2 nonsense
[ "$("$dev" help probes | head -1)" = "probes [NAME...]: the probe programs of bench/, each once, output in" ] ||
    { echo "FAIL: help probes"; fail=1; }
[ $fail -eq 0 ] && echo "device.sh: all checks passed"
exit $fail
