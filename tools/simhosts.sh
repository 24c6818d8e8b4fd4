#!/usr/bin/env bash
# Simulated cluster hosts on one Linux machine, for multi-host tests.
# Each host is a long-lived holder process in its own network, UTS, IPC and
# mount namespaces (hostname NAME<k>, a private tmpfs on /dev/shm, lo up)
# with one veth link, eth0, on a bridge dcb-NAME in the root namespace.
# Needs root, unshare/nsenter (util-linux) and ip (iproute2); exits 77
# (skip) when namespaces cannot be made.
#
# Usage: tools/simhosts.sh COMMAND ...
#   create NAME N [--delay MS]  hosts NAME0..NAME<N-1> (NAME: [a-z0-9]{1,6},
#                               N: 1..254); --delay adds netem delay on each
#                               eth0 where netem exists (else a warning)
#   exec NAME K -- CMD [ARG...] run CMD in host K (same cwd, environment and
#                               stdio); exits with CMD's status. With
#                               SIMHOSTS_GPUS=G, host K sees GPUs
#                               K*G .. K*G+G-1 of the machine alone
#                               (CUDA_VISIBLE_DEVICES), as a node its own
#   addr NAME K                 print host K's IPv4 address
#   kill NAME K                 crash host K: kill -9 all its processes and
#                               remove its link
#   cut NAME K | mend NAME K    take host K's link down / up again
#   destroy NAME                remove every host, link and the bridge
#                               (idempotent, for traps)
#   selftest                    create two hosts, check them, destroy them
#
# Addresses: host k of NAME is 10.X.Y.<k+1>/16 with h = cksum(NAME),
# X = 200 + h % 44 and Y = (h / 44) % 256: 10.200-10.243, above the
# defaults of common tools (10.0.2 qemu, 10.42/43 k3s, 10.88 podman,
# 10.96 Kubernetes services) and below 10.244 (flannel pods). Each cluster
# has its own bridge and its hosts no route but their /16, so two NAMEs
# that hash alike do not meet, and a real 10.X network is only hidden from
# inside the hosts.
# Interfaces: bridge dcb-NAME; root-side veth end dcv-NAME-K (dcp-NAME-K
# until its peer is moved into the host and renamed eth0).
# State: ${SIMHOSTS_DIR:-/tmp/dcuda-simhosts}/NAME/ (holder pids,
# namespace ids, addresses, logs).
set -euo pipefail

SELF=$(readlink -f "${BASH_SOURCE[0]}")
BASE=${SIMHOSTS_DIR:-/tmp/dcuda-simhosts}
NS_OPTS=(--net --uts --ipc --mount)

die() { echo "simhosts: error: $*" >&2; exit 1; }
warn() { echo "simhosts: warning: $*" >&2; }
skip() { echo "simhosts: skip: $*" >&2; exit 77; }

usage() {
    sed -n '/^# Usage:/,/^#$/s/^# \{0,1\}//p' "$SELF" >&2
    exit 1
}

# ---- names, addresses, state ------------------------------------------------

check_name() {
    [[ $1 =~ ^[a-z0-9]{1,6}$ ]] || die "bad NAME '$1' (want [a-z0-9]{1,6})"
}

state_dir() { echo "$BASE/$1"; }
bridge_of() { echo "dcb-$1"; }
veth_of() { echo "dcv-$1-$2"; }

net_prefix() {
    local h
    h=$(printf '%s' "$1" | cksum)
    h=${h%% *}
    echo "10.$((200 + h % 44)).$((h / 44 % 256))"
}

host_count() {
    local f
    f="$(state_dir "$1")/hosts"
    [ -f "$f" ] || die "no simulated hosts named '$1' (run create first)"
    cat "$f"
}

check_host() {
    local n
    [[ $2 =~ ^[0-9]+$ ]] || die "bad host index '$2'"
    n=$(host_count "$1")
    [ "$2" -lt "$n" ] || die "host $2 out of range: '$1' has $n hosts (0..$((n - 1)))"
}

link_exists() { ip link show dev "$1" >/dev/null 2>&1; }

