"""The array backend: NumPy by default, CuPy on request. The only module that imports CuPy.

Ops never ask this module which library to use: they call NumPy's functions and array methods,
and a CuPy array answers them itself through NumPy's dispatch protocols (``__array_ufunc__``,
``__array_function__``). So one op body serves both libraries, and the backend setting only
decides where *new* arrays are created (constants, creation functions, initializers). The few
hot paths that ``framework.kernels`` fuses on the GPU get CuPy from ``cupy_module()``.

On the training step's hot paths a host array is told apart with ``x.__class__ is np.ndarray``
(``array_module`` asks that first too): a NumPy array needs no further check, and anything else
(a CuPy array, a NumPy subclass) takes the general path, which asks ``is_device_array``.
"""
import math
import os

import numpy as np

_NAMES = ("numpy", "cupy")
_current = {"name": "numpy", "xp": np}
_cupy = None


def cupy_module():
    """The CuPy module, imported and checked on first use (``framework.tuning.kernels`` gets it here).

    Without CuPy, or with CuPy but no usable GPU, a RuntimeError says which of the two is
    missing: asking for the GPU never falls back to the host silently.
    """
    global _cupy
    if _cupy is None:
        try:
            import cupy
        except ImportError as e:
            raise RuntimeError(
                "backend 'cupy' was asked for, but CuPy is not installed "
                "(pip install 'tape-framework[gpu]' or a cupy-cudaXXx wheel)") from e
        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except Exception as e:  # CUDA driver missing or broken
            raise RuntimeError(f"backend 'cupy' was asked for: CuPy is installed but no GPU is "
                               f"visible: {e}") from e
        if count == 0:
            raise RuntimeError("backend 'cupy' was asked for: CuPy is installed but no GPU is "
                               "visible: CUDA reports 0 devices")
        _cupy = cupy
    return _cupy


def set_backend(name):
    """Choose where new arrays live: ``"numpy"`` (host) or ``"cupy"`` (the current GPU)."""
    if name not in _NAMES:
        raise ValueError(f"unknown backend {name!r}; expected one of {', '.join(_NAMES)}")
    _current["xp"] = cupy_module() if name == "cupy" else np
    _current["name"] = name


def get_backend():
    return _current["name"]


def xp():
    """The array module new arrays are created with."""
    return _current["xp"]


def is_device_array(value):
    return _cupy is not None and isinstance(value, _cupy.ndarray)


def device_of(value):
    return "gpu" if is_device_array(value) else "cpu"


def array_module(value):
    if value.__class__ is np.ndarray:  # the host, asked on every step's hot paths
        return np
    return _cupy if is_device_array(value) else np


def to_host(value):
    """A host NumPy array for any array; the one door back from the GPU."""
    return value.get() if is_device_array(value) else np.asarray(value)


def to_backend(value):
    """Move a host array to the current backend (a no-op on NumPy)."""
    if _current["xp"] is np:
        return to_host(value)
    return _cupy.asarray(value)


def to_device(value, device):
    """Move an array to ``"cpu"`` or ``"gpu"``."""
    if device == "cpu":
        return to_host(value)
    if device == "gpu":
        return cupy_module().asarray(value)
    raise ValueError(f"unknown device {device!r}; expected 'cpu' or 'gpu'")


def erf(value):
    """Elementwise error function (NumPy has none; CuPy's comes from cupyx)."""
    if is_device_array(value):
        from cupyx.scipy.special import erf as cupy_erf
        return cupy_erf(value)
    flat = np.frompyfunc(math.erf, 1, 1)(value)
    value = np.asarray(value)  # floats keep their dtype (float16 too); integers give float32
    return np.asarray(flat, dtype=value.dtype if value.dtype.kind == "f" else np.float32)


if os.environ.get("FRAMEWORK_BACKEND"):
    set_backend(os.environ["FRAMEWORK_BACKEND"])


def scatter_add(target, key, values):
    """``target[key] += values`` with repeated indices adding up, on either library."""
    if is_device_array(target):
        import cupyx
        cupyx.scatter_add(target, key, values)
    else:
        np.add.at(target, key, values)


# --- NCCL: collectives on device buffers, for framework.distributed --------------------------
# They live here because this is the one module that imports CuPy. Each enqueues on the current
# stream and returns a CUDA event, so the caller can wait for completion while still watching
# for a peer that has gone away (a plain synchronize would hang with it).
_NCCL_TYPES = {"float16": "NCCL_FLOAT16", "float32": "NCCL_FLOAT32", "float64": "NCCL_FLOAT64",
               "int8": "NCCL_INT8", "uint8": "NCCL_UINT8", "bool": "NCCL_UINT8",
               "int32": "NCCL_INT32", "int64": "NCCL_INT64"}


def _nccl():
    cupy_module()
    import cupy.cuda.nccl as nccl  # always importable; ``available`` says if libnccl loaded
    if not nccl.available:
        raise RuntimeError("fw.distributed got GPU arrays, but CuPy cannot load the NCCL library "
                           "(install NCCL for CuPy, e.g. the nvidia-nccl-cu12 wheel or "
                           "'python -m cupyx.tools.install_library --library nccl', or keep "
                           "the variables on the CPU)")
    return nccl


def nccl_unique_id():
    """The id rank 0 makes and sends to the others (over MPI) to build one NCCL communicator."""
    return _nccl().get_unique_id()


def nccl_communicator(size, unique_id, rank):
    """This process's member of an NCCL communicator of ``size`` ranks (collective: all call it)."""
    return _nccl().NcclCommunicator(size, tuple(unique_id), rank)


def nccl_collective(comm, kind, array, root=0):
    """Enqueue an in-place ``"allreduce"`` (sum) or ``"broadcast"`` of a contiguous device array."""
    nccl, cupy = _nccl(), _cupy
    if array.dtype.name not in _NCCL_TYPES:
        raise TypeError(f"NCCL cannot reduce {array.dtype.name} arrays; "
                        f"expected one of {', '.join(_NCCL_TYPES)}")
    dtype = getattr(nccl, _NCCL_TYPES[array.dtype.name])
    stream, ptr = cupy.cuda.get_current_stream().ptr, array.data.ptr
    if kind == "allreduce":
        comm.allReduce(ptr, ptr, array.size, dtype, nccl.NCCL_SUM, stream)
    else:
        comm.bcast(ptr, array.size, dtype, root, stream)
    event = cupy.cuda.Event(disable_timing=True)
    event.record()
    return event
