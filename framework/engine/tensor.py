"""Tensors and variables: thin wrappers around one NumPy or CuPy array.

A ``Tensor`` is immutable and holds nothing but its array (``__slots__``), so wrapping the result
of an op costs one small allocation. A ``Variable`` is a ``Tensor`` whose array is updated in
place by ``assign`` and the optimizers; each update bumps a version number, which is how the tape
notices a variable that changed between the forward pass and ``gradient`` (TensorFlow reads a
snapshot there; we refuse to give a silently wrong gradient instead).

The arithmetic operators are installed by ``framework.ops`` once the ops exist.
"""
import itertools
import math

import numpy as np

from . import backend
from .context import before_update, holders, note_assign, note_escape, state
from .dtypes import _DTYPES, as_dtype, default_dtype, numpy_dtype
from .context import replayed


class TensorShape(tuple):
    """A tensor's shape: a tuple of ints with TensorFlow's ``TensorShape`` methods, so both
    ``x.shape == (2, 3)`` and ``x.shape.as_list()`` work. Every dimension is known here, but
    a traced None dimension of an ``input_signature`` is a size of each call
    (``framework.tracing.sizes.Dim``)."""

    __slots__ = ()

    def __eq__(self, other):  # TensorFlow's shapes equal lists too: ``x.shape == [2, 3]``
        return tuple.__eq__(self, tuple(other) if isinstance(other, list) else other)

    def __ne__(self, other):
        return not self == other

    __hash__ = tuple.__hash__

    def as_list(self):
        return list(self)

    @property
    def rank(self):
        return len(self)

    ndims = rank

    def num_elements(self):
        return math.prod(self)

    def is_fully_defined(self):
        """False where a dimension is a size of each call (a traced None dimension)."""
        return not any(getattr(d, "per_call_size", False) for d in self)

    def assert_is_compatible_with(self, other):
        other = tuple(other)
        if len(other) != len(self) or any(o is not None and o != d for d, o in zip(self, other)):
            raise ValueError(f"Shapes {self} and {other} are incompatible")


def dims(shape):
    """A shape's entries as ints, keeping a size that a traced call gives its own value
    (``framework.tracing.sizes.Dim``, ``per_call_size``): an op's parameter that holds one is
    computed on every call, as TensorFlow's dynamic shapes are (and such a size converts to a
    tensor computed on every call, by its ``__fw_tensor__``)."""
    return tuple([d if d.__class__ is int or getattr(d, "per_call_size", False) else int(d)
                  for d in shape])


class Tensor:
    """An immutable n-dimensional array that the tape can differentiate through."""

    # weakly referable: tests and caches watch lifetimes; ``_keras_mask``: the padding mask a
    # Keras layer attaches to its output (``layers.base``), set to None where ops and wraps
    # make tensors (every layer call reads it, and an unset slot raises and catches an error)
    __slots__ = ("_value", "_keras_mask", "__weakref__")
    __array_priority__ = 100  # NumPy arrays on the left defer to our reflected operators
    _trainable = False  # only trainable Variables are watched on access

    def __init__(self, value, dtype=None):
        self._value = _to_array(value, numpy_dtype(dtype))
        self._keras_mask = None

    # --- what a user reads -------------------------------------------------------------------
    @property
    def shape(self):
        return TensorShape(self._value.shape)

    def get_shape(self):
        """TensorFlow's older spelling of ``.shape``."""
        return TensorShape(self._value.shape)

    @property
    def dtype(self):
        """The ``DType`` (``x.dtype.is_floating``); the array's own is ``x._value.dtype``."""
        dtype = self._value.dtype
        return _DTYPES.get(dtype) or as_dtype(dtype)

    @property
    def ndim(self):
        return self._value.ndim

    @property
    def device(self):
        """``"cpu"`` or ``"gpu"``: where the array lives."""
        return backend.device_of(self._value)

    def numpy(self):
        """A host NumPy array holding a copy of the value (never a view the tape depends on)."""
        _note_escape(self)
        return np.array(backend.to_host(self._value), copy=True)

    def __array__(self, dtype=None, copy=None):
        _note_escape(self)
        host = backend.to_host(self._value)
        return np.asarray(host, dtype=dtype)

    def __len__(self):
        if not self._value.ndim:
            raise TypeError("len() of a scalar tensor")
        return self._value.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __float__(self):
        _note_escape(self)
        return float(self._value)

    def __int__(self):
        _note_escape(self)
        return int(self._value)

    def __index__(self):
        if self._value.dtype.kind not in "iu":
            raise TypeError(f"only integer tensors can be used as an index, not {self.dtype.name}")
        if state.tracer is not None:  # fw.function: the replay checks the value (a guard)
            return state.tracer.guard(self, int)
        return int(self._value)

    def __bool__(self):
        if state.tracer is not None:  # fw.function: the replay checks the value (a guard)
            return state.tracer.guard(self, bool)
        if self._value.ndim:  # NumPy's own error, TensorFlow's too; one element passes
            return bool(self._value)
        _note_escape(self)
        return bool(self._value)

    def __format__(self, format_spec):
        """A scalar formats like the number it holds (``f"{loss:.4f}"``); another tensor as
        its NumPy array does (its values, no spec), as in TensorFlow."""
        _note_escape(self)
        host = backend.to_host(self._value)
        return format(host[()] if host.ndim == 0 else host, format_spec)

    def __hash__(self):
        # ``==`` is elementwise (as in TensorFlow); identity is what a dict of tensors needs.
        return object.__hash__(self)

    def ref(self):
        """A hashable reference, TensorFlow's spelling; tensors hash by identity already."""
        return self

    def __repr__(self):
        body = str(backend.to_host(self._value))
        return f"Tensor({body}, shape={self.shape}, dtype={self.dtype.name})"

    __str__ = __repr__


