"""Rank code for the host runtime: C stays C. A kernel is its CPU form (a
call per CPU rank) and its GPU form (a __global__ function), both defined
by DCUDA_KERNEL(name, ctx) in the rank code's sources. load() takes them
from a shared library built elsewhere (CMake's dcuda_add_rank_code in a
SHARED library, say); build() compiles C sources into one, cached by
content under DCUDAPY_CACHE_DIR (default ~/.cache/dcuda): the CPU form with
the C compiler (CC, default cc), and, when asked (gpu=True, or gpu=None
where this machine can run the CUDA backend), the GPU form with nvcc for
DCUDAPY_CUDA_ARCH (default sm_90) on the shared CUDA runtime, as
dcuda_add_rank_code does."""

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile

from . import _lib
from .errors import DcudaError


class Kernel:
    """A kernel's two forms (addresses; 0 where a form is missing) and the
    library that holds them, kept loaded while the kernel lives."""

    def __init__(self, name, cpu, gpu, library=None, path=None):
        self.name, self.cpu, self.gpu = name, cpu or 0, gpu or 0
        self.library, self.path = library, path

    def as_c(self):
        return _lib.Kernel(self.name.encode(), self.cpu, self.gpu)

    def __repr__(self):
        forms = [f for f, a in (("cpu", self.cpu), ("gpu", self.gpu)) if a]
        return f"<dcuda.Kernel {self.name} ({', '.join(forms) or 'no form'}) from {self.path}>"


def load(path, name):
    """The kernel `name` of the shared library at path."""
    library = ctypes.CDLL(os.path.abspath(path), mode=ctypes.RTLD_GLOBAL)
    cpu = gpu = None
    try:
        cpu = ctypes.cast(getattr(library, f"dcuda_cpu_kernel_{name}"), ctypes.c_void_p).value
    except AttributeError:
        pass
    try:
        gpu = ctypes.c_void_p.in_dll(library, f"dcuda_gpu_kernel_ptr_{name}").value
    except ValueError:
        pass
    if not cpu and not gpu:
        raise ValueError(f"{path} defines no kernel {name!r} (DCUDA_KERNEL({name}, ctx))")
    return Kernel(name, cpu, gpu, library, path)


def _gpu_wanted(gpu):
    if gpu is not None:
        return gpu
    why = ctypes.create_string_buffer(256)
    return bool(shutil.which("nvcc")) and _lib.lib.dcuda_host_backend_available(b"cuda", why, 256)


def _run(cmd):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError("dcuda.build: " + " ".join(cmd) + " failed:\n" + done.stderr)


def build(sources, name, include_dirs=(), defines=(), gpu=None, cache_dir=None, cflags=(),
          nvcc_flags=()):
    """Compiles the rank code of `sources` (C files) into a shared library,
    or takes it from the cache when the same sources, options and library
    built one before; the kernel `name` of it. cflags go to the C compiler,
    nvcc_flags to nvcc (a register cap: "--maxrregcount=168")."""
    if _lib.include_dir is None:
        raise DcudaError(-21, "dcuda.build", "the dcuda headers were not found beside the library")
    gpu = _gpu_wanted(gpu)
    cc = os.environ.get("CC", "cc")
    arch = os.environ.get("DCUDAPY_CUDA_ARCH", "sm_90")
    incs = [f"-I{os.path.abspath(d)}" for d in include_dirs] + [f"-I{_lib.include_dir}"]
    defs = [f"-D{d}" for d in defines]
    libdir = os.path.dirname(os.path.abspath(_lib.path))
    key = hashlib.sha256()
    for s in sources:
        with open(s, "rb") as f:
            key.update(os.path.abspath(s).encode() + b"\0" + f.read())
    key.update(repr((name, incs, defs, gpu, cc, arch, tuple(cflags), tuple(nvcc_flags), _lib.path,
                     _lib.lib.dcuda_version_string())).encode())
    cache = cache_dir or os.environ.get("DCUDAPY_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "dcuda")
    os.makedirs(cache, exist_ok=True)
    out = os.path.join(cache, f"{name}-{key.hexdigest()[:20]}.so")
    if not os.path.exists(out):
        with tempfile.TemporaryDirectory() as tmp:
            objs = []
            for i, s in enumerate(sources):
                o = os.path.join(tmp, f"{i}.o")
                _run([cc, "-std=c11", "-O2", "-fPIC", "-D_POSIX_C_SOURCE=200809L", *incs, *defs,
                      *cflags, "-c", s, "-o", o])
                objs.append(o)
                if gpu:
                    g = os.path.join(tmp, f"{i}.cu.o")
                    _run(["nvcc", f"-arch={arch}", "-x", "cu", "-Xcompiler", "-fPIC", *incs, *defs,
                          *nvcc_flags, "-c", s, "-o", g])
                    objs.append(g)
            tmp_out = os.path.join(tmp, "k.so")
            link = ["nvcc", "-shared", "-cudart", "shared"] if gpu else [cc, "-shared"]
            _run([*link, *objs, "-o", tmp_out, f"-L{libdir}", "-ldcuda",
                  ("-Xlinker=-rpath," if gpu else "-Wl,-rpath,") + libdir])
            part = f"{out}.{os.getpid()}"  # whole before it is seen: others may build it too
            shutil.copyfile(tmp_out, part)
            os.replace(part, out)
    return load(out, name)
