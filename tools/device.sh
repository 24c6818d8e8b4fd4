#!/usr/bin/env bash
# dcuda on a GPU machine, in one call: builds for sm_90 (warnings as
# errors) into an ignored build folder, runs what a subcommand names, writes
# its logs under $OUT and prints a short table last. Helpers: device_lib.sh.
#
# Usage: tools/device.sh [-n] SUBCOMMAND [ARG...]
#   run [quick] [sanitize] [onegpu] [nocpu] [notests] [nobench]
#                                   build, suites, demo, bench, references
#   ab BASE_DIR [ROUNDS] [quick]    dcuda_bench of a base tree against this one, alternating
#   coll BASE_DIR [quick|pushed]    collective suites, references and the A/B of dcuda_bench
#   net [suites] [bench] [trace]    GPU ranks on the network path (proxies and MPI)
#   ucx                             the UCX network manager, from carried packages if need be
#   sanitize [BUILD_DIR]            GPU test cases under compute-sanitizer memcheck, racecheck
#   installed [BUILD_DIR] [PREFIX]  the out-of-tree example against an installed dcuda
#   probes [NAME...]                the probe programs of bench/ (latency launch queue staging mpi)
#   ncu [BASE_DIR] [LAUNCH...]      ncu of the pushed rows, counts by source line, against a base
#   cases [hosts] [ROUNDS] [CASE,...]  the case studies beside their baselines
#   help [SUBCOMMAND]               this list, or what one subcommand does
#
# -n checks the arguments and says what would run, running nothing (no GPU
# needed). Logs: $OUT/SUBCOMMAND/, archived as $OUT/SUBCOMMAND-logs.tgz with
# a few files kept beside it (OUT defaults to build-device/). Every
# program runs with NVSHMEM_DISABLE_NVLS=1; nvcc is looked for in
# CUDA_HOME and /usr/local/cuda when it is not on PATH.
#
# run: builds build-gpu (everything and the reference programs), prints the
# bench kernels' registers, spills and sizes (tools/spills.py; a kernel over its
# budget fails the run), runs the GPU suite, the CPU suite and the demo on
# the GPU; then dcuda_bench (one process per GPU with 2+ GPUs: its peer_*
# rows), the reference programs (tools/references.sh), a copy of the shared
# anchors in ./anchors where present (floors, and NVSHMEM with 2+ GPUs),
# the latency probe, and tools/bench_compare.py's table last.
#   quick     shorter benchmark runs
#   sanitize  also the sanitize subcommand's cases (several minutes)
#   onegpu    with 2+ GPUs, also the GPU suite on GPU 0 alone
#   nocpu     not the CPU suite (CI runs it on every landing)
#   notests   no suite and no demo: build (incremental) and benchmark, as a
#             second call on a warm machine after one with nobench
#   nobench   build, tests and demo only (ab compares builds)
#
# ab BASE_DIR [ROUNDS] [quick]: builds dcuda_bench from the tree BASE_DIR (a
# copy of another commit) and from this one at once, runs the anchors'
# floors (and NVSHMEM's with 2+ GPUs) where ./anchors is present, then the
# two benchmarks alternately ROUNDS times (2), and prints each row's
# medians, ratio and spread (tools/bench_ab.py).
#
# coll BASE_DIR [quick|pushed]: builds this tree's collective, mismatch,
# misuse and communicator suites, dcuda_bench and the reference programs,
# and the base's dcuda_bench, at once; runs the GPU entries whose names
# hold coll, mismatch or comms (the misuse suite's collective cases among
# them), the references (NVSHMEM one PE a GPU, up to 4), both benchmarks
# (one process a GPU), and prints the A/B of the collective and runtime
# rows and the collectives beside NVSHMEM's. pushed: instead of the whole
# benchmark, the pushed collectives' rows, `dcuda_bench --collectives -m
# 8:1024` of 2 and of 4 ranks on one GPU, base and new alternating, two
# rounds each.
#
# net [suites] [bench] [trace]: GPU ranks on the network path
# (DCUDA_NET_FORCE=1; default: suites bench).
#   suites  the GPU suites' loopback entries (ctest -L loop: every WORLD put,
#           notification and barrier through the proxies and MPI, one GPU);
#           the demo under mpirun -np 2 (two GPUs)
#   bench   the benchmark's peer rows under mpirun -np 2 (then remote:
#           both proxies and MPI; NET_BENCH_S bounds it, 300 s), the staging
#           and MPI probes
#   trace   the latency rows again from a build that timestamps the
#           proxies' hops (DCUDA_PROXY_TRACE, build-gpu-trace), and the
#           hops (tools/trace_hops.py)
#
# ucx: the UCX network manager: unpacks the Debian packages carried in
# .deps (libucx0, libucx-dev and what they need; apt-get download them
# there first) into .deps/root, or takes the machine's UCX when none are
# carried, builds build-gpu-ucx against it, runs the network-path
# semantics cases and the benchmark's peer rows with DCUDA_NET=ucx under
# mpirun -np 2 (network path forced), and the transport UCX chose.
#
# sanitize [BUILD_DIR]: GPU test cases (semantics, misuse, endings,
# integration, deadlock) under compute-sanitizer memcheck and racecheck,
# with few ranks and one process so the checkers stay fast, and the
# randomized model under memcheck; BUILD_DIR (build-gpu) is built first.
#
# installed [BUILD_DIR] [PREFIX]: builds BUILD_DIR (build-gpu), installs it
# into PREFIX (BUILD_DIR-prefix), builds examples/installed against it as a
# project of its own (CMake, find_package; in BUILD_DIR-installed) and runs
# its ring on GPU ranks.
#
# probes [NAME...]: the probe programs of bench/, each once, output in
# $OUT/probes/probe-NAME.txt (default: all):
#   latency  where a same-GPU notification's and notified put's time goes
#   launch   what a plain ping-pong pays for each thing a dcuda kernel adds
#   queue    a GPU rank's ways of receiving and answering on the remote path,
#            against a host thread playing the proxy
#   staging  pinned copy bandwidth and ways to hand a kernel a small message
#   mpi      the proxies' hop through MPI alone, and the 1 MiB stream
#            (mpirun -np 2)
#
# ncu [BASE_DIR] [LAUNCH...]: ncu (SourceCounters, WarpStateStats) of
# `dcuda_bench --collectives --ranks 2 -m 8:8` (1,001 timed rounds a
# collective row), launch LAUNCH of its runtime kernel each (default 6
# 10: the pushed allreduce's and broadcast's latency rows), from a
# -lineinfo build into build-gpu-ncu (and BASE_DIR's into
# BASE_DIR/build-gpu-ncu, at once, profiled alike); the runtime kernel's
# SASS with its line info (cuobjdump, nvdisasm) maps every export's
# counts to the lines of coll_push.h, elsewhere to the benchmark's line
# that called the code (tools/sass_diff.py --map), this tree's beside
# the base's: lines-LAUNCH.txt; the exports travel in the archive (a
# few MB each: name few launches).
#
# cases [hosts] [ROUNDS] [CASE,...]: builds build-gpu and runs
# tools/case_studies.py on every GPU (one process a GPU; ROUNDS rounds, 2
# by default; the cases named, else all four), writing cases.csv and the
# table; with hosts, each process in a simulated host of its own with one
# GPU (tools/simhosts.sh), dcuda and the baselines under mpirun, so that
# dcuda's processes meet through its network path as across nodes.
#
set -uo pipefail

