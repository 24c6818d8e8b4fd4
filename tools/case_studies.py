#!/usr/bin/env python3
"""Runs the case studies of the evaluation (apps/particles, apps/hdiff,
apps/spmv, apps/power) with every variant, at the thesis' size per GPU and at the scaled size, and
writes what each run printed as CSV, then a table of medians with the best
baseline's time over the best dcuda variant's (above 1: dcuda faster).

  dcuda          the dcuda program (on an H100: 396 ranks of 128 threads
                 for hdiff, 132 of 384 for spmv and power)
  dcuda-wide     the same, rank code capped at fewer registers for more
                 warps an SM (hdiff: 64 registers, 1056 ranks; spmv and
                 power: 128 registers, 264 ranks of 256 threads); not for
                 particles, whose force loop would spill
  bsp-streams    the bulk-synchronous baseline: kernels and host-staged MPI
  bsp-ipc        the same with the exchange GPU to GPU (CUDA IPC between
                 kernels, interprocess events, no host wait); on several
                 GPUs
  bsp-graph      the same on one GPU, all steps as one CUDA graph
  bsp-cusparse   SpMV's baseline with cuSPARSE's kernel, as a graph

usage: case_studies.py [--build DIR] [--gpus N] [--rounds R] [--csv FILE]
                       [--cases particles,hdiff,spmv,power] [--small] [--net]
                       [--hosts]

--gpus N runs N processes, a GPU each (dcuda: DCUDA_PROCESSES=N; the
baselines under mpirun); SpMV and power iteration need a square N. --net
forces dcuda's network path between processes. --hosts puts each of the
N processes in a simulated host of its own (tools/simhosts.sh, as root),
with one GPU a host where there are GPUs (SIMHOSTS_GPUS=1), dcuda and
the baselines alike under mpirun (tests/run_mpirun_hosts.sh): dcuda's ranks
of other hosts are then reached through its network path, as across nodes;
bsp-ipc does not apply. --small runs the test
entries' sizes (a smoke test, on CPU ranks where there is no GPU). Every run
says on stderr which case, size, variant and round it is; a run that fails
or finds a mismatch is reported and recorded, and the exit status is 1.
"""
import argparse
import csv
import functools
import os
import re
import shutil
import statistics
import subprocess
import sys

# Per case: its program prefix, the option of the scaled size, and the
# arguments of the test entries (--small).
CASES = {
    "particles": ("particles", ["--particles-w=1664", "--particles-n=1642400"],
                  ["--particles-n=600", "--particles-w=12", "--particles-segs=12",
                   "--particles-iters=30", "--particles-cap=200"]),
    "hdiff": ("hdiff", ["--hdiff-nz=104"],
              ["--hdiff-nx=16", "--hdiff-ny=12", "--hdiff-nz=3", "--hdiff-iters=10"]),
    "spmv": ("spmv", ["--spmv-n=43264"],
             ["--spmv-n=48", "--spmv-nnz=5", "--spmv-iters=6"]),
    "power": ("power", ["--power-n=43264"],
              ["--power-n=48", "--power-nnz=5", "--power-iters=7"]),
}
NO_WIDE = {"particles"}
SQUARE = {"spmv", "power"}  # their processes form a square grid
VARIANTS = ["dcuda", "dcuda-wide", "bsp-streams", "bsp-ipc", "bsp-graph", "bsp-cusparse"]
TIME = re.compile(r"([0-9.]+) us per (?:iteration|multiplication|step)")
COMM = re.compile(r"(?:communication|exchange) ([0-9.]+) us per")


def command(args, case, variant):
    """The command line and environment of one run, or None when it does not
    apply (a graph on several GPUs, IPC on one or across hosts, cuSPARSE
    outside SpMV, no wide build, SpMV or power on a count that is no
    square)."""
    prefix = CASES[case][0]
    app = os.path.join(args.build, "apps", case)
    env = dict(os.environ)
    if variant == "dcuda-wide" and case in NO_WIDE:
        return None
    if case in SQUARE and round(args.gpus ** 0.5) ** 2 != args.gpus:
        return None
    if args.hosts:
        env["SIMHOSTS_GPUS"] = "1" if has_gpu() else ""
        if variant == "bsp-ipc":
            return None
    if variant.startswith("dcuda"):
        exe = os.path.join(app, f"dcuda_{prefix}" + ("_wide" if variant == "dcuda-wide" else ""))
        if args.hosts:
            return across_hosts(args, [exe]), env
        if args.gpus > 1:
            env["DCUDA_PROCESSES"] = str(args.gpus)
        if args.net:
            env["DCUDA_NET_FORCE"] = "1"
        if args.small and not has_gpu():
            env.setdefault("DCUDA_BACKEND", "cpu")
            env.setdefault("DCUDA_RANKS", "4")
        return [exe], env
    if (variant in ("bsp-graph", "bsp-cusparse") and args.gpus > 1) or \
            (variant == "bsp-cusparse" and case != "spmv") or \
            (variant == "bsp-ipc" and args.gpus < 2):
        return None
    exe = [os.path.join(app, f"dcuda_{prefix}_bsp")]
    exe += {"bsp-graph": ["--bsp-graph"], "bsp-ipc": ["--bsp-ipc"],
            "bsp-cusparse": ["--bsp-cusparse", "--bsp-graph"]}.get(variant, [])
    if args.hosts:
        exe = across_hosts(args, exe)
    elif args.gpus > 1:
        exe = ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", str(args.gpus)] + exe
    return exe, env