# Start time of a process (field 22 of /proc/PID/stat), to tell a live
# holder from a recycled pid.
start_time() {
    local s
    s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    s=${s##*) }
    # shellcheck disable=SC2086
    set -- $s
    echo "${20}"
}

# dev:inode of a process's network namespace.
netns_id() { stat -L -c '%d:%i' "/proc/$1/ns/net" 2>/dev/null; }

# Pid of host K's holder, if it is still running.
holder_pid() {
    local d pid
    d=$(state_dir "$1")
    [ -f "$d/$2.pid" ] || return 1
    pid=$(cat "$d/$2.pid")
    [ "$(start_time "$pid" || true)" = "$(cat "$d/$2.start" 2>/dev/null)" ] || return 1
    echo "$pid"
}

# The network namespace of host K, while it can only be that host's: its
# holder runs, or its veth exists (the pair dies with the namespace, so the
# namespace id has not been reused by another one).
host_netns() {
    local d pid
    d=$(state_dir "$1")
    if pid=$(holder_pid "$1" "$2"); then
        netns_id "$pid"
    elif [ -f "$d/$2.netns" ] && link_exists "$(veth_of "$1" "$2")"; then
        cat "$d/$2.netns"
    else
        return 1
    fi
}

# Every pid whose network namespace is $1 (dev:inode).
pids_in_netns() {
    stat -L -c '%d:%i %n' /proc/[0-9]*/ns/net 2>/dev/null |
        awk -v id="$1" '$1 == id { split($2, p, "/"); print p[3] }' || true
}

# Holders of NAME found by their argv[0], for a destroy without state.
stray_holders() {
    local p a
    for p in /proc/[0-9]*; do
        a=""
        { read -r -d '' a <"$p/cmdline"; } 2>/dev/null || true
        if [[ $a =~ ^dcuda-simhosts-holder\ $1\ [0-9]+$ ]]; then
            echo "${p#/proc/}"
        fi
    done
}

# kill -9 everything in a network namespace until nothing is left (5 s).
kill_netns() {
    local id=$1 pids i
    if [ "$id" = "$(netns_id $$)" ]; then
        echo "simhosts: error: refusing to kill the root network namespace" >&2
        return 1
    fi
    for ((i = 0; i < 50; i++)); do
        pids=$(pids_in_netns "$id")
        [ -z "$pids" ] && return 0
        # shellcheck disable=SC2086
        kill -9 $pids 2>/dev/null || true
        sleep 0.1
    done
    echo "simhosts: error: processes survive in network namespace $id:" \
        "$(pids_in_netns "$id" | tr '\n' ' ')" >&2
    return 1
}

# ---- preflight --------------------------------------------------------------

preflight() {
    local c
    [ "$(id -u)" = 0 ] || skip "needs root to make namespaces, veths and bridges"
    for c in unshare nsenter setsid ip stat timeout; do
        command -v "$c" >/dev/null 2>&1 || skip "'$c' not found"
    done
    timeout 10 unshare "${NS_OPTS[@]}" --propagation private --fork true 2>/dev/null ||
        skip "unshare ${NS_OPTS[*]} fails here (no namespace support or not allowed)"
}

# Bridged IPv4 passes iptables' FORWARD chain when br_netfilter is loaded
# (Docker hosts: policy DROP). Let the bridge's own traffic through.
firewall_open() {
    local br
    br=$(bridge_of "$1")
    [ "$(cat /proc/sys/net/bridge/bridge-nf-call-iptables 2>/dev/null || echo 0)" = 1 ] || return 0
    command -v iptables >/dev/null 2>&1 || return 0
    if iptables -w 5 -I FORWARD 1 -i "$br" -o "$br" -j ACCEPT 2>/dev/null; then
        echo 1 >"$(state_dir "$1")/firewall"
    else
        warn "br_netfilter is on and 'iptables -I FORWARD -i $br -o $br -j ACCEPT' failed;" \
            "a DROP policy there would keep the hosts apart"
    fi
}

firewall_close() {
    local br i
    br=$(bridge_of "$1")
    command -v iptables >/dev/null 2>&1 || return 0
    for ((i = 0; i < 20; i++)); do
        iptables -w 5 -C FORWARD -i "$br" -o "$br" -j ACCEPT 2>/dev/null || return 0
        iptables -w 5 -D FORWARD -i "$br" -o "$br" -j ACCEPT 2>/dev/null || return 0
    done
}

# ---- create -----------------------------------------------------------------

# Runs inside the new namespaces: $1 hostname, $2 pid file, $3 argv[0] tag.
# shellcheck disable=SC2016
HOLDER_SCRIPT='set -e
echo "$1" >/proc/sys/kernel/hostname
mount -t tmpfs -o mode=1777,nosuid,nodev simhosts-shm /dev/shm
ip link set lo up
echo $$ >"$2.tmp"
mv "$2.tmp" "$2"
exec -a "$3" sleep infinity'

start_holder() {
    local name=$1 k=$2 d pid i
    d=$(state_dir "$name")
    setsid -f unshare "${NS_OPTS[@]}" --propagation private --fork \
        bash -c "$HOLDER_SCRIPT" simhosts-holder "$name$k" "$d/$k.pid" \
        "dcuda-simhosts-holder $name $k" </dev/null >"$d/$k.log" 2>&1 ||
        die "cannot start host $k (see $d/$k.log)"
    for ((i = 0; i < 100; i++)); do
        [ -s "$d/$k.pid" ] && break
        sleep 0.05
    done
    [ -s "$d/$k.pid" ] || die "host $k did not come up in 5 s: $(tr '\n' ' ' <"$d/$k.log")"
    pid=$(cat "$d/$k.pid")
    start_time "$pid" >"$d/$k.start" || die "host $k's holder (pid $pid) died: $(cat "$d/$k.log")"
    netns_id "$pid" >"$d/$k.netns"
    [ "$(cat "$d/$k.netns")" != "$(netns_id $$)" ] || die "host $k shares the root network namespace"
}

# Wait (5 s) until host K's eth0 has carrier and its bridge port forwards.
wait_link() {
    local name=$1 k=$2 pid=$3 v i l p
    v=$(veth_of "$name" "$k")
    for ((i = 0; i < 100; i++)); do
        l=$(nsenter -t "$pid" --net ip -o link show dev eth0 2>/dev/null || true)
        p=$(ip -d -o link show dev "$v" 2>/dev/null || true)
        if [[ $l == *LOWER_UP* && $p == *"bridge_slave state forwarding"* ]]; then
            return 0
        fi
        sleep 0.05
    done
    die "host $k's link did not come up in 5 s"
}

attach_link() {
    local name=$1 k=$2 v p pid addr
    v=$(veth_of "$name" "$k")
    p="dcp-$name-$k"
    pid=$(holder_pid "$name" "$k") || die "host $k's holder is gone"
    addr="$(net_prefix "$name").$((k + 1))"
    ip link add "$v" type veth peer name "$p" || die "cannot create veth $v"
    ip link set "$p" netns "$pid" || die "cannot move $p into host $k"
    nsenter -t "$pid" --net ip link set dev "$p" name eth0 || die "cannot rename $p to eth0"
    nsenter -t "$pid" --net ip addr add "$addr/16" dev eth0 || die "cannot set $addr on host $k"
    nsenter -t "$pid" --net ip link set dev eth0 up || die "cannot bring up host $k's eth0"
    ip link set dev "$v" master "$(bridge_of "$name")" || die "cannot attach $v to the bridge"
    ip link set dev "$v" up || die "cannot bring up $v"
    echo "$addr" >"$(state_dir "$name")/$k.addr"
    wait_link "$name" "$k" "$pid"
}

# netem delay on host K's eth0; returns 1 when netem is not available.
add_delay() {
    local pid
    pid=$(holder_pid "$1" "$2") || return 1
    command -v tc >/dev/null 2>&1 || return 1
    nsenter -t "$pid" --net tc qdisc add dev eth0 root netem delay "${3}ms" 2>/dev/null
}

create_rollback() {
    local rc=$?
    [ "$rc" = 0 ] && return 0
    echo "simhosts: create $1 failed; removing what was made" >&2
    destroy_cluster "$1" || true
    exit "$rc"
}

cmd_create() {
    local name n delay="" d k
    [ $# -ge 2 ] || usage
    name=$1 n=$2
    shift 2
    while [ $# -gt 0 ]; do
        case $1 in
            --delay) [ $# -ge 2 ] || die "--delay needs MS"; delay=$2; shift 2 ;;
            --delay=*) delay=${1#--delay=}; shift ;;
            *) die "unknown option '$1' for create" ;;
        esac
    done
    check_name "$name"
    if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -lt 1 ] || [ "$n" -gt 254 ]; then
        die "bad host count '$n' (want 1..254)"
    fi
    [ -z "$delay" ] || [[ $delay =~ ^[0-9]+$ ]] || die "bad --delay '$delay' (want whole milliseconds)"
    preflight
    d=$(state_dir "$name")
    [[ $d/ != /dev/shm/* ]] || die "SIMHOSTS_DIR must not be under /dev/shm"
    if link_exists "$(bridge_of "$name")"; then
        die "bridge $(bridge_of "$name") exists already (left over? run: $0 destroy $name)"
    fi
    mkdir -p "$BASE"
    mkdir "$d" 2>/dev/null || die "'$name' exists already ($d); run: $0 destroy $name"
    # NAME is checked ([a-z0-9]): expand it now.
    # shellcheck disable=SC2064
    trap "create_rollback $name" EXIT
    echo "$n" >"$d/hosts"
    ip link add name "$(bridge_of "$name")" type bridge 2>"$d/bridge.log" ||
        skip "cannot create a bridge: $(cat "$d/bridge.log")"
    ip link set dev "$(bridge_of "$name")" up || die "cannot bring up $(bridge_of "$name")"
    firewall_open "$name"
    for ((k = 0; k < n; k++)); do
        start_holder "$name" "$k"
        attach_link "$name" "$k"
        if [ -n "$delay" ] && [ "$delay" != 0 ]; then
            if add_delay "$name" "$k" "$delay"; then
                echo "$delay" >"$d/delay"
            else
                warn "netem is not available here (tc qdisc ... netem failed); going on without --delay $delay"
                delay=""
            fi
        fi
    done
    trap - EXIT
    for ((k = 0; k < n; k++)); do
        echo "$name$k $(cat "$d/$k.addr")"
    done
}

# ---- exec, addr, cut, mend, kill, destroy -------------------------------------

# host_gpus K: with SIMHOSTS_GPUS=G, the GPUs of host K (K*G ..
# K*G+G-1) in CUDA_VISIBLE_DEVICES.
host_gpus() {
    local g=${SIMHOSTS_GPUS:-}
    [ -n "$g" ] || return 0
    [[ $g =~ ^[1-9][0-9]*$ ]] || die "SIMHOSTS_GPUS=$g is not a count of GPUs a host"
    CUDA_VISIBLE_DEVICES=$(seq -s, $(($1 * g)) $(($1 * g + g - 1)))
    export CUDA_VISIBLE_DEVICES
}

cmd_exec() {
    local name=${1:-} k=${2:-} pid
    [ $# -ge 3 ] || usage
    shift 2
    [ "$1" != -- ] || shift
    [ $# -ge 1 ] || die "exec needs a command"
    check_name "$name"
    check_host "$name" "$k"
    pid=$(holder_pid "$name" "$k") || die "host $k of '$name' is not running (killed?)"
    host_gpus "$k"
    # Entering a mount namespace moves to its root: cd back inside. bash,
    # not sh: dash drops environment variables whose names are not
    # identifiers (OMPI_MCA_a.b=...).
    # shellcheck disable=SC2016
    exec nsenter -t "$pid" "${NS_OPTS[@]}" -- "$BASH" -c \
        'cd "$1" 2>/dev/null || { echo "simhosts: error: no directory $1 in the host" >&2; exit 125; }
        shift; exec "$@"' simhosts-exec "$PWD" "$@"
}

cmd_addr() {
    [ $# -eq 2 ] || usage
    check_name "$1"
    check_host "$1" "$2"
    cat "$(state_dir "$1")/$2.addr"
}

cmd_link() {
    local updown=$1 v
    shift
    [ $# -eq 2 ] || usage
    check_name "$1"
    check_host "$1" "$2"
    v=$(veth_of "$1" "$2")
    link_exists "$v" || die "host $2 of '$1' has no link (killed?)"
    ip link set dev "$v" "$updown" || die "cannot set $v $updown"
}

# Crash host K: isolate it, kill -9 everything in its namespaces, drop its veth.
host_down() {
    local name=$1 k=$2 d v id rc=0
    d=$(state_dir "$name")
    v=$(veth_of "$name" "$k")
    id=$(host_netns "$name" "$k" || true)
    ip link set dev "$v" down 2>/dev/null || true
    if [ -n "$id" ]; then
        kill_netns "$id" || rc=1
    fi
    ip link del dev "$v" 2>/dev/null || true
    rm -f "$d/$k.pid" "$d/$k.start"
    return "$rc"
}

cmd_kill() {
    [ $# -eq 2 ] || usage
    check_name "$1"
    check_host "$1" "$2"
    host_down "$1" "$2"
}

destroy_cluster() {
    local name=$1 d n=0 k p id v rc=0
    d=$(state_dir "$name")
    [ -f "$d/hosts" ] && n=$(cat "$d/hosts")
    for ((k = 0; k < n; k++)); do
        host_down "$name" "$k" || rc=1
    done
    for p in $(stray_holders "$name"); do
        id=$(netns_id "$p" || true)
        [ -z "$id" ] || kill_netns "$id" || rc=1
    done
    for v in $(ip -o link show 2>/dev/null | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' |
        grep -E "^dc[vp]-$name-[0-9]+$" || true); do
        ip link del dev "$v" 2>/dev/null || true
    done
    if link_exists "$(bridge_of "$name")"; then
        ip link del dev "$(bridge_of "$name")" || rc=1
    fi
    firewall_close "$name"
    rm -rf "$d"
    return "$rc"
}

cmd_destroy() {
    [ $# -eq 1 ] || usage
    check_name "$1"
    destroy_cluster "$1" || die "destroy $1 left something behind (see above)"
}

# ---- selftest ---------------------------------------------------------------

ST_FAILS=0
ST_NAME=""
ST_PORT=7777
ST_BG=()

st_check() {
    local what=$1
    shift
    if "$@"; then
        echo "simhosts selftest: ok   $what"
    else
        echo "simhosts selftest: FAIL $what"
        ST_FAILS=$((ST_FAILS + 1))
    fi
}

st_x() { timeout 20 "$SELF" exec "$ST_NAME" "$@"; }
st_bg() {
    timeout 150 "$SELF" exec "$ST_NAME" "$@" >/dev/null 2>&1 &
    ST_BG+=("$!")
    disown "$!"
}

base36() {
    local n=$1 digits=0123456789abcdefghijklmnopqrstuvwxyz s=""
    while :; do
        s=${digits:n % 36:1}$s
        n=$((n / 36))
        [ "$n" -gt 0 ] || break
    done
    echo "$s"
}

# Can host $1 reach host $2 within $3 s? ping, else a TCP connect to the
# listener that st_listen started in host $2.
st_reach() {
    local to
    to=$("$SELF" addr "$ST_NAME" "$2") || return 1
    if command -v ping >/dev/null 2>&1; then
        st_x "$1" -- ping -c 1 -W "$3" -q "$to" >/dev/null 2>&1
    else
        # shellcheck disable=SC2016
        st_x "$1" -- timeout "$3" bash -c 'exec 3<>"/dev/tcp/$1/$2"' reach "$to" "$ST_PORT" \
            >/dev/null 2>&1
    fi
}

# Retry st_reach for up to $3 s (a link that has just come up).
st_reach_soon() {
    local i
    for ((i = 0; i < $3; i++)); do
        st_reach "$1" "$2" 1 && return 0
    done
    return 1
}

# Something besides the holder in host $1: a listener (for st_reach without
# ping), bounded to 120 s.
st_listen() {
    local k=$1 i
    if command -v python3 >/dev/null 2>&1; then
        st_bg "$k" -- timeout 120 python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1]))); s.listen(16)
while True: s.accept()[0].close()' "$ST_PORT"
    elif command -v perl >/dev/null 2>&1; then
        # shellcheck disable=SC2016
        st_bg "$k" -- timeout 120 perl -MIO::Socket::INET -e '
$s = IO::Socket::INET->new(LocalPort => $ARGV[0], Listen => 16, ReuseAddr => 1) or die;
while (my $c = $s->accept) { close $c }' "$ST_PORT"
    elif command -v ping >/dev/null 2>&1; then
        st_bg "$k" -- sleep 120
        return 0
    else
        echo "simhosts selftest: neither ping nor python3/perl (for a listener) here" >&2
        return 1
    fi
    for ((i = 0; i < 50; i++)); do
        # shellcheck disable=SC2016
        st_x "$k" -- timeout 1 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' l "$ST_PORT" \
            >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    return 1
}

st_listen_all() { st_listen 0 && st_listen 1; }

st_hostnames() {
    local h0 h1
    h0=$(st_x 0 -- cat /proc/sys/kernel/hostname) || return 1
    h1=$(st_x 1 -- cat /proc/sys/kernel/hostname) || return 1
    echo "  host 0: $h0, host 1: $h1, here: $(cat /proc/sys/kernel/hostname)"
    [ "$h0" = "${ST_NAME}0" ] && [ "$h1" = "${ST_NAME}1" ]
}

st_ipc() {
    local a b c
    a=$(st_x 0 -- readlink /proc/self/ns/ipc) || return 1
    b=$(st_x 0 -- readlink /proc/self/ns/ipc) || return 1
    c=$(st_x 1 -- readlink /proc/self/ns/ipc) || return 1
    [ "$a" = "$b" ] && [ "$a" != "$c" ] && [ "$a" != "$(readlink /proc/self/ns/ipc)" ]
}

st_shm() {
    local f=/dev/shm/dcuda-simhosts-selftest-$ST_NAME
    [ ! -e "$f" ] || return 1
    # shellcheck disable=SC2016
    st_x 0 -- sh -c 'echo shared >"$1"' w "$f" || return 1
    [ "$(st_x 0 -- cat "$f")" = shared ] && ! st_x 1 -- test -e "$f" && [ ! -e "$f" ]
}

st_exec_context() {
    local rc=0
    [ "$(st_x 0 -- sh -c pwd)" = "$PWD" ] || { echo "  cwd differs"; return 1; }
    [ "$(env SIMHOSTS_SELFTEST.VAR=v42 timeout 20 "$SELF" exec "$ST_NAME" 0 -- \
        printenv SIMHOSTS_SELFTEST.VAR)" = v42 ] || { echo "  environment lost"; return 1; }
    [ "$(echo in-out | st_x 0 -- cat)" = in-out ] || { echo "  stdin/stdout lost"; return 1; }
    st_x 0 -- sh -c 'exit 7' || rc=$?
    [ "$rc" = 7 ] || { echo "  exit status $rc, want 7"; return 1; }
}

st_cut_isolates() {
    "$SELF" cut "$ST_NAME" 1 || return 1
    ! st_reach 0 1 2
}

st_mend_restores() {
    "$SELF" mend "$ST_NAME" 1 || return 1
    st_reach_soon 0 1 5
}

# No process left in network namespace $1, holder $2 not running.
st_gone() {
    local left st
    left=$(pids_in_netns "$1")
    [ -z "$left" ] || { echo "  left in the namespace: ${left//$'\n'/ }"; return 1; }
    st=$(cat "/proc/$2/stat" 2>/dev/null || true)
    st=${st##*) }
    [ -z "$st" ] || [ "${st:0:1}" = Z ] || { echo "  holder $2 runs: $st"; return 1; }
}

st_kill() {
    local id pid
    id=$(host_netns "$ST_NAME" 1) || return 1
    pid=$(holder_pid "$ST_NAME" 1) || return 1
    echo "  host 1: holder $pid, $(pids_in_netns "$id" | wc -l) processes"
    "$SELF" kill "$ST_NAME" 1 || return 1
    st_gone "$id" "$pid" || return 1
    ! link_exists "$(veth_of "$ST_NAME" 1)" || { echo "  veth left"; return 1; }
    ! st_x 1 -- true 2>/dev/null || { echo "  exec into host 1 still works"; return 1; }
    ! st_reach 0 1 2 || { echo "  host 0 still reaches host 1"; return 1; }
}

st_destroy() {
    local id pid d
    d=$(state_dir "$ST_NAME")
    id=$(host_netns "$ST_NAME" 0) || return 1
    pid=$(holder_pid "$ST_NAME" 0) || return 1
    "$SELF" destroy "$ST_NAME" || return 1
    "$SELF" destroy "$ST_NAME" || { echo "  a second destroy failed"; return 1; }
    st_gone "$id" "$pid" || return 1
    [ -z "$(stray_holders "$ST_NAME")" ] || { echo "  a holder is left"; return 1; }
    [ ! -e "$d" ] || { echo "  state $d is left"; return 1; }
    ! link_exists "$(bridge_of "$ST_NAME")" || { echo "  bridge is left"; return 1; }
    ! ip -o link show | grep -q -- "-$ST_NAME-" || { echo "  a veth is left"; return 1; }
}

st_cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    if [ -n "$ST_NAME" ]; then
        destroy_cluster "$ST_NAME" >/dev/null 2>&1 || true
    fi
    rm -f "/dev/shm/dcuda-simhosts-selftest-$ST_NAME"
    if [ ${#ST_BG[@]} -gt 0 ]; then
        kill -9 "${ST_BG[@]}" 2>/dev/null || true
    fi
    exit "$rc"
}

cmd_selftest() {
    [ $# -eq 0 ] || usage
    preflight
    ST_NAME=s$(base36 $$)
    trap st_cleanup EXIT
    trap 'exit 1' INT TERM
    echo "simhosts selftest: hosts ${ST_NAME}0 and ${ST_NAME}1 on $(bridge_of "$ST_NAME")," \
        "$(net_prefix "$ST_NAME").0/16"
    local rc=0
    timeout 60 "$SELF" create "$ST_NAME" 2 >/dev/null || rc=$?
    [ "$rc" != 77 ] || exit 77
    st_check "create $ST_NAME 2" test "$rc" = 0
    [ "$rc" = 0 ] || exit 1
    st_check "hostnames are ${ST_NAME}0 and ${ST_NAME}1" st_hostnames
    st_check "IPC namespace shared by one host's execs, not across hosts" st_ipc
    st_check "/dev/shm file of host 0 seen by another exec there, not by host 1 or here" st_shm
    st_check "exec keeps cwd, environment, stdin/stdout and exit status" st_exec_context
    st_check "a listener (a process besides the holder) runs in each host" st_listen_all
    st_check "host 0 reaches host 1 ($("$SELF" addr "$ST_NAME" 1))" st_reach_soon 0 1 5
    st_check "host 1 reaches host 0 ($("$SELF" addr "$ST_NAME" 0))" st_reach_soon 1 0 5
    st_check "after cut, host 0 cannot reach host 1 (2 s)" st_cut_isolates
    st_check "after mend, host 0 reaches host 1 again" st_mend_restores
    st_check "kill removes host 1's processes, holder and link" st_kill
    st_check "destroy leaves no bridge, veth, holder or state (twice)" st_destroy
    if [ "$ST_FAILS" -gt 0 ]; then
        echo "simhosts selftest: FAILED ($ST_FAILS checks)"
        exit 1
    fi
    echo "simhosts selftest: PASSED"
}

# ---- main -------------------------------------------------------------------

main() {
    [ $# -ge 1 ] || usage
    local cmd=$1
    shift
    case $cmd in
        create) cmd_create "$@" ;;
        exec) cmd_exec "$@" ;;
        addr) cmd_addr "$@" ;;
        kill) cmd_kill "$@" ;;
        cut) cmd_link down "$@" ;;
        mend) cmd_link up "$@" ;;
        destroy) cmd_destroy "$@" ;;
        selftest) cmd_selftest "$@" ;;
        -h | --help | help) usage ;;
        *) echo "simhosts: error: unknown command '$cmd'" >&2; usage ;;
    esac
}

main "$@"
