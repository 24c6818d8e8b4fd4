"""The package on CPU ranks in this process: versions and statuses,
settings, memory as arrays, runs with a user struct, errors as exception
classes carrying the ranks' report, host RMA and notifications while the
ranks run (checked against values computed here)."""

import ctypes
import os
import re

import numpy as np
import pytest

import dcuda

HERE = os.path.dirname(os.path.abspath(__file__))
SETTINGS = {"backend": "cpu", "ranks": 4}


class RmaData(ctypes.Structure):  # rma_data_t (rma_kernel.c)
    _fields_ = [("parts", ctypes.c_void_p), ("handles", ctypes.c_void_p), ("n", ctypes.c_int),
                ("bad", ctypes.c_int)]


@pytest.fixture(scope="module")
def kernel():
    return dcuda.build([os.path.join(HERE, "rma_kernel.c")], "rma")


def start_rma(h, n):
    """Starts rma_kernel.c's run of n doubles a rank and waits until every
    rank has made its window (tag 1): the rank count, parts, handles."""
    ranks = h.info["rank_count"]
    parts, handles = h.alloc(ranks * n), h.alloc(ranks, np.int64)
    h.run_start(RmaData(parts.ptr, handles.ptr, n, 0))
    h.wait_notifications(1, ranks)
    return ranks, parts, handles


def test_version_is_the_headers():
    with open(os.path.join(dcuda.include_dir, "dcuda", "dcuda_version.h")) as f:
        text = f.read()
    parts = [re.search(rf"DCUDA_VERSION_{k} (\d+)", text).group(1)
             for k in ("MAJOR", "MINOR", "PATCH")]
    assert dcuda.__version__ == ".".join(parts)
    assert dcuda.build_info.startswith(dcuda.__version__)


def test_every_status_has_its_class():
    assert dcuda.InvalidArgError.status == -1
    assert dcuda.CanceledError.status == -30
    assert all(issubclass(c, dcuda.DcudaError) for c in dcuda.by_status.values())
    assert len(dcuda.by_status) >= 30
    with pytest.raises(dcuda.RankError) as e:
        dcuda.check(-5, "a call")
    assert "DCUDA_ERR_RANK" in str(e.value) and e.value.status == -5


def test_settings_and_backends():
    names = [s[0] for s in dcuda.settings()]
    assert "RANKS" in names and "BACKEND" in names
    assert dcuda.backend_available("cpu") == (True, "")


def test_kernel_build_is_cached(kernel):
    again = dcuda.build([os.path.join(HERE, "rma_kernel.c")], "rma")
    assert again.path == kernel.path and kernel.cpu
    other = dcuda.build([os.path.join(HERE, "rma_kernel.c")], "rma", cflags=["-O1"])
    assert other.path != kernel.path  # its options are part of the key
    with pytest.raises(ValueError):
        dcuda.load(kernel.path, "no_such_kernel")
    with pytest.raises(RuntimeError, match="failed"):
        dcuda.build([os.path.join(HERE, "rma_kernel.c")], "rma", defines=["dcuda_rank_init=("])


def test_memory_views(kernel):
    with dcuda.Host(kernel, settings=SETTINGS) as h:
        buf = h.alloc((4, 8), np.float64)
        view = buf.numpy()
        assert view.shape == (4, 8) and not view.any()  # zeroed
        view[:] = np.arange(32).reshape(4, 8)
        assert (buf.copy_to_host() == view).all()
        assert np.shares_memory(np.asarray(buf), view)
        assert (np.from_dlpack(buf) == view).all()
        buf.copy_from(np.ones((4, 8)))
        assert view.sum() == 32
        with pytest.raises(AttributeError):
            buf.__cuda_array_interface__
        with pytest.raises(ValueError):
            buf.copy_from(np.ones(3))
        buf.free()


def test_bad_settings_raise_their_class(kernel):
    with pytest.raises(dcuda.SettingError) as e:
        dcuda.Host(kernel, settings={"backend": "cpu", "ranks": "many"})
    assert e.value.status == -17
    with pytest.raises(TypeError):
        with dcuda.Host(kernel, settings=SETTINGS) as h:
            h.run(user=b"not a struct")


def test_rank_error_carries_the_report(kernel):
    with dcuda.Host(kernel, settings=dict(SETTINGS, on_error="continue")) as h:
        n = 8
        parts, handles = h.alloc(4 * n), h.alloc(4, np.int64)
        with pytest.raises(dcuda.RankError) as e:
            h.run(RmaData(parts.ptr, handles.ptr, n, 1))
        assert "dcuda_put" in str(e.value) and "rank 4" in str(e.value)
        assert "dcuda_put" in h.last_error


def test_host_rma_and_notifications_while_ranks_run(kernel):
    n = 64
    with dcuda.Host(kernel, settings=SETTINGS) as h:
        ranks, parts, handles = start_rma(h, n)
        wins = handles.copy_to_host()
        x = [np.random.default_rng(r).standard_normal(n) for r in range(ranks)]
        reqs = [h.put(int(wins[r]), r, 0, x[r], tag=2, wait=False) for r in range(ranks)]
        for req in reqs:
            req.wait()
        h.wait_notifications(3, ranks)
        for r in range(ranks):
            got = np.empty(n)
            h.get(got, int(wins[r]), r, 0)
            assert (got == x[r] * 2.0 + r).all(), f"rank {r}"
            h.notify(r, 4)
        h.run_wait()
        assert (parts.numpy().reshape(ranks, n) == np.stack(x) * 2.0 +
                np.arange(ranks)[:, None]).all()


def test_with_block_failing_during_a_run_ends_the_run(kernel):
    # The block raises while the ranks wait for the host (tag 2): leaving it
    # aborts and concludes the run and finishes the runtime, so that the
    # block's own exception is what the caller sees and a new Host works.
    n = 8
    with pytest.raises(RuntimeError, match="left early"):
        with dcuda.Host(kernel, settings=SETTINGS) as h:
            start_rma(h, n)
            raise RuntimeError("left early")
    with dcuda.Host(kernel, settings=SETTINGS) as h:
        ranks, parts, handles = start_rma(h, n)
        wins = handles.copy_to_host()
        for r in range(ranks):
            h.put(int(wins[r]), r, 0, np.full(n, float(r)), tag=2)
        h.wait_notifications(3, ranks)
        for r in range(ranks):
            h.notify(r, 4)
        h.run_wait()
        assert (parts.numpy().reshape(ranks, n) == 3.0 * np.arange(ranks)[:, None]).all()
