#!/usr/bin/env python3
"""Prints dcuda_bench results beside the reference figures measured in the same
call, as ratios against the project's targets:

  same device   dcuda_bench rows vs dcuda_ref_floors (bench/ref_floors.cu: raw
                flag ping-pong, kernel copies, pinned-flag host round trip)
  peer          dcuda_bench peer_* rows (2+ processes) vs dcuda_ref_nvshmem
                (bench/ref_nvshmem.cu: put_signal, fence + signal_op,
                putmem_block) and dcuda_ref_floors' cudaMemcpyPeer

Like is compared with like: a dcuda notification is a release (it orders the
rank's earlier writes and reads), so notify is divided by the release rows
(the floors' notify_release, NVSHMEM's fence + signal_op); the relaxed rows
(the floors' notify_relaxed, NVSHMEM's signal_op) order nothing and are printed for the
record only.

usage: bench_compare.py BENCH_CSV FLOORS [NVSHMEM]

BENCH_CSV is dcuda_bench's CSV: its "# key: value" head (version, commit,
device, driver) is printed first, and its rows' value (the average) is
compared. Its collective rows are latencies (each call done at every rank
before the next) and its rate rows the same calls back to back; NVSHMEM's
reference times its collectives back to back, so they are set beside the
rate rows (older CSVs: the collective rows, timed back to back then), with
dcuda's latency beside them for the record.
FLOORS and NVSHMEM are the CSV files of the project's reference programs
(dcuda_ref_floors --csv, dcuda_ref_nvshmem --csv; tools/references.sh runs
them), in dcuda_bench's CSV format, or the text the anchors print (older
logs). Any file may be missing or partial: the script says what it lacks
and prints the rows it can.
"""
import csv
import os
import re
import statistics
import sys


def read_lines(path, what):
    """Lines of path, or None after saying why not."""
    if not path:
        print(f"# {what}: no file given")
        return None
    if not os.path.isfile(path):
        print(f"# {what}: {path} missing")
        return None
    try:
        with open(path, errors="replace") as f:
            return f.read().splitlines()
    except OSError as e:
        print(f"# {what}: cannot read {path}: {e}")
        return None


def medians(seen):
    return {k: statistics.median(v) for k, v in seen.items() if v}


FLOOR_PATTERNS = [
    # (regex, key template); the key may use the groups before the value.
    (r"^(local_device|peer_device) (\S+) one_way_us=([\d.]+)", "{0} {1}"),
    (r"^local_hbm kernel_copy blocks=(\d+) GBps\(copied\)=([\d.]+)", "kernel_copy {0}"),
    (r"^host_device pinned_flag round_trip_us=([\d.]+)", "host_flag_rtt"),
    (r"^peer memcpyPeer 0->1 GBps=([\d.]+)", "memcpy_peer"),
    (r"^peer kernel_push 0->1 blocks=(\d+) GBps=([\d.]+)", "kernel_push {0}"),
]

NVSHMEM_PATTERNS = [
    (r"^nvshmem peer (put_signal_4B|signal_op|fence_signal_op|put_signal_block128_4B) "
     r"one_way_us=([\d.]+)", "{0}"),
    (r"^nvshmem peer putmem_block 0->1 blocks=(\d+) GBps=([\d.]+)", "putmem_block {0}"),
]


def parse(lines, patterns):
    """Median of each repeated line, keyed by its label; the value is the
    last group of the pattern."""
    seen = {}
    for line in lines or []:
        line = line.strip()
        for pattern, key in patterns:
            m = re.match(pattern, line)
            if m:
                try:
                    value = float(m.groups()[-1])
                except ValueError:
                    break
                seen.setdefault(key.format(*m.groups()[:-1]), []).append(value)
                break
    return medians(seen)


# dcuda_ref_floors' latency rows: what -> the key the anchors' text gives.
FLOOR_SIGNALS = {
    "notify_relaxed": "notify",
    "notify_release": "notify_release",
    "put_4B_release": "notified_put_4B_red_release",
    "put_4B_fence": "notified_put_4B_fence",
}


def csv_rows(lines):
    """dcuda_bench-format CSV rows, or None when the lines are not such CSV."""
    body = [l for l in lines or [] if l.strip() and not l.startswith("#")]
    if not body or not body[0].startswith("kind,what,"):
        return None
    rows = []
    for r in csv.DictReader(body):
        try:
            rows.append((r["kind"], r["what"], int(r["ranks"]), int(r["bytes"]), float(r["value"])))
        except (KeyError, TypeError, ValueError):
            continue
    return rows


