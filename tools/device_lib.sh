# shellcheck shell=bash
# Helpers of tools/device.sh, which sources this file (it is no program of
# its own): the machine's environment, a subcommand's log folder and its
# archive, the build, and the runs that several subcommands share.

# ---- command line ------------------------------------------------------------

# usage, help_of, bad and plan read the header of device.sh (SELF).
usage() { sed -n '/^# Usage:/,/^#$/s/^# \{0,1\}//p' "$SELF"; }
# help_of NAME: the paragraph of the header that describes NAME.
help_of() { sed -n "/^# $1[ :]/,/^#\$/s/^# \{0,1\}//p" "$SELF"; }
# bad WHY: a wrong argument: says why and the subcommand's usage line; exit 2.
bad() {
    echo "device.sh $NAME: $*" >&2
    sed -n "s/^#   \($NAME\( [^ ][^ ]*\)*\)  .*/usage: tools\/device.sh \1/p" "$SELF" >&2
    exit 2
}
# plan WHAT: under -n, says what the subcommand would run and ends.
plan() {
    [ -n "$DRY" ] || return 0
    echo "device.sh $NAME: $*"
    exit 0
}
# abspath PATH: PATH as given on the command line (relative to where the
# script was started), absolute.
abspath() { case $1 in /*) echo "$1" ;; *) echo "$HERE/$1" ;; esac; }
# base_dir DIR: the base tree of ab and coll, absolute; another tree than this.
base_dir() {
    local d
    d=$(cd "$(abspath "$1")" 2>/dev/null && pwd) || bad "no folder $1"
    [ "$d" != "$ROOT" ] || bad "BASE_DIR is this tree: give a copy of the base commit"
    echo "$d"
}
# if_file PATH: PATH where that file exists (an optional argument).
if_file() { if [ -f "$1" ]; then echo "$1"; fi; }

# ---- environment -------------------------------------------------------------

# nvcc on PATH (CUDA_HOME's or CUDA's usual place when it is not there
# yet), NVLink SHARP kept off for NVSHMEM (a machine's GPUs may be
# shared with others: NVSHMEM_DISABLE_NVLS=1 for every program started here), the
# cores, and mpirun (--allow-run-as-root as root).
dev_env() {
    local d
    if ! command -v nvcc >/dev/null 2>&1; then
        for d in ${CUDA_HOME:+"$CUDA_HOME"} /usr/local/cuda; do
            if [ -x "$d/bin/nvcc" ]; then
                PATH=$d/bin:$PATH
                break
            fi
        done
    fi
    export PATH NVSHMEM_DISABLE_NVLS=1
    JOBS=$(nproc)
    MPIRUN=(mpirun)
    if [ "$(id -u)" = 0 ]; then MPIRUN+=(--allow-run-as-root); fi
}

# ---- logs ------------------------------------------------------------------------

# dev_logs NAME: a subcommand's logs go to $OUT/NAME/ (LOG), emptied first;
# OUT defaults to build-device/ (ignored by git). Sets the environment,
# GPUS (from nvidia-smi -L, kept in gpus.txt) and the clock of say.
dev_logs() {
    NAME=$1
    OUT=${OUT:-$ROOT/build-device}
    mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 1
    LOG=$OUT/$NAME
    rm -rf "$LOG" "$OUT/$NAME-logs.tgz"
    mkdir -p "$LOG"
    T0=$(date +%s)
    dev_env
    nvidia-smi -L >"$LOG/gpus.txt" 2>&1
    GPUS=$(grep -c '^GPU ' "$LOG/gpus.txt")
}

# say WHAT: a step's heading, with the seconds since the subcommand began.
say() { echo "== $* ($(($(date +%s) - T0)) s)"; }

# finish FILE...: few files come back from the machine, so the whole
# log folder travels as $OUT/NAME-logs.tgz, and only the files named stay
# in $OUT/NAME/ beside it.
finish() {
    local f keep=" $* "
    tar czf "$OUT/$NAME-logs.tgz" -C "$OUT" "$NAME" 2>/dev/null
    for f in "$LOG"/*; do
        case $keep in *" ${f##*/} "*) ;; *) rm -rf "$f" ;; esac
    done
}

# ---- build -----------------------------------------------------------------------

