"""The thesis' distributed reduction (the demo's rank code, apps/demo/
reduce_kernel.c) driven from Python: every rank sums its 128 values, a
binomial tree of notified puts brings the sums to rank 0, and the result is
checked against NumPy. Runs as one process, forked (DCUDA_PROCESSES=2) or
under mpirun; each process checks what it holds. Exits 0 on a match."""

import ctypes
import os
import sys

import numpy as np

import dcuda

HERE = os.path.dirname(os.path.abspath(__file__))
DEMO = os.path.join(HERE, "..", "..", "apps", "demo")
PER_RANK = 128  # REDUCE_VALUES_PER_RANK (apps/demo/reduce.h)


class ReduceData(ctypes.Structure):  # reduce_data_t
    _fields_ = [("data", ctypes.c_void_p), ("buffer", ctypes.c_void_p),
                ("result", ctypes.c_double)]


def values(first, count):
    i = np.arange(first, first + count, dtype=np.uint64)
    with np.errstate(over="ignore"):
        x = i * np.uint64(0x9E3779B97F4A7C15) + np.uint64(12345)
        x ^= x >> np.uint64(31)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(29)
    return (x % np.uint64(1000000)).astype(np.float64)


def main():
    kernel = dcuda.build([os.path.join(DEMO, "reduce_kernel.c")], "reduce", include_dirs=[DEMO])
    with dcuda.Host(kernel, settings={"ranks": os.environ.get("DCUDA_RANKS", "8")}) as h:
        info = h.info
        n = info["rank_responsible"] * PER_RANK
        buf = h.alloc(n + info["rank_count"], np.float64)
        host = np.concatenate([values(info["rank_start"] * PER_RANK, n),
                               -np.ones(info["rank_count"])])
        buf.copy_from(host)
        user = ReduceData(buf.ptr, buf.ptr + n * 8, 0.0)
        h.run(user)
        expect = values(0, info["rank_count"] * PER_RANK).sum()
        ok = info["process_index"] != 0 or user.result == expect
        if info["process_index"] == 0:  # rank 0's result is in process 0's struct alone
            print(f"reduce from Python: {info['rank_count']} ranks, {info['process_count']} "
                  f"process(es) ({info['backend']}): sum {user.result:.1f}, NumPy "
                  f"{expect:.1f}: {'MATCH' if ok else 'MISMATCH'}")
        buf.free()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(dcuda.exit_status(main()))
