#!/usr/bin/env bash
# tools.spills: spills.py reads ptxas -v output. Made-up output of two
# kernels and a helper: kernel_a of 128 registers without spills, kernel_b
# of 255 that spills 300 bytes (stores) and 700 (loads), and a helper
# function that spills 4,000 bytes (not a kernel: not counted). Over the
# default budget of 256 bytes kernel_b alone is OVER (exit 1); under a
# budget of 512 nothing is (exit 0); no input is a usage error (exit 2).
# The kernels' instructions: "-" without a cubin; from a made-up ELF64
# image with .text.kernel_a of 160 bytes and .text.kernel_b of 3,200
# (10 and 200 instructions); a file that is no ELF is an error (exit 2).
# --functions lists the functions out of line with a frame or spills, once
# each (dcu_push_try is named twice), most spill stores first, by their own
# names (the helper, and a mangled dcu_push_try of a nested name), and
# counts those with neither (quiet_on); the exit stays the kernels' alone.
# Usage: spills_check.sh PYTHON WORK_DIR
set -euo pipefail
py=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
cat >"$work/ptxas.txt" <<'TXT'
ptxas info    : 3004 bytes gmem
ptxas info    : Compiling entry function 'kernel_a' for 'sm_90'
ptxas info    : Function properties for kernel_a
    240 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 128 registers, used 1 barriers, 240 bytes cumulative stack size, 1912 bytes smem
ptxas info    : Function properties for helper_of_a
    0 bytes stack frame, 4000 bytes spill stores, 4000 bytes spill loads
ptxas info    : Function properties for _ZN48_INTERNAL_82b0264e_17_bench_kernel_c_cu_8036f6b112dcu_push_tryEP11dcuda_statejmmmm
    0 bytes stack frame, 84 bytes spill stores, 304 bytes spill loads
ptxas info    : Function properties for _ZN48_INTERNAL_82b0264e_17_bench_kernel_c_cu_8036f6b112dcu_push_tryEP11dcuda_statejmmmm
    0 bytes stack frame, 84 bytes spill stores, 304 bytes spill loads
ptxas info    : Function properties for _Z9quiet_onei
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function 'kernel_b' for 'sm_90'
ptxas info    : Function properties for kernel_b
    896 bytes stack frame, 300 bytes spill stores, 700 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 896 bytes cumulative stack size, 1912 bytes smem
TXT
# An ELF64 little-endian image: a null section, the section names, and
# two code sections (their bytes need not be there: only the headers are read).
"$py" - "$work/rank.cubin" <<'PY'
import struct, sys
names = b"\0.shstrtab\0.text.kernel_a\0.text.kernel_b\0"
def section(name, offset, size):
    return struct.pack("<IIQQQQIIQQ", name, 1, 0, 0, offset, size, 0, 0, 1, 0)
shoff = 64 + len(names)
head = bytearray(64)
head[:6] = b"\x7fELF\x02\x01"
struct.pack_into("<Q", head, 0x28, shoff)
struct.pack_into("<HHH", head, 0x3A, 64, 4, 1)
table = (section(0, 0, 0) + section(1, 64, len(names)) + section(11, 0, 160) +
         section(26, 0, 3200))
open(sys.argv[1], "wb").write(bytes(head) + names + table)
PY
printf 'no elf here' >"$work/bad.cubin"
fail=0
set +e
"$py" "$here/spills.py" --parse "$work/ptxas.txt" >"$work/default.txt" 2>&1
code_default=$?
"$py" "$here/spills.py" --parse "$work/ptxas.txt" --budget 512 >"$work/wide.txt" 2>&1
code_wide=$?
"$py" "$here/spills.py" >"$work/usage.txt" 2>&1
code_usage=$?
"$py" "$here/spills.py" --parse "$work/ptxas.txt" --cubin "$work/rank.cubin" --budget 512 \
    >"$work/sizes.txt" 2>&1
code_sizes=$?
"$py" "$here/spills.py" --parse "$work/ptxas.txt" --cubin "$work/bad.cubin" >"$work/bad.txt" 2>&1
code_bad=$?
"$py" "$here/spills.py" --parse "$work/ptxas.txt" --budget 512 --functions >"$work/functions.txt" 2>&1
code_functions=$?
set -e
expect() { # what, condition
    if eval "$2"; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi
}
expect "exit 1 over the default budget" "[ $code_default = 1 ]"
expect "kernel_a: 128 registers, frame 240, no spills, no size" \
    "grep -Eq '^ptxas.txt +kernel_a +128 +240 +0 +0 +-\$' '$work/default.txt'"
expect "kernel_b: 255 registers, frame 896, 300 and 700, OVER" \
    "grep -Eq '^ptxas.txt +kernel_b +255 +896 +300 +700 +- +OVER\$' '$work/default.txt'"
expect "the helper is no kernel" "! grep -q helper_of_a '$work/default.txt'"
expect "one kernel over 256 bytes" "grep -q '1 kernel(s) spill more than 256 bytes' '$work/default.txt'"
expect "exit 0 under a budget of 512" "[ $code_wide = 0 ] && ! grep -q OVER '$work/wide.txt'"
expect "exit 2 without input" "[ $code_usage = 2 ]"
expect "with the cubin: exit 0, kernel_a 10 instructions" \
    "[ $code_sizes = 0 ] && grep -Eq '^ptxas.txt +kernel_a +128 +240 +0 +0 +10\$' '$work/sizes.txt'"
expect "with the cubin: kernel_b 200 instructions" \
    "grep -Eq '^ptxas.txt +kernel_b +255 +896 +300 +700 +200\$' '$work/sizes.txt'"
expect "a cubin that is no ELF: exit 2, named" \
    "[ $code_bad = 2 ] && grep -q 'bad.cubin: not an ELF64' '$work/bad.txt'"
expect "--functions: exit 0, the helper first with 4000 and 4000" \
    "[ $code_functions = 0 ] && grep -A1 'function out of line' '$work/functions.txt' |
        grep -Eq '^ptxas.txt +helper_of_a +0 +4000 +4000\$'"
expect "--functions: dcu_push_try by its own name, 84 and 304" \
    "grep -Eq '^ptxas.txt +dcu_push_try +0 +84 +304\$' '$work/functions.txt'"
expect "--functions: dcu_push_try once" "[ \$(grep -c dcu_push_try '$work/functions.txt') = 1 ]"
expect "--functions: one more with no frame and no spills" \
    "grep -q '^(1 more function(s) out of line with no frame and no spills)' '$work/functions.txt'"
expect "--functions: no kernel among the functions" \
    "! sed -n '/function out of line/,\$p' '$work/functions.txt' | grep -q kernel_"
[ $fail = 0 ] || { cat "$work/default.txt" "$work/sizes.txt" "$work/bad.txt" "$work/functions.txt"; exit 1; }
