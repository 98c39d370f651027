"""What one training step does besides its arithmetic: Python calls and peak memory, eager
beside ``fw.function``, and beside the hand-written NumPy step.

Time on a shared machine moves from run to run; these counts do not. Per step:
- ``python calls``: functions entered, Python's and C's (``sys.setprofile``), over one step
  after warm-up. Eager pays for the layers, the tape's records and the walk; a replay calls
  the raw array functions only.
- ``peak MiB``: the most memory the step's arrays held at once above what lived before it
  (``tracemalloc``; NumPy reports its buffers to it). A replay drops each array after its last
  reader, as eager code does.
- ``arrays allocated``: the data buffers NumPy allocates during one step (new arrays and the
  scratch space of its own functions), counted by a NumPy memory handler (NEP 49) installed for
  that step alone.

    python benchmarks/step_work.py
"""
import ctypes
import os
import sys
import tracemalloc

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from benchmarks.common import limit_threads, table  # noqa: E402

limit_threads()


def calls_per_step(step):
    """Functions entered during one call of ``step``."""
    count = [0]

    def hook(frame, event, arg):
        if event in ("call", "c_call"):
            count[0] += 1
    sys.setprofile(hook)
    try:
        step()
    finally:
        sys.setprofile(None)
    return count[0] - 1  # (setprofile(None) itself)


def peak_bytes(step):
    """The most memory traced during one call of ``step``, above what lived before it."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        step()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def arrays_per_step(step):
    """NumPy data buffers allocated during one call of ``step``: a memory handler (NEP 49,
    ``PyDataMem_SetHandler`` from NumPy's C API table) that counts each allocation and hands it
    to the C library, set for the call and then put back (buffers it gave out are freed by it,
    whenever that is)."""
    import numpy as np
    api = ctypes.pythonapi
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    api.PyCapsule_New.restype = ctypes.py_object
    api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    table_ = ctypes.cast(api.PyCapsule_GetPointer(np._core._multiarray_umath._ARRAY_API, None),
                         ctypes.POINTER(ctypes.c_void_p))
    set_handler = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.py_object)(table_[_SET_HANDLER])
    libc = ctypes.CDLL(None)
    libc.malloc.restype = libc.calloc.restype = libc.realloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.calloc.argtypes = [ctypes.c_size_t, ctypes.c_size_t]
    libc.realloc.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    count = [0]

    def counted(allocate):
        def allocation(ctx, *sizes):
            count[0] += 1
            return allocate(*sizes)
        return allocation
    handler = _Handler(name=b"step_work_counter", version=1)
    handler.allocator = _Allocator(None, _MALLOC(counted(libc.malloc)),
                                   _CALLOC(counted(libc.calloc)),
                                   _REALLOC(lambda ctx, p, n: libc.realloc(p, n)),
                                   _FREE(lambda ctx, p, n: libc.free(p)))
    _HANDLERS.append(handler)  # (alive as long as a buffer it gave out may be)
    previous = set_handler(api.PyCapsule_New(ctypes.addressof(handler), b"mem_handler", None))
    try:
        step()
    finally:
        set_handler(previous)
    return count[0]


_SET_HANDLER = 304  # PyDataMem_SetHandler's place in NumPy's C API table (numpy/__multiarray_api.h)
_MALLOC = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)
_CALLOC = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t)
_REALLOC = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)
_FREE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)
_HANDLERS = []


class _Allocator(ctypes.Structure):
    _fields_ = [("ctx", ctypes.c_void_p), ("malloc", _MALLOC), ("calloc", _CALLOC),
                ("realloc", _REALLOC), ("free", _FREE)]


class _Handler(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 127), ("version", ctypes.c_uint8),
                ("allocator", _Allocator)]


def cases():
    """(case, implementation, step) for each step this script knows."""
    from benchmarks import mlp_step, transformer_step
    import framework as fw
    for case in ("small", "large"):
        yield f"MLP {case}", "numpy", mlp_step.numpy_step(case)
        eager = mlp_step.framework_step(case)
        yield f"MLP {case}", "eager", eager
        yield f"MLP {case}", "fw.function", fw.function(eager)
    yield "W6 Transformer (ops)", "numpy", transformer_step.numpy_step()
    yield "W6 Transformer (ops)", "eager", transformer_step.fw_ops_step(False)
    yield "W6 Transformer (ops)", "fw.function", transformer_step.fw_ops_step(True)


def main():
    rows = []
    for case, impl, step in cases():
        for _ in range(3):  # (traces, slots, lazy builds)
            step()
        rows.append([case, impl, calls_per_step(step), arrays_per_step(step),
                     f"{peak_bytes(step) / 2 ** 20:.2f}"])
    table(["step", "implementation", "python calls", "arrays allocated", "peak MiB"], rows)


if __name__ == "__main__":
    main()
