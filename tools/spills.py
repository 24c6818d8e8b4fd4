#!/usr/bin/env python3
"""Registers and spills of the GPU rank code's kernels, from ptxas.

Every rank call is inlined into the kernel that calls it, and the kernels
of dcuda_bench run at 255 registers: code added to one call can make the
whole kernel spill, and slow calls it never runs (vector adds inlined into
the collectives made a kernel's 8-byte put 20% slower). This compiles the
rank code of a CUDA build again with `ptxas -v` and prints, for each kernel,
its registers, stack frame, spill bytes and SASS instructions; it fails
when one spills more than a budget. The instructions are the size of the
kernel's code (its section of the cubin, 16 bytes an instruction on sm_70
and later, its functions out of line within it): a kernel of 200,000 waits
for instructions a sixth of its time (ncu of dcuda_bench's collectives on
an H200), and its rows move by several percent with code they never run.

  tools/spills.py BUILD_DIR [--match TEXT] [--budget BYTES] [--jobs N]
      compiles the .cu files of BUILD_DIR/compile_commands.json whose path
      holds TEXT (default bench_kernel; "" for all), on N processes, each
      for the first sm_ architecture its command names
  tools/spills.py --parse FILE [--cubin CUBIN] [--budget BYTES]
      reads ptxas -v output saved in FILE instead (and the kernels' sizes
      from CUBIN; without it the column says -)
  --functions
      also lists the functions out of line that have a frame or spills
      (the pushed collectives' dcu_push_try, a kernel's body), once each,
      most spill stores first, by their own names, and counts the others:
      their spills are saves and restores of registers around the calls,
      local memory that a wait's acquire sends back to L2. Not counted
      against the budget.

Exit: 0, 1 when a kernel's spill stores pass BYTES (default 256), 2 on a
usage error or a failed compilation. Needs nvcc (no GPU).
"""
import argparse
import json
import os
import re
import shlex
import struct
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

ENTRY = re.compile(r"Compiling entry function '([^']+)'")
PROPS = re.compile(r"Function properties for (\S+)")
FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
USED = re.compile(r"Used (\d+) registers")


def properties(text):
    """Every "Function properties" of one ptxas -v output, kernels' and
    other functions', in order: (name, frame, stores, loads)."""
    found, props = [], None
    for line in text.splitlines():
        m = PROPS.search(line)
        if m:
            props = m.group(1)
            continue
        m = FRAME.search(line)
        if m and props:
            found.append((props, *(int(g) for g in m.groups())))
        props = None
    return found


def parse(text, source):
    """The kernels of one ptxas -v output: dicts of source, kernel,
    registers, frame, stores, loads (-1 where ptxas said nothing)."""
    kernels, current = {}, None
    for line in text.splitlines():
        m = ENTRY.search(line)
        if m:
            current = m.group(1)
            kernels[current] = dict(source=source, kernel=current, registers=-1, frame=-1,
                                    stores=-1, loads=-1)
            continue
        m = USED.search(line)
        if m and current in kernels and kernels[current]["registers"] < 0:
            kernels[current]["registers"] = int(m.group(1))
    for name, frame, stores, loads in properties(text):
        if name in kernels:
            kernels[name].update(frame=frame, stores=stores, loads=loads)
    return list(kernels.values())


def functions(text, source):
    """The functions out of line of one ptxas -v output (every "Function
    properties" that is no kernel's): dicts of source, function (its own
    name, from the mangled one), frame, stores, loads."""
    entries = set(ENTRY.findall(text))
    return [dict(source=source, function=own_name(name), frame=frame, stores=stores, loads=loads)
            for name, frame, stores, loads in properties(text) if name not in entries]


def own_name(mangled):
    """A function's own name from its Itanium-mangled one (the last part of
    a nested name, _ZN...E, or the one name of _Z<len><name>); the name as
    given where it is not mangled (C)."""
    if not mangled.startswith("_Z"):
        return mangled
    at, nested = 2, mangled.startswith("_ZN")
    at += nested
    last = mangled
    while at < len(mangled) and mangled[at].isdigit():
        end = at
        while end < len(mangled) and mangled[end].isdigit():
            end += 1
        length = int(mangled[at:end])
        last = mangled[end:end + length]
        at = end + length
        if not nested:
            break
    return last


def report_functions(found):
    """The functions with a frame or spills, once each (ptxas names a
    function again for every kernel that calls it), most spill stores
    first; then how many have neither."""
    rows, quiet = {}, set()
    for f in found:
        key = (f["source"], f["function"], f["frame"], f["stores"], f["loads"])
        if f["frame"] or f["stores"] or f["loads"]:
            rows[key] = f
        else:
            quiet.add((f["source"], f["function"]))
    print(f"{'source':<28} {'function out of line':<40} {'frame':>6} {'stores':>7} {'loads':>6}")
    for f in sorted(rows.values(), key=lambda f: (-f["stores"], f["function"])):
        print(f"{f['source']:<28} {f['function'][:40]:<40} {f['frame']:>6} {f['stores']:>7} "
              f"{f['loads']:>6}")
    print(f"({len(quiet)} more function(s) out of line with no frame and no spills)")