SELF=$(readlink -f "${BASH_SOURCE[0]}")
ROOT=$(cd "$(dirname "$SELF")/.." && pwd)
# shellcheck source=tools/device_lib.sh
. "$ROOT/tools/device_lib.sh"
HERE=$PWD
DRY=

# run_suites ONEGPU NOCPU: run's suites (GPU; on GPU 0 alone where ONEGPU
# is set; CPU unless NOCPU is set) and the demo on the GPU.
run_suites() {
    local status=0
    say "tests (gpu on $GPUS GPU(s), then cpu)"
    (cd build-gpu && ctest -L gpu --output-on-failure -j 2 --timeout 300) \
        >"$LOG/ctest-gpu.log" 2>&1 || status=1
    tail -4 "$LOG/ctest-gpu.log"
    if [ -n "$1" ] && [ "$GPUS" -ge 2 ]; then
        say "tests (gpu on GPU 0 alone)"
        (cd build-gpu && CUDA_VISIBLE_DEVICES=0 ctest -L gpu --output-on-failure -j 2 --timeout 300) \
            >"$LOG/ctest-gpu1.log" 2>&1 || status=1
        tail -4 "$LOG/ctest-gpu1.log"
    fi
    if [ -z "$2" ]; then
        (cd build-gpu && ctest -L cpu -j "$JOBS" --timeout 300) >"$LOG/ctest-cpu.log" 2>&1 || status=1
        tail -3 "$LOG/ctest-cpu.log"
    fi
    say "demo on the GPU"
    DCUDA_BACKEND=cuda build-gpu/apps/demo/dcuda_demo >"$LOG/demo.log" 2>&1 || status=1
    grep -E "^(reduce|stencil|demo):" "$LOG/demo.log"
    return $status
}

