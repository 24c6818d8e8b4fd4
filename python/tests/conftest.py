"""Shared by the Python tests: the examples' folder, a runner of a script
in processes of its own (forked groups, mpirun, the network path), and
the kernels built once a session."""

import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "examples")


def run_script(path, env=None, mpirun=0, timeout=120):
    """path run as `python3 path` (or under mpirun -np N): its exit status
    and output."""
    cmd = [sys.executable, path]
    if mpirun:
        launcher = shutil.which("mpirun")
        if not launcher:
            pytest.skip("no mpirun here")
        fwd = []
        for k in ("PYTHONPATH", "DCUDAPY_LIBRARY", "DCUDAPY_CACHE_DIR", *(env or {})):
            fwd += ["-x", k]
        cmd = [launcher, "--allow-run-as-root", "--oversubscribe", *fwd, "-np", str(mpirun), *cmd]
    full = dict(os.environ, **(env or {}))
    done = subprocess.run(cmd, env=full, capture_output=True, text=True, timeout=timeout)
    return done.returncode, done.stdout + done.stderr