def across_hosts(args, exe):
    """exe under mpirun in args.gpus simulated hosts, a process each."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                          "run_mpirun_hosts.sh")
    return [script, str(args.gpus), str(args.gpus)] + exe


@functools.lru_cache(maxsize=None)
def has_gpu():
    return shutil.which("nvidia-smi") is not None and \
        subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0


def run_one(exe, env, size_args, case):
    """(status, us, comm_us): status is MATCH, MISMATCH, skipped, missing or
    failed (...)."""
    if any(not os.path.exists(x) for x in exe if os.sep in x):
        return "missing", None, None
    try:
        p = subprocess.run(exe + size_args, env=env, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return "failed (timeout)", None, None
    lines = [l for l in p.stdout.splitlines() if l.startswith(case + ":")]
    checked = [l for l in lines if "MATCH" in l] or lines
    line = checked[0] if checked else ""
    if p.returncode == 77:
        return "skipped", None, None
    us = TIME.search(line)
    comm = COMM.search(line)
    status = "MISMATCH" if any("MISMATCH" in l for l in lines) else \
        "MATCH" if p.returncode == 0 and "MATCH" in line else f"failed (rc {p.returncode})"
    if status.startswith("failed"):
        sys.stderr.write(p.stderr[-2000:])
    return status, float(us.group(1)) if us else None, float(comm.group(1)) if comm else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--gpus", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--csv", default="case_studies.csv")
    ap.add_argument("--cases", default="particles,hdiff,spmv,power")
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--net", action="store_true")
    ap.add_argument("--hosts", action="store_true")
    args = ap.parse_args()
    cases = [c for c in args.cases.split(",") if c]
    unknown = [c for c in cases if c not in CASES]
    if unknown or args.gpus < 1 or args.rounds < 1:
        ap.error(f"unknown case(s) {unknown}" if unknown else "--gpus and --rounds are at least 1")
    if args.hosts and args.gpus < 2:
        ap.error("--hosts needs --gpus 2 or more (a process, and a GPU, a host)")
    sizes = ["small"] if args.small else ["thesis", "scaled"]
    plan = [(c, s, v, r) for r in range(1, args.rounds + 1) for c in cases for s in sizes
            for v in VARIANTS if command(args, c, v)]
    rows, failed = [], False
    for i, (case, size, variant, rnd) in enumerate(plan, 1):
        sys.stderr.write(f"[{i}/{len(plan)}] {case} {size} {variant} on {args.gpus} GPU(s), "
                         f"round {rnd} ... ")
        sys.stderr.flush()
        exe, env = command(args, case, variant)
        size_args = CASES[case][2] if size == "small" else CASES[case][1] if size == "scaled" else []
        status, us, comm = run_one(exe, env, size_args, case)
        sys.stderr.write(f"{status}" + (f", {us:.2f} us" if us is not None else "") + "\n")
        failed |= status not in ("MATCH", "skipped", "missing")
        rows.append({"case": case, "size": size, "variant": variant, "gpus": args.gpus,
                     "net": int(args.net), "hosts": int(args.hosts), "round": rnd, "us": us, "comm_us": comm,
                     "check": status})
    with open(args.csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()) if rows else ["case"])
        w.writeheader()
        w.writerows(rows)
    print_table(rows, cases, sizes, args.gpus)
    print(f"\n(CSV: {args.csv})")
    return 1 if failed else 0


def print_table(rows, cases, sizes, gpus):
    """Medians a case, size and variant (us a step), and the best baseline's
    time over the best dcuda variant's (above 1: dcuda faster)."""
    print(f"| case | size | GPUs | " + " | ".join(VARIANTS) + " | best baseline / best dcuda |")
    print("|---|---|---|" + "---|" * len(VARIANTS) + "---|")
    for case in cases:
        for size in sizes:
            med = {}
            for v in VARIANTS:
                t = [r["us"] for r in rows if r["case"] == case and r["size"] == size and
                     r["variant"] == v and r["us"] is not None and r["check"] == "MATCH"]
                med[v] = statistics.median(t) if t else None
            base = [med[v] for v in VARIANTS if v.startswith("bsp") and med[v]]
            ours = [med[v] for v in VARIANTS if v.startswith("dcuda") and med[v]]
            ratio = f"{min(base) / min(ours):.2f}" if base and ours else "-"
            cells = [f"{med[v]:.2f}" if med[v] else "-" for v in VARIANTS]
            print(f"| {case} | {size} | {gpus} | " + " | ".join(cells) + f" | {ratio} |")


if __name__ == "__main__":
    sys.exit(main())
