"""The tutorial's 1D heat diffusion (its rank code, apps/tutorial/
halo_kernel.c: each step every rank puts its edge cells into its
neighbours' halos with notified puts, waits for its own, and steps its
cells; then dcuda_allreduce finds the hottest cell) driven from Python and
checked against NumPy: every cell of this process's ranks bit for bit, and
the hottest cell each rank learnt. Exits 0 on a match."""

import ctypes
import os
import sys

import numpy as np

import dcuda

HERE = os.path.dirname(os.path.abspath(__file__))
TUT = os.path.join(HERE, "..", "..", "apps", "tutorial")
PEAK = 32  # HALO_PEAK_DOUBLES
LEFT, RIGHT = 100.0, -40.0  # HALO_BOUNDARY_LEFT, _RIGHT


class HaloData(ctypes.Structure):  # halo_data_t (apps/tutorial/halo.h)
    _fields_ = [("slabs", ctypes.c_void_p), ("peaks", ctypes.c_void_p), ("cells", ctypes.c_int),
                ("iters", ctypes.c_int), ("scheme", ctypes.c_int), ("mistake", ctypes.c_int),
                ("watch", ctypes.c_int), ("handles", ctypes.c_void_p)]


def initial(g):
    h = (g.astype(np.uint64) * np.uint64(2654435761)) & np.uint64(0xFFFFFFFF)
    return ((h >> np.uint64(8)) % np.uint64(1000)).astype(np.float64) / 10.0


def reference(n, iters):
    line = np.concatenate([[LEFT], initial(np.arange(n)), [RIGHT]])
    for _ in range(iters):
        mid = line[1:-1]
        line = np.concatenate([[LEFT], 0.25 * ((line[:-2] + line[2:]) + (mid + mid)), [RIGHT]])
    return line[1:-1]


def main():
    cells, iters = 64, 50
    kernel = dcuda.build([os.path.join(TUT, "halo_kernel.c")], "halo", include_dirs=[TUT])
    with dcuda.Host(kernel, settings={"ranks": os.environ.get("DCUDA_RANKS", "8")}) as h:
        info = h.info
        mine = info["rank_responsible"]
        slab = 4 + 2 * cells
        slabs = h.alloc(mine * slab, np.float64)
        peaks = h.alloc(mine * PEAK, np.float64)
        handles = h.alloc(mine, np.int64)
        user = HaloData(slabs.ptr, peaks.ptr, cells, iters, 0, 0, 0, handles.ptr)
        h.run(user)
        got = slabs.copy_to_host().reshape(mine, slab)[:, 4 + (iters % 2) * cells:][:, :cells]
        ref = reference(info["rank_count"] * cells, iters)
        first = info["rank_start"] * cells
        want = ref[first:first + mine * cells].reshape(mine, cells)
        hottest = peaks.copy_to_host().reshape(mine, PEAK)[:, 0]
        bad = int((got != want).sum()) + int((hottest != ref.max()).sum())
        print(f"halo from Python: {info['rank_count']} ranks ({info['backend']}), {iters} steps: "
              f"{'match NumPy' if bad == 0 else f'{bad} cells differ from NumPy'}")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(dcuda.exit_status(main()))
