#!/usr/bin/env bash
# Runs a test program as the tasks of a real Slurm step: makes a cluster of
# its own for the one run (munged, slurmctld and one slurmd a node, in a
# private folder under /var/tmp with ports of their own), starts the program with srun,
# and tears everything down. The nodes are this host (one node, "localhost")
# or simulated hosts (tools/simhosts.sh: Linux namespaces joined by veth
# links; slurmctld and srun in host 0, a slurmd in each; each host has a
# /tmp of its own, as nodes do (Slurm's PMIx server keeps a folder a step
# there), and an /etc/hosts bind-mounted over the machine's that resolves
# the node names, as a cluster's DNS would). The job's first id is drawn per run, so that the port dcuda
# derives from the job and step ids differs between runs.
#
# Usage: tests/run_slurm.sh [--hosts H] [--mpi TYPE] [--timeout S] N PROGRAM [ARGS...]
#   N tasks (srun -n N; with H hosts, -N H: block distribution); --mpi is
#   passed to srun (none, pmix, pmi2). Exits with srun's status; 77 (skip)
#   without root, without Slurm's daemons or munge (Debian: slurmctld,
#   slurmd, slurm-client, munge), where munged or a Slurm daemon cannot
#   start or the nodes do not come up (the logs printed), or where the
#   simulated hosts cannot be made.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
simhosts="$here/../tools/simhosts.sh"
hosts=0
limit=100
mpi=none
while [ $# -gt 0 ]; do
    case "$1" in
    --hosts) hosts=$2; shift 2 ;;
    --mpi) mpi=$2; shift 2 ;;
    --timeout) limit=$2; shift 2 ;;
    *) break ;;
    esac
