#!/usr/bin/env python3
"""Prints dcuda_bench results beside the reference floors measured in the same
call (anchors/floors.cu output), as ratios against the project's targets.

usage: bench_compare.py BENCH_CSV FLOORS_TXT
"""
import csv
import re
import statistics
import sys


def floors(path):
    """Median of each repeated floor line, keyed by its label."""
    seen = {}
    for line in open(path):
        line = line.strip()
        m = re.match(r"^(local_device|peer_device) (\S+) one_way_us=([\d.]+)", line)
        if m:
            seen.setdefault(f"{m[1]} {m[2]}", []).append(float(m[3]))
            continue
        m = re.match(r"^local_hbm kernel_copy blocks=(\d+) GBps\(copied\)=([\d.]+)", line)
        if m:
            seen.setdefault(f"kernel_copy {m[1]}", []).append(float(m[2]))
            continue
        m = re.match(r"^host_device pinned_flag round_trip_us=([\d.]+)", line)
        if m:
            seen.setdefault("host_flag_rtt", []).append(float(m[1]))
    return {k: statistics.median(v) for k, v in seen.items()}


def bench(path):
    rows = list(csv.DictReader(open(path)))
    out = {}
    for r in rows:
        key = (r["kind"], r["what"])
        out.setdefault(key, []).append((int(r["bytes"]), float(r["value"]), int(r["ranks"])))
    return out


def main():
    f = floors(sys.argv[2])
    b = bench(sys.argv[1])
    lines = []

    def lat(what, floor_key, target):
        ours = b.get(("latency", what))
        fl = f.get(floor_key)
        if ours and fl:
            v = ours[0][1]
            lines.append((what, f"{v:.3f} us", f"{fl:.3f} us", v / fl, f"<= {target}",
                          "ok" if v / fl <= target else "MISSED"))

    lat("notified_put_4B", "local_device notified_put_4B_fence", 1.15)
    lat("notify", "local_device notify", 1.15)
    lat("notified_put_4B_busy_device", "local_device notified_put_4B_fence", 1.15)
    lat("notify_busy_device", "local_device notify", 1.15)

    ping = b.get(("host", "command_queue_ping"))
    if ping and f.get("host_flag_rtt"):
        v, fl = ping[0][1], f["host_flag_rtt"]
        lines.append(("host command queue round trip", f"{v:.3f} us", f"{fl:.3f} us (pinned flag)",
                      v / fl, "-", "(no target)"))

    def bw(what, floor_val, floor_name, target):
        # The largest size: data well beyond L2, as in the floors' copies.
        ours = b.get(("bandwidth", what))
        if ours and floor_val:
            size, v, _ = max(ours)
            lines.append((f"{what} ({size >> 20} MiB)", f"{v:.1f} GB/s", f"{floor_val:.1f} GB/s "
                          f"{floor_name}", v / floor_val, f">= {target}",
                          "ok" if v / floor_val >= target else "MISSED"))

    copies = [v for k, v in f.items() if k.startswith("kernel_copy ")]
    bw("put_all_ranks", max(copies) if copies else None, "(best kernel copy)", 0.80)
    bw("put_one_rank", f.get("kernel_copy 1"), "(1-block copy)", 0.90)

    print(f"{'what':34} {'dcuda':>12} {'floor':>28} {'ratio':>7} {'target':>8} verdict")
    for what, ours, fl, ratio, target, verdict in lines:
        print(f"{what:34} {ours:>12} {fl:>28} {ratio:7.2f} {target:>8} {verdict}")


if __name__ == "__main__":
    main()