cmd_run() {
    local a quick= sanitize= onegpu= nocpu= notests= nobench= status=0
    for a in "$@"; do
        case $a in
        quick) quick=--quick ;;
        sanitize) sanitize=1 ;;
        onegpu) onegpu=1 ;;
        nocpu) nocpu=1 ;;
        notests) notests=1 ;;
        nobench) nobench=1 ;;
        *) bad "unknown argument $a" ;;
        esac
    done
    [ -z "$notests" ] || [ -z "$nobench" ] || bad "notests and nobench leave nothing to run"
    local what="build build-gpu; spills"
    local cpu=", cpu"
    [ -z "$nocpu" ] || cpu=
    [ -n "$notests" ] || what+="; ctest gpu${onegpu:+ (and on GPU 0 alone)}$cpu; demo"
    [ -z "$sanitize" ] || what+="; compute-sanitizer"
    [ -n "$nobench" ] || what+="; dcuda_bench${quick:+ $quick}, references, anchors, probe latency"
    plan "$what"
    dev_logs run
    cat "$LOG/gpus.txt"
    say build
    build . build-gpu gpu all dcuda_references || { finish build-gpu.log; return 1; }
    say "the bench kernels' registers, spills and sizes (tools/spills.py)"
    python3 tools/spills.py build-gpu --jobs "$JOBS" >"$LOG/spills.txt" 2>&1 || status=1
    cat "$LOG/spills.txt"
    if [ -z "$notests" ]; then
        run_suites "$onegpu" "$nocpu" || status=1
        if [ -n "$sanitize" ]; then
            say compute-sanitizer
            sanitize_cases build-gpu >"$LOG/sanitizer.log" 2>&1 || status=1
            tail -6 "$LOG/sanitizer.log"
        fi
    fi
    if [ -n "$nobench" ]; then
        finish ctest-gpu.log ctest-gpu1.log
        return $status
    fi
    say "benchmark and floors ($GPUS GPU(s); with 2+ dcuda_bench runs one process per GPU)"
    build-gpu/bench/dcuda_bench $quick --csv="$LOG/bench.csv" >"$LOG/bench.txt" 2>&1 || status=1
    tools/references.sh build-gpu "$LOG" $quick >"$LOG/references.txt" 2>&1 || status=1
    anchors || status=1
    probe latency || status=1
    cat "$LOG/bench.txt" "$LOG/references.txt"
    python3 tools/bench_compare.py "$LOG/bench.csv" "$LOG/floors.csv" "$LOG/nvshmem.csv" |
        tee "$LOG/compare.txt"
    if [ -f "$LOG/floors.txt" ]; then
        python3 tools/bench_compare.py "$LOG/bench.csv" "$LOG/floors.txt" \
            $(if_file "$LOG/nvshmem.txt") >"$LOG/compare-anchors.txt" 2>&1
    fi
    finish bench.txt bench.csv compare.txt references.txt ctest-gpu.log
    return $status
}

