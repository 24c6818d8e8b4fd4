#!/usr/bin/env bash
# Starts a dcuda program as N processes that meet by rendezvous (no
# launcher): each gets DCUDA_BOOT_ADDR, DCUDA_PROCESS_INDEX and
# DCUDA_PROCESSES, as docs/clusters.md shows. With --hosts H the processes
# run in H simulated hosts (tools/simhosts.sh, made for this run and
# removed after it: process i in host i % H, process 0 listening on host
# 0's address), which share nothing but their links. Waits for all of them
# (each bounded by --timeout seconds) and exits with the first failure's
# status, 77 when every process skipped, else 0. With --slurm the
# processes get the variables of a step of Slurm's srun instead
# (SLURM_PROCID, SLURM_STEP_NUM_TASKS, SLURM_STEP_NODELIST; the port in
# DCUDA_BOOT_PORT), as srun without PMI starts them.
#
# With --kill-host K:S (and --hosts), host K is killed S seconds after the
# start, as a machine that crashes (tools/simhosts.sh kill): its processes'
# exit statuses are not counted; the survivors' are. With --cut-host K:S,
# host K's link is cut instead (tools/simhosts.sh cut): every process
# lives on, and every status counts.
#
# Usage: tests/run_rendezvous.sh [--hosts H] [--slurm [--resv-ports]] [--kill-host K:S]
#                                [--timeout S] [--cut-host K:S] [--derived-port] [--job ID]
#                                N PROGRAM [ARGS...]
# --resv-ports: the port in SLURM_STEP_RESV_PORTS (a range from it, as
# srun --resv-ports gives a step), not in DCUDA_BOOT_PORT. --derived-port:
# no port at all, so that the processes derive the step's candidates from
# SLURM_JOB_ID (this script's pid, or --job ID) as srun without
# --resv-ports leaves them to.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
simhosts="$here/../tools/simhosts.sh"
hosts=0
limit=100
slurm=0
resv=0
derived=0
job=$$
victim=-1
kill_after=0
fault=kill
while [ $# -gt 0 ]; do
    case "$1" in
    --hosts) hosts=$2; shift 2 ;;
    --timeout) limit=$2; shift 2 ;;
    --slurm) slurm=1; shift ;;
    --resv-ports) resv=1; shift ;;
    --derived-port) derived=1; shift ;;
    --job) job=$2; shift 2 ;;
    --kill-host) victim=${2%%:*}; kill_after=${2#*:}; fault=kill; shift 2 ;;
    --cut-host) victim=${2%%:*}; kill_after=${2#*:}; fault=cut; shift 2 ;;
    *) break ;;
    esac
done
[ $# -ge 2 ] || { echo "usage: $0 [--hosts H] [--slurm] [--timeout S] N PROGRAM [ARGS...]" >&2; exit 2; }
count=$1
shift

# A port no socket of this host uses, from 10000 to 19999: below the
# kernel's ephemeral range (ip_local_port_range), so that no outgoing
# connection of a test running beside this one can be given it between the
# pick and process 0's listen, and below the candidates a Slurm step derives
# from its ids (20000 up), which another test's step may take (a busy port
# makes process 0 fail, saying so: that is the documented behaviour for a
# port the user names, not something to retry here).
pick_port() {
    local port
    for _ in $(seq 1 50); do
        port=$(( 10000 + (RANDOM * 7 + $$) % 10000 ))
        if ! (ss -tanH 2>/dev/null || true) | awk '{print $4}' | grep -q ":$port\$"; then
            echo "$port"
            return
        fi
    done
    echo $(( 10000 + $$ % 10000 ))
}

name=""
cleanup() { [ -n "$name" ] && "$simhosts" destroy "$name" >/dev/null 2>&1; }
trap cleanup EXIT

addr=127.0.0.1
if [ "$hosts" -gt 0 ]; then
    name="r$(( $$ % 100000 ))"
    "$simhosts" create "$name" "$hosts" >/dev/null
    rc=$?
    if [ $rc -ne 0 ]; then
        [ $rc -eq 77 ] && echo "SKIP: simulated hosts cannot be made here"
        exit $rc
    fi
    addr=$("$simhosts" addr "$name" 0)
fi
port=$(pick_port)

pids=()
for i in $(seq 0 $(( count - 1 ))); do
    run=()
    [ "$hosts" -gt 0 ] && run=("$simhosts" exec "$name" $(( i % hosts )) --)
    if [ $slurm -eq 1 ]; then
        ports=(DCUDA_BOOT_PORT=$port)
        [ $resv -eq 1 ] && ports=(SLURM_STEP_RESV_PORTS="$port-$((port + 3))")
        [ $derived -eq 1 ] && ports=()
        env SLURM_PROCID=$i SLURM_STEP_NUM_TASKS=$count SLURM_NTASKS=$count \
            SLURM_STEP_NODELIST=$addr SLURM_JOB_ID=$job SLURM_STEP_ID=0 "${ports[@]}" \
            timeout -k 5 "$limit" "${run[@]}" "$@" &
    else
        DCUDA_BOOT_ADDR="$addr:$port" DCUDA_PROCESS_INDEX=$i DCUDA_PROCESSES=$count \
            timeout -k 5 "$limit" "${run[@]}" "$@" &
    fi
    pids+=($!)
done

if [ "$victim" -ge 0 ] && [ "$hosts" -gt 0 ]; then
    sleep "$kill_after"
    "$simhosts" "$fault" "$name" "$victim" >/dev/null
    echo "run_rendezvous: host $victim ${fault/kill/killed} after $kill_after s"
fi

status=0
skipped=0
for i in "${!pids[@]}"; do
    wait "${pids[$i]}"
    rc=$?
    if [ "$fault" = kill ] && [ "$victim" -ge 0 ] && [ $(( i % hosts )) -eq "$victim" ]; then
        count=$(( count - 1 )) # a process of the killed host: not counted
        continue
    fi
    if [ $rc -eq 77 ]; then
        skipped=$(( skipped + 1 ))
    elif [ $rc -ne 0 ] && [ $status -eq 0 ]; then
        status=$rc
    fi
done
[ $status -eq 0 ] && [ "$skipped" -eq "$count" ] && [ "$count" -gt 0 ] && status=77
exit $status
