"""Memory the ranks use (dcuda_host_alloc) as arrays: on CPU ranks host
memory, which numpy views without a copy (numpy(), numpy.asarray, and
DLPack through that view); on a GPU device memory, which CuPy and torch
take without a copy through __cuda_array_interface__. Either way
copy_from and copy_to_host move bytes. A buffer lives until free() or its
runtime's finish; views of it must not outlive it."""

import ctypes

from . import _lib
from .errors import check

L = _lib.lib


class Buffer:
    def __init__(self, host, shape, dtype):
        import numpy as np

        self.host = host
        self.dtype = np.dtype(dtype)
        self.shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self.nbytes = int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize
        p = ctypes.c_void_p()
        check(L.dcuda_host_alloc(host._h, self.nbytes, ctypes.byref(p)), "dcuda_host_alloc")
        self.ptr = p.value or 0

    @property
    def on_gpu(self):
        return self.host.info["backend"] == "cuda"

    def free(self):
        if self.ptr and self.host._h is not None:
            check(L.dcuda_host_free(self.host._h, ctypes.c_void_p(self.ptr)), "dcuda_host_free")
        self.ptr = 0

    def numpy(self):
        """A numpy array over the memory itself (CPU ranks)."""
        import numpy as np

        if self.on_gpu:
            raise TypeError("GPU memory: use copy_to_host(), or __cuda_array_interface__ "
                            "(cupy.asarray, torch.as_tensor)")
        if not self.nbytes:
            return np.empty(self.shape, self.dtype)
        raw = (ctypes.c_char * self.nbytes).from_address(self.ptr)
        return np.frombuffer(raw, dtype=self.dtype).reshape(self.shape)

    @property
    def __array_interface__(self):
        if self.on_gpu:
            raise AttributeError("GPU memory has no __array_interface__")
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False),
                "version": 3}

    @property
    def __cuda_array_interface__(self):
        if not self.on_gpu:
            raise AttributeError("host memory (CPU ranks) has no __cuda_array_interface__")
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False),
                "version": 3, "strides": None, "stream": None}

    def __dlpack__(self, stream=None):
        return self.numpy().__dlpack__()

    def __dlpack_device__(self):
        if self.on_gpu:
            raise BufferError("GPU memory: use __cuda_array_interface__")
        return (1, 0)

    def copy_from(self, array):
        """array's bytes (as many as the buffer holds) into the buffer."""
        import numpy as np

        a = np.ascontiguousarray(array, dtype=self.dtype)
        if a.nbytes != self.nbytes:
            raise ValueError(f"{a.nbytes} bytes for a buffer of {self.nbytes}")
        check(L.dcuda_host_copy_in(self.host._h, ctypes.c_void_p(self.ptr),
                                   ctypes.c_void_p(a.ctypes.data), a.nbytes), "dcuda_host_copy_in")

    def copy_to_host(self):
        """A new numpy array with the buffer's bytes."""
        import numpy as np

        out = np.empty(self.shape, self.dtype)
        check(L.dcuda_host_copy_out(self.host._h, ctypes.c_void_p(out.ctypes.data),
                                    ctypes.c_void_p(self.ptr), self.nbytes),
              "dcuda_host_copy_out")
        return out
