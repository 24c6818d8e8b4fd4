"""The examples (the thesis' reduction, the tutorial's halo exchange),
each checked against NumPy by itself, run as processes of their own: one
process, a forked group of two, under mpirun, over the network path
(forked, UCX forced), and with an mpi4py communicator handed over."""

import os
import shutil

import pytest

from conftest import EXAMPLES, HERE, run_script

CPU = {"DCUDA_BACKEND": "cpu", "DCUDA_RANKS": "3", "DCUDA_WATCHDOG_CANCEL": "1"}


@pytest.mark.parametrize("example", ["reduce.py", "halo.py"])
def test_one_process(example):
    rc, out = run_script(os.path.join(EXAMPLES, example), CPU)
    assert rc == 0 and ("MATCH" in out or "match NumPy" in out), out


@pytest.mark.parametrize("example", ["reduce.py", "halo.py"])
def test_forked(example):
    rc, out = run_script(os.path.join(EXAMPLES, example), dict(CPU, DCUDA_PROCESSES="2"))
    assert rc == 0, out


def test_network_path_forked():
    env = dict(CPU, DCUDA_PROCESSES="2", DCUDA_NET_FORCE="1", DCUDA_NET="ucx", UCX_TLS="tcp",
               UCX_NET_DEVICES="lo")
    rc, out = run_script(os.path.join(EXAMPLES, "halo.py"), env)
    if "ucx" in out.lower() and "not" in out.lower() and rc != 0:
        pytest.skip("no UCX manager in this build: " + out[-200:])
    assert rc == 0 and out.count("match NumPy") == 2, out


def test_mpirun():
    if not shutil.which("mpirun"):
        pytest.skip("no mpirun here")
    rc, out = run_script(os.path.join(EXAMPLES, "reduce.py"), CPU, mpirun=2)
    assert rc == 0 and "MATCH" in out, out


def test_mpi4py_communicator():
    pytest.importorskip("mpi4py")
    rc, out = run_script(os.path.join(HERE, "mpi4py_comm.py"), CPU, mpirun=2)
    assert rc == 0 and out.count("mpi4py: ok") == 2, out