class Variable(Tensor):
    """A mutable tensor: model weights, optimizer slots, counters.

    ``trainable`` variables read inside a recording tape are watched automatically.
    """

    __slots__ = ("_trainable", "name", "path", "_version", "_uid", "constraint")
    _next_uid = itertools.count()

    def __init__(self, initial_value, trainable=True, name=None, dtype=None, constraint=None):
        """``constraint``: a function of the variable giving its new value, which an optimizer
        assigns after each of its updates (Keras's weight constraints)."""
        if constraint is not None and not callable(constraint):
            raise ValueError(f"The `constraint` argument must be a callable, got "
                             f"{constraint!r:.80} (variable '{name or 'Variable'}')")
        if callable(initial_value):
            initial_value = initial_value()
        value = _to_array(initial_value, numpy_dtype(dtype))
        self._value = value.copy() if hasattr(value, "copy") else value
        if not hasattr(self._value, "shape") or isinstance(self._value, np.generic):
            self._value = np.asarray(self._value).copy()
        self._trainable = bool(trainable)
        # TensorFlow's ``name``: the enclosing name scope, the name and ":0" (``model/x:0``);
        # ``path`` the same without ":0" (Keras 3's ``dense/kernel``; Keras's own weights keep
        # the short ``name``, set by their creators)
        self.path = "".join(state.__dict__.get("name_scopes", ())[-1:]) + (name or "Variable")
        self.name = f"{self.path}:0"
        self._version = 0
        self._uid = next(Variable._next_uid)
        self.constraint = constraint

    @property
    def trainable(self):
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        self._trainable = bool(value)

    @replayed
    def assign(self, value):
        """Write ``value`` into the variable in place (same shape; cast to its dtype).

        Python numbers and lists are converted on the variable's device; an array on the other
        device is refused, because moving data is the caller's explicit choice (``fw.to_device``).
        """
        new = self._operand(value)
        if tuple(new.shape) != self.shape:
            raise ValueError(
                f"cannot assign a value of shape {tuple(new.shape)} to variable '{self.name}' "
                f"of shape {self.shape}")
        if holders:
            before_update((self,))
        self._value[...] = new
        self._mark_updated()
        return self

    def _mark_updated(self):
        """After an in-place write (``assign``, an optimizer's update): a new version, so a tape
        that read the old value refuses to differentiate through it, and the recording tapes told."""
        mark_updated((self,))

    @replayed
    def assign_add(self, delta):
        return self.assign(self._value + self._operand(delta))

    @replayed
    def assign_sub(self, delta):
        return self.assign(self._value - self._operand(delta))

    def _operand(self, value):
        """``value`` as something this variable's array combines with: an array on the same
        device, or a NumPy scalar (which NumPy and CuPy arrays both take) for 0-d host values."""
        raw = value._value if isinstance(value, Tensor) else value
        if not hasattr(raw, "shape"):  # Python numbers and lists have no device of their own
            raw = np.asarray(raw, dtype=self.dtype)
            if raw.ndim:
                raw = backend.to_device(raw, self.device)
        on_device = backend.is_device_array(raw)
        if not raw.ndim and not on_device:
            return raw[()]
        if on_device != backend.is_device_array(self._value):
            raise ValueError(f"cannot assign a {backend.device_of(raw)} value to variable "
                             f"'{self.name}' on {self.device}; move it with fw.to_device first")
        return raw

    def to_device(self, device):
        """Move this variable's storage to ``"cpu"`` or ``"gpu"`` in place."""
        self._value = backend.to_device(self._value, device)
        self._mark_updated()
        return self

    def read_value(self):
        """A tensor holding a snapshot of the current value (later updates leave it alone)."""
        return _ops().math.read_value(self)

    value = read_value  # TensorFlow's other spelling

    def __repr__(self):
        body = repr(backend.to_host(self._value))
        return f"<Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}, numpy={body}>"

    __str__ = __repr__


