#!/usr/bin/env bash
# tools.bench_compare: bench_compare.py reads the reference programs' CSV
# (and still the anchors' text) and divides like by like. Made-up figures
# whose ratios are known: a 4 B notified put of 2.5 us against a release
# floor of 1.0 (2.50, MISSED against 1.25), a notify of 1.1 against 1.0
# (1.10, ok), a peer put of 3.0 against NVSHMEM's put_signal of 6.0 (0.50,
# ok against 0.6), one rank's 64 MiB put of 45 GB/s against a one-block copy
# of 50 (0.90, ok), and NVSHMEM's allreduce of 4 KiB in 12.5 us beside
# dcuda's of 25 (2.00), its barrier (no dcuda row: a dash). Then the same
# in dcuda_bench's present CSV (a "# key: value" head, the statistics
# columns; the collective rows latencies, the rate rows back to back): the
# head is printed, NVSHMEM's allreduce set beside the rate row (0.04
# Mcalls/s: 25 us, 2.00) with the latency (30 us) beside.
# Usage: compare_check.sh PYTHON WORK_DIR
set -euo pipefail
py=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
cat >"$work/bench.csv" <<'CSV'
kind,what,ranks,bytes,unit,value
latency,notified_put_4B,2,4,one_way_us,2.5
latency,notify,2,0,one_way_us,1.1
bandwidth,put_one_rank,1,67108864,GBps,45
latency,peer_notified_put,2,4,one_way_us,3.0
collective,peer_allreduce_sum_float,2,4096,us_per_call,25
collective,peer_allreduce_sum_float,2,8,us_per_call,7
CSV
cat >"$work/floors.csv" <<'CSV'
# dcuda_ref_floors: made up
kind,what,ranks,bytes,unit,value
latency,local_notify_relaxed,2,0,one_way_us,0.5
latency,local_notify_release,2,0,one_way_us,1.0
latency,local_put_4B_release,2,4,one_way_us,1.0
latency,local_put_4B_fence,2,4,one_way_us,1.5
bandwidth,kernel_copy,1,268435456,GBps,50
bandwidth,kernel_copy,132,268435456,GBps,2500
host,pinned_flag,1,4,round_trip_us,1.2
CSV
cat >"$work/nvshmem.csv" <<'CSV'
kind,what,ranks,bytes,unit,value
latency,put_signal_4B,2,4,one_way_us,6.0
latency,fence_signal_op,2,0,one_way_us,4.0
bandwidth,putmem_block,8,268435456,GBps,100
collective,float_sum_reduce_block,2,4096,us_per_call,12.5
collective,barrier_all_block,2,0,us_per_call,3.0
CSV
"$py" "$here/bench_compare.py" "$work/bench.csv" "$work/floors.csv" "$work/nvshmem.csv" \
    >"$work/compare.txt"
cat "$work/compare.txt"
want() { # a row: its name, then a pattern of what follows it
    grep -E "^$1 .*$2" "$work/compare.txt" >/dev/null ||
        { echo "FAIL tools.bench_compare: no row '$1' with '$2'"; exit 1; }
}
want notified_put_4B " 2\.50 +<= 1\.25 MISSED"
want notify " 1\.10 +<= 1\.25 ok"
want "put_one_rank \(64 MiB\)" " 0\.90 +>= 0\.9 ok"
want "peer_notified_put 4 B" " 0\.50 +<= 0\.6 ok"
want float_sum_reduce_block " 4096 +12\.500 +25\.000 +2\.00"
want barrier_all_block " 0 +3\.000 +- +-"
# The anchors' text still reads: the same floor as text gives the same ratio.
printf 'local_device notified_put_4B_red_release one_way_us=1.000\n' >"$work/floors.txt"
"$py" "$here/bench_compare.py" "$work/bench.csv" "$work/floors.txt" >"$work/compare-text.txt"
grep -E "^notified_put_4B .* 2\.50 " "$work/compare-text.txt" >/dev/null ||
    { echo "FAIL tools.bench_compare: the anchors' text no longer reads"; exit 1; }
cat >"$work/bench-new.csv" <<'CSV'
# program: dcuda_bench
# dcuda_version: 0.1.0 (v0.1.0-1-gabcdef0)
# dcuda_commit: abcdef0123456789abcdef0123456789abcdef01
# device: made-up GPU
kind,what,ranks,bytes,unit,value,min,max,p50,p99,n,algbw_GBps,busbw_GBps,wrong
latency,notified_put_4B,2,4,one_way_us,2.5,2.0,9.0,2.4,3.0,2000,,,
latency,peer_notified_put,2,4,one_way_us,3.0,2.9,7.0,3.0,3.5,2000,,,
collective,peer_allreduce_sum_float,2,4096,latency_us,30,28,40,30,39,200,0.136533,0.136533,0
rate,peer_allreduce_sum_float,2,4096,Mcalls_per_s,0.04,0.04,0.04,0.04,0.04,1,,,
CSV
"$py" "$here/bench_compare.py" "$work/bench-new.csv" "$work/floors.csv" "$work/nvshmem.csv" \
    >"$work/compare-new.txt"
cat "$work/compare-new.txt"
for pattern in "^# bench: .*dcuda_commit abcdef0123456789abcdef0123456789abcdef01.*device made-up GPU" \
               "^notified_put_4B .* 2\.50 " \
               "^float_sum_reduce_block +4096 +12\.500 +25\.000 +2\.00 +30\.000"; do
    grep -E "$pattern" "$work/compare-new.txt" >/dev/null ||
        { echo "FAIL tools.bench_compare: the present CSV: no line '$pattern'"; exit 1; }
done
echo "PASSED tools.bench_compare"