cmd_ab() {
    [ $# -ge 1 ] && [ $# -le 3 ] || bad "needs BASE_DIR, then ROUNDS and quick at most"
    local base rounds=2 quick= a rc
    base=$(base_dir "$1") || exit 2
    shift
    for a in "$@"; do
        case $a in
        quick) quick=--quick ;;
        *[!0-9]* | 0 | "") bad "ROUNDS: a count from 1, not '$a'" ;;
        *) rounds=$a ;;
        esac
    done
    plan "build $base/build-gpu and build-gpu (dcuda_bench, at once); anchors; $rounds" \
        "alternating round(s) of dcuda_bench${quick:+ $quick}; bench_ab.py"
    dev_logs ab
    say build
    build_pair "$base" dcuda_bench || { finish build-base.log build-new.log; return 1; }
    anchors
    say "dcuda_bench, base and new, $rounds round(s)"
    bench_rounds "$base" "$rounds" $quick
    python3 tools/bench_compare.py "$LOG/new-1.csv" "$LOG/floors.txt" \
        $(if_file "$LOG/nvshmem.txt") >"$LOG/compare.txt" 2>&1
    python3 tools/bench_ab.py --base "$LOG"/base-*.csv --new "$LOG"/new-*.csv | tee "$LOG/ab.txt"
    rc=$?
    finish ab.txt compare.txt
    return $rc
}

cmd_coll() {
    [ $# -ge 1 ] && [ $# -le 2 ] || bad "needs BASE_DIR, then quick or pushed at most"
    local base quick= pushed= status=0
    base=$(base_dir "$1") || exit 2
    if [ $# -eq 2 ]; then
        case $2 in quick) quick=--quick ;; pushed) pushed=1 ;; *) bad "unknown argument $2" ;; esac
    fi
    local compare=", bench_compare.py"
    [ -z "$pushed" ] || compare=
    plan "build $base/build-gpu (dcuda_bench) and build-gpu (collective, mismatch, misuse and" \
        "communicator suites, dcuda_bench, references) at once; ctest gpu coll|mismatch|comms;" \
        "references;" \
        "dcuda_bench${quick:+ $quick}${pushed:+ --collectives of 2 and 4 ranks, 2 rounds} base," \
        "new; bench_ab.py$compare"
    dev_logs coll
    build_pair "$base" dcuda_bench dcuda_references dcuda_test_coll dcuda_test_mismatch \
        dcuda_test_misuse dcuda_test_comms || { finish build-base.log build-new.log; return 1; }
    say built
    (cd build-gpu && ctest -L gpu -R "coll|mismatch|comms" -j 4 --timeout 150) \
        >"$LOG/ctest.log" 2>&1 || status=1
    grep -E "tests passed|\*\*\*" "$LOG/ctest.log"
    say tested
    tools/references.sh build-gpu "$LOG" $quick >"$LOG/references.txt" 2>&1
    if [ -n "$pushed" ]; then
        pushed_rounds "$base" || status=1
        say benched
        for n in 2 4; do
            python3 tools/bench_ab.py --base "$LOG"/base-r$n-*.csv --new "$LOG"/new-r$n-*.csv
        done >"$LOG/ab.txt" 2>&1
        finish ab.txt ctest.log
        grep -E "^collective " "$LOG/ab.txt"
        return $status
    fi
    bench_rounds "$base" 1 $quick || status=1
    say benched
    python3 tools/bench_ab.py --base "$LOG/base-1.csv" --new "$LOG/new-1.csv" >"$LOG/ab.txt" 2>&1
    python3 tools/bench_compare.py "$LOG/new-1.csv" "$LOG/floors.csv" $(if_file "$LOG/nvshmem.csv") \
        >"$LOG/compare.txt" 2>&1
    finish ab.txt compare.txt ctest.log
    grep -E "^(collective|runtime|latency) +(peer_)?(allreduce_sum|broadcast |allgather |alltoall |world_barrier|node_barrier|notified_put +2 |notify +2 |put_8B)" \
        "$LOG/ab.txt"
    grep -iE "nvshmem|collective" "$LOG/compare.txt" | head -40
    return $status
}