@replayed
def assign_add_all(pairs):
    """``variable.assign_add(delta)`` for each ``(variable, delta)`` pair, as one assignment
    (one replayed step under ``fw.function``: a metric's total and count): every shape checked
    first, so a failed call changes no variable."""
    operands = []
    for variable, delta in pairs:
        operand = variable._operand(delta)
        if tuple(getattr(operand, "shape", ())) not in ((), variable.shape):
            raise ValueError(f"cannot add a value of shape {tuple(operand.shape)} to variable "
                             f"'{variable.name}' of shape {variable.shape}")
        operands.append(operand)
    variables = [variable for variable, _ in pairs]
    if holders:
        before_update(variables)
    for variable, operand in zip(variables, operands):
        variable._value[...] = variable._value + operand
    mark_updated(variables)


def mark_updated(variables):
    """``Variable._mark_updated`` for all of an optimizer step's variables and slots at once:
    the thread's recording tapes are looked up once, not once per variable."""
    for variable in variables:
        variable._version += 1
    if state.recording:
        for variable in variables:
            note_assign(variable)


def _to_array(value, dtype):
    """The array behind ``value``, on the current backend, with TensorFlow's dtype rules."""
    if isinstance(value, Tensor):
        raw = value._value
        if dtype is not None and raw.dtype != dtype:
            raise TypeError(f"expected a tensor of dtype {dtype.name}, got {raw.dtype.name}; "
                            f"use fw.cast to convert")
        return raw
    if backend.is_device_array(value):
        return value if dtype is None else value.astype(dtype, copy=False)
    if value is None:  # TensorFlow's refusal, word for word (NumPy would make an object array)
        raise ValueError("Attempt to convert a value (None) with an unsupported type "
                         "(<class 'NoneType'>) to a Tensor.")
    if dtype is None and not isinstance(value, (np.ndarray, np.generic)):
        dtype = default_dtype(value)
    if dtype is not None and dtype.kind in "iub" and _has_float(value):
        raise TypeError(f"cannot convert {value!r} to a tensor of dtype {dtype.name}")
    try:
        array = np.asarray(value, dtype=dtype)
    except ValueError:
        problem = _irregular(value) if isinstance(value, (list, tuple)) else None
        if problem is None:
            raise
        raise ValueError(problem) from None
    return backend.to_backend(array)


def _irregular(value):
    """TensorFlow's words for a nested sequence that is no array: rows of different lengths,
    or numbers beside sequences at one depth; None if neither (NumPy's error stands)."""
    level = [value]
    while level:
        nested = {isinstance(item, (list, tuple)) for item in level}
        if len(nested) > 1:
            return "Can't convert Python sequence with mixed types to Tensor."
        if nested != {True}:
            return None
        if len({len(item) for item in level}) > 1:
            return "Can't convert non-rectangular Python sequence to Tensor."
        level = [child for item in level for child in item]
    return None


def _has_float(value):
    if isinstance(value, float):
        return True
    if isinstance(value, (list, tuple)):
        return any(_has_float(v) for v in value)
    return isinstance(value, np.ndarray) and value.dtype.kind == "f"


_new = object.__new__


def wrap(array):
    """Wrap a raw array computed by the framework, skipping every check. Inside a
    ``fw.function`` trace an array the tracer has not seen (computed from a traced value
    behind the gate, not by an op) is noted, so that using it raises a ``TraceError`` instead
    of freezing the first call's value into the plan."""
    t = _new(Tensor)
    t._value = array
    t._keras_mask = None
    if state.tracer is not None:
        state.tracer.wrapped(t)
    return t


def wrap_constant(array):
    """Wrap an array made from shapes and Python values alone: the same in every call, so a
    trace keeps it as a constant."""
    t = _new(Tensor)
    t._value = array
    t._keras_mask = None
    return t


