"""A stand-in for CuPy built on NumPy, so the framework's GPU code paths run where no GPU is.

Installed as ``cupy`` (``modules()``), it behaves like CuPy in the ways the framework's
correctness depends on, and nothing more:

- its arrays refuse implicit conversion to NumPy (``np.asarray(x)`` raises; ``x.get()`` copies
  back), and ``.numpy()``/``fw.to_device`` are the only doors, as on a GPU;
- an operation mixing them with NumPy arrays raises TypeError, as CuPy's kernels do (Python
  numbers and NumPy scalars are accepted; a 0-d NumPy array is not); indices may be NumPy
  arrays, and ``x[...] = host_array`` is refused, both as in CuPy;
- every operation returns a device array, 0-d results included, never a host scalar;
- ``ElementwiseKernel`` compiles its C++ body with g++ and runs it on the CPU with CuPy's rules
  (broadcasting, ``raw`` arrays indexed by flat C-order position, one-letter type placeholders
  bound by the arrays, typed scalars, outputs passed in or allocated), so the fused kernels'
  arithmetic is checked against the NumPy path;
- ``RawKernel`` compiles a whole CUDA kernel with g++ and launches it as CUDA would, on a 1-D
  grid: each of a block's threads is an OS thread, ``__syncthreads()`` a barrier among them,
  ``__shared__`` memory one array per block (the blocks run one after another), and the
  arguments device arrays (C-contiguous: the kernel reads raw memory) or NumPy scalars, whose
  type is the parameter's;
- ``cuda`` has one device, whose streams and events are done at once, and ``cuda.nccl`` a
  communicator of one rank, so the NCCL path of ``fw.distributed`` runs in one process.

It proves nothing about CUDA itself (NVRTC, launch configurations, speed): that needs a GPU.
"""
import copy
import ctypes
import hashlib
import math
import os
import subprocess
import sys
import tempfile
import types

import numpy as np


def _unwrap(value):
    """The NumPy array behind a device array; host arrays are refused, as CuPy refuses them."""
    if isinstance(value, ndarray):
        return value._a
    if isinstance(value, np.ndarray):
        raise TypeError(f"Unsupported type {type(value)}")
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap(v) for v in value)
    return value


def _wrap(value):
    if isinstance(value, np.ndarray):
        return ndarray(value)
    if isinstance(value, np.generic):
        return ndarray(np.asarray(value))
    if isinstance(value, tuple):
        return tuple(_wrap(v) for v in value)
    return value


def _index(key):
    """An index with device arrays unwrapped; NumPy arrays are allowed (CuPy copies them)."""
    if isinstance(key, tuple):
        return tuple(_index(k) for k in key)
    return key._a if isinstance(key, ndarray) else key


def _advanced(key):
    keys = key if isinstance(key, tuple) else (key,)
    return any(isinstance(k, (list, np.ndarray)) for k in keys)


_COMPARISONS = ("greater", "greater_equal", "less", "less_equal", "equal", "not_equal")