def floor_key(kind, what, ranks, size):
    """The key of one dcuda_ref_floors row, or None (size: unused, as in
    nvshmem_key's signature)."""
    place, _, signal = what.partition("_")
    if kind == "latency" and place in ("local", "peer") and signal in FLOOR_SIGNALS:
        return f"{place}_device {FLOOR_SIGNALS[signal]}"
    if kind == "bandwidth" and what in ("kernel_copy", "kernel_push"):
        return f"{what} {ranks}"
    if kind == "bandwidth" and what in ("memcpy_peer", "memcpy_d2d"):
        return what
    if kind == "host" and what == "pinned_flag":
        return "host_flag_rtt"
    return None


def nvshmem_key(kind, what, ranks, size):
    """The key of one dcuda_ref_nvshmem row, or None."""
    if kind == "latency":
        return what
    if kind == "bandwidth" and what == "putmem_block":
        return f"putmem_block {ranks}"
    if kind == "collective":
        return f"collective {what} {size}"
    return None


def reference(lines, patterns, key_of):
    """Figures of a reference file: its CSV rows through key_of, or the
    anchors' text through patterns; repeated keys give their median."""
    rows = csv_rows(lines)
    if rows is None:
        return parse(lines, patterns)
    seen = {}
    for kind, what, ranks, size, value in rows:
        key = key_of(kind, what, ranks, size)
        if key:
            seen.setdefault(key, []).append(value)
    return medians(seen)


def read_floors(path):
    """The floors of a file (dcuda_ref_floors' CSV or the anchors' text):
    {key: value}."""
    return reference(read_lines(path, "floors"), FLOOR_PATTERNS, floor_key)


def read_nvshmem(path):
    """NVSHMEM's figures of a file (dcuda_ref_nvshmem's CSV or the anchors'
    text): {key: value}, and its lines (None when it could not be read)."""
    lines = read_lines(path, "NVSHMEM")
    return reference(lines, NVSHMEM_PATTERNS, nvshmem_key), lines


def bench_head(path):
    """{key: value} of the "# key: value" lines that head dcuda_bench's CSV
    (none in older files)."""
    head = {}
    for line in read_lines(path, "bench CSV head") or []:
        if not line.startswith("#"):
            break
        key, sep, value = line[1:].partition(":")
        if sep:
            head[key.strip()] = value.strip()
    return head


def bench(path):
    """{(kind, what): [(bytes, value, ranks)]} from dcuda_bench's CSV; rows
    that do not parse are skipped. The collectives' latency rows (unit
    latency_us) go under ("collective_latency", what): ("collective", what)
    keeps the back-to-back timings of older CSVs alone."""
    lines = read_lines(path, "bench CSV")
    out = {}
    if lines is None:
        return out
    for r in csv.DictReader(l for l in lines if l and not l.startswith("#")):
        try:
            kind = r["kind"]
            if kind == "collective" and r.get("unit") == "latency_us":
                kind = "collective_latency"
            key = (kind, r["what"])
            out.setdefault(key, []).append((int(r["bytes"]), float(r["value"]), int(r["ranks"])))
        except (KeyError, TypeError, ValueError):
            continue
    return out


def best_of(f, prefix):
    """(value, key) of the highest figure whose key starts with prefix."""
    hits = [(v, k) for k, v in f.items() if k.startswith(prefix)]
    return max(hits) if hits else (None, None)


class Table:
    def __init__(self, title):
        self.title = title
        self.lines = []

    def add(self, what, ours, ref, ratio, target, verdict):
        self.lines.append((what, ours, ref, ratio, target, verdict))

    def missing(self, what, why):
        self.lines.append((what, "-", why, None, "-", "n/a"))

    def print(self):
        print(f"\n{self.title}")
        print(f"{'what':40} {'dcuda':>12} {'reference':>40} {'ratio':>7} {'target':>8} verdict")
        for what, ours, ref, ratio, target, verdict in self.lines:
            r = f"{ratio:7.2f}" if ratio is not None else f"{'-':>7}"
            print(f"{what:40} {ours:>12} {ref:>40} {r} {target:>8} {verdict}")


def verdict(ratio, target, below):
    if target is None:
        return "(no target)"
    return "ok" if (ratio <= target if below else ratio >= target) else "MISSED"


