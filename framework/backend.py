"""The array backend: NumPy by default, CuPy on request. The only module that imports CuPy.

Ops never ask this module which library to use: they call NumPy's functions and array methods,
and a CuPy array answers them itself through NumPy's dispatch protocols (``__array_ufunc__``,
``__array_function__``). So one op body serves both libraries, and the backend setting only
decides where *new* arrays are created (constants, creation functions, initializers).
"""
import math
import os

import numpy as np

_NAMES = ("numpy", "cupy")
_current = {"name": "numpy", "xp": np}
_cupy = None


def _import_cupy():
    """Import CuPy and check that a GPU is visible; a clear error, never a silent fall-back."""
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
            raise RuntimeError(f"backend 'cupy' was asked for, but no GPU is usable: {e}") from e
        if count == 0:
            raise RuntimeError("backend 'cupy' was asked for, but no GPU is visible")
        _cupy = cupy
    return _cupy


def set_backend(name):
    """Choose where new arrays live: ``"numpy"`` (host) or ``"cupy"`` (the current GPU)."""
    if name not in _NAMES:
        raise ValueError(f"unknown backend {name!r}; expected one of {', '.join(_NAMES)}")
    _current["xp"] = _import_cupy() if name == "cupy" else np
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
        return _import_cupy().asarray(value)
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