class ndarray:  # noqa: N801 - CuPy's name
    """A device array: a NumPy array that only explicit calls bring back to the host."""

    __slots__ = ("_a",)

    def __init__(self, array):
        self._a = array

    # The attributes every op reads; the others (strides, flags, T...) come from __getattr__.
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)

    data = property(lambda self: types.SimpleNamespace(ptr=self._a.ctypes.data))  # raw memory

    def get(self):
        return self._a.copy()

    def __array__(self, dtype=None, copy=None):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. Please use "
                        "`.get()` to construct a NumPy array explicitly.")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.get("out")
        if out is not None:
            kwargs["out"] = tuple(_unwrap(o) if isinstance(o, ndarray) else _bad_out(o)
                                  for o in out)
        if ufunc.__name__ in _COMPARISONS:  # CuPy's workaround for numpy/numpy#12142
            inputs = [x.item() if isinstance(x, np.ndarray) and not x.ndim else x
                      for x in inputs]
        result = getattr(ufunc, method)(*[_unwrap(x) for x in inputs], **kwargs)
        if out is not None:
            return out[0] if len(out) == 1 else out
        return _wrap(result)

    def __array_function__(self, func, types, args, kwargs):
        return _wrap(func(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()}))

    def __getattr__(self, name):
        if name.startswith("__"):  # no __array_interface__ & co: the host cannot read it
            raise AttributeError(name)
        attr = getattr(self._a, name)
        if not callable(attr):
            return _wrap(attr)
        if name in ("item", "tolist"):
            return attr

        def method(*args, **kwargs):
            return _wrap(attr(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()}))
        return method

    def __getitem__(self, key):
        return _wrap(self._a[_index(key)])

    def __setitem__(self, key, value):
        key = _index(key)
        if not _advanced(key) and isinstance(value, (list, tuple)):
            raise TypeError(f"Unsupported type {type(value)}")  # CuPy's fill() takes scalars
        if isinstance(value, np.ndarray) and value.ndim and not _advanced(key):
            raise ValueError("non-scalar numpy.ndarray cannot be used for fill")
        self._a[key] = value._a if isinstance(value, ndarray) else value

    def __len__(self):
        if not self._a.ndim:
            raise TypeError("len() of unsized object")
        return len(self._a)

    def __iter__(self):
        if not self._a.ndim:
            raise TypeError("iteration over a 0-d array")
        return (_wrap(row) for row in self._a)

    def __format__(self, format_spec):
        return format(self._a, format_spec)

    def __bool__(self):
        return bool(self._a)

    def __float__(self):
        return float(self._a)

    def __int__(self):
        return int(self._a)

    def __index__(self):
        return self._a.__index__()

    def __copy__(self):
        return ndarray(self._a.copy())

    def __deepcopy__(self, memo):
        return ndarray(copy.deepcopy(self._a, memo))

    def __repr__(self):
        return repr(self._a)

    __str__ = __repr__
    __hash__ = None


def _bad_out(value):
    raise TypeError(f"Output arguments type must be cupy.ndarray, got {type(value)}")


def _install_operators():
    def binary(ufunc):
        def op(self, other):
            return self.__array_ufunc__(ufunc, "__call__", self, other)

        def rop(self, other):
            return self.__array_ufunc__(ufunc, "__call__", other, self)

        def iop(self, other):
            return self.__array_ufunc__(ufunc, "__call__", self, other, out=(self,))
        return op, rop, iop

    for name, ufunc in {"add": np.add, "sub": np.subtract, "mul": np.multiply,
                        "truediv": np.true_divide, "floordiv": np.floor_divide,
                        "mod": np.remainder, "pow": np.power, "matmul": np.matmul,
                        "and": np.bitwise_and, "or": np.bitwise_or,
                        "xor": np.bitwise_xor}.items():
        op, rop, iop = binary(ufunc)
        setattr(ndarray, f"__{name}__", op)
        setattr(ndarray, f"__r{name}__", rop)
        setattr(ndarray, f"__i{name}__", iop)
    for name, ufunc in {"eq": np.equal, "ne": np.not_equal, "lt": np.less,
                        "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal}.items():
        setattr(ndarray, f"__{name}__", binary(ufunc)[0])
    for name, ufunc in {"neg": np.negative, "pos": np.positive, "abs": np.absolute,
                        "invert": np.invert}.items():
        setattr(ndarray, f"__{name}__",
                lambda self, ufunc=ufunc: self.__array_ufunc__(ufunc, "__call__", self))


_install_operators()


# --- the module's functions: NumPy's, on device arrays ----------------------------------------
def asarray(a, dtype=None):
    if isinstance(a, ndarray):
        return a if dtype is None or a.dtype == np.dtype(dtype) else a.astype(dtype)
    return ndarray(np.array(a, dtype=dtype))  # a copy from the host, as CuPy makes


def full(shape, fill_value, dtype=None):
    if isinstance(fill_value, np.ndarray):
        if fill_value.ndim:
            raise ValueError("non-scalar numpy.ndarray cannot be used for fill")
        fill_value = fill_value[()]
    return ndarray(np.full(shape, _unwrap(fill_value), dtype=dtype))


def __getattr__(name):
    target = getattr(np, name)
    if isinstance(target, type) or not callable(target):
        return target  # dtypes and constants

    def function(*args, **kwargs):
        return _wrap(target(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()}))
    function.__name__ = name
    return function