def same_device(b, f):
    t = Table("same device (dcuda_bench vs the raw floors)")

    def lat(what, floor_key, target):
        ours = b.get(("latency", what))
        fl = f.get(floor_key)
        name = floor_key.split()[-1]
        if ours and fl:
            v = ours[0][1]
            t.add(what, f"{v:.3f} us", f"{fl:.3f} us ({name})", v / fl,
                  f"<= {target}" if target else "-",
                  verdict(v / fl, target, True))

    # Targets: within 1.25x of the release floors (store + release add; the
    # release add alone). The store + release add row, where the anchors
    # print it; else store + fence + relaxed add, which orders the same.
    put_floor = "local_device notified_put_4B_red_release"
    if put_floor not in f:
        put_floor = "local_device notified_put_4B_fence"
    lat("notified_put_4B", put_floor, 1.25)
    lat("notify", "local_device notify_release", 1.25)
    lat("notified_put_4B_busy_device", put_floor, 1.25)
    lat("notify_busy_device", "local_device notify_release", 1.25)
    lat("notify", "local_device notify", None)  # relaxed: orders nothing

    ping = b.get(("host", "command_queue_ping"))
    if ping and f.get("host_flag_rtt"):
        v, fl = ping[0][1], f["host_flag_rtt"]
        t.add("host command queue round trip", f"{v:.3f} us", f"{fl:.3f} us (pinned flag)",
              v / fl, "-", "(no target)")

    def bw(what, floor_val, floor_name, target):
        # The largest size: data well beyond L2, as in the floors' copies.
        ours = b.get(("bandwidth", what))
        if ours and floor_val:
            size, v, _ = max(ours)
            t.add(f"{what} ({size >> 20} MiB)", f"{v:.1f} GB/s", f"{floor_val:.1f} GB/s {floor_name}",
                  v / floor_val, f">= {target}", verdict(v / floor_val, target, False))

    bw("put_all_ranks", best_of(f, "kernel_copy ")[0], "(best kernel copy)", 0.80)
    bw("put_one_rank", f.get("kernel_copy 1"), "(1-block copy)", 0.90)
    if t.lines:
        t.print()
    else:
        print("\n# same device: no rows to compare (bench CSV or floors missing)")


def size_name(n):
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


def peer(b, f, nv, have_nv):
    t = Table("peer, process 0 -> process 1 (dcuda_bench vs NVSHMEM and the raw floors)")
    nv_why = "NVSHMEM figures missing" if not have_nv else "not in NVSHMEM output"

    def lat(what, size, nv_key, target):
        rows = [r for r in b.get(("latency", what), []) if r[0] == size]
        label = f"{what} {size_name(size)}" if size else what
        shown = f"<= {target}" if target else "-"
        if not rows:
            t.missing(label, "no dcuda row")
            return
        v = rows[0][1]
        ref = nv.get(nv_key)
        if not ref:
            t.add(label, f"{v:.3f} us", nv_why, None, shown, "n/a")
            return
        t.add(label, f"{v:.3f} us", f"{ref:.3f} us ({nv_key})", v / ref, shown,
              verdict(v / ref, target, True))

    # Targets: a small notified put at most 0.6x NVSHMEM's put_signal, a
    # notification no slower than NVSHMEM's fence + signal_op (both release).
    lat("peer_notified_put", 4, "put_signal_4B", 0.6)
    lat("peer_notified_put", 4, "put_signal_block128_4B", None)
    lat("peer_notify", 0, "fence_signal_op", 1.0)
    lat("peer_notify", 0, "signal_op", None)  # relaxed: orders nothing
    # With every rank the device holds resident (the others in a barrier).
    lat("peer_notified_put_busy_device", 4, "put_signal_4B", None)
    lat("peer_notify_busy_device", 0, "fence_signal_op", None)
    # A fetch-add's round trip (dcuda_atomic against nvshmem_..._atomic_fetch_add).
    lat("peer_atomic_fetch_add", 8, "atomic_fetch_add_8B", None)

    # The other sizes, for the record: how latency grows with the payload.
    for size, v, _ in sorted(b.get(("latency", "peer_notified_put"), [])):
        if size != 4:
            t.add(f"peer_notified_put {size_name(size)}", f"{v:.3f} us", "-", None, "-", "(no target)")
    raw = f.get("peer_device notified_put_4B_fence")
    small = [r for r in b.get(("latency", "peer_notified_put"), []) if r[0] == 4]
    if raw and small:
        t.add("peer_notified_put 4 B vs raw flag", f"{small[0][1]:.3f} us",
              f"{raw:.3f} us (floors peer flag)", small[0][1] / raw, "-", "(no target)")

    def largest(what):
        rows = b.get(("bandwidth", what))
        return max(rows) if rows else None

    def bw(what, ours, ref, ref_name, target, why):
        if not ours:
            t.missing(what, "no dcuda row")
            return
        size, v, ranks = ours
        label = f"{what} ({ranks} x {size_name(size)})"
        if not ref:
            t.add(label, f"{v:.1f} GB/s", why, None, f">= {target}", "n/a")
            return
        t.add(label, f"{v:.1f} GB/s", f"{ref:.1f} GB/s {ref_name}", v / ref, f">= {target}",
              verdict(v / ref, target, False))

    # The largest size of each series: data well beyond L2.
    all_ranks = largest("peer_put_all_ranks")
    pm, pm_key = best_of(nv, "putmem_block ")
    bw("peer_put_all_ranks", all_ranks, pm,
       f"({pm_key.replace('putmem_block ', 'putmem_block, ')} blocks)" if pm_key else "",
       1.05, nv_why)
    bw("peer_put_all_ranks", all_ranks, f.get("memcpy_peer"), "(cudaMemcpyPeer)", 0.95,
       "cudaMemcpyPeer figure missing in floors")
    r32 = largest("peer_put_32_ranks")
    if r32:
        size, v, ranks = r32
        t.add(f"peer_put_32_ranks ({ranks} x {size_name(size)})", f"{v:.1f} GB/s", "300.0 GB/s (absolute)",
              v / 300.0, ">= 1.0", verdict(v / 300.0, 1.0, False))
    else:
        t.missing("peer_put_32_ranks", "no dcuda row (< 32 ranks a process?)")
    one = largest("peer_put_1_rank")
    if one:
        size, v, ranks = one
        push1 = f.get("kernel_push 1")
        t.add(f"peer_put_1_rank ({size_name(size)})", f"{v:.1f} GB/s",
              f"{push1:.1f} GB/s (1-block push)" if push1 else "-",
              v / push1 if push1 else None, "-", "(no target)")

    if any(k[1].startswith("peer_") for k in b):
        t.print()
    else:
        print("\n# peer: no peer_* rows in the bench CSV (one process: one GPU, or a build "
              "without multi-process support)")
        if have_nv:
            for k in ("put_signal_4B", "put_signal_block128_4B", "fence_signal_op", "signal_op"):
                if k in nv:
                    print(f"#   NVSHMEM {k}: {nv[k]:.3f} us one-way")
            if pm:
                print(f"#   NVSHMEM best putmem_block: {pm:.1f} GB/s")


