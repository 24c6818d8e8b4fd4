"""The library under the package: libdcuda found and its calls declared
(ctypes). Where it is looked for, in order: DCUDAPY_LIBRARY (a path to
libdcuda.so), the package's own lib/ (pip install .), the system's."""

import ctypes
import ctypes.util
import os

_HERE = os.path.dirname(os.path.abspath(__file__))


def _candidates():
    env = os.environ.get("DCUDAPY_LIBRARY")
    if env:
        yield env
    for sub in ("lib", "lib64"):
        d = os.path.join(_HERE, sub)
        if os.path.isdir(d):
            for name in sorted(os.listdir(d)):
                if name.startswith("libdcuda.so"):
                    yield os.path.join(d, name)
    found = ctypes.util.find_library("dcuda")
    if found:
        yield found


def _load():
    tried = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL), path
        except OSError as e:
            tried.append(f"{path}: {e}")
    raise ImportError(
        "dcuda: libdcuda.so not found (install the package with 'pip install .' from the "
        "repository, or set DCUDAPY_LIBRARY to the library's path)"
        + ("; tried " + "; ".join(tried) if tried else ""))


lib, path = _load()
include_dir = next((d for d in (os.path.join(_HERE, "include"),
                                os.path.join(os.path.dirname(os.path.dirname(path)), "include"),
                                os.path.join(_HERE, "..", "..", "include"))
                    if os.path.isfile(os.path.join(d, "dcuda", "dcuda_rank.h"))), None)

c_status = ctypes.c_int
c_host = ctypes.c_void_p
c_req = ctypes.c_void_p


class Kernel(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("cpu", ctypes.c_void_p), ("gpu", ctypes.c_void_p)]


class InitParams(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("threads_per_rank", ctypes.c_int),
                ("reserved", ctypes.c_int), ("shared_bytes", ctypes.c_size_t),
                ("mpi_comm", ctypes.c_void_p)]


class RankInfo(ctypes.Structure):
    _fields_ = [(n, ctypes.c_int) for n in (
        "rank_count", "rank_responsible", "rank_start", "device_count", "device_index",
        "node_count", "node_index", "process_count", "process_index", "threads_per_rank")] + [
        ("backend", ctypes.c_char_p), ("device_name", ctypes.c_char_p)]


class Gptr(ctypes.Structure):
    _fields_ = [("win", ctypes.c_uint32), ("rank", ctypes.c_int32), ("offset", ctypes.c_uint64)]


def _declare(name, restype, *argtypes):
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)


P = ctypes.POINTER
_declare("dcuda_status_name", ctypes.c_char_p, c_status)
_declare("dcuda_status_string", ctypes.c_char_p, c_status)
_declare("dcuda_version_string", ctypes.c_char_p)
_declare("dcuda_host_init_params", c_status, ctypes.c_int, P(ctypes.c_char_p), Kernel,
         P(InitParams), P(c_host))
_declare("dcuda_host_get_rank_info", c_status, c_host, P(RankInfo))
_declare("dcuda_host_run", c_status, c_host, ctypes.c_void_p, ctypes.c_size_t,
         P(ctypes.c_double))
_declare("dcuda_host_run_start", c_status, c_host, ctypes.c_void_p, ctypes.c_size_t,
         ctypes.c_void_p)
_declare("dcuda_host_run_test", c_status, c_host, P(ctypes.c_int))
_declare("dcuda_host_run_wait", c_status, c_host, P(ctypes.c_double))
_declare("dcuda_host_wait_notifications", c_status, c_host, ctypes.c_int, ctypes.c_int)
_declare("dcuda_host_test_notifications", c_status, c_host, ctypes.c_int, ctypes.c_int,
         P(ctypes.c_int))
_declare("dcuda_host_abort", c_status, c_host, ctypes.c_char_p)
_declare("dcuda_host_alloc", c_status, c_host, ctypes.c_size_t, P(ctypes.c_void_p))
_declare("dcuda_host_free", c_status, c_host, ctypes.c_void_p)
_declare("dcuda_host_copy_in", c_status, c_host, ctypes.c_void_p, ctypes.c_void_p,
         ctypes.c_size_t)
_declare("dcuda_host_copy_out", c_status, c_host, ctypes.c_void_p, ctypes.c_void_p,
         ctypes.c_size_t)
_declare("dcuda_host_put", c_status, c_host, Gptr, ctypes.c_void_p, ctypes.c_size_t, P(c_req))
_declare("dcuda_host_get", c_status, c_host, ctypes.c_void_p, Gptr, ctypes.c_size_t, P(c_req))
_declare("dcuda_host_put_notify", c_status, c_host, Gptr, ctypes.c_void_p, ctypes.c_size_t,
         ctypes.c_int, P(c_req))
_declare("dcuda_host_get_notify", c_status, c_host, ctypes.c_void_p, Gptr, ctypes.c_size_t,
         ctypes.c_int, P(c_req))
_declare("dcuda_host_notify", c_status, c_host, ctypes.c_int, ctypes.c_int, P(c_req))
_declare("dcuda_host_req_wait", c_status, c_host, P(c_req))
_declare("dcuda_host_req_test", c_status, c_host, P(c_req), P(ctypes.c_int))
_declare("dcuda_host_last_error", ctypes.c_char_p, c_host)
_declare("dcuda_host_finish", c_status, c_host)
_declare("dcuda_host_exit_status", ctypes.c_int, ctypes.c_int)
_declare("dcuda_host_backend_available", ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p,
         ctypes.c_size_t)
_declare("dcuda_setting_describe", ctypes.c_int, ctypes.c_int, P(ctypes.c_char_p),
         P(ctypes.c_char_p), P(ctypes.c_char_p), P(ctypes.c_char_p))
