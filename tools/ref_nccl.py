#!/usr/bin/env python3
"""NCCL's collectives through PyTorch (torch.distributed, backend nccl), one
process a GPU, as the reference beside dcuda_bench's collective rows: for
each collective and size, the mean time of a call over back-to-back calls
(CUDA events around the loop, as nccl-tests times them) and nccl-tests'
algbw and busbw. Rows in the reference programs' format (bench/ref_rows.h:
kind,what,ranks,bytes,unit,value), on stdout and into --csv.

Usage: tools/ref_nccl.py [--gpus N] [--sizes 8,4096,67108864] [--iters N]
                         [--csv FILE]
Needs PyTorch with CUDA and 2+ GPUs; says why and exits 0 otherwise.
"""
import argparse
import os
import socket
import sys

# bytes a collective of `size` bytes a buffer moves, over its time, and
# nccl-tests' bus factors for n ranks
BUS = {
    "allreduce": lambda n: 2.0 * (n - 1) / n,
    "allgather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def one_call(dist, name, small, big, other):
    """The collective `name` on float32 buffers: `small` of the size a rank
    contributes, `big` and `other` n times larger."""
    if name == "allreduce":
        dist.all_reduce(small)
    elif name == "broadcast":
        dist.broadcast(small, 0)
    elif name == "allgather":
        dist.all_gather_into_tensor(big, small)
    elif name == "reduce_scatter":
        dist.reduce_scatter_tensor(small, big)
    else:
        dist.all_to_all_single(other, big)


def worker(rank, n, port, sizes, iters, rows):
    import torch
    import torch.distributed as dist
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=n)
    for name in ("allreduce", "broadcast", "allgather", "reduce_scatter", "alltoall"):
        for size in sizes:
            elems = max(1, size // 4)
            small = torch.ones(elems, device="cuda")
            big = torch.ones(elems * n, device="cuda") if name != "allreduce" else None
            other = torch.empty(elems * n, device="cuda") if name == "alltoall" else None
            for _ in range(max(5, iters // 10)):
                one_call(dist, name, small, big, other)
            torch.cuda.synchronize()
            dist.barrier()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(iters):
                one_call(dist, name, small, big, other)
            end.record()
            torch.cuda.synchronize()
            us = start.elapsed_time(end) * 1000.0 / iters
            t = torch.tensor([us], device="cuda")
            dist.all_reduce(t, op=dist.ReduceOp.MAX)
            if rank == 0:
                s = elems * 4 * (n if name in ("allgather", "reduce_scatter", "alltoall") else 1)
                algbw = s / (t.item() * 1e3)
                rows.append(("collective", "nccl_" + name, n, elems * 4, "us_per_call", t.item()))
                rows.append(("busbw", "nccl_" + name, n, elems * 4, "GBps", algbw * BUS[name](n)))
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpus", type=int, default=0)
    ap.add_argument("--sizes", default="8,4096,67108864")
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--csv")
    a = ap.parse_args()
    try:
        import torch
        import torch.multiprocessing as mp
    except ImportError as e:
        print(f"ref_nccl: no PyTorch here ({e}): no NCCL figures")
        return 0
    n = a.gpus or torch.cuda.device_count()
    if n < 2 or not torch.distributed.is_nccl_available():
        print(f"ref_nccl: needs NCCL and 2 GPUs ({torch.cuda.device_count()} visible)")
        return 0
    sizes = [int(s) for s in a.sizes.split(",")]
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # NVLink SHARP off, as for NVSHMEM
    rows = mp.Manager().list()
    mp.spawn(worker, args=(n, free_port(), sizes, a.iters, rows), nprocs=n)
    print("%-10s %-30s %6s %9s %12s %10s" % ("kind", "what", "ranks", "bytes", "unit", "value"))
    for r in rows:
        print("%-10s %-30s %6d %9d %12s %10.3f" % r)
    if a.csv:
        with open(a.csv, "w") as f:
            f.write("kind,what,ranks,bytes,unit,value\n")
            for r in rows:
                f.write("%s,%s,%d,%d,%s,%.6f\n" % r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
