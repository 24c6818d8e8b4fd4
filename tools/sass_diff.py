#!/usr/bin/env python3
"""Where a GPU kernel's instructions and stalls go, by code region, from
ncu's per-instruction counts; and what one launch runs that another does
not.

ncu's source page attributes code inlined from headers to the kernel's
own file only, so a rank call's cost cannot be read there. Its SASS page
counts every instruction (executions, stall samples). This groups the
executed instructions of one export into regions (runs of instructions
with at most --gap unexecuted ones between) and prints the regions that
run most, or, given a second export of the same binary (another launch:
the same kernel running another benchmark row), the regions whose counts
differ most: what the first row runs that the second does not.

  ncu ... --section SourceCounters --section WarpStateStats -o rep APP
  ncu --import rep.ncu-rep --page source --csv --print-source sass > a.csv

  tools/sass_diff.py A.csv [B.csv] [--rounds N] [--top K] [--gap G]
                     [--map LISTING [--map LISTING]] [--in FILE] [--kernel NAME]

--rounds N divides every count by N (the row's timed and untimed rounds:
counts a round, of all the launch's warps). Offsets are from the kernel's
first instruction.

--map LISTING (once for A, again for B) attributes the counts to source
lines instead: LISTING is `nvdisasm -c -gi` of the binary the export
profiled (a -lineinfo build; the section of the export's kernel is read,
or of --kernel NAME's), and each instruction counts for the innermost
frame of its inlining chain in the file --in names (e.g. coll_push.h),
else for the innermost frame in the kernel's own source file (the line
of the kernel's code that called it). With two maps
the exports may hold different code (two builds): their lines are
compared, those whose counts differ most first. A listing whose opcodes
at the offsets an export ran are not the export's (more than 1 in 20) is
warned of: it is another build's.

Exit: 0; 2 on a usage error, an export without per-instruction counts, a
listing without the export's kernel, or two exports of different code
without maps.
"""
import argparse
import csv
import os
import re
import sys

ADDR = re.compile(r"0x[0-9a-fA-F]+$")
ABS = re.compile(r"0x[0-9a-fA-F]{8,}")


def kernel_name(path):
    """The kernel an export profiled (its "Kernel Name" row), or None."""
    with open(path, newline="") as f:
        for r in csv.reader(f):
            if len(r) > 1 and r[0] == "Kernel Name":
                return r[1].strip()
            if r and r[0] == "Address":
                return None
    return None


def read(path):
    """The instructions of one export: (offset, text, executed, samples)."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    head = next((r for r in rows if r and r[0] == "Address"), None)
    if head is None:
        raise ValueError(f"{path}: no 'Address' header row (not ncu's SASS source page?)")
    try:
        i_exec = head.index("Instructions Executed")
        i_samp = head.index("Warp Stall Sampling (All Samples)")
    except ValueError:
        raise ValueError(f"{path}: no per-instruction counts (profile with SourceCounters)")
    out = []
    for r in rows:
        if len(r) <= max(i_exec, i_samp) or not ADDR.match(r[0]):
            continue
        out.append((int(r[0], 16), r[1].strip(), int(r[i_exec] or 0), int(r[i_samp] or 0)))
    if not out:
        raise ValueError(f"{path}: no instructions")
    base = out[0][0]
    return [(a - base, t, e, s) for a, t, e, s in out]


FRAME = re.compile(r'"([^"]+)", line (\d+)')
SASS_AT = re.compile(r"^\s*/\*([0-9a-f]+)\*/\s+(.*)")


def opcode(text):
    """An instruction's opcode, its predicate aside ("@!P0 BRA x" -> "BRA")."""
    words = text.replace(";", " ").split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0] if words else ""


def chain_of(block):
    """The inlining chain of a block of `//## File` lines, innermost first:
    [(file's base name, line)]. A block holds one chain a line-table row
    (each line "A inlined at B", the next line starting at B); the last
    row is the one in force."""
    chains = []
    for frames in block:
        if not chains or not chains[-1] or chains[-1][-1] != frames[0]:
            chains.append([])
        chain = chains[-1]
        if not chain:
            chain.append(frames[0])
        chain.extend(frames[1:])
    return chains[-1] if chains else []