# --- cupy.cuda: one device, streams and events that are always done, and a one-rank NCCL -------
cuda = types.ModuleType("cupy.cuda")
cuda.runtime = types.SimpleNamespace(getDeviceCount=lambda: 1)
cuda.Device = lambda device=0: types.SimpleNamespace(synchronize=lambda: None)
cuda.get_current_stream = lambda: types.SimpleNamespace(ptr=0, synchronize=lambda: None)


class _Event:
    """A CUDA event: the emulator runs everything at once, so it is done when recorded."""

    def __init__(self, disable_timing=False):
        self.done = False

    def record(self, stream=None):
        self.done = True

    def synchronize(self):
        pass


cuda.Event = _Event
_NCCL_DTYPES = {"NCCL_INT8": "int8", "NCCL_UINT8": "uint8", "NCCL_INT32": "int32",
                "NCCL_INT64": "int64", "NCCL_FLOAT16": "float16", "NCCL_FLOAT32": "float32",
                "NCCL_FLOAT64": "float64"}


class _NcclCommunicator:
    """NCCL's communicator of one rank (all one process can emulate): a collective copies its
    buffer to its result, as NCCL does for a single rank."""

    def __init__(self, size, unique_id, rank):
        if size != 1 or rank != 0:
            raise ValueError(f"the emulator's NCCL has one rank, not rank {rank} of {size}")

    def allReduce(self, send, recv, count, dtype, op, stream):  # noqa: N802 - NCCL's name
        ctypes.memmove(recv, send, count * np.dtype(_NCCL_DTYPES[dtype]).itemsize)

    def bcast(self, buffer, count, dtype, root, stream):
        if root != 0:
            raise ValueError(f"root {root} is not a rank of a one-rank communicator")

    def abort(self):
        pass


nccl = types.ModuleType("cupy.cuda.nccl")
nccl.available = True
nccl.NCCL_SUM = 0
for _name in _NCCL_DTYPES:
    setattr(nccl, _name, _name)
nccl.get_unique_id = lambda: (0,) * 128
nccl.NcclCommunicator = _NcclCommunicator
cuda.nccl = nccl


# --- cupyx: scatter_add and erf -----------------------------------------------------------------
def _scatter_add(target, key, values):
    np.add.at(target._a, _index(key), _unwrap(values))


def _erf(x):
    return ndarray(np.vectorize(math.erf)(x._a).astype(x.dtype))


def modules():
    """``{module name: module}`` to put in ``sys.modules`` so that this is what imports as CuPy."""
    cupyx = types.ModuleType("cupyx")
    cupyx.scatter_add = _scatter_add
    cupyx.scipy = types.ModuleType("cupyx.scipy")
    cupyx.scipy.special = types.ModuleType("cupyx.scipy.special")
    cupyx.scipy.special.erf = _erf
    return {"cupy": sys.modules[__name__], "cupy.cuda": cuda, "cupy.cuda.nccl": nccl,
            "cupyx": cupyx, "cupyx.scipy": cupyx.scipy, "cupyx.scipy.special": cupyx.scipy.special}


# --- user-defined kernels, compiled as C++ for the CPU --------------------------------------------
_C_TYPES = {"float32": "float", "float64": "double", "int32": "int", "int64": "long long",
            "bool": "bool"}
_PRELUDE = """#include <cmath>
#include <cstddef>
using namespace std;
template <typename E> struct RawArray {  // CuPy's CArray as a raw argument: flat C-order index
  E* data_; ptrdiff_t size_;
  E& operator[](ptrdiff_t k) const { return data_[k]; }
  ptrdiff_t size() const { return size_; }
};
"""
_BUILD = os.path.join(tempfile.gettempdir(), f"fw-cupy-emulator-{os.getuid()}")


