#!/usr/bin/env bash
# The plots from the case studies' smallest sizes (ctest entry tools.plots):
# runs tools/case_studies.py --small once on this build (CPU ranks where
# there is no GPU), then tools/plot_results.py --cases on its CSV, and
# checks that a figure of each case was written and draws points; then
# the latency and bandwidth figures of the committed H100 results (the
# benchmark's CSV beside dcuda_ref_floors' CSV) are drawn with points. Needs
# python3 with matplotlib: the first of the interpreters given that has it
# (exit status 77, a skip, when none has).
# Usage: tools/plots_check.sh BUILD_DIR OUT_DIR PYTHON...
set -uo pipefail
build=$1 out=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
py=
for p in "$@"; do
    if [ -x "$p" ] && "$p" -c "import matplotlib" 2>/dev/null; then py=$p; break; fi
done
if [ -z "$py" ]; then
    echo "SKIP tools.plots: no python3 with matplotlib (tried: $*; tools/requirements.txt)"
    exit 77
fi
rm -rf "$out" && mkdir -p "$out"
"$py" "$here/case_studies.py" --build "$build" --small --rounds 1 --csv "$out/cases.csv" \
    > "$out/cases.log" 2>&1 || { echo "FAIL: case_studies.py --small"; tail -20 "$out/cases.log"; exit 1; }
"$py" "$here/plot_results.py" --cases "$out/cases.csv" --out "$out" > "$out/plot.log" 2>&1 ||
    { echo "FAIL: plot_results.py"; cat "$out/plot.log"; exit 1; }
cat "$out/plot.log"
failed=0
for c in particles hdiff spmv power; do
    n=$(grep -o "case_$c.png ([0-9]* points)" "$out/plot.log" | grep -o "[0-9]* points" | cut -d' ' -f1)
    if [ ! -s "$out/case_$c.png" ] || [ -z "$n" ] || [ "$n" -lt 1 ]; then
        echo "FAIL: case_$c.png missing or without points (${n:-none})"
        failed=1
    fi
done
results=$here/../docs/results/log/nvidia-h100-x1
"$py" "$here/plot_results.py" --bench "$results/2026-11-25-bench.csv" --floors "$results/2026-11-25-floors.csv" \
    --out "$out/bench" > "$out/bench.log" 2>&1 || { echo "FAIL: plot_results.py --bench"; cat "$out/bench.log"; exit 1; }
cat "$out/bench.log"
for f in latency bandwidth; do
    grep -Eq "$f.png \([1-9][0-9]* points\)" "$out/bench.log" ||
        { echo "FAIL: $f.png without points"; failed=1; }
done
[ $failed -eq 0 ] && echo "PASSED tools.plots: a figure with points for each case, and the bench's"
exit $failed
