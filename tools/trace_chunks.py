#!/usr/bin/env python3
"""Where a large put's stream waits, from two proxies' traces (a build with
-DDCUDA_PROXY_TRACE=ON appends its marks to dcuda-trace.<process>.txt).

Process 0 sends the chunks of large puts (1 MiB, DCU_NET_PUT_CHUNK) to
process 1, as dcuda_bench's peer bandwidth rows do with
DCUDA_NET_FORCE=1. Chunks of one pair arrive in the order sent, so the
i-th chunk sent is the i-th received. Medians and the 10th and 90th
percentiles, in microseconds, of each stage of the credit's loop: the
manager carrying a chunk (sent -> arrival) and giving its staging buffer
back (sent -> released); the target writing it into rank memory
(arrival -> landed, waiting behind the chunks before it included); its
acknowledgement reaching the sender (landed -> ack); the sender's next
chunk after an acknowledgement; and the time between sends. Both
processes' marks use the host's monotonic clock (one host).

usage: trace_chunks.py [dir]"""
import bisect
import os
import statistics
import sys

SENT, RECEIVED, LANDED, ACKED, RELEASED = 2, 3, 5, 6, 7
CHUNK = 1 << 20
GAP_NS = 2_000_000  # a gap this long is between two rows, not inside one


def events(marks, event, sizes):
    return [ns for e, ns, n in marks if e == event and sizes(n)]


def load(path):
    with open(path) as f:
        return [tuple(int(x) for x in line.split()) for line in f if line.strip()]


def after(times, t):
    i = bisect.bisect_left(times, t)
    return times[i] - t if i < len(times) else None


def report(name, values):
    values = sorted(v for v in values if v is not None and v < GAP_NS)
    if not values:
        print("%-24s none" % name)
        return
    pick = lambda q: values[min(len(values) - 1, len(values) * q // 100)] / 1000
    print("%-24s median %7.1f  p10 %7.1f  p90 %7.1f us" %
          (name, statistics.median(values) / 1000, pick(10), pick(90)))


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "."
    a = load(os.path.join(d, "dcuda-trace.0.txt"))
    b = load(os.path.join(d, "dcuda-trace.1.txt"))
    chunk = lambda n: n == CHUNK
    sent, released = events(a, SENT, chunk), events(a, RELEASED, chunk)
    acked = events(a, ACKED, lambda n: n >= CHUNK)
    received, landed = events(b, RECEIVED, chunk), events(b, LANDED, lambda n: n >= CHUNK)
    k = min(len(sent), len(received), len(released), len(landed))
    print("chunks: %d sent, %d received" % (len(sent), len(received)))
    report("sent -> released", [r - s for s, r in zip(sent[:k], released[:k])])
    report("sent -> arrival", [r - s for s, r in zip(sent[:k], received[:k])])
    report("arrival -> landed", [l - r for r, l in zip(received[:k], landed[:k])])
    report("landed -> ack at sender", [after(acked, t) for t in landed[:k]])
    report("ack -> next send", [after(sent, t) for t in acked])
    report("between sends", [y - x for x, y in zip(sent, sent[1:])])
    return 0 if k else 1


if __name__ == "__main__":
    sys.exit(main())
