"""The host runtime in Python: a Host is dcuda_host_init's runtime (a
context manager: dcuda_host_finish at the end of the with block), its
rank information, runs (blocking, or started and waited for), memory of
the ranks as arrays, RMA from the host with requests, the ranks'
notifications to the host, and every failing status as an exception."""

import ctypes
import sys

from . import _lib
from .errors import DcudaError, check
from .memory import Buffer

L = _lib.lib


def _argv(settings):
    args = [sys.argv[0] if sys.argv and sys.argv[0] else "python"]
    for name, value in (settings or {}).items():
        args.append(f"--dcuda-{name.lower().replace('_', '-')}={value}")
    arr = (ctypes.c_char_p * (len(args) + 1))(*[a.encode() for a in args], None)
    return len(args), arr


def _comm_address(comm):
    """The address of an mpi4py communicator's MPI_Comm handle."""
    from mpi4py import MPI  # only when a communicator is given

    return MPI._addressof(comm)


class Request:
    """A host put or get in flight: wait() or test(). Its buffers are kept
    alive until it completes."""

    def __init__(self, host, req, keep):
        self.host, self.req, self.keep = host, req, keep

    def wait(self):
        if self.req.value:
            check(L.dcuda_host_req_wait(self.host._h, ctypes.byref(self.req)),
                  "dcuda_host_req_wait", self.host._detail())
        self.keep = None

    def test(self):
        if not self.req.value:
            return True
        done = ctypes.c_int(0)
        check(L.dcuda_host_req_test(self.host._h, ctypes.byref(self.req), ctypes.byref(done)),
              "dcuda_host_req_test", self.host._detail())
        if done.value:
            self.keep = None
        return bool(done.value)


