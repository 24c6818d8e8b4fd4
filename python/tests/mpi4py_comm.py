"""Under mpirun: MPI started by mpi4py, its COMM_WORLD handed to dcuda
(Host(mpi_comm=...)); dcuda's processes are its members, numbered as in
it. Prints 'mpi4py: ok' in each process when they agree."""

import os
import sys

from mpi4py import MPI

import dcuda

HERE = os.path.dirname(os.path.abspath(__file__))

kernel = dcuda.build([os.path.join(HERE, "rma_kernel.c")], "rma")
comm = MPI.COMM_WORLD
with dcuda.Host(kernel, settings={"backend": "cpu", "ranks": 2}, mpi_comm=comm) as h:
    ok = h.info["process_index"] == comm.Get_rank() and h.info["process_count"] == comm.Get_size()
print(f"mpi4py: {'ok' if ok else 'DIFFERS'} (process {comm.Get_rank()})")
sys.exit(0 if ok else 1)
