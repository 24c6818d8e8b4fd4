"""The GPU forms, where the CUDA backend can run (skipped elsewhere, with
the reason): rank code built with nvcc as well, ranks on the GPU, rank
memory handed out through __cuda_array_interface__ and copied, host RMA
and notifications while the ranks run (checked against values computed
here)."""

import ctypes
import os

import numpy as np
import pytest

import dcuda

HERE = os.path.dirname(os.path.abspath(__file__))
ok, why = dcuda.backend_available("cuda")
pytestmark = pytest.mark.skipif(not ok, reason=f"no CUDA backend here: {why}")


class RmaData(ctypes.Structure):  # rma_data_t (rma_kernel.c)
    _fields_ = [("parts", ctypes.c_void_p), ("handles", ctypes.c_void_p), ("n", ctypes.c_int),
                ("bad", ctypes.c_int)]


def test_gpu_ranks_run_python_built_rank_code():
    kernel = dcuda.build([os.path.join(HERE, "rma_kernel.c")], "rma", gpu=True)
    assert kernel.gpu and kernel.cpu
    n = 32
    # One process (the first GPU): the host side below addresses its own
    # ranks, where one process a visible GPU would fork the test.
    with dcuda.Host(kernel, settings={"backend": "cuda", "processes": 1},
                    threads_per_rank=64) as h:
        assert h.info["backend"] == "cuda"
        ranks = h.info["rank_count"]
        parts, handles = h.alloc(ranks * n), h.alloc(ranks, np.int64)
        cai = parts.__cuda_array_interface__
        assert cai["data"][0] == parts.ptr and cai["shape"] == (ranks * n,)
        with pytest.raises(TypeError):
            parts.numpy()
        h.run_start(RmaData(parts.ptr, handles.ptr, n, 0))
        h.wait_notifications(1, ranks)
        wins = handles.copy_to_host()
        x = np.arange(ranks * n, dtype=np.float64).reshape(ranks, n)
        for r in range(ranks):
            h.put(int(wins[r]), r, 0, x[r], tag=2)
        h.wait_notifications(3, ranks)
        for r in range(ranks):
            h.notify(r, 4)
        h.run_wait()
        assert (parts.copy_to_host().reshape(ranks, n) == x * 2.0 + np.arange(ranks)[:, None]).all()