cmd_net() {
    local arg p parts=" " fail=0 mpi t traces
    for arg in "${@:-suites bench}"; do
        for p in $arg; do
            case $p in suites | bench | trace) parts+="$p " ;; *) bad "unknown part $p" ;; esac
        done
    done
    plan "build build-gpu; DCUDA_NET_FORCE=1:${parts% }"
    dev_logs net
    say build
    build . build-gpu gpu || { finish build-gpu.log; return 1; }
    export DCUDA_BACKEND=cuda DCUDA_NET_FORCE=1 DCUDA_WATCHDOG_CANCEL=1
    mpi=("${MPIRUN[@]}" -np 2 -x DCUDA_BACKEND -x DCUDA_NET_FORCE -x DCUDA_WATCHDOG_CANCEL -x DCUDA_RANKS)
    if [[ $parts == *" suites "* ]]; then
        say "the GPU suites' loopback entries; the demo under mpirun -np 2"
        (cd build-gpu && ctest -L loop -LE cpu -R "^gpu" --timeout 200 -j 2) >"$LOG/loop.log" 2>&1 || fail=1
        grep -E "tests passed|\*\*\*Failed|Timeout" "$LOG/loop.log"
        DCUDA_RANKS=0 timeout 120 "${mpi[@]}" build-gpu/apps/demo/dcuda_demo >"$LOG/demo.log" 2>&1
        grep -E "^(reduce|stencil|demo):" "$LOG/demo.log"
    fi
    if [[ $parts == *" bench "* ]]; then
        say "the benchmark's peer rows; the staging and MPI probes"
        DCUDA_RANKS=0 timeout "${NET_BENCH_S:-300}" "${mpi[@]}" build-gpu/bench/dcuda_bench --quick --peer \
            --csv="$LOG/bench-net.csv" >"$LOG/bench-net.txt" 2>&1 || echo "bench failed (see bench-net.txt)"
        probe staging
        probe mpi
        grep -E "^(latency|bandwidth) +peer_" "$LOG/bench-net.txt" |
            awk '$4 == 4 || $4 == 0 || $4 >= 1048576'
    fi
    if [[ $parts == *" trace "* ]]; then
        say "the proxies' hops (a DCUDA_PROXY_TRACE build)"
        t=build-gpu-trace
        traces=$ROOT/$t/traces
        CMAKE_EXTRA=(-DDCUDA_PROXY_TRACE=ON)
        if build . $t trace dcuda_bench; then
            unset CMAKE_EXTRA
            rm -rf "$traces" && mkdir -p "$traces"
            (cd "$traces" && DCUDA_RANKS=0 timeout 240 "${mpi[@]}" "$ROOT/$t/bench/dcuda_bench" \
                --quick --peer --latency) >"$LOG/trace-bench.txt" 2>&1
            grep -E "^latency +peer_" "$LOG/trace-bench.txt"
            python3 tools/trace_hops.py "$traces" | tee "$LOG/trace-hops.txt"
        else
            unset CMAKE_EXTRA
            fail=1
        fi
    fi
    finish bench-net.txt bench-net.csv probe-staging.txt probe-mpi.txt trace-hops.txt
    return $fail
}