class Host:
    """dcuda's host runtime for `kernel` (dcuda.load or dcuda.build).

    settings: a dict of dcuda settings (name without DCUDA_, any case:
    {"ranks": 4} is --dcuda-ranks=4), beside those of the environment;
    threads_per_rank (GPU ranks), shared_bytes (each rank's scratch),
    mpi_comm (an mpi4py communicator whose members become the program's
    processes, MPI initialised by mpi4py)."""

    def __init__(self, kernel, settings=None, threads_per_rank=128, shared_bytes=0,
                 mpi_comm=None):
        self.kernel = kernel
        params = _lib.InitParams(ctypes.sizeof(_lib.InitParams), threads_per_rank, 0,
                                 shared_bytes,
                                 _comm_address(mpi_comm) if mpi_comm is not None else None)
        self._argc, self._argv_arr = _argv(settings)
        h = ctypes.c_void_p()
        check(L.dcuda_host_init_params(self._argc, self._argv_arr, kernel.as_c(),
                                       ctypes.byref(params), ctypes.byref(h)),
              "dcuda_host_init")
        self._h = h
        self._user = None
        self._running = False
        info = _lib.RankInfo()
        check(L.dcuda_host_get_rank_info(self._h, ctypes.byref(info)), "dcuda_host_get_rank_info")
        self.info = {f: getattr(info, f) for f, _ in _lib.RankInfo._fields_}
        for f in ("backend", "device_name"):
            self.info[f] = (self.info[f] or b"").decode()

    # ---- life ---------------------------------------------------------------------------

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None and self._running and self._h is not None:
            # The block failed with a run in flight, which dcuda_host_finish
            # refuses: end the run first (its own error is the block's).
            try:
                self.abort(f"the with-block ended by {exc_type.__name__} during the run")
            except DcudaError:
                pass
            try:
                self.run_wait()
            except DcudaError:
                pass
        try:
            self.finish()
        except DcudaError:
            if exc_type is None:
                raise

    def finish(self):
        """dcuda_host_finish (once; later calls do nothing)."""
        if self._h is not None:
            h, self._h = self._h, None
            check(L.dcuda_host_finish(h), "dcuda_host_finish")

    def _detail(self):
        text = L.dcuda_host_last_error(self._h) if self._h is not None else None
        return text.decode() if text else None

    @property
    def last_error(self):
        """The text of the first rank error of the last run ('' if none)."""
        return self._detail() or ""

    # ---- runs ---------------------------------------------------------------------------

    def _user_ptr(self, user):
        if user is None:
            return None, 0
        if isinstance(user, ctypes.Structure):
            return ctypes.addressof(user), ctypes.sizeof(user)
        raise TypeError("user must be a ctypes.Structure (its fields as the rank code's struct)")

    def run(self, user=None):
        """Runs every rank; user (a ctypes.Structure) is copied in and back
        out. The run's time in milliseconds."""
        ptr, size = self._user_ptr(user)
        ms = ctypes.c_double(0)
        check(L.dcuda_host_run(self._h, ptr, size, ctypes.byref(ms)), "dcuda_host_run",
              self._detail())
        return ms.value

    def run_start(self, user=None, stream=None):
        """Starts a run and returns (user is copied back at run_wait)."""
        ptr, size = self._user_ptr(user)
        self._user = user
        check(L.dcuda_host_run_start(self._h, ptr, size, stream), "dcuda_host_run_start")
        self._running = True

    def run_test(self):
        done = ctypes.c_int(0)
        check(L.dcuda_host_run_test(self._h, ctypes.byref(done)), "dcuda_host_run_test")
        return bool(done.value)

    def run_wait(self):
        ms = ctypes.c_double(0)
        try:
            check(L.dcuda_host_run_wait(self._h, ctypes.byref(ms)), "dcuda_host_run_wait",
                  self._detail())
        finally:
            self._user = None
            self._running = False
        return ms.value

    def abort(self, reason):
        check(L.dcuda_host_abort(self._h, reason.encode()), "dcuda_host_abort")

    # ---- the ranks' notifications to the host --------------------------------------------

    def wait_notifications(self, tag, count=1):
        check(L.dcuda_host_wait_notifications(self._h, tag, count),
              "dcuda_host_wait_notifications")

    def test_notifications(self, tag, count=1):
        done = ctypes.c_int(0)
        check(L.dcuda_host_test_notifications(self._h, tag, count, ctypes.byref(done)),
              "dcuda_host_test_notifications")
        return bool(done.value)

    # ---- memory -------------------------------------------------------------------------

    def alloc(self, shape, dtype="float64"):
        """Memory the ranks can use (dcuda_host_alloc; device memory on a
        GPU), zeroed, as a dcuda.Buffer of that shape and type."""
        return Buffer(self, shape, dtype)

    # ---- RMA from the host ----------------------------------------------------------------

    def _rma(self, put, win, rank, offset, array, tag, wait):
        import numpy as np

        a = np.ascontiguousarray(array) if put else array
        if not put and (not isinstance(a, np.ndarray) or not a.flags.c_contiguous
                        or not a.flags.writeable):
            raise TypeError("get: the destination must be a writeable C-contiguous numpy array")
        g = _lib.Gptr(win, rank, offset)
        req = ctypes.c_void_p()
        ptr = ctypes.c_void_p(a.ctypes.data)
        if put:
            st = (L.dcuda_host_put(self._h, g, ptr, a.nbytes, ctypes.byref(req)) if tag is None
                  else L.dcuda_host_put_notify(self._h, g, ptr, a.nbytes, tag, ctypes.byref(req)))
        else:
            st = (L.dcuda_host_get(self._h, ptr, g, a.nbytes, ctypes.byref(req)) if tag is None
                  else L.dcuda_host_get_notify(self._h, ptr, g, a.nbytes, tag, ctypes.byref(req)))
        check(st, "dcuda_host_put" if put else "dcuda_host_get")
        return self._request(req, a, wait)

    def _request(self, req, keep, wait):
        """A Request of req (keeping `keep` alive until it completes),
        waited for (None) when wait."""
        r = Request(self, req, keep)
        if wait:
            r.wait()
            return None
        return r

    def put(self, win, rank, offset, array, tag=None, wait=True):
        """array's bytes into WORLD rank `rank`'s part of window `win` (its
        handle) at offset, notified with tag when one is given; with
        wait=False a Request."""
        return self._rma(True, win, rank, offset, array, tag, wait)

    def get(self, array, win, rank, offset, tag=None, wait=True):
        """The bytes of rank's part of win at offset into array."""
        return self._rma(False, win, rank, offset, array, tag, wait)

    def notify(self, rank, tag, wait=True):
        """A notification of tag to WORLD rank `rank` alone."""
        req = ctypes.c_void_p()
        check(L.dcuda_host_notify(self._h, rank, tag, ctypes.byref(req)), "dcuda_host_notify")
        return self._request(req, None, wait)