class _Param:
    """One kernel parameter, ``[raw] TYPE name``, TYPE a one-letter placeholder or a dtype."""

    def __init__(self, text, is_input):
        *flags, self.type, self.name = text.split()
        if any(f != "raw" for f in flags) or (len(self.type) != 1 and self.type not in _C_TYPES):
            raise ValueError(f"unsupported kernel parameter {text!r}")
        self.raw, self.is_input = bool(flags), is_input
        self.c_type = self.type if len(self.type) == 1 else _C_TYPES[self.type]

    def dtype(self, bound):
        if len(self.type) > 1:
            return np.dtype(self.type)
        if self.type not in bound:
            raise TypeError(f"no array binds the type of {self.name} ({self.type})")
        return bound[self.type]

    def argument(self, k, value, shape, bound):
        """The buffer passed for ``value``, its declaration in the kernel, and the per-element
        reference the loop body uses (None for scalars and raw arrays)."""
        const, c_type = "const " if self.is_input else "", self.c_type
        if not isinstance(value, ndarray):  # a scalar, cast to its parameter's type
            return (np.array([value], self.dtype(bound)),
                    f"const {c_type} {self.name} = *static_cast<const {c_type}*>(_args[{k}]);",
                    None)
        pointer = f"static_cast<{const}{c_type}*>(_args[{k}])"
        if self.raw:
            return (np.ascontiguousarray(value._a).copy(),
                    f"const RawArray<{const}{c_type}> {self.name}{{{pointer}, {value.size}}};",
                    None)
        return (np.ascontiguousarray(np.broadcast_to(value._a, shape)).copy(),
                f"{const}{c_type}* _raw_{self.name} = {pointer};",
                f"{const}{c_type} &{self.name} = _raw_{self.name}[i];")


def _bind_types(params, args):
    """The dtype of each one-letter placeholder, from the arrays (CuPy's rule)."""
    bound = {}
    for p, a in zip(params, args):
        if isinstance(a, ndarray):
            want = bound.setdefault(p.type, a.dtype) if len(p.type) == 1 else np.dtype(p.type)
            if a.dtype != want:
                raise TypeError(f"Type is mismatched. {p.name} {a.dtype} {want}")
    return bound


def _compile(source, standard="c++17"):
    """A loaded shared library of ``source``, built once per distinct source text."""
    digest = hashlib.sha1((standard + source).encode()).hexdigest()[:20]
    library = os.path.join(_BUILD, digest + ".so")
    if not os.path.exists(library):
        os.makedirs(_BUILD, exist_ok=True)
        with open(library[:-3] + ".cpp", "w") as f:
            f.write(source)
        partial = f"{library}.{os.getpid()}.tmp"
        built = subprocess.run(["g++", "-O2", f"-std={standard}", "-pthread", "-shared", "-fPIC",
                                "-o", partial,
                                library[:-3] + ".cpp"], capture_output=True, text=True)
        if built.returncode:
            raise RuntimeError(f"the kernel does not compile:\n{source}\n{built.stderr}")
        os.replace(partial, library)
    return ctypes.CDLL(library)


class ElementwiseKernel:
    """CuPy's ElementwiseKernel, looping over the broadcast shape on the CPU."""

    def __init__(self, in_params, out_params, operation, name="kernel"):
        self.in_params = [_Param(p, True) for p in in_params.split(",")]
        self.out_params = [_Param(p, False) for p in out_params.split(",")]
        self.operation, self.name = operation, name

    def __call__(self, *args):
        nin, params = len(self.in_params), self.in_params + self.out_params
        if len(args) not in (nin, len(params)):
            raise TypeError(f"Wrong number of arguments for {self.name!r}")
        for a in args:
            _unwrap(a)  # a NumPy array is refused, as CuPy refuses it
        bound = _bind_types(params, args)
        looped = [a.shape for p, a in zip(params, args) if not p.raw and isinstance(a, ndarray)]
        if not looped:
            raise ValueError("Loop size is undecided.")
        shape = np.broadcast_shapes(*looped)
        outs = list(args[nin:])
        if not outs:
            if any(p.raw for p in self.out_params):
                raise ValueError("Output array size is Undecided")
            outs = [ndarray(np.empty(shape, p.dtype(bound))) for p in self.out_params]
        if any(not p.raw and o.shape != shape for p, o in zip(self.out_params, outs)):
            raise ValueError("Out shape is mismatched")
        buffers, declarations, references = zip(*[
            p.argument(k, a, shape, bound)
            for k, (p, a) in enumerate(zip(params, list(args[:nin]) + outs))])
        source = (_PRELUDE
                  + "".join(f"typedef {_C_TYPES[d.name]} {t};\n" for t, d in sorted(bound.items()))
                  + "extern \"C\" void fw_kernel(void** _args, ptrdiff_t _size) {\n"
                  + "\n".join(declarations) + "\nfor (ptrdiff_t i = 0; i < _size; ++i) {\n"
                  + "\n".join(r for r in references if r) + "\n" + self.operation + ";\n}\n}\n")
        pointers = (ctypes.c_void_p * len(buffers))(*[b.ctypes.data for b in buffers])
        _compile(source).fw_kernel(pointers, ctypes.c_ssize_t(math.prod(shape)))
        for o, b in zip(outs, buffers[nin:]):
            o._a[...] = b.reshape(o.shape)
        return outs[0] if len(outs) == 1 else tuple(outs)