cmd_ucx() {
    [ $# -eq 0 ] || bad "takes no argument"
    local b=build-gpu-ucx c pass=0 fail=0 mpi
    plan "unpack .deps/*.deb (or this machine's UCX); build $b (dcuda_bench, dcuda_test_semantics);" \
        "semantics cases and peer rows with DCUDA_NET=ucx under mpirun -np 2"
    dev_logs ucx
    ucx_env || { finish; return 1; }
    CMAKE_EXTRA=(-DPKG_CONFIG_EXECUTABLE="$PKGCONF")
    build . $b ucx dcuda_bench dcuda_test_semantics || { finish build-ucx.log; return 1; }
    unset CMAKE_EXTRA
    grep "dcuda: CUDA backend" "$LOG/build-ucx.log"
    export DCUDA_BACKEND=cuda DCUDA_NET_FORCE=1 DCUDA_NET=ucx DCUDA_WATCHDOG_CANCEL=1
    export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}
    mpi=("${MPIRUN[@]}" -np 2 -x DCUDA_BACKEND -x DCUDA_NET_FORCE -x DCUDA_NET
        -x DCUDA_WATCHDOG_CANCEL -x DCUDA_RANKS -x LD_LIBRARY_PATH)
    [ -n "${UCX_MODULE_DIR:-}" ] && mpi+=(-x UCX_MODULE_DIR)
    for c in visibility order flush barrier mix large; do
        if DCUDA_RANKS=8 timeout 120 "${mpi[@]}" $b/tests/dcuda_test_semantics $c >"$LOG/ucx-$c.log" 2>&1 &&
            [ "$(grep -c '^process [01] of 2: PASSED' "$LOG/ucx-$c.log")" = 2 ]; then
            pass=$((pass + 1))
        else
            fail=$((fail + 1))
            echo "FAIL $c"
            tail -5 "$LOG/ucx-$c.log"
        fi
    done
    echo "ucx: gpu semantics on the network path: $pass passed, $fail failed"
    DCUDA_RANKS=0 timeout 240 "${mpi[@]}" -x UCX_LOG_LEVEL $b/bench/dcuda_bench --quick --peer \
        --csv="$LOG/bench-ucx.csv" >"$LOG/bench-ucx.txt" 2>&1 || echo "bench failed (see bench-ucx.txt)"
    UCX_LOG_LEVEL=info DCUDA_RANKS=2 timeout 60 "${mpi[@]}" -x UCX_LOG_LEVEL $b/bench/dcuda_bench \
        --quick --peer --latency 2>&1 | grep -iE "ucp_worker|transport|tls" | head -4
    grep -E "^(latency|bandwidth) +peer_" "$LOG/bench-ucx.txt" | awk '$4 == 4 || $4 == 0 || $4 >= 1048576'
    finish bench-ucx.txt bench-ucx.csv
    [ $fail -eq 0 ]
}