SASS_BYTES = 16  # one instruction, sm_70 and later


def text_sizes(data):
    """Bytes of each code section (.text.NAME) of an ELF64 little-endian
    image, by NAME: a cubin's kernels."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not an ELF64 little-endian file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)

    def header(i):  # name offset, size of section i
        at = shoff + i * shentsize
        name, = struct.unpack_from("<I", data, at)
        offset, size = struct.unpack_from("<QQ", data, at + 0x18)
        return name, offset, size

    _, names_at, _ = header(shstrndx)
    sizes = {}
    for i in range(shnum):
        name, _, size = header(i)
        end = data.index(b"\0", names_at + name)
        text = data[names_at + name:end].decode("ascii", "replace")
        if text.startswith(".text."):
            sizes[text[len(".text."):]] = size
    return sizes


def cubin_args(args, out):
    """The compile command args made to write a cubin to `out` for its
    first sm_ architecture (a cubin holds one), or None when it names none."""
    arch = None
    for a in args:
        m = re.search(r"sm_(\d+)", a)
        if m and ("code" in a or a.startswith("-arch")):
            arch = "sm_" + m.group(1)
            break
    if arch is None:
        return None
    kept, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-gencode", "--generate-code", "-arch", "--gpu-architecture", "-code"):
            skip = True
            continue
        if a.startswith(("-gencode=", "--generate-code=", "-arch=", "--gpu-architecture=",
                         "-code=")):
            continue
        kept.append("-cubin" if a == "-c" else a)
    if "-o" in kept:
        kept[kept.index("-o") + 1] = out
    return kept + ["-arch=" + arch]


def compile_verbose(entry):
    """ptxas -v output of one compile_commands.json entry and its kernels'
    code sizes (a cubin for its first architecture, or {} when its command
    names none), or raises CalledProcessError."""
    args = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    with tempfile.TemporaryDirectory() as tmp:
        cubin = os.path.join(tmp, "rank.cubin")
        made = cubin_args(args, cubin)
        if made is None:
            made = list(args)
            if "-o" in made:
                made[made.index("-o") + 1] = os.devnull
        made += ["-Xptxas", "-v"]
        run = subprocess.run(made, cwd=entry["directory"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, check=False)
        if run.returncode != 0:
            raise subprocess.CalledProcessError(run.returncode, made, run.stdout)
        sizes = {}
        if os.path.exists(cubin):
            with open(cubin, "rb") as f:
                sizes = text_sizes(f.read())
    return run.stdout, sizes


def add_sizes(kernels, sizes):
    """Each kernel's instructions from the sizes of its cubin (-1: none)."""
    for k in kernels:
        size = sizes.get(k["kernel"])
        k["instructions"] = size // SASS_BYTES if size is not None else -1
    return kernels


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
    print(f"{'source':<28} {'kernel':<40} {'regs':>5} {'frame':>6} {'stores':>7} {'loads':>6} "
          f"{'instr':>8}")
    over = []
    for k in kernels:
        flag = ""
        if k["stores"] > budget:
            over.append(k)
            flag = "  OVER"
        instr = k["instructions"] if k["instructions"] >= 0 else "-"
        print(f"{k['source']:<28} {k['kernel']:<40} {k['registers']:>5} {k['frame']:>6} "
              f"{k['stores']:>7} {k['loads']:>6} {instr:>8}{flag}")
    return over


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build", nargs="?", help="a CUDA build directory")
    ap.add_argument("--parse", metavar="FILE", help="ptxas -v output saved in FILE")
    ap.add_argument("--cubin", metavar="CUBIN", help="with --parse: the kernels' cubin")
    ap.add_argument("--match", default="bench_kernel", help="compile the .cu files holding TEXT")
    ap.add_argument("--budget", type=int, default=256, help="spill stores a kernel may have")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--functions", action="store_true",
                    help="also list the functions out of line (not counted)")
    a = ap.parse_args()
    if bool(a.build) == bool(a.parse):
        ap.print_usage(sys.stderr)
        print("spills: give a build directory or --parse FILE", file=sys.stderr)
        return 2
    if a.cubin and not a.parse:
        print("spills: --cubin goes with --parse", file=sys.stderr)
        return 2
    found = []
    if a.parse:
        with open(a.parse) as f:
            text = f.read()
        kernels = parse(text, os.path.basename(a.parse))
        found = functions(text, os.path.basename(a.parse))
        sizes = {}
        if a.cubin:
            try:
                with open(a.cubin, "rb") as f:
                    sizes = text_sizes(f.read())
            except (OSError, ValueError) as e:
                print(f"spills: {a.cubin}: {e}", file=sys.stderr)
                return 2
        add_sizes(kernels, sizes)
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
        for e, (out, sizes) in zip(todo, outputs):
            name = os.path.basename(e["file"]).replace(".c.cu", "")
            kernels += add_sizes(parse(out, name), sizes)
            found += functions(out, name)
    if not kernels:
        print("spills: ptxas named no kernel", file=sys.stderr)
        return 2
    over = report(kernels, a.budget)
    if a.functions:
        print()
        report_functions(found)
    if over:
        print(f"spills: {len(over)} kernel(s) spill more than {a.budget} bytes", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
