#!/usr/bin/env python3
"""Draws the scale benchmark's rows (tools/scale.sh's CSV, or a results file
under docs/results) as one SVG of two panels against the process count, on
log scales: the WORLD barrier and window creation + free (microseconds a
call), and resident memory a process (MiB: all of it; the network
engine's; the rest, dcuda's own and the program's, where the CSV has those
columns). Plain SVG, no plotting library needed.

usage: plot_scale.py CSV [CSV ...] [--out scale.svg] [--title TEXT]

Rows of every CSV are drawn together (lines starting with '#' are
comments); a process count seen twice keeps its last row.
"""
import argparse
import csv
import math
import sys

WIDTH, HEIGHT = 900, 420
PANEL_W, PANEL_H = 360, 300
MARGIN_L, MARGIN_T = 70, 60
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]

PANELS = [
    ("microseconds a call", [("barrier_us", "WORLD barrier"),
                             ("window_us", "window create + free")]),
    ("MiB a process (max)", [("rss_mib_max", "resident after init"),
                             ("engine_mib", "network engine's"),
                             ("own_mib", "the rest (dcuda, program)")]),
]


def read_rows(paths):
    rows = {}
    for path in paths:
        with open(path, newline="") as f:
            lines = [line for line in f if not line.startswith("#")]
        for row in csv.DictReader(lines):
            try:
                rows[int(row["processes"])] = row
            except (KeyError, ValueError):
                continue
    return [rows[p] for p in sorted(rows)]


def log_ticks(lo, hi):
    """Powers of ten (or of two for process counts) covering lo..hi."""
    first = math.floor(math.log10(lo))
    last = math.ceil(math.log10(hi))
    return [10.0 ** e for e in range(first, last + 1)]


def series(rows, key):
    out = []
    for row in rows:
        value = row.get(key)
        if value not in (None, ""):
            v = float(value)
            if v > 0:
                out.append((int(row["processes"]), v))
    return out


def panel(x0, title, lines, rows):
    """The SVG of one panel at x offset x0."""
    data = [(label, series(rows, key)) for key, label in lines]
    data = [(label, pts) for label, pts in data if pts]
    if not data:
        return []
    ps = [p for _, pts in data for p, _ in pts]
    vs = [v for _, pts in data for _, v in pts]
    px_lo, px_hi = math.log2(min(ps)), math.log2(max(ps))
    yticks = log_ticks(min(vs), max(vs))
    py_lo, py_hi = math.log10(yticks[0]), math.log10(yticks[-1])
    if px_hi == px_lo:
        px_hi = px_lo + 1
    if py_hi == py_lo:
        py_hi = py_lo + 1

    def x(p):
        return x0 + (math.log2(p) - px_lo) / (px_hi - px_lo) * PANEL_W

    def y(v):
        return MARGIN_T + PANEL_H - (math.log10(v) - py_lo) / (py_hi - py_lo) * PANEL_H

    out = ['<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#888"/>'
           % (x0, MARGIN_T, PANEL_W, PANEL_H),
           '<text x="%d" y="%d" font-size="13" text-anchor="middle">%s</text>'
           % (x0 + PANEL_W / 2, MARGIN_T - 10, title)]
    for p in sorted(set(ps)):
        out.append('<text x="%.1f" y="%d" font-size="11" text-anchor="middle">%d</text>'
                   % (x(p), MARGIN_T + PANEL_H + 16, p))
    for t in yticks:
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>'
                   % (x0, x0 + PANEL_W, y(t), y(t)))
        out.append('<text x="%d" y="%.1f" font-size="11" text-anchor="end">%g</text>'
                   % (x0 - 5, y(t) + 4, t))
    for i, (label, pts) in enumerate(data):
        colour = COLOURS[i % len(COLOURS)]
        path = " ".join("%.1f,%.1f" % (x(p), y(v)) for p, v in pts)
        out.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>'
                   % (path, colour))
        for p, v in pts:
            out.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>' % (x(p), y(v), colour))
        out.append('<text x="%d" y="%d" font-size="11" fill="%s">%s</text>'
                   % (x0 + 8, MARGIN_T + 16 + 14 * i, colour, label))
    out.append('<text x="%d" y="%d" font-size="11" text-anchor="middle">processes</text>'
               % (x0 + PANEL_W / 2, MARGIN_T + PANEL_H + 34))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--out", default="scale.svg")
    ap.add_argument("--title", default="dcuda_scale")
    args = ap.parse_args()
    rows = read_rows(args.csv)
    if not rows:
        print("plot_scale.py: no rows with a 'processes' column", file=sys.stderr)
        return 1
    body = ['<text x="%d" y="24" font-size="15" text-anchor="middle">%s</text>'
            % (WIDTH / 2, args.title)]
    for k, (title, lines) in enumerate(PANELS):
        body += panel(MARGIN_L + k * (PANEL_W + 90), title, lines, rows)
    with open(args.out, "w") as f:
        f.write('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
                'font-family="sans-serif">\n' % (WIDTH, HEIGHT))
        f.write('<rect width="100%" height="100%" fill="white"/>\n')
        f.write("\n".join(body) + "\n</svg>\n")
    print("wrote %s (%d process counts)" % (args.out, len(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
