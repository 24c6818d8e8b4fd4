#!/usr/bin/env python3
"""The network path's hops from two proxies' traces (a build with
-DDCUDA_PROXY_TRACE=ON writes dcuda-trace.<process>.txt).

Messages of one pair of processes arrive in the order sent, so the i-th
message process A sent is the i-th process B received. For each message
size it prints medians, in microseconds, of: A's proxy from finding the
command to handing the message to the manager; the manager (handed over
at A to received at B); B's proxy writing it to the inbox; and, when B's
next event is a command (a ping-pong), B's turnaround: from the inbox
write until B's proxy finds B's next command (the rank seeing the
message, acting, and its command reaching the host).

With only dcuda-trace.0.txt (one process on the loopback path,
NET_LOOPBACK=1), that proxy is both A and B: its i-th message sent is its
i-th received, and a turnaround ends at the other rank's answer.

usage: trace_hops.py [dir] (files dcuda-trace.0.txt and .1.txt)"""
import os
import statistics
import sys

SEEN, SENT, RECEIVED, WRITTEN = 1, 2, 3, 4


def load(path):
    with open(path) as f:
        return [tuple(int(x) for x in line.split()) for line in f if line.strip()]


def hops(a, b, out):
    """Hops of the messages a sent to b, into out[bytes][hop]."""
    sent = [(i, e) for i, e in enumerate(a) if e[0] == SENT]
    recv = [(i, e) for i, e in enumerate(b) if e[0] == RECEIVED]
    for (ia, s), (ib, r) in zip(sent, recv):
        row = out.setdefault(s[2], {})
        if ia > 0 and a[ia - 1][0] == SEEN:
            row.setdefault("send", []).append(s[1] - a[ia - 1][1])
        row.setdefault("wire", []).append(r[1] - s[1])
        if ib + 1 < len(b) and b[ib + 1][0] == WRITTEN:
            w = b[ib + 1]
            row.setdefault("write", []).append(w[1] - r[1])
            if ib + 2 < len(b) and b[ib + 2][0] == SEEN:
                row.setdefault("turn", []).append(b[ib + 2][1] - w[1])


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "."
    paths = [os.path.join(d, "dcuda-trace.%d.txt" % p) for p in (0, 1)]
    out = {}
    if not os.path.exists(paths[1]):  # loopback: one proxy sends and receives
        t = load(paths[0])
        hops(t, t, out)
    else:
        t = [load(p) for p in paths]
        hops(t[0], t[1], out)
        hops(t[1], t[0], out)
    cols = ["send", "wire", "write", "turn"]
    print("| bytes | messages | " + " | ".join(c + " us" for c in cols) + " |")
    print("|---:|---:|" + "---:|" * len(cols))
    for size in sorted(out):
        row = out[size]
        n = len(row.get("wire", []))
        med = ["%.2f" % (statistics.median(row[c]) / 1e3) if row.get(c) else "-" for c in cols]
        print("| %d | %d | %s |" % (size, n, " | ".join(med)))


if __name__ == "__main__":
    main()