# NVSHMEM's block-scoped collective -> dcuda_bench's row of the same work
# between the processes, one rank each (kind, what).
COLLECTIVE_PAIRS = {
    "barrier_all_block": ("runtime", "peer_world_barrier"),
    "char_broadcast_block": ("collective", "peer_broadcast"),
    "float_sum_reduce_block": ("collective", "peer_allreduce_sum_float"),
    "fcollectmem_block": ("collective", "peer_allgather"),
    "alltoallmem_block": ("collective", "peer_alltoall"),
}


def dcuda_row(b, key, size):
    """dcuda_bench's value of key at size bytes, or None."""
    hits = [v for s, v, _ in b.get(key, []) if s == size]
    return statistics.median(hits) if hits else None


def dcuda_back_to_back(b, key, size):
    """dcuda's microseconds a call back to back, as NVSHMEM's reference
    times them: from the rate row (calls a second), else from an older
    CSV's collective row or the barrier's row; None when neither is there."""
    kind, what = key
    rate = dcuda_row(b, ("rate", what), size) if kind == "collective" else None
    if rate:
        return 1.0 / rate  # Mcalls/s -> us a call
    return dcuda_row(b, key, size)


def nvshmem_collectives(b, nv):
    """NVSHMEM's block-scoped collectives (one block a PE) beside dcuda's
    with one rank a process, at the sizes both measured: back to back
    (the ratio), and dcuda's latency for the record."""
    rows = sorted((k.split()[1], int(k.split()[2]), v) for k, v in nv.items()
                  if k.startswith("collective "))
    if not rows:
        return
    print("\nCollectives between two GPUs: NVSHMEM, one block a PE; dcuda, one rank a process")
    print(f"{'collective':28} {'bytes':>9} {'NVSHMEM us':>11} {'dcuda us':>9} {'ratio':>6} "
          f"{'dcuda latency us':>16}")
    for what, size, v in rows:
        key = COLLECTIVE_PAIRS.get(what)
        at = 0 if what == "barrier_all_block" else size
        ours = dcuda_back_to_back(b, key, at) if key else None
        lat = dcuda_row(b, ("collective_latency", key[1]), at) if key else None
        cell = f"{ours:9.3f} {ours / v:6.2f}" if ours is not None and v > 0 else f"{'-':>9} {'-':>6}"
        lat_cell = f"{lat:16.3f}" if lat is not None else f"{'-':>16}"
        print(f"{what:28} {size:9d} {v:11.3f} {cell} {lat_cell}")


def main():
    if len(sys.argv) < 3 or len(sys.argv) > 4:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    head = bench_head(sys.argv[1])
    if head:
        print("# bench: " + "; ".join(f"{k} {head[k]}" for k in
                                      ("dcuda_version", "dcuda_commit", "backend", "device",
                                       "nvidia_driver", "cuda_runtime") if k in head))
    b = bench(sys.argv[1])
    f = read_floors(sys.argv[2])
    nv, nlines = read_nvshmem(sys.argv[3]) if len(sys.argv) > 3 else ({}, None)
    if nlines is not None and not nv:
        print(f"# NVSHMEM: no figures in {sys.argv[3]} (the anchor failed or was skipped?)")
    same_device(b, f)
    peer(b, f, nv, bool(nv))
    nvshmem_collectives(b, nv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