_RAW_PRELUDE = """#include <barrier>
#include <cmath>
#include <cstddef>
#include <thread>
#include <utility>
#include <vector>
using namespace std;
struct fw_dim3 { unsigned int x = 0, y = 1, z = 1; };
thread_local fw_dim3 threadIdx, blockIdx;
fw_dim3 blockDim, gridDim;
barrier<>* fw_block_barrier;
inline void __syncthreads() { fw_block_barrier->arrive_and_wait(); }
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
"""

# Runs the kernel over the grid: blockDim.x threads, each taking every block in turn, with a
# barrier between blocks (they share the __shared__ arrays).
_RAW_LAUNCHER = """
template <typename... A, size_t... I>
void fw_call(void (*k)(A...), void** args, index_sequence<I...>) {
  k(*static_cast<A*>(args[I])...);
}
template <typename... A> void fw_run(void (*k)(A...), void** args, unsigned int grid,
                                     unsigned int block) {
  barrier<> sync(block);
  fw_block_barrier = &sync;
  gridDim.x = grid;
  blockDim.x = block;
  vector<thread> threads;
  for (unsigned int t = 0; t < block; ++t) {
    threads.emplace_back([=, &sync] {
      threadIdx.x = t;
      for (unsigned int b = 0; b < grid; ++b) {
        blockIdx.x = b;
        fw_call(k, args, index_sequence_for<A...>());
        sync.arrive_and_wait();
      }
    });
  }
  for (auto& t : threads) t.join();
}
extern "C" void fw_launch(void** args, unsigned int grid, unsigned int block) {
  fw_run(&%s, args, grid, block);
}
"""


def _dimension(value, what):
    dims = (value,) if isinstance(value, int) else tuple(value)
    if not dims or any(d != 1 for d in dims[1:]) or dims[0] < 1:
        raise ValueError(f"the emulator launches 1-D {what}s of at least 1, got {value}")
    return dims[0]


class RawKernel:
    """CuPy's RawKernel: a CUDA ``extern "C" __global__`` function, run by threads on the CPU."""

    def __init__(self, code, name, options=(), **_):
        self.code, self.name = code, name

    def __call__(self, grid, block, args, shared_mem=0):
        if shared_mem:
            raise ValueError("the emulator has no dynamic shared memory")
        grid, block = _dimension(grid, "grid"), _dimension(block, "block")
        if block > 1024:
            raise ValueError(f"a block of {block} threads: CUDA allows at most 1024")
        values, keep = [], []
        for k, a in enumerate(args):
            if isinstance(a, ndarray):
                if not a._a.flags.c_contiguous:
                    raise ValueError(f"argument {k} of {self.name}: a raw kernel reads raw "
                                     f"memory, so the emulator wants C-contiguous arrays")
                keep.append(ctypes.c_void_p(a._a.ctypes.data))
                values.append(ctypes.addressof(keep[-1]))
            elif isinstance(a, np.generic):
                keep.append(np.array([a]))
                values.append(keep[-1].ctypes.data)
            else:
                _unwrap(a)  # a NumPy array is refused, as CuPy refuses it
                raise TypeError(f"argument {k} of {self.name}: pass a NumPy scalar "
                                f"(np.int64(n)), whose type the kernel's parameter must be, "
                                f"not {type(a).__name__}")
        pointers = (ctypes.c_void_p * len(values))(*values)
        library = _compile(_RAW_PRELUDE + self.code + _RAW_LAUNCHER % self.name, "c++20")
        library.fw_launch(pointers, ctypes.c_uint(grid), ctypes.c_uint(block))