cmd_sanitize() {
    [ $# -le 1 ] || bad "takes BUILD_DIR at most"
    local b rc
    b=$(abspath "${1:-build-gpu}")
    plan "build $b (the test drivers); compute-sanitizer memcheck, racecheck"
    dev_logs sanitize
    build . "$b" gpu dcuda_test_semantics dcuda_test_misuse dcuda_test_endings \
        dcuda_test_integration dcuda_test_deadlock dcuda_test_model ||
        { finish build-gpu.log; return 1; }
    sanitize_cases "$b" 2>&1 | tee "$LOG/sanitizer.log"
    rc=${PIPESTATUS[0]}
    finish sanitizer.log
    return "$rc"
}

cmd_installed() {
    [ $# -le 2 ] || bad "takes BUILD_DIR and PREFIX at most"
    local b prefix work rc
    b=$(abspath "${1:-build-gpu}")
    prefix=$(abspath "${2:-$b-prefix}")
    work=$b-installed
    plan "build $b; install into $prefix; examples/installed in $work; its ring on GPU ranks"
    dev_logs installed
    build . "$b" gpu || { finish build-gpu.log; return 1; }
    rm -rf "$work"
    if ! { cmake --install "$b" --prefix "$prefix" &&
        cmake -S examples/installed -B "$work" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CUDA_ARCHITECTURES=90 &&
        cmake --build "$work" -j "$JOBS"; } >"$LOG/example.log" 2>&1; then
        tail -20 "$LOG/example.log"
        finish example.log
        return 1
    fi
    echo "installed example: $(wc -l <examples/installed/CMakeLists.txt) lines of CMakeLists.txt"
    DCUDA_BACKEND=cuda "$work/ring" 2>&1 | tee "$LOG/ring.txt"
    rc=${PIPESTATUS[0]}
    finish ring.txt
    return "$rc"
}

cmd_cases() {
    local a hosts= rounds=2 cases=particles,hdiff,spmv,power rc
    for a in "$@"; do
        case $a in
        hosts) hosts=--hosts ;;
        *[!0-9]*) cases=$a ;;
        0) bad "ROUNDS: a count from 1" ;;
        *) rounds=$a ;;
        esac
    done
    plan "build build-gpu; case_studies.py ${hosts:+--hosts }--rounds $rounds --cases $cases" \
        "(one process a GPU)"
    dev_logs cases
    build . build-gpu gpu || { finish build-gpu.log; return 1; }
    say "case studies on $GPUS GPU(s)${hosts:+, a simulated host each}"
    python3 tools/case_studies.py --build build-gpu --gpus "$GPUS" --rounds "$rounds" \
        --cases "$cases" $hosts --csv "$LOG/cases.csv" 2>"$LOG/cases.log" | tee "$LOG/cases.txt"
    rc=${PIPESTATUS[0]}
    finish cases.csv cases.txt cases.log
    return "$rc"
}

cmd_probes() {
    local names=${*:-$PROBES} n keep= rc=0
    for n in $names; do
        case " $PROBES " in *" $n "*) keep+="probe-$n.txt " ;; *) bad "no probe $n" ;; esac
    done
    plan "build build-gpu; probes $names"
    dev_logs probes
    say build
    build . build-gpu gpu || { finish build-gpu.log; return 1; }
    for n in $names; do
        say "probe $n"
        probe "$n" || rc=1
    done
    finish $keep
    return $rc
}

# The kernel ncu profiles (dcuda_bench's runtime family: the collectives).
NCU_KERNEL=dcuda_gpu_kernel_bench_runtime