def read_map(path, kernel):
    """{offset: (chain, opcode)} of the instructions of `kernel`'s section
    in an `nvdisasm -c -gi` listing (offsets from the section's start)."""
    where, block, chain, inside = {}, [], [], False
    head = f".text.{kernel}"
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("//----"):
                if inside:
                    break
                inside = line.split()[1:2] == [head]
                continue
            if not inside:
                continue
            if line.lstrip().startswith("//## File"):
                block.append([(os.path.basename(n), int(k)) for n, k in FRAME.findall(line)])
                continue
            if block:
                chain, block = chain_of(block), []
            m = SASS_AT.match(line)
            if m:
                where[int(m.group(1), 16)] = (chain, opcode(m.group(2)))
    if not where:
        raise ValueError(f"{path}: no section {head} with instructions (nvdisasm -c -gi?)")
    return where


def place(chain, infile):
    """Where an instruction counts: the innermost frame in `infile`, else
    the innermost frame in the outermost frame's file (the kernel's source:
    its line that called this code, not the line of the macro that made
    the kernel), as "file:line" ("?" without line info)."""
    if not chain:
        return "?"
    for want in ([infile] if infile else []) + [chain[-1][0]]:
        for name, line in chain:
            if name == want:
                return f"{name}:{line}"
    return "?"


def check_listing(instrs, where, name):
    """Warns unless the listing holds the export's code: the opcodes of
    the instructions it ran, at their offsets (a listing of another build
    puts every count on the wrong line)."""
    ran = [(off, opcode(t)) for off, t, e, smp in instrs if e or smp]
    wrong = sum(1 for off, op in ran if where.get(off, ([], ""))[1] != op)
    if ran and wrong * 20 > len(ran):
        print(f"sass_diff: WARNING: {name}: {wrong} of the {len(ran)} instructions the export ran "
              "are not the listing's at their offsets (a listing of another build?): the lines "
              "below are not to be trusted")


def by_line(instrs, where, infile):
    """{place: [instructions executed at least once, executed, samples]}."""
    out = {}
    for off, _, e, smp in instrs:
        if e == 0 and smp == 0:
            continue
        t = out.setdefault(place(where.get(off, ([], ""))[0], infile), [0, 0, 0])
        t[0] += 1
        t[1] += e
        t[2] += smp
    return out


def print_lines(o, a, b, maps):
    """The counts by source line (maps: A's listing, and B's or A's)."""
    k = o.rounds
    la = by_line(a, maps[0], o.infile)
    lb = by_line(b, maps[-1], o.infile) if b is not None else {}
    keys = set(la) | set(lb)
    zero = [0, 0, 0]
    if b is not None:
        order = sorted(keys, key=lambda x: (-abs(la.get(x, zero)[1] - lb.get(x, zero)[1]),
                                            -la.get(x, zero)[1], x))
        print(f"{'source line':<28} {'instr A':>7} {'exec A':>10} {'instr B':>7} {'exec B':>10}"
              f" {'A - B':>10} {'samples A':>9} {'samples B':>9}")
    else:
        order = sorted(keys, key=lambda x: (-la[x][1], x))
        print(f"{'source line':<28} {'instr':>7} {'exec':>10} {'samples':>9}")
    for x in order[:o.top]:
        ta, tb = la.get(x, zero), lb.get(x, zero)
        if b is not None:
            print(f"{x:<28} {ta[0]:>7} {ta[1] / k:>10.1f} {tb[0]:>7} {tb[1] / k:>10.1f}"
                  f" {(ta[1] - tb[1]) / k:>10.1f} {ta[2]:>9} {tb[2]:>9}")
        else:
            print(f"{x:<28} {ta[0]:>7} {ta[1] / k:>10.1f} {ta[2]:>9}")
    if len(order) > o.top:
        print(f"({len(order) - o.top} more lines)")


