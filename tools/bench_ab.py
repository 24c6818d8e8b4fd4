#!/usr/bin/env python3
"""Compares dcuda_bench runs of two builds taken in one call, row by row:
the median of each build's runs, the ratio new/base, and the spread of each
build's own runs (max - min over median), so that a difference can be told
from noise. Latency rows are better lower, bandwidth and rate rows higher.

usage: bench_ab.py [--stat COLUMN] --base A1.csv [A2.csv ...] --new B1.csv [B2.csv ...]

--stat picks the column compared: value (the average, the default), or
p50, min, p99, ... of dcuda_bench's CSV (its statistics over the rounds of
a row). The "# key: value" head of each file (dcuda's version and commit,
the device) is printed for both builds. Rows are matched by kind, what,
ranks, bytes and unit, so rows whose unit changed meaning between the
builds (the collectives' us_per_call, now latency_us) are not compared.

A row is flagged "worse" when the new median is worse than the base median
by more than the larger of the two spreads (and by more than 2%).
"""
import csv
import statistics
import sys


def read(path, stat):
    rows, head = {}, {}
    try:
        with open(path) as f:
            lines = f.read().splitlines()
        for line in lines:
            if line.startswith("#"):
                key, sep, value = line[1:].partition(":")
                if sep and key.strip() not in head:
                    head[key.strip()] = value.strip()
        for r in csv.DictReader(l for l in lines if l.strip() and not l.startswith("#")):
            key = (r["kind"], r["what"], r["ranks"], r["bytes"], r["unit"])
            if r.get(stat):
                rows[key] = float(r[stat])
    except (OSError, KeyError, ValueError) as e:
        print(f"# cannot read {path}: {e}")
    return rows, head


def gather(paths, stat, who):
    seen = {}
    for p in paths:
        rows, head = read(p, stat)
        facts = [f"{k} {head[k]}" for k in ("dcuda_version", "dcuda_commit", "device") if k in head]
        if facts:
            print(f"# {who} {p}: " + "; ".join(facts))
        for k, v in rows.items():
            seen.setdefault(k, []).append(v)
    return seen


def spread(vals):
    m = statistics.median(vals)
    return (max(vals) - min(vals)) / m if m else 0.0


def main(argv):
    stat = "value"
    if "--stat" in argv:
        k = argv.index("--stat")
        if k + 1 >= len(argv):
            print(__doc__)
            return 2
        stat = argv[k + 1]
        argv = argv[:k] + argv[k + 2:]
    if "--base" not in argv or "--new" not in argv:
        print(__doc__)
        return 2
    i, j = argv.index("--base"), argv.index("--new")
    base = gather(argv[i + 1:j] if i < j else argv[i + 1:], stat, "base")
    new = gather(argv[j + 1:] if j > i else argv[j + 1:i], stat, "new")
    print(f"# compared: {stat}")
    print(f"{'kind':<10} {'what':<28} {'ranks':>5} {'bytes':>9} {'unit':>10} "
          f"{'base':>10} {'new':>10} {'new/base':>8} {'spread':>7}  verdict")
    worse = 0
    for k in sorted(set(base) & set(new), key=lambda k: (k[0], k[1], int(k[2]), int(k[3]))):
        b, n = statistics.median(base[k]), statistics.median(new[k])
        if b == 0:
            continue
        ratio = n / b
        lower_better = "us" in k[4].split("_")  # one_way_us, us_per_call, latency_us
        change = (ratio - 1) if lower_better else (1 - ratio)  # > 0: new is worse
        noise = max(spread(base[k]), spread(new[k]), 0.02)
        verdict = "worse" if change > noise else "better" if -change > noise else "same"
        worse += verdict == "worse"
        print(f"{k[0]:<10} {k[1]:<28} {k[2]:>5} {k[3]:>9} {k[4]:>10} {b:>10.3f} {n:>10.3f} "
              f"{ratio:>8.3f} {noise:>7.3f}  {verdict}")
    only = set(base) ^ set(new)
    if only:
        print(f"# {len(only)} row(s) in only one build")
    print(f"# rows worse beyond noise: {worse}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
