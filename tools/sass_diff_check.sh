#!/usr/bin/env bash
# tools.sass_diff: sass_diff.py reads ncu's SASS source page (CSV). Two
# made-up exports of one kernel of 12 instructions at 16-byte steps: in A,
# instructions 0-2 run 8 times each (region 0x0-0x20), 3-9 never, 10-11
# 100 times (region 0xa0-0xb0, 30 stall samples); in B only 0-2 run, 8
# times. A alone: the region at 0xa0 first (200 executions), then 0x0
# (24). A against B: the region at 0xa0 differs by 200, the one at 0x0 by
# 0. --rounds 2 halves the counts. An export of other code, a file with
# no header, and no arguments are errors (exit 2).
# Usage: sass_diff_check.sh PYTHON WORK_DIR
set -euo pipefail
py=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
"$py" - "$work" <<'PY'
import sys
work = sys.argv[1]
head = ('"Address","Source","Warp Stall Sampling (All Samples)",'
        '"Warp Stall Sampling (Not-issued Samples)","Instructions Executed"\n')
def export(name, counts, samples, base, op="IADD3"):
    with open(f"{work}/{name}", "w") as f:
        f.write('"Kernel Name","made_up_kernel",\n' + head)
        for i, (e, s) in enumerate(zip(counts, samples)):
            text = f"      {op} R{i}, R{i}, 0x1, RZ" if i != 5 else f"      CALL.REL.NOINC {base + 0x40:#x}"
            f.write(f'"{base + 16 * i:#x}","{text}","{s}","{s}","{e}"\n')
a = [8, 8, 8, 0, 0, 0, 0, 0, 0, 0, 100, 100]
b = [8, 8, 8] + [0] * 9
export("a.csv", a, [0] * 10 + [10, 20], 0x7f0000000000)
export("b.csv", b, [1] * 12, 0x7f1100000000)
export("other.csv", b, [1] * 12, 0x7f1100000000, op="IMAD")
open(f"{work}/none.csv", "w").write('"Line No","Source"\n"1","x"\n')
PY
fail=0
set +e
"$py" "$here/sass_diff.py" "$work/a.csv" >"$work/alone.txt" 2>&1
code_alone=$?
"$py" "$here/sass_diff.py" "$work/a.csv" "$work/b.csv" >"$work/diff.txt" 2>&1
code_diff=$?
"$py" "$here/sass_diff.py" "$work/a.csv" "$work/b.csv" --rounds 2 >"$work/half.txt" 2>&1
code_half=$?
"$py" "$here/sass_diff.py" "$work/a.csv" "$work/other.csv" >"$work/other.txt" 2>&1
code_other=$?
"$py" "$here/sass_diff.py" "$work/none.csv" >"$work/none.txt" 2>&1
code_none=$?
"$py" "$here/sass_diff.py" >"$work/usage.txt" 2>&1
code_usage=$?
set -e
expect() { # what, condition
    if eval "$2"; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi
}
expect "A alone: exit 0, 224 warp instructions, 30 samples" \
    "[ $code_alone = 0 ] && grep -q 'a.csv: 224.0 warp instructions, 30 stall samples' '$work/alone.txt'"
expect "A alone: the region at 0xa0 first, then 0x0" \
    "grep -A2 offset '$work/alone.txt' | tail -2 | awk '{print \$1, \$2, \$3, \$4}' | tr '\n' ' ' |
     grep -q '^0xa0 0xb0 2 200.0 0x0 0x20 3 24.0 \$'"
expect "A against B: the region at 0xa0 differs by 200, at 0x0 by 0" \
    "[ $code_diff = 0 ] && grep -Eq '^ +0xa0 +0xb0 +2 +200.0 +0.0 +200.0 +30 ' '$work/diff.txt' &&
     grep -Eq '^ +0x0 +0x20 +3 +24.0 +24.0 +0.0 +0 ' '$work/diff.txt'"
expect "the absolute call target does not make the code differ" "[ $code_diff = 0 ]"
expect "--rounds 2 halves the counts" \
    "[ $code_half = 0 ] && grep -Eq '^ +0xa0 +0xb0 +2 +100.0 +0.0 +100.0 ' '$work/half.txt'"
expect "other code: exit 2, said" \
    "[ $code_other = 2 ] && grep -q 'hold different code' '$work/other.txt'"
expect "no header: exit 2, said" "[ $code_none = 2 ] && grep -q \"no 'Address' header\" '$work/none.txt'"
expect "no arguments: exit 2" "[ $code_usage = 2 ]"
[ $fail = 0 ] || { cat "$work/alone.txt" "$work/diff.txt" "$work/half.txt"; exit 1; }
echo "sass_diff: all checks passed"
