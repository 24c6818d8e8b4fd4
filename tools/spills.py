#!/usr/bin/env python3
"""Registers and spills of the GPU rank code's kernels, from ptxas.

Every rank call is inlined into the kernel that calls it, and the kernels
of dcuda_bench run at 255 registers: code added to one call can make the
whole kernel spill, and slow calls it never runs (vector adds inlined into
the collectives made a kernel's 8-byte put 20% slower). This compiles the
rank code of a CUDA build again with `ptxas -v` and prints, for each kernel,
its registers, stack frame and spill bytes; it fails when one spills more
than a budget.

  tools/spills.py BUILD_DIR [--match TEXT] [--budget BYTES] [--jobs N]
      compiles the .cu files of BUILD_DIR/compile_commands.json whose path
      holds TEXT (default bench_kernel; "" for all), on N processes
  tools/spills.py --parse FILE [--budget BYTES]
      reads ptxas -v output saved in FILE instead

Exit: 0, 1 when a kernel's spill stores pass BYTES (default 256), 2 on a
usage error or a failed compilation. Needs nvcc (no GPU).
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

ENTRY = re.compile(r"Compiling entry function '([^']+)'")
PROPS = re.compile(r"Function properties for (\S+)")
FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
USED = re.compile(r"Used (\d+) registers")


def parse(text, source):
    """The kernels of one ptxas -v output: dicts of source, kernel,
    registers, frame, stores, loads (-1 where ptxas said nothing)."""
    kernels, current, props = {}, None, None
    for line in text.splitlines():
        m = ENTRY.search(line)
        if m:
            current = m.group(1)
            kernels[current] = dict(source=source, kernel=current, registers=-1, frame=-1,
                                    stores=-1, loads=-1)
            continue
        m = PROPS.search(line)
        if m:
            props = m.group(1)
            continue
        m = FRAME.search(line)
        if m and props in kernels:
            k = kernels[props]
            k["frame"], k["stores"], k["loads"] = (int(g) for g in m.groups())
            props = None
            continue
        m = USED.search(line)
        if m and current in kernels and kernels[current]["registers"] < 0:
            kernels[current]["registers"] = int(m.group(1))
    return list(kernels.values())


def compile_verbose(entry):
    """ptxas -v output of one compile_commands.json entry (its object to
    /dev/null), or raises CalledProcessError."""
    args = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    if "-o" in args:
        i = args.index("-o")
        args[i + 1] = os.devnull
    args += ["-Xptxas", "-v"]
    run = subprocess.run(args, cwd=entry["directory"], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, check=False)
    if run.returncode != 0:
        raise subprocess.CalledProcessError(run.returncode, args, run.stdout)
    return run.stdout


def sources(build, match):
    path = os.path.join(build, "compile_commands.json")
    if not os.path.exists(path):
        sys.exit(f"spills: no {path} (configure the build with CMake 3.x: dcuda sets "
                 "CMAKE_EXPORT_COMPILE_COMMANDS)")
    with open(path) as f:
        entries = json.load(f)
    return [e for e in entries if e["file"].endswith(".cu") and match in e["file"]]


def report(kernels, budget):
    """Prints the table; the kernels over the budget."""
    print(f"{'source':<28} {'kernel':<40} {'regs':>5} {'frame':>6} {'stores':>7} {'loads':>6}")
    over = []
    for k in kernels:
        flag = ""
        if k["stores"] > budget:
            over.append(k)
            flag = "  OVER"
        print(f"{k['source']:<28} {k['kernel']:<40} {k['registers']:>5} {k['frame']:>6} "
              f"{k['stores']:>7} {k['loads']:>6}{flag}")
    return over


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build", nargs="?", help="a CUDA build directory")
    ap.add_argument("--parse", metavar="FILE", help="ptxas -v output saved in FILE")
    ap.add_argument("--match", default="bench_kernel", help="compile the .cu files holding TEXT")
    ap.add_argument("--budget", type=int, default=256, help="spill stores a kernel may have")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    if bool(a.build) == bool(a.parse):
        ap.print_usage(sys.stderr)
        print("spills: give a build directory or --parse FILE", file=sys.stderr)
        return 2
    if a.parse:
        with open(a.parse) as f:
            kernels = parse(f.read(), os.path.basename(a.parse))
    else:
        todo = sources(a.build, a.match)
        if not todo:
            print(f"spills: no .cu file holding '{a.match}' in {a.build}", file=sys.stderr)
            return 2
        try:
            with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
                outputs = list(pool.map(compile_verbose, todo))
        except subprocess.CalledProcessError as e:
            print(f"spills: compiling failed:\n{e.output}", file=sys.stderr)
            return 2
        kernels = []
        for e, out in zip(todo, outputs):
            kernels += parse(out, os.path.basename(e["file"]).replace(".c.cu", ""))
    if not kernels:
        print("spills: ptxas named no kernel", file=sys.stderr)
        return 2
    over = report(kernels, a.budget)
    if over:
        print(f"spills: {len(over)} kernel(s) spill more than {a.budget} bytes", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