done
[ $# -ge 2 ] || { echo "usage: $0 [--hosts H] [--mpi TYPE] [--timeout S] N PROGRAM [ARGS...]" >&2; exit 2; }
count=$1
shift

skip() { echo "run_slurm: skip: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (the daemons run as root)"
for b in slurmctld slurmd srun sinfo munged; do
    PATH=$PATH:/usr/sbin command -v "$b" >/dev/null 2>&1 ||
        skip "no $b (Debian: apt-get install slurmctld slurmd slurm-client munge)"
done
PATH=$PATH:/usr/sbin

dir=$(mktemp -d /var/tmp/dcuda-slurm.XXXXXX) || exit 1
chmod 700 "$dir"
name=""
step=
# This cluster's slurmstepd processes (their working folder is its; one
# outlives slurmd when the daemons stop first).
strays() {
    local p
    for p in $(pgrep -x slurmstepd); do
        case $(readlink "/proc/$p/cwd" 2>/dev/null) in "$dir" | "$dir"/* | "$dir (deleted)") echo "$p" ;; esac
    done
}

cleanup() {
    local f
    [ -n "$step" ] && kill "$step" 2>/dev/null
    if [ -f "$dir/slurmctld.pid" ]; then # the jobs end (and their steps) while the daemons run
        in_host 0 scancel --quiet --user=root >/dev/null 2>&1
        for _ in $(seq 1 30); do
            [ -z "$(in_host 0 squeue -h 2>/dev/null)" ] && [ -z "$(strays)" ] && break
            sleep 0.1
        done
    fi
    for f in "$dir"/slurmd-*.pid "$dir"/slurmctld.pid "$dir"/munged.pid; do
        [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
    done
    [ -n "$name" ] && "$simhosts" destroy "$name" >/dev/null 2>&1
    sleep 0.2
    for f in "$dir"/slurmd-*.pid "$dir"/slurmctld.pid "$dir"/munged.pid; do
        [ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null
    done
    for f in $(strays); do
        kill -9 "$f" 2>/dev/null
    done
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 143' TERM INT # a killed run still takes its daemons down

# Two free TCP ports of this namespace, for slurmctld and slurmd: bound
# once here to prove them free, and taken from 10000 to 19999, below the
# kernel's ephemeral range, so that no outgoing connection of a test beside
# this one can be given them before the daemons listen, and below the
# candidates a step derives from its ids (20000 up).
free_ports() {
    python3 -c 'import random, socket
got = []
while len(got) < 2:
    s = socket.socket()
    try:
        s.bind(("", random.randrange(10000, 20000)))
        got.append(s)
    except OSError:
        s.close()
print(*(x.getsockname()[1] for x in got))'
}

# in_host K CMD...: CMD in simulated host K, or here without hosts.
in_host() {
    local k=$1
    shift
    if [ "$hosts" -gt 0 ]; then "$simhosts" exec "$name" "$k" -- "$@"; else "$@"; fi
}

# ---- the nodes ----------------------------------------------------------------
nodes=()
addrs=()
if [ "$hosts" -gt 0 ]; then
    name="sl$(printf '%04d' $(($$ % 10000)))"
    "$simhosts" create "$name" "$hosts" >"$dir/simhosts.log" 2>&1
    rc=$?
    [ $rc -eq 77 ] && skip "simulated hosts cannot be made here: $(tail -1 "$dir/simhosts.log")"
    [ $rc -eq 0 ] || { cat "$dir/simhosts.log"; exit 1; }
    echo "127.0.0.1 localhost" >"$dir/hosts"
    for ((k = 0; k < hosts; k++)); do
        nodes+=("$name$k")
        addrs+=("$("$simhosts" addr "$name" "$k")")
        echo "${addrs[k]} ${nodes[k]}" >>"$dir/hosts"
    done
    for ((k = 0; k < hosts; k++)); do
        in_host "$k" mount --bind "$dir/hosts" /etc/hosts &&
            in_host "$k" mount -t tmpfs -o size=64m tmpfs /tmp ||
            { echo "run_slurm: cannot give host $k its /etc/hosts and /tmp"; exit 1; }
    done
    read -r ctld_port slurmd_port < <(in_host 0 bash -c "$(declare -f free_ports); free_ports")
else
    nodes=(localhost)
    addrs=(127.0.0.1)
    read -r ctld_port slurmd_port < <(free_ports)
fi

# ---- munge and the configuration ------------------------------------------------
head -c 1024 /dev/urandom >"$dir/munge.key" && chmod 400 "$dir/munge.key"
munged --force --socket="$dir/munge.sock" --key-file="$dir/munge.key" \
    --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge.seed" ||
    { cat "$dir/munged.log"; skip "munged did not start here"; }

{
    echo "ClusterName=dcudatest"
    echo "SlurmctldHost=${nodes[0]}(${addrs[0]})"
    echo "SlurmUser=root"
    echo "SlurmdUser=root"
    echo "AuthType=auth/munge"
    echo "CredType=cred/munge"
    echo "AuthInfo=socket=$dir/munge.sock"
    echo "StateSaveLocation=$dir/state"
    echo "SlurmdSpoolDir=$dir/spool-%n"
    echo "SlurmctldPidFile=$dir/slurmctld.pid"
    echo "SlurmdPidFile=$dir/slurmd-%n.pid"
    echo "SlurmctldLogFile=$dir/slurmctld.log"
    echo "SlurmdLogFile=$dir/slurmd-%n.log"
    echo "SlurmctldPort=$ctld_port"
    echo "SlurmdPort=$slurmd_port"
    echo "FirstJobId=$((1000 + RANDOM % 50000))"
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "JobAcctGatherType=jobacct_gather/none"
    echo "AccountingStorageType=accounting_storage/none"
    echo "SchedulerType=sched/builtin"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_Core"
    echo "SlurmdParameters=config_overrides"
    echo "MpiDefault=none"
    echo "ReturnToService=2"
    for ((k = 0; k < ${#nodes[@]}; k++)); do
        echo "NodeName=${nodes[k]} NodeAddr=${addrs[k]} CPUs=$count State=UNKNOWN"
    done
    echo "PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE"
} >"$dir/slurm.conf"
mkdir -p "$dir/state"
export SLURM_CONF=$dir/slurm.conf

# ---- the daemons ------------------------------------------------------------------
# A daemon that cannot start, or nodes that never come up, say this
# machine cannot run a Slurm cluster (a container without the rights, say):
# a skip with the daemons' logs, not a failure of the program.
show_logs() { tail -n 15 "$dir"/*.log 2>/dev/null; }
in_host 0 slurmctld -f "$SLURM_CONF" || { show_logs; skip "slurmctld did not start here"; }
for ((k = 0; k < ${#nodes[@]}; k++)); do
    in_host "$k" slurmd -f "$SLURM_CONF" -N "${nodes[k]}" ||
        { show_logs; skip "slurmd of ${nodes[k]} did not start here"; }
done
ready=0
for _ in $(seq 1 100); do
    states=$(in_host 0 sinfo -h -N -o %t 2>/dev/null | sort -u | tr '\n' ' ')
    if [ "$states" = "idle " ]; then ready=1; break; fi
    sleep 0.2
done
[ $ready -eq 1 ] || { show_logs; skip "the nodes are not idle after 20 s ($states)"; }

# ---- the step ---------------------------------------------------------------------
spread=()
[ "$hosts" -gt 0 ] && spread=(-N "$hosts")
echo "run_slurm: srun --mpi=$mpi -n $count ${spread[*]} on ${nodes[*]}"
# In the background and waited for, so that a TERM (ctest's timeout) is
# handled at once: the EXIT trap takes the step and the daemons down.
in_host 0 timeout "$limit" srun --mpi="$mpi" -n "$count" "${spread[@]}" --kill-on-bad-exit=0 "$@" &
step=$!
wait "$step"
rc=$?
step=
[ $rc -eq 124 ] && echo "run_slurm: the step did not end within $limit s"
[ $rc -eq 0 ] || [ $rc -eq 77 ] || show_logs
exit $rc