def convert_to_tensor(value, dtype=None, dtype_hint=None, name=None):
    """``value`` as a Tensor: tensors pass through, everything else is converted.

    ``dtype_hint`` is TensorFlow's soft preference: used when ``value`` (a Python number or
    list) converts to it without loss, ignored otherwise. ``name`` is accepted and ignored."""
    if isinstance(value, Tensor):
        if dtype is not None and value.dtype != numpy_dtype(dtype):
            raise TypeError(f"tensor of dtype {value.dtype.name} where {numpy_dtype(dtype).name} "
                            f"was expected; use fw.cast to convert")
        return value
    if hasattr(value, "__fw_tensor__"):  # IndexedSlices: its dense tensor
        return value.__fw_tensor__(dtype)
    if value.__class__ in (list, tuple) and _holds_tensor(value):
        return _packed(value, dtype)
    if dtype is None and dtype_hint is not None and not hasattr(value, "dtype"):
        hint = numpy_dtype(dtype_hint)
        if not (hint.kind in "iub" and _has_float(value)):
            dtype = hint
    return wrap_constant(_to_array(value, numpy_dtype(dtype)))


def _holds_tensor(value):
    return any(isinstance(v, Tensor) or hasattr(v, "__fw_tensor__")
               or v.__class__ in (list, tuple) and _holds_tensor(v) for v in value)


def _packed(value, dtype):
    """A list holding tensors, stacked by an op (TensorFlow's Pack), so a traced tensor in it
    is read on every ``fw.function`` call; Python numbers take the tensors' dtype."""
    ops = _ops()
    like = numpy_dtype(dtype) if dtype is not None else next(
        _leaf_dtypes(value), None)
    parts = [convert_to_tensor(v, like) if not isinstance(v, Tensor) else v for v in value]
    if dtype is not None:
        parts = [p if p.dtype == like else ops.cast(p, like) for p in parts]
    return ops.stack(parts)


def _leaf_dtypes(value):
    for v in value:
        if isinstance(v, Tensor):
            yield v.dtype
        elif v.__class__ in (list, tuple):
            yield from _leaf_dtypes(v)


_scalars = {}


def scalar_like(value, dtype):
    """A Python number as a tensor of ``dtype``, cached: ``x * 2.0`` costs no conversion.

    The array is a NumPy scalar, which NumPy and CuPy arrays both accept as an operand, so a
    cached constant serves every backend. Tensors are immutable, so sharing them is safe.
    """
    key = (value.__class__, value, dtype)
    t = _scalars.get(key)
    if t is None or (not value and math.copysign(1.0, value) < 0):
        if isinstance(value, float) and dtype.kind in "iub":
            raise TypeError(f"cannot convert {value!r} to a tensor of dtype {dtype.name}")
        if value != value or (not value and math.copysign(1.0, value) < 0):
            return wrap_constant(dtype.type(value))  # NaN, -0.0: no key / 0.0's key: no cache
        if len(_scalars) >= 4096:  # a loop over many distinct literals must not grow it forever
            _scalars.clear()
        t = _scalars[key] = wrap_constant(dtype.type(value))
    return t


def constant(value, dtype=None, shape=None, name=None):
    """An immutable tensor from a Python value or array (a copy, as in TensorFlow).

    ``shape``, as in TensorFlow: a value with as many elements is reshaped to it, a single
    element fills it, any other count is a TypeError. A tensor given as the value is copied
    by an op (its values may change between ``fw.function`` calls); a value that is no array
    (ragged rows, None) is refused as TensorFlow refuses it, the message naming ``constant``."""
    if isinstance(value, Tensor):
        ops = _ops()
        out = ops.identity(value if dtype is None else ops.cast(value, dtype))
        if shape is None or tuple(shape) == out.shape:
            return out
        return ops.reshape(out, shape) if out.shape and math.prod(out.shape) == math.prod(
            shape) else ops.broadcast_to(ops.reshape(out, ()), shape)
    try:
        raw = convert_to_tensor(value, dtype)._value
    except ValueError as error:
        raise ValueError(f"constant: {error}") from None
    if shape is not None:
        shape = tuple(int(d) for d in shape)
        count = math.prod(shape)
        if raw.shape != shape:
            if raw.size == count:
                raw = raw.reshape(shape)
            elif raw.size == 1:
                raw = backend.array_module(raw).broadcast_to(raw.reshape(()), shape)
            else:
                raise TypeError(f"constant: a value of shape {tuple(raw.shape)} has {raw.size} "
                                f"elements, but shape {shape} needs {count} (or 1 to fill it)")
    return wrap_constant(raw.copy())


def _note_escape(tensor):
    """Tell the recording tapes that a value left for NumPy (used to explain a None gradient)."""
    if state.recording:
        note_escape(tensor)


def _ops():
    """``framework.ops``: the ops are built on tensors, so a tensor reaches them at call time
    (a variable's snapshot, a tensor copied by ``constant``, a list of tensors packed)."""
    from .. import ops
    return ops
