"""dcuda from Python: the host runtime (Host), memory the ranks use as
arrays (Buffer), rank code in C loaded or built (load, build), every
status as an exception class (DcudaError and its subclasses), settings
and the library's version. The rank code itself stays C (dcuda_rank.h)."""

from . import _lib
from .errors import DcudaError, by_status, check  # noqa: F401
from .errors import *  # noqa: F401,F403  the classes of every status
from .host import Host, Request  # noqa: F401
from .kernel import Kernel, build, load  # noqa: F401
from .memory import Buffer  # noqa: F401

build_info = _lib.lib.dcuda_version_string().decode()  # "0.2.0 (commit)"
__version__ = build_info.split()[0]
library_path = _lib.path
include_dir = _lib.include_dir


def exit_status(status):
    """What the program should exit with (dcuda_host_exit_status): its last
    host step, then, in the first process of a forked group, the first
    failure among the others when status is 0. sys.exit(dcuda.exit_status(rc))."""
    return _lib.lib.dcuda_host_exit_status(int(status))


def backend_available(backend):
    """(True, '') when backend ('cpu' or 'cuda') can run here, else (False, why)."""
    import ctypes

    why = ctypes.create_string_buffer(256)
    ok = _lib.lib.dcuda_host_backend_available(backend.encode(), why, 256)
    return bool(ok), why.value.decode()


def settings():
    """Every setting: a list of (name, type, default, meaning)."""
    import ctypes

    out, i = [], 0
    while True:
        f = [ctypes.c_char_p() for _ in range(4)]
        if not _lib.lib.dcuda_setting_describe(i, *[ctypes.byref(x) for x in f]):
            return out
        out.append(tuple((x.value or b"").decode() for x in f))
        i += 1
