#!/usr/bin/env bash
# tools.sass_diff: sass_diff.py reads ncu's SASS source page (CSV). Two
# made-up exports of one kernel of 12 instructions at 16-byte steps: in A,
# instructions 0-2 run 8 times each (region 0x0-0x20), 3-9 never, 10-11
# 100 times (region 0xa0-0xb0, 30 stall samples); in B only 0-2 run, 8
# times. A alone: the region at 0xa0 first (200 executions), then 0x0
# (24). A against B: the region at 0xa0 differs by 200, the one at 0x0 by
# 0. --rounds 2 halves the counts. An export of other code, a file with
# no header, and no arguments are errors (exit 2).
# By line (--map): made-up nvdisasm -gi listings, the kernel's section
# between two others whose lines must not count: instructions 0-2 at
# coll_push.h:10 (inlined at the kernel's line 5), 3-9 in a block of two
# line-table rows (the kernel's line 3, then coll_push.h:40: the last is in
# force), 10-11 at block.h:20 inlined at coll_push.h:30 inlined at line
# 7 (each chain ending at the kernel's macro line 99). With --in
# coll_push.h (or a path to it), A counts 200 at line 30 and 24 at line
# 10; without, 200 at the kernel's line 7 and 24 at its line 5 (never at
# the macro's); against B (same code, one map) line
# 30 differs by 200 and B's samples of 3-9 fall on line 40; against the
# other code with its own listing (all at line 6) the lines compare. A
# listing whose opcodes are not the export's (another build) is warned
# of; a kernel the listing lacks and a third map are errors.
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
F = '\t//## File "/src/{}", line {}'
def at(f, l, g=None, m=None):
    return F.format(f, l) + (f' inlined at "/src/{g}", line {m}' if g else "")
def listing(name, blocks, op="IADD3"):  # blocks: (first instruction, [comment lines]); 12 of them
    with open(f"{work}/{name}", "w") as f:
        f.write("//--------------------- .text.other_kernel ----------\n.text.other_kernel:\n")
        f.write(at("wrong.h", 1) + "\n")
        for i in range(12):
            f.write(f"        /*{16 * i:04x}*/                   NOP ;\n")
        f.write("//--------------------- .text.made_up_kernel ----------\n.text.made_up_kernel:\n")
        starts = dict(blocks)
        for i in range(12):
            for c in starts.get(i, []):
                f.write(c + "\n")
            text = f"{op} R{i}, R{i}, 0x1, RZ" if i != 5 else "@!P0 CALL.REL.NOINC 0x40"
            f.write(f"        /*{16 * i:04x}*/                   {text} ;\n")
        f.write("//--------------------- .text.later ----------\n")
        f.write(at("wrong.h", 2) + "\n        /*0000*/                   NOP ;\n")
# (k.cu:99 stands for the kernel's macro line, into which its body is inlined)
listing("a.sass", [(0, [at("coll_push.h", 10, "k.cu", 5), at("k.cu", 5, "k.cu", 99)]),
                   (3, [at("k.cu", 3), at("coll_push.h", 40, "k.cu", 4)]),
                   (10, [at("block.h", 20, "coll_push.h", 30), at("coll_push.h", 30, "k.cu", 7),
                         at("k.cu", 7, "k.cu", 99)])])
listing("other.sass", [(0, [at("k.cu", 6)])], op="IMAD")
listing("shifted.sass", [(0, [at("k.cu", 6)])], op="FADD")  # another build's code
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
"$py" "$here/sass_diff.py" "$work/a.csv" --map "$work/a.sass" --in coll_push.h >"$work/lines.txt" 2>&1
code_lines=$?
"$py" "$here/sass_diff.py" "$work/a.csv" --map "$work/a.sass" >"$work/outer.txt" 2>&1
code_outer=$?
"$py" "$here/sass_diff.py" "$work/a.csv" --map "$work/a.sass" --in src/impl/coll_push.h \
    >"$work/path_in.txt" 2>&1
