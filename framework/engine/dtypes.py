"""The framework's dtypes: TensorFlow's ``DType`` objects around NumPy's dtypes.

Arrays carry NumPy dtypes and the framework computes with those (``numpy_dtype``); what users
see (``fw.float32``, ``tensor.dtype``, ``fw.as_dtype``) is a ``DType``, which NumPy and CuPy
take wherever a dtype goes and which compares and hashes as its NumPy dtype, with TensorFlow's
attributes beside NumPy's: ``x.dtype.is_floating``, ``fw.float32.min``, ``as_numpy_dtype``.

TensorFlow's conversion rule is kept: Python floats become float32 and Python ints int32, so a
literal in user code never turns a float32 computation into float64.
"""
import numpy as np


class DType:
    """``tf.dtypes.DType``: a NumPy dtype (its ``dtype``; NumPy reads that attribute wherever it
    takes a dtype) with TensorFlow's names. Any NumPy dtype attribute (``kind``, ``itemsize``,
    ``type``) passes through; equality and hashing are the NumPy dtype's, so a ``DType`` and
    ``np.float32``, ``"float32"`` or the array's own dtype are interchangeable keys."""

    __slots__ = ("dtype",)

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)

    def __getattr__(self, name):  # (only for names the class lacks: NumPy's attributes)
        if name.startswith("__") or name == "dtype":
            raise AttributeError(name)
        return getattr(self.dtype, name)

    def __eq__(self, other):
        if other.__class__ is DType:
            return self.dtype == other.dtype
        if other is None:
            return False
        try:
            return self.dtype == np.dtype(other)
        except TypeError:
            return NotImplemented

    def __hash__(self):
        return hash(self.dtype)

    def __reduce__(self):
        return as_dtype, (self.dtype.name,)

    def __repr__(self):
        return f"fw.{self.dtype.name}"

    def __str__(self):
        return f"<dtype: '{self.dtype.name}'>"

    @property
    def name(self):
        return self.dtype.name

    @property
    def is_floating(self):
        return self.dtype.kind == "f"

    @property
    def is_integer(self):
        return self.dtype.kind in "iu"

    @property
    def is_unsigned(self):
        return self.dtype.kind == "u"

    @property
    def is_bool(self):
        return self.dtype.kind == "b"

    @property
    def is_complex(self):
        return self.dtype.kind == "c"

    @property
    def is_quantized(self):
        return False

    @property
    def is_numpy_compatible(self):
        return True

    @property
    def as_numpy_dtype(self):
        """The NumPy scalar type (``np.float32``), as in TensorFlow."""
        return self.dtype.type

    @property
    def base_dtype(self):
        return self

    @property
    def real_dtype(self):
        """The dtype of the real part: float32 for complex64, itself otherwise."""
        return as_dtype(np.empty(0, self.dtype).real.dtype) if self.is_complex else self

    @property
    def size(self):
        return self.dtype.itemsize

    @property
    def min(self):
        """The lowest value (``fw.float32.min``: the most negative finite float32)."""
        return _limits(self.dtype)[0]

    @property
    def max(self):
        return _limits(self.dtype)[1]

    @property
    def limits(self):
        return _limits(self.dtype)

    def is_compatible_with(self, other):
        return self == other


def _limits(dtype):
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return int(info.min), int(info.max)
    if dtype.kind == "f":
        info = np.finfo(dtype)
        return float(info.min), float(info.max)
    raise TypeError(f"{dtype.name} has no min and max")


_DTYPES = {}  # NumPy dtype -> its DType (one object per dtype)


def as_dtype(dtype):
    """``tf.as_dtype``: a dtype-like (``fw.float32``, ``"float32"``, ``np.float32``, a NumPy
    dtype) as a ``DType``."""
    if dtype.__class__ is DType:
        return dtype
    dtype = numpy_dtype(dtype)
    if dtype is None:
        return None
    found = _DTYPES.get(dtype)
    if found is None:
        found = _DTYPES[dtype] = DType(dtype)
    return found