# build SRC BIN TAG [TARGET...]: configures the tree SRC into BIN for sm_90
# with warnings as errors (and the options in the array CMAKE_EXTRA), then
# builds the targets (all when none is named) on BUILD_JOBS cores (all of
# them unless set), logging to $LOG/build-TAG.log; incremental, so a later
# subcommand in the same call builds only what changed. On failure prints
# the log's end and returns 1.
build() {
    local src=$1 bin=$2 tag=$3
    shift 3
    if [ $# -gt 0 ]; then set -- --target "$@"; fi
    if { cmake -S "$src" -B "$bin" -DDCUDA_WERROR=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
        ${CMAKE_EXTRA[@]+"${CMAKE_EXTRA[@]}"} &&
        cmake --build "$bin" -j "${BUILD_JOBS:-$JOBS}" "$@"; } >"$LOG/build-$tag.log" 2>&1; then
        return 0
    fi
    echo "build of $src into $bin failed; the end of build-$tag.log:"
    tail -30 "$LOG/build-$tag.log"
    return 1
}

# build_pair BASE TARGET...: BASE's tree (dcuda_bench, into BASE/build-gpu)
# and this one (the targets, into build-gpu) at once, half the cores each;
# into PAIR_DIR instead of build-gpu where it is set.
build_pair() {
    local base=$1 dir=${PAIR_DIR:-build-gpu} pid rc=0
    shift
    BUILD_JOBS=$((JOBS > 1 ? JOBS / 2 : 1))
    build "$base" "$base/$dir" base dcuda_bench &
    pid=$!
    build . "$dir" new "$@" || rc=1
    wait "$pid" || rc=1
    unset BUILD_JOBS
    return $rc
}

# ---- runs that subcommands share --------------------------------------------

# anchors: where a copy of the shared anchors lies in ./anchors (untracked),
# their floors (LOG/floors.txt, log floors.log) and with 2+ GPUs NVSHMEM's
# figures (nvshmem.txt); the floors' failure returns 1, NVSHMEM's (it
# needs NVSHMEM from pip and Open MPI; a machine without them is not our
# failure) is only said.
anchors() {
    [ -f anchors/run.sh ] || return 0
    local rc=0
    OUT="$LOG" bash anchors/run.sh floors >"$LOG/floors.log" 2>&1 || rc=1
    if [ "$GPUS" -ge 2 ]; then
        say "NVSHMEM anchor"
        OUT="$LOG" bash anchors/run.sh nvshmem >"$LOG/nvshmem.log" 2>&1 ||
            { echo "nvshmem anchor failed:"; tail -5 "$LOG/nvshmem.log"; }
    fi
    return $rc
}

# bench_rounds BASE ROUNDS [--tag T] [ARG...]: dcuda_bench ARG... (say
# --quick) of BASE's build and of this tree's, alternating, ROUNDS times
# (one process a GPU where there are several): LOG/baseT-R.csv, newT-R.csv
# and their text. Returns 1 when a run of this tree's failed.
bench_rounds() {
    local base=$1 rounds=$2 tag= r who dir rc=0
    shift 2
    if [ "${1:-}" = --tag ]; then
        tag=$2
        shift 2
    fi
    for r in $(seq 1 "$rounds"); do
        for who in base new; do
            dir=$base
            [ $who = new ] && dir=.
            if ! "$dir/build-gpu/bench/dcuda_bench" "$@" --csv="$LOG/$who$tag-$r.csv" \
                >"$LOG/$who$tag-$r.txt" 2>&1; then
                echo "bench $who$tag round $r failed (see $who$tag-$r.txt)"
                [ $who = new ] && rc=1
            fi
        done
    done
    return $rc
}

# pushed_rounds BASE_DIR: the pushed collectives' rows (dcuda_bench
# --collectives -m 8:1024 of 2 and of 4 ranks on one GPU), base and new
# alternating, two rounds: LOG/{base,new}-r{2,4}-{1,2}.csv.
pushed_rounds() {
    local n rc=0
    for n in 2 4; do
        bench_rounds "$1" 2 --tag "-r$n" --collectives --ranks "$n" -m 8:1024 || rc=1
    done
    return $rc
}

# The probe programs of bench/ that tools/device.sh probes runs.
PROBES="latency launch queue staging mpi"

# probe NAME: build-gpu's dcuda_probe_NAME (mpi: under mpirun -np 2), its
# output in LOG/probe-NAME.txt and printed. A probe that is not built (mpi
# without MPI) is said, not failed.
probe() {
    local exe=build-gpu/bench/dcuda_probe_$1 out=$LOG/probe-$1.txt rc
    if [ ! -x "$exe" ]; then
        echo "probe $1: $exe not built (no CUDA, or for mpi no MPI, when configured)" | tee "$out"
        return 0
    fi
    if [ "$1" = mpi ]; then
        timeout 120 "${MPIRUN[@]}" -np 2 "$exe" >"$out" 2>&1
    else
        timeout 120 "$exe" >"$out" 2>&1
    fi
    rc=$?
    cat "$out"
    [ $rc -eq 0 ] || echo "probe $1 failed (exit $rc)"
    return $rc
}

# sanitize_cases BUILD: GPU test cases under compute-sanitizer memcheck and
# racecheck (few ranks, one process, so the checkers stay fast), then the
# randomized model under memcheck; a line a run, a count last. A subshell:
# its settings stay in it.
sanitize_cases() (
    local b=$1 tool c fail=0 runs=0
    local sem="visibility order tags many wrap overlap flush barrier size0 windows user ack"
    sem+=" notify_release tiny stale burst"
    local mis="rank tag count bounds overflow source win_comm overlap not_init comm win timer"
    local end="first_error every_error early_return watch_counts"
    local int="shared async register"
    local dl="wrong_tag missing_barrier slow"
    export DCUDA_BACKEND=cuda DCUDA_RANKS=4 DCUDA_WATCHDOG_CANCEL=1 DCUDA_PROCESSES=1
    # san TOOL EXE CASE [ARG...]: misuse cases end with a failing status by
    # design, so only the checker's verdict counts (the model: its status too).
    san() {
        local out rc summary strict=
        runs=$((runs + 1))
        [ $# -gt 3 ] && strict=1
        out=$(timeout 300 compute-sanitizer --tool "$1" --error-exitcode 99 "$2" "${@:3}" 2>&1)
        rc=$?
        summary=$(printf '%s\n' "$out" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY" | tail -1)
        if [ $rc -eq 99 ] || [ $rc -eq 124 ] || { [ -n "$strict" ] && [ $rc -ne 0 ]; } ||
            ! printf '%s' "$summary" | grep -q " 0 "; then
            fail=$((fail + 1))
            echo "FAIL $1 $(basename "$2") $3 (rc $rc): $summary"
            printf '%s\n' "$out" | tail -20
        else
            echo "ok   $1 $(basename "$2") $3: $summary"
        fi
    }
    for tool in memcheck racecheck; do
        for c in $sem; do san $tool "$b/tests/dcuda_test_semantics" "$c"; done
        for c in $mis; do san $tool "$b/tests/dcuda_test_misuse" "$c"; done
        for c in $end; do san $tool "$b/tests/dcuda_test_endings" "$c"; done
        for c in $int; do san $tool "$b/tests/dcuda_test_integration" "$c"; done
        for c in $dl; do san $tool "$b/tests/dcuda_test_deadlock" "$c"; done
    done
    # The randomized model (its checks are many threads' reads): memcheck
    # only, one seed, fewer steps.
    for c in model large; do san memcheck "$b/tests/dcuda_test_model" "$c" 1 1 12; done
    echo "compute-sanitizer: $((runs - fail)) clean, $fail with findings, of $runs runs"
    [ $fail -eq 0 ]
)

# ucx_env: UCX for a machine that has none: the Debian packages carried in
# .deps (libucx0, libucx-dev and what they need; apt-get download them
# there first) unpacked into .deps/root, with pkg-config files that point
# there; the machine's own UCX when no package is carried. Sets PKGCONF.
ucx_env() {
    local debs=(.deps/*.deb) root=$ROOT/.deps/root lib pc f
    if [ ! -e "${debs[0]}" ]; then
        if pkg-config --exists ucx 2>/dev/null; then
            echo "ucx: no .deps/*.deb: this machine's UCX $(pkg-config --modversion ucx)"
            PKGCONF=$(command -v pkg-config)
            return 0
        fi
        echo "ucx: no .deps/*.deb and no UCX here (apt-get download libucx0 libucx-dev ... into .deps)"
        return 1
    fi
    rm -rf "$root" && mkdir -p "$root/pc"
    for f in "${debs[@]}"; do dpkg -x "$f" "$root" || return 1; done
    lib=$root/usr/lib/x86_64-linux-gnu
    for pc in "$lib"/pkgconfig/ucx*.pc; do
        sed "s|^prefix = /usr|prefix = $root/usr|" "$pc" >"$root/pc/$(basename "$pc")"
    done
    export PKG_CONFIG_PATH=$root/pc LD_LIBRARY_PATH=$lib:${LD_LIBRARY_PATH:-} UCX_MODULE_DIR=$lib/ucx
    PKGCONF=$(command -v pkg-config || echo "$root/usr/bin/pkgconf")
}