def same_code(a, b):
    """Do two exports hold the same instructions (absolute addresses aside)?"""
    if len(a) != len(b):
        return False
    return all(x[0] == y[0] and ABS.sub("ADDR", x[1]) == ABS.sub("ADDR", y[1])
               for x, y in zip(a, b))


def regions(a, b, gap):
    """Runs of instructions either export executed, at most `gap`
    unexecuted instructions apart: start, end, instructions, executed in
    a and in b, samples in a and in b, the first instruction's text."""
    out, cur, quiet = [], None, 0
    for i, (off, text, ea, sa) in enumerate(a):
        eb, sb = (b[i][2], b[i][3]) if b else (0, 0)
        if ea == 0 and eb == 0:
            quiet += 1
            continue
        if cur is None or quiet > gap:
            cur = {"start": off, "end": off, "n": 0, "ea": 0, "eb": 0, "sa": 0, "sb": 0,
                   "first": ABS.sub("", text)}
            out.append(cur)
        quiet = 0
        cur["end"] = off
        cur["n"] += 1
        cur["ea"] += ea
        cur["eb"] += eb
        cur["sa"] += sa
        cur["sb"] += sb
    return out


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("a")
    p.add_argument("b", nargs="?")
    p.add_argument("--rounds", type=float, default=1.0)
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--gap", type=int, default=4)
    p.add_argument("--map", action="append", default=[])
    p.add_argument("--in", dest="infile")
    p.add_argument("--kernel")
    try:
        o = p.parse_args(argv)
    except SystemExit:
        return 2
    if o.rounds <= 0 or o.top < 1 or o.gap < 0:
        print("sass_diff: --rounds must be > 0, --top >= 1, --gap >= 0", file=sys.stderr)
        return 2
    if o.infile:
        o.infile = os.path.basename(o.infile)
    if len(o.map) > (2 if o.b else 1):
        print("sass_diff: --map once for each export at most", file=sys.stderr)
        return 2
    try:
        a = read(o.a)
        b = read(o.b) if o.b else None
        maps = [read_map(m, o.kernel or kernel_name(x) or "?") for m, x in zip(o.map, [o.a, o.b])]
    except (OSError, ValueError) as e:
        print(f"sass_diff: {e}", file=sys.stderr)
        return 2
    if b is not None and len(maps) < 2 and not same_code(a, b):
        print(f"sass_diff: {o.a} and {o.b} hold different code (two builds?)", file=sys.stderr)
        return 2
    k = o.rounds
    total = lambda xs, i: sum(x[i] for x in xs)
    print(f"{o.a}: {total(a, 2) / k:.1f} warp instructions, {total(a, 3)} stall samples"
          + (f" (a round of {k:g})" if k != 1 else ""))
    if b is not None:
        print(f"{o.b}: {total(b, 2) / k:.1f} warp instructions, {total(b, 3)} stall samples")
    if maps:
        for x, i in ((a, 0), (b, -1)):  # B's listing is A's where one was given
            if x is not None:
                check_listing(x, maps[i], o.map[i])
        print_lines(o, a, b, maps)
        return 0
    regs = regions(a, b, o.gap)
    key = (lambda r: -abs(r["ea"] - r["eb"])) if b is not None else (lambda r: -r["ea"])
    print(f"{'offset':>9} {'to':>9} {'instr':>6} {'exec A':>10}"
          + (f" {'exec B':>10} {'A - B':>10}" if b is not None else "")
          + f" {'samples A':>9}  first instruction")
    for r in sorted(regs, key=key)[:o.top]:
        line = f"{r['start']:>#9x} {r['end']:>#9x} {r['n']:>6} {r['ea'] / k:>10.1f}"
        if b is not None:
            line += f" {r['eb'] / k:>10.1f} {(r['ea'] - r['eb']) / k:>10.1f}"
        print(line + f" {r['sa']:>9}  {r['first'][:48]}")
    if len(regs) > o.top:
        print(f"({len(regs) - o.top} more regions)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