# ncu_listing BIN TAG: nvdisasm -c -gi of the cubin in BIN that holds
# NCU_KERNEL, into $LOG/TAG.sass; 1 where none does.
ncu_listing() {
    local tmp c rc=1
    tmp=$(mktemp -d)
    (cd "$tmp" && cuobjdump -xelf all "$1" >/dev/null 2>&1)
    for c in "$tmp"/*.cubin; do
        [ -f "$c" ] || continue
        nvdisasm -c -gi "$c" >"$tmp/listing" 2>/dev/null || continue
        if grep -q "^\\.text\\.$NCU_KERNEL:" "$tmp/listing"; then
            mv "$tmp/listing" "$LOG/$2.sass"
            rc=0
            break
        fi
    done
    rm -rf "$tmp"
    return $rc
}

# ncu_launch TAG BIN LAUNCH: the launch's per-instruction export, $LOG/TAG-LAUNCH.csv.
ncu_launch() {
    local rep=$LOG/$1-$3
    timeout 300 ncu --target-processes all -k "regex:$NCU_KERNEL" --launch-skip "$3" \
        --launch-count 1 --replay-mode application --section WarpStateStats \
        --section SourceCounters -o "$rep" "$2/bench/dcuda_bench" --collectives --ranks 2 \
        -m 8:8 >"$rep.log" 2>&1 &&
        ncu --import "$rep.ncu-rep" --page source --csv --print-source sass >"$rep.csv" 2>>"$rep.log"
    local rc=$?
    rm -f "$rep.ncu-rep"
    return $rc
}

cmd_ncu() {
    local base= l tags=new rc=0
    if [ $# -gt 0 ] && ! [[ $1 =~ ^[0-9]+$ ]]; then
        base=$(base_dir "$1") || exit 2
        shift
    fi
    for l in "$@"; do [[ $l =~ ^[0-9]+$ ]] || bad "LAUNCH is a number, not $l"; done
    local launches=${*:-6 10}
    plan "build build-gpu-ncu (-lineinfo)${base:+ and $base/build-gpu-ncu at once}; ncu of" \
        "launches $launches of dcuda_bench --collectives --ranks 2 -m 8:8; sass_diff.py" \
        "by line of coll_push.h${base:+, against the base}"
    dev_logs ncu
    local t
    for t in ncu cuobjdump nvdisasm; do
        command -v "$t" >/dev/null && continue
        echo "device.sh ncu: no $t on this machine"
        finish
        return 1
    done
    say build
    CMAKE_EXTRA=(-DCMAKE_CUDA_FLAGS=-lineinfo) # the build type of build-gpu's rows
    if [ -n "$base" ]; then
        tags="new base"
        PAIR_DIR=build-gpu-ncu build_pair "$base" dcuda_bench || rc=1
    else
        build . build-gpu-ncu new dcuda_bench || rc=1
    fi
    unset CMAKE_EXTRA
    [ $rc = 0 ] || { finish build-new.log build-base.log; return 1; }
    local -A bin=([new]=$ROOT/build-gpu-ncu [base]=$base/build-gpu-ncu)
    for t in $tags; do
        ncu_listing "${bin[$t]}/bench/dcuda_bench" "$t" && continue
        echo "device.sh ncu: no cubin of $t holds the runtime kernel"
        rm -f "$LOG"/*.sass
        finish
        return 1
    done
    for l in $launches; do
        say "launch $l"
        for t in $tags; do ncu_launch "$t" "${bin[$t]}" "$l" || rc=1; done
        local csvs=() maps=()
        for t in $tags; do
            csvs+=("$LOG/$t-$l.csv")
            maps+=(--map "$LOG/$t.sass")
        done
        python3 tools/sass_diff.py "${csvs[@]}" "${maps[@]}" --kernel "$NCU_KERNEL" \
            --in coll_push.h --top 40 >"$LOG/lines-$l.txt" 2>&1 || rc=1
        head -24 "$LOG/lines-$l.txt"
    done
    rm -f "$LOG"/*.sass # hundreds of MB; the exports and the tables travel
    finish $(cd "$LOG" && ls lines-*.txt 2>/dev/null)
    return $rc
}

cmd_help() {
    [ $# -le 1 ] || bad "takes one subcommand at most"
    if [ $# -eq 0 ]; then usage; return 0; fi
    case " run ab coll net ucx sanitize installed probes ncu cases " in
    *" $1 "*) help_of "$1" ;;
    *) bad "no subcommand $1" ;;
    esac
}

NAME=device.sh
if [ "${1:-}" = -n ]; then
    DRY=1
    shift
fi
case ${1:-} in
-h | --help) usage ;;
help)
    shift
    NAME=help
    cmd_help "$@"
    ;;
run | ab | coll | net | ucx | sanitize | installed | probes | ncu | cases)
    NAME=$1
    shift
    for a in "$@"; do
        case $a in -h | --help) help_of "$NAME" && exit 0 ;; esac
    done
    [ -z "${OUT:-}" ] || OUT=$(abspath "$OUT")
    cd "$ROOT" || exit 1
    "cmd_$NAME" "$@"
    ;;
*)
    [ -z "${1:-}" ] || echo "device.sh: no subcommand $1" >&2
    usage >&2
    exit 2
    ;;
esac
