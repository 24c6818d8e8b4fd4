#!/usr/bin/env bash
# Two Slurm steps whose derived rendezvous ports clash, beside a program
# that holds their first candidate: a listener that accepts connections and
# never answers (as any other service on that port would). Each step
# (tests/run_rendezvous.sh --slurm --derived-port) must still meet, every
# process with its own step's process 0: the steps' job ids differ by the
# derivation's span, so both start from the same port; process 0 of each
# says in its info line which port it took and that the first was taken.
#
# Usage: tests/run_port_clash.sh N PROGRAM [ARGS...]
# (exit 77 when python3, which plays the other program, is missing)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 2 ] || { echo "usage: $0 N PROGRAM [ARGS...]" >&2; exit 2; }
command -v python3 >/dev/null || { echo "SKIP: python3 (the port's holder) is missing"; exit 77; }

# The derivation of src/bootstrap/launch_env.c (base 20000, span 12000,
# step 0); a job id from this script's pid, so that runs beside it differ.
span=12000
job=$(( ($$ * 7919) % 100000 + 1 ))
first=$(( 20000 + (job * 97) % span ))

out=$(mktemp -d)
holder=""
cleanup() {
    [ -n "$holder" ] && kill "$holder" 2>/dev/null
    rm -rf "$out"
}
trap cleanup EXIT

python3 - "$first" > "$out/holder" 2>&1 <<'EOF' &
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    s.bind(("0.0.0.0", int(sys.argv[1])))
except OSError as e:
    print("busy", e, flush=True)
    sys.exit(0)
s.listen(64)
print("holding", flush=True)
time.sleep(120)
EOF
holder=$!
for _ in $(seq 1 300); do # python3 may take a while to start on a loaded machine
    [ -s "$out/holder" ] && break
    sleep 0.1
done
if [ ! -s "$out/holder" ]; then
    echo "run_port_clash: the port's holder did not start within 30 s"
    exit 1
fi
echo "run_port_clash: jobs $job and $((job + span)) derive port $first; $(cat "$out/holder")"

export DCUDA_LOG_LEVEL=info
"$here/run_rendezvous.sh" --slurm --derived-port --job "$job" "$@" > "$out/a" 2>&1 &
a=$!
"$here/run_rendezvous.sh" --slurm --derived-port --job $((job + span)) "$@" > "$out/b" 2>&1 &
b=$!
wait $a
rc_a=$?
wait $b
rc_b=$?
sed 's/^/[step a] /' "$out/a"
sed 's/^/[step b] /' "$out/b"
[ $rc_a -eq 0 ] || exit $rc_a
[ $rc_b -eq 0 ] || exit $rc_b

# Each step met once, on a port of its own after the held one.
met() { grep -oE "rendezvous at [^ ]+:[0-9]+ \(.*\): [0-9]+ processes met" "$1"; }
port_a=$(met "$out/a" | sed -E 's/^rendezvous at [^ ]+:([0-9]+) .*/\1/')
port_b=$(met "$out/b" | sed -E 's/^rendezvous at [^ ]+:([0-9]+) .*/\1/')
fail=0
for step in a b; do
    line=$(met "$out/$step")
    if ! printf '%s\n' "$line" | grep -qE "port $first was taken|ports $first to [0-9]+ were taken"; then
        echo "run_port_clash: step $step's process 0 does not say that port $first was taken: '$line'"
        fail=1
    fi
done
if [ -z "$port_a" ] || [ -z "$port_b" ] || [ "$port_a" = "$port_b" ] || [ "$port_a" = "$first" ] ||
    [ "$port_b" = "$first" ]; then
    echo "run_port_clash: the steps met on ports '$port_a' and '$port_b' (held: $first)"
    fail=1
fi
[ $fail -eq 0 ] && echo "run_port_clash: steps met on ports $port_a and $port_b; $first was held"
exit $fail