def numpy_dtype(dtype):
    """A dtype-like as the NumPy dtype the framework computes with (None stays None)."""
    if dtype is None:
        return None
    if dtype.__class__ is DType:
        return dtype.dtype
    if isinstance(dtype, (int, float, np.number)):  # a number: TensorFlow's DataType enum
        return _from_enum(dtype)
    if dtype.__class__ is str:
        dtype = _TF_NAMES.get(dtype, dtype)
    try:
        return np.dtype(dtype)
    except TypeError:
        raise TypeError(f"cannot interpret {dtype!r} as a dtype") from None


# TensorFlow's DataType enum values (types.proto) of the dtypes here; ``tf.zeros(1, 1)`` reads
# the 1 as float32, as ``tf.as_dtype`` does (True and 1.0 equal 1, so they are float32 too).
# The reference types (enum + 100, ``float32_ref``) are the same dtypes.
_ENUM = {1: "float32", 2: "float64", 3: "int32", 4: "uint8", 5: "int16", 6: "int8",
         8: "complex64", 9: "int64", 10: "bool", 17: "uint16", 18: "complex128", 19: "float16",
         22: "uint32", 23: "uint64"}
_TF_NAMES = {"float": "float32", "double": "float64", "half": "float16"}  # TensorFlow's aliases


def _from_enum(value):
    name = _ENUM.get(value - 100 if value > 100 else value)
    if name is None:
        raise TypeError(f"cannot interpret {value!r} as a dtype (TensorFlow's dtype enum values "
                        f"here: {', '.join(f'{k} {v}' for k, v in _ENUM.items())})")
    return np.dtype(name)


float16, float32, float64 = as_dtype("float16"), as_dtype("float32"), as_dtype("float64")
int8, int16, int32, int64 = (as_dtype(f"int{n}") for n in (8, 16, 32, 64))
uint8, uint16, uint32, uint64 = (as_dtype(f"uint{n}") for n in (8, 16, 32, 64))
complex64, complex128 = as_dtype("complex64"), as_dtype("complex128")
bool = as_dtype("bool")  # noqa: A001 - TensorFlow's name, shadowing is intended here

_PYTHON_DEFAULTS = {float: float32.dtype, int: int32.dtype, type(True): bool.dtype}


FLOATING_KINDS = "fc"  # the NumPy dtype kinds of differentiable tensors


def is_floating(dtype):
    """Only floating (and complex) tensors are differentiable, as in TensorFlow."""
    return numpy_dtype(dtype).kind in FLOATING_KINDS


def default_dtype(value):
    """The dtype TensorFlow gives a Python value: float32 for floats (a list mixing ints and
    floats included), int32 for ints (int64 past int32's range), bool for bools. Tensors and
    NumPy values inside a list keep their dtype and the Python numbers beside them follow it.
    None leaves the choice to NumPy (an array, a NumPy scalar, a string)."""
    if value.__class__ in _PYTHON_DEFAULTS:  # a single number: the common case
        if value.__class__ is int and not _INT32_MIN <= value <= _INT32_MAX:
            return int64.dtype
        return _PYTHON_DEFAULTS[value.__class__]
    if not isinstance(value, (list, tuple)):
        return None
    kinds, typed, big, stack = set(), set(), False, [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(item)
        elif item.__class__ in _PYTHON_DEFAULTS:
            kinds.add(item.__class__)
            big = big or (item.__class__ is int and not _INT32_MIN <= item <= _INT32_MAX)
        elif isinstance(getattr(item, "dtype", None), (np.dtype, DType)):  # a tensor, NumPy's
            typed.add(numpy_dtype(item.dtype))
        else:  # a string, an object: NumPy's rule
            return None
    if typed:
        return np.result_type(*typed)
    if _PYTHON_BOOL in kinds and len(kinds) > 1:
        raise ValueError("Can't convert Python sequence with mixed types to Tensor: "
                         "bools mixed with numbers")
    if float in kinds:
        return float32.dtype
    if int in kinds:
        return int64.dtype if big else int32.dtype
    return bool.dtype if kinds else float32.dtype  # an empty list is float32, as in TensorFlow


_PYTHON_BOOL = type(True)
_INT32_MIN, _INT32_MAX = -2 ** 31, 2 ** 31 - 1


def __getattr__(name):
    """``fw.dtypes.cast`` (tf.dtypes.cast) lives with the ops, which import this module."""
    if name == "cast":
        from ..ops import cast
        return cast
    raise AttributeError(f"module 'fw.dtypes' has no attribute '{name}'")