code_path_in=$?
"$py" "$here/sass_diff.py" "$work/a.csv" "$work/b.csv" --map "$work/a.sass" --in coll_push.h \
    >"$work/lines_ab.txt" 2>&1
code_lines_ab=$?
"$py" "$here/sass_diff.py" "$work/a.csv" "$work/other.csv" --map "$work/a.sass" \
    --map "$work/other.sass" --in coll_push.h >"$work/lines_other.txt" 2>&1
code_lines_other=$?
"$py" "$here/sass_diff.py" "$work/a.csv" --map "$work/a.sass" --kernel absent_kernel \
    >"$work/nokernel.txt" 2>&1
code_nokernel=$?
"$py" "$here/sass_diff.py" "$work/a.csv" --map "$work/a.sass" --map "$work/a.sass" \
    >"$work/twomaps.txt" 2>&1
code_twomaps=$?
"$py" "$here/sass_diff.py" "$work/a.csv" --map "$work/shifted.sass" >"$work/shifted.txt" 2>&1
code_shifted=$?
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
expect "by line in coll_push.h: line 30 (2 instructions, 200, 30 samples), then line 10" \
    "[ $code_lines = 0 ] && grep -A2 'source line' '$work/lines.txt' | tail -2 |
     awk '{print \$1, \$2, \$3, \$4}' | tr '\n' ' ' |
     grep -q '^coll_push.h:30 2 200.0 30 coll_push.h:10 3 24.0 0 \$'"
expect "by line, no --in: the kernel's lines that called the code (7 and 5, not the macro's 99)" \
    "[ $code_outer = 0 ] && grep -Eq '^k.cu:7 +2 +200.0 +30\$' '$work/outer.txt' &&
     grep -Eq '^k.cu:5 +3 +24.0 +0\$' '$work/outer.txt' && ! grep -q 'k.cu:99' '$work/outer.txt'"
expect "--in given as a path: its file's name" \
    "[ $code_path_in = 0 ] && grep -Eq '^coll_push.h:30 +2 +200.0 +30\$' '$work/path_in.txt'"
expect "only the export's kernel's section is read" \
    "! grep -q wrong.h '$work/lines.txt' '$work/outer.txt' '$work/lines_ab.txt'"
expect "A against B by line: line 30 differs by 200" \
    "[ $code_lines_ab = 0 ] && grep -Eq '^coll_push.h:30 +2 +200.0 +2 +0.0 +200.0 +30 +2\$' \
     '$work/lines_ab.txt'"
expect "a block of two rows: the last in force (line 40, not the kernel's line 3)" \
    "grep -Eq '^coll_push.h:40 +0 +0.0 +7 +0.0 +0.0 +0 +7\$' '$work/lines_ab.txt' &&
     ! grep -q '^k.cu:3 ' '$work/lines_ab.txt'"
expect "two builds, two maps: compared by line" \
    "[ $code_lines_other = 0 ] && grep -Eq '^k.cu:6 +0 +0.0 +12 +24.0 +-24.0 +0 +12\$' \
     '$work/lines_other.txt' && grep -A1 'source line' '$work/lines_other.txt' | tail -1 |
     grep -q '^coll_push.h:30 '"
expect "a listing without the kernel: exit 2, said" \
    "[ $code_nokernel = 2 ] && grep -q 'no section .text.absent_kernel' '$work/nokernel.txt'"
expect "two maps for one export: exit 2" "[ $code_twomaps = 2 ]"
expect "a listing of other code: a warning that the lines are not to be trusted" \
    "[ $code_shifted = 0 ] && grep -q 'WARNING: .*not the listing.s at their offsets' '$work/shifted.txt' &&
     ! grep -q WARNING '$work/lines.txt' '$work/lines_ab.txt' '$work/lines_other.txt'"
[ $fail = 0 ] || {
    cat "$work/alone.txt" "$work/diff.txt" "$work/half.txt" "$work/lines.txt" "$work/lines_ab.txt" \
        "$work/lines_other.txt"
    exit 1
}
echo "sass_diff: all checks passed"
