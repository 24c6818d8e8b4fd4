#!/usr/bin/env bash
# Runs GPU test cases under compute-sanitizer memcheck and racecheck (few
# ranks, one process, so the checkers stay fast). Usage: tools/device_sanitize.sh BUILD_DIR
set -uo pipefail
build=${1:-build-gpu}
export DCUDA_BACKEND=cuda DCUDA_RANKS=4 DCUDA_WATCHDOG_CANCEL=1 DCUDA_PROCESSES=1
cases_sem="visibility order tags many wrap overlap flush barrier size0 windows user ack notify_release tiny stale burst"
cases_mis="rank tag count bounds overflow source win_comm overlap not_init comm win timer"
cases_end="first_error every_error early_return watch_counts"
cases_int="shared async register"
cases_dl="wrong_tag missing_barrier slow"
fail=0 runs=0
run() { # tool exe case
    runs=$((runs + 1))
    out=$(timeout 300 compute-sanitizer --tool "$1" --error-exitcode 99 "$2" "$3" 2>&1)
    rc=$?
    summary=$(printf '%s\n' "$out" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY" | tail -1)
    # Misuse cases end with a failing status by design; only the checker's verdict counts.
    if [ $rc -eq 99 ] || [ $rc -eq 124 ] || ! printf '%s' "$summary" | grep -q " 0 "; then
        fail=$((fail + 1))
        echo "FAIL $1 $(basename "$2") $3 (rc $rc): $summary"
        printf '%s\n' "$out" | tail -20
    else
        echo "ok   $1 $(basename "$2") $3: $summary"
    fi
}
for tool in memcheck racecheck; do
    for c in $cases_sem; do run $tool "$build/tests/dcuda_test_semantics" "$c"; done
    for c in $cases_mis; do run $tool "$build/tests/dcuda_test_misuse" "$c"; done
    for c in $cases_end; do run $tool "$build/tests/dcuda_test_endings" "$c"; done
    for c in $cases_int; do run $tool "$build/tests/dcuda_test_integration" "$c"; done
    for c in $cases_dl; do run $tool "$build/tests/dcuda_test_deadlock" "$c"; done
done
# The randomized model (its checks are many threads' reads): memcheck only,
# one seed, fewer steps.
for c in model large; do
    runs=$((runs + 1))
    out=$(timeout 300 compute-sanitizer --tool memcheck --error-exitcode 99 \
        "$build/tests/dcuda_test_model" "$c" 1 1 12 2>&1)
    rc=$?
    summary=$(printf '%s\n' "$out" | grep -E "ERROR SUMMARY" | tail -1)
    if [ $rc -ne 0 ] || ! printf '%s' "$summary" | grep -q " 0 "; then
        fail=$((fail + 1))
        echo "FAIL memcheck dcuda_test_model $c (rc $rc): $summary"
        printf '%s\n' "$out" | tail -20
    else
        echo "ok   memcheck dcuda_test_model $c: $summary"
    fi
done
echo "compute-sanitizer: $((runs - fail)) clean, $fail with findings, of $runs runs"
[ $fail -eq 0 ]
