#!/usr/bin/env python3
"""Turns the evaluation's CSV files into PNG figures (needs matplotlib).

  latency.png     one-way latency of notified puts against size: same device
                  and, with 2+ processes, peer (dcuda_bench's -m sweep), with
                  the floors (dcuda_ref_floors' CSV, or the anchors' text) and
                  NVSHMEM's figures (dcuda_ref_nvshmem's CSV, or the anchors'
                  text) beside them where given
  bandwidth.png   GB/s against size: one rank and all ranks, same device and
                  peer
  case_<name>.png each case study's time a step against GPUs, per variant
                  and size, with the baselines' communication time (dashed)

usage: plot_results.py [--bench bench.csv] [--floors floors.csv]
                       [--nvshmem nvshmem.csv] [--cases case-studies.csv ...]
                       [--out DIR] [--title TEXT]

Every input is optional; a figure whose data is missing is not drawn (a
case without a checked result included), and the script says which it
wrote and how many points each draws. dcuda_bench's CSV is read by its
column names (the value column: a row's average), with or without its
"# key: value" head.
"""
import argparse
import collections
import csv
import os
import statistics
import sys


def read_csv(path):
    """The rows of a CSV file; "# key: value" lines (dcuda_bench's head:
    version, commit, device) are left out."""
    with open(path, newline="") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def read_reference(path, floors):
    """{name: value} of a reference file, read by tools/bench_compare.py's
    readers (the CSV of dcuda_ref_floors or dcuda_ref_nvshmem, or the
    anchors' text): floors keyed "local_device notified_put_4B_red_release"
    and the like, NVSHMEM's one-way latencies by name."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import bench_compare as bc
    if floors:
        return bc.read_floors(path)
    got = bc.read_nvshmem(path)[0]
    return {k: v for k, v in got.items() if " " not in k}  # latencies only


def series(rows, kind, what, unit):
    pts = sorted((int(r["bytes"]), float(r["value"])) for r in rows
                 if r["kind"] == kind and r["what"] == what and r["unit"] == unit)
    return [p[0] for p in pts], [p[1] for p in pts]


def plot_latency(plt, rows, floors, nvshmem, out, title):
    fig, ax = plt.subplots(figsize=(7, 4.5))
    drawn = False
    for what, label in (("notified_put", "dcuda, same device"),
                        ("peer_notified_put", "dcuda, peer (process 0 -> 1)")):
        x, y = series(rows, "latency", what, "one_way_us")
        if x:
            ax.plot(x, y, marker="o", label=label)
            drawn = True
    # The floors and NVSHMEM are measured at 4 B: a line across the sizes,
    # which says so, rather than a mark at one size; each floor in its
    # series' colour (C0 same device, C1 peer).
    for place, label, colour in (("local_device", "floor: same device", "C0"),
                                 ("peer_device", "floor: peer", "C1")):
        for form, text in (("notified_put_4B_red_release", "4 B + release add"),
                           ("notified_put_4B_fence", "4 B + fence")):
            if f"{place} {form}" in floors:
                ax.axhline(floors[f"{place} {form}"], linestyle=":", color=colour,
                           label=f"{label} ({text})")
                break
    for k, (name, value) in enumerate(sorted(nvshmem.items())):
        ax.axhline(value, linestyle="--", linewidth=1, color=f"C{k + 2}",
                   label=f"NVSHMEM {name} (4 B)")
    return finish_sizes(plt, fig, ax, drawn, "one-way latency (us; round trip / 2)",
                        f"Notified put latency{title}", out, "latency.png")


def plot_bandwidth(plt, rows, out, title):
    fig, ax = plt.subplots(figsize=(7, 4.5))
    names = sorted({r["what"] for r in rows if r["kind"] == "bandwidth"})
    for what in names:
        x, y = series(rows, "bandwidth", what, "GBps")
        if x:
            ax.plot(x, y, marker=".", label=what.replace("_", " "))
    return finish_sizes(plt, fig, ax, bool(names), "GB/s", f"Notified put bandwidth{title}", out,
                        "bandwidth.png")


def finish_sizes(plt, fig, ax, drawn, ylabel, title, out, name):
    """Log axes over message sizes, then the file (None: nothing drawn)."""
    if not drawn:
        plt.close(fig)
        return None
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("bytes a put")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return save(plt, fig, out, name)


SIZE_ORDER = ("thesis", "scaled", "small")


def plot_cases(plt, rows, out, title):
    """One figure a case with checked results: median time a step against
    GPUs, per variant, one panel per size the rows hold (thesis, scaled,
    small; the network path forced: its own line)."""
    written = []
    checked = [r for r in rows if r["check"] == "MATCH" and r["us"]]
    for case in sorted({r["case"] for r in rows}):
        sizes = sorted({r["size"] for r in checked if r["case"] == case},
                       key=lambda z: (SIZE_ORDER.index(z) if z in SIZE_ORDER else 9, z))
        if not sizes:
            print(f"{case}: no checked result to plot", file=sys.stderr)
            continue
        fig, axes = plt.subplots(1, len(sizes), figsize=(5 * len(sizes), 4), squeeze=False)
        for ax, size in zip(axes[0], sizes):
            groups = collections.defaultdict(lambda: collections.defaultdict(list))
            comm = collections.defaultdict(lambda: collections.defaultdict(list))
            for r in checked:
                if r["case"] != case or r["size"] != size:
                    continue
                key = r["variant"] + (" (net)" if r.get("net") == "1" else "")
                groups[key][int(r["gpus"])].append(float(r["us"]))
                if r.get("comm_us"):
                    comm[key][int(r["gpus"])].append(float(r["comm_us"]))
            for key in sorted(groups):
                g = sorted(groups[key])
                line, = ax.plot(g, [statistics.median(groups[key][n]) for n in g], marker="o",
                                label=key)
                c = sorted(n for n in comm[key] if n > 1)
                if c:
                    ax.plot(c, [statistics.median(comm[key][n]) for n in c], linestyle="--",
                            color=line.get_color(), label=f"{key}: communication")
            gpus = sorted({n for key in groups for n in groups[key]})
            if gpus:
                ax.set_xticks(gpus)
                ax.set_xlim(min(gpus) - 0.5, max(gpus) + 0.5)
            ax.set_ylim(bottom=0)
            ax.set_title(f"{case}, {size} size")
            ax.set_xlabel("GPUs (weak scaling)")
            ax.set_ylabel("us a step (median)")
            ax.grid(True, alpha=0.3)
            if groups:
                ax.legend(fontsize=7)
        fig.suptitle(f"{case}{title}")
        written.append(save(plt, fig, out, f"case_{case}.png"))
    return written


def points(fig):
    """Data points the figure's axes draw (lines and marks)."""
    n = 0
    for ax in fig.axes:
        n += sum(len(line.get_xdata()) for line in ax.get_lines() if line.get_label()[:1] != "_")
        n += sum(len(c.get_offsets()) for c in ax.collections)
    return n


def save(plt, fig, out, name):
    path = os.path.join(out, name)
    n = points(fig)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return f"{path} ({n} points)"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench")
    ap.add_argument("--floors")
    ap.add_argument("--nvshmem")
    ap.add_argument("--cases", nargs="*", default=[])
    ap.add_argument("--out", default=".")
    ap.add_argument("--title", default="")
    args = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot_results.py needs matplotlib (pip install matplotlib, or apt-get install "
                 "python3-matplotlib)")
    os.makedirs(args.out, exist_ok=True)
    title = f" ({args.title})" if args.title else ""
    floors = read_reference(args.floors, True) if args.floors else {}
    nvshmem = read_reference(args.nvshmem, False) if args.nvshmem else {}
    written = []
    if args.bench:
        rows = read_csv(args.bench)
        written += [plot_latency(plt, rows, floors, nvshmem, args.out, title),
                    plot_bandwidth(plt, rows, args.out, title)]
    cases = [r for path in args.cases for r in read_csv(path)]
    if cases:
        written += plot_cases(plt, cases, args.out, title)
    written = [w for w in written if w]
    print("wrote " + (", ".join(written) if written else "nothing (no data given)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
