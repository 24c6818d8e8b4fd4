"""Every dcuda status as an exception class: DcudaError, and one subclass a
status (DCUDA_ERR_INVALID_ARG is InvalidArgError, ...), made from the
library's own table of names, each carrying the status, its name and the
library's message."""

from ._lib import lib


class DcudaError(Exception):
    """A dcuda call failed: .status (the dcuda_status_t), .name, .message."""

    status = None

    def __init__(self, status, call, detail=None):
        self.status = status
        self.name = lib.dcuda_status_name(status).decode()
        self.call = call
        text = lib.dcuda_status_string(status).decode()
        self.message = f"{call}: {self.name}: {text}" + (f": {detail}" if detail else "")
        super().__init__(self.message)


def _class_name(name):
    parts = name[len("DCUDA_ERR_"):].lower().split("_")
    return "".join(p.capitalize() for p in parts) + "Error"


by_status = {}
for _s in range(-1, -200, -1):
    _name = lib.dcuda_status_name(_s).decode()
    if not _name.startswith("DCUDA_ERR_"):
        break
    _cls = type(_class_name(_name), (DcudaError,), {"status": _s, "__doc__": _name})
    by_status[_s] = _cls
    globals()[_cls.__name__] = _cls
__all__ = ["DcudaError"] + [c.__name__ for c in by_status.values()]


def check(status, call, detail=None):
    """Raises the status's exception class unless status is DCUDA_OK (0)."""
    if status != 0:
        raise by_status.get(status, DcudaError)(status, call, detail)
    return status
