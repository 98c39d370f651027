"""Free sizes: how one trace serves every size of an ``input_signature``'s None dimensions.

TensorFlow's graph serves every size with one trace because its Python never sees a size:
``x.shape[0]`` is None there. Here the trace runs on the call's real arrays, so a size must be
kept from reaching the plan as a constant another way. Four pieces do it:

- **Shadow runs** (``framework.tracing.shadows``). Every step of the trace runs twice more on
  "shadow" values, whose None dimensions have other sizes (``n + 1``, and 2, the class's
  smallest; the real rows over and over, so indices and labels stay valid). A dimension that
  differs between the runs is free; one that agrees is fixed (a feature width, a weight's).
- **Hooked sizes.** A traced array with free dimensions is a ``FreeArray``: its ``shape``,
  ``size`` and ``len`` give a ``Dim`` for each free dimension, its real and shadow sizes and
  its expression (``s3.shape[0]``). Arithmetic on a ``Dim`` gives a ``Dim``. A comparison
  gives its answer where every run gives the same one, with another ``Dim`` (TensorFlow's
  Python sees ``None == None``) or with a number below 2 (emptiness, broadcasting). Anything
  else that would make the size a Python value (``int``, ``__index__``, a hash, ``n == 4``)
  marks the trace as reading its size: its plan then serves that size only, and
  ``fw.function`` falls back to proving a plan on two traces, or to a trace per size.
- **Sizes as values of each call.** A ``Dim`` in an op's parameters (``fw.reshape(x, (n, -1))``)
  or a replayed call's arguments becomes its expression in the plan, computed on every call;
  converted to a tensor (``x / n``, ``fw.range(n)``) it is a step of the plan: TensorFlow's
  dynamic shapes.
- **The steps are exempt.** Inside an op's forward, an array VJP or a replayed call, sizes are
  read freely: those run again on every replay, on that call's arrays. Only the Python around
  them, whose results the plan would freeze, is watched.

A trace that never read a free size makes the same calls with the same constants at every
size, so its plan is the plan of every size of the class (sizes 0 and 1, where broadcasting
and emptiness decide otherwise, are classes of their own). Dimensions that agree in every run
by coincidence (``min(n, 4)``) are taken as fixed, as the two-trace proof takes them. NumPy
arrays only: a trace on the GPU backend falls back to the two-trace proof.
"""
import operator
import sys

import numpy as np

from ..engine.primitive import _convert_args, _operands, define

_SHAPE = np.ndarray.shape
_SIZE = np.ndarray.size

# the code objects that run a step: a size read in a function one of them called is the
# step's own (an op's forward, called from the closures ``define`` makes; the tracer adds its
# own runners), unless that function is one of ``NOT_STEPS``, the closures' conversions of
# their arguments, whose results a plan keeps
STEP_CODES = set()
for _probe in (define("probe", np.negative), define("probe", np.add)):
    STEP_CODES.update((_probe.__code__, _probe.run.__code__))
NOT_STEPS = {_operands.__code__, _convert_args.__code__}


def in_step():
    """Whether the caller runs inside a step of the plan (see ``STEP_CODES``)."""
    frame = sys._getframe(1)
    codes = STEP_CODES
    while frame.f_back is not None:
        if frame.f_back.f_code in codes:
            return frame.f_code not in NOT_STEPS
        frame = frame.f_back
    return False


class Dim:
    """A free dimension while tracing: its ``real`` size and the shadow runs' (a tuple; None
    where unknown: any use reads it), and ``expr``: how a replay computes it, a ref of the plan
    (("size", slot, axis) of a traced array, ("arith", fn, refs) on others, ("num", value)),
    or None where nobody knows. An op's parameter or a replayed call's argument that holds it
    becomes that expression, computed on every call: TensorFlow's dynamic shape. See the
    module's docstring."""

    __slots__ = ("real", "shadow", "trace", "expr")

    @property
    def per_call_size(self):
        """Whether the size differs between the runs (or nobody knows it): then it is a size
        of each call, which ``framework.engine.tensor.dims`` keeps in a shape and a layer's
        build sees as None. One that agrees (an output whose values decide its shape, on an
        axis no run changed) is an int to them, read as such."""
        return self.shadow is None or any(s != self.real for s in self.shadow)

    def __init__(self, real, shadow, trace, expr=None):
        self.real, self.shadow, self.trace, self.expr = real, shadow, trace, expr

    def read(self):
        """The real size, for a use that makes it a Python value: the trace reads its size."""
        self.trace.reads_size(self)
        return self.real

    def __index__(self):
        return self.read()

    __int__ = __index__

    def __float__(self):
        return float(self.read())

    def __hash__(self):
        return hash(self.read())

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.read(), dtype=dtype)

    def __fw_tensor__(self, dtype=None):
        """The size as a tensor (``convert_to_tensor``, an operand of an op): computed on every
        call where the trace knows how (TensorFlow's ``tf.shape(x)[i]``)."""
        return self.trace.size_tensor(self, dtype)

    def __repr__(self):
        return repr(self.real)

    __str__ = __repr__

    def __format__(self, spec):
        return format(self.real, spec)

    def _answer(self, op, other):
        """A comparison's answer, where every run gives the same one: with another free size
        (as TensorFlow's Python sees None == None), or with a number below 2 (``n == 0``,
        ``n > 1``: emptiness and broadcasting; the small shadow run sees the smallest sizes).
        Any other comparison with a number reads the size: ``n == 4`` may change its answer
        at a size no run had."""
        if other is None:  # (a size is never None: ``d == None`` is False at every size)
            return op(0, None)
        if other.__class__ is Dim:
            real, shadow = op(self.real, other.real), _shadow_op(op, self.shadow, other.shadow)
        elif isinstance(other, (int, float, np.integer, np.floating)) and \
                not isinstance(other, bool) and other < 2:
            real, shadow = op(self.real, other), _shadow_op(op, self.shadow, other)
        else:
            return op(self.read(), other)
        if shadow is None or any(answer != real for answer in shadow):
            self.trace.reads_size(self)
        return real

    def __bool__(self):
        return self._answer(operator.ne, 0)

    def _arith(self, op, other, reflected=False):
        if other.__class__ is Dim:
            o_real, o_shadow, o_expr = other.real, other.shadow, other.expr
        elif isinstance(other, (int, float, np.integer, np.floating)) and \
                not isinstance(other, bool):
            other = other.item() if isinstance(other, np.generic) else other
            o_real, o_shadow, o_expr = other, other, ("num", other)
        else:
            return op(other, self.read()) if reflected else op(self.read(), other)
        exprs = (o_expr, self.expr) if reflected else (self.expr, o_expr)
        if reflected:
            real, shadow = op(o_real, self.real), _shadow_op(op, o_shadow, self.shadow)
        else:
            real, shadow = op(self.real, o_real), _shadow_op(op, self.shadow, o_shadow)
        if shadow is not None and all(s == real for s in shadow):  # (n - n, n * 0)
            return real
        expr = None if None in exprs else ("arith", op, exprs)
        return Dim(real, shadow, self.trace, expr)

    def __neg__(self):
        return Dim(-self.real, None if self.shadow is None else tuple(-s for s in self.shadow),
                   self.trace,
                   None if self.expr is None else ("arith", operator.neg, (self.expr,)))

    def __pos__(self):
        return self

    __abs__ = __pos__  # (sizes are never negative)


def _shadow_op(op, x, y):
    """``op`` on each shadow run's sizes (``x``, ``y``: a tuple of them, or a number); None
    where one is unknown."""
    if x is None or y is None:
        return None
    xs = x if x.__class__ is tuple else (x,) * len(y)
    ys = y if y.__class__ is tuple else (y,) * len(xs)
    try:
        return tuple(op(a, b) for a, b in zip(xs, ys))
    except ZeroDivisionError:
        return None


for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    setattr(Dim, f"__{_name}__", lambda self, other, _op=getattr(operator, _name):
            self._answer(_op, other))
for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow"):
    _op = getattr(operator, _name)
    setattr(Dim, f"__{_name}__", lambda self, other, _op=_op: self._arith(_op, other))
    setattr(Dim, f"__r{_name}__", lambda self, other, _op=_op: self._arith(_op, other, True))
Dim.__divmod__ = lambda self, other: (self // other, self % other)
Dim.__rdivmod__ = lambda self, other: (other // self, other % self)


class FreeArray(np.ndarray):
    """A traced array with free dimensions: ``_sizes`` has, per axis, None (fixed) or the
    shadow runs' sizes (a tuple); ``_sizes`` None: an array made from one in Python, whose sizes
    nobody knows (every axis is then read as free). ``_trace``: the tracer, told of reads."""

    _sizes = None
    _trace = None
    _ref = None  # the slot of the plan that holds this array (its sizes' ``Dim.expr``)

    @property
    def __class__(self):
        """``np.ndarray``: the hot paths that tell a host array by ``x.__class__ is np.ndarray``
        take the same road as for the plain array (``type(x)`` is still ``FreeArray``)."""
        return np.ndarray

    def __array_finalize__(self, obj):
        self._trace = getattr(obj, "_trace", None)

    @property
    def shape(self):
        real = _SHAPE.__get__(self)
        trace = self._trace
        if trace is None or not trace.general or trace.done or in_step():
            return real
        sizes = self._sizes
        if sizes is None:
            return tuple(Dim(d, None, trace) for d in real)
        ref = self._ref
        return tuple(d if s is None else Dim(d, s, trace, ("size", ref, i))
                     for i, (d, s) in enumerate(zip(real, sizes)))

    @shape.setter
    def shape(self, value):
        _SHAPE.__set__(self, value)

    @property
    def size(self):
        size = _SIZE.__get__(self)
        shape = self.shape
        if any(d.__class__ is Dim for d in shape):
            out = 1
            for d in shape:
                out = out * d
            return out
        return size

    def __len__(self):
        if not self.ndim:
            raise TypeError("len() of unsized object")
        return self.shape[0]


def free_view(real, shadows, trace, ref, every_axis=False):
    """``real``, the array of slot ``ref``, as the trace's Python should see it: a
    ``FreeArray`` view where a shadow run's shape differs (or, ``every_axis``, for an output
    whose sizes its values decide), else a plain array. Raises ``ValueError`` where a shadow
    cannot be the same computation."""
    if not isinstance(real, np.ndarray):
        return real  # (a NumPy scalar, an IndexedSlices: no axes of their own)
    real_shape = _SHAPE.__get__(real)
    shapes = []
    for shadow in shadows:
        shape = getattr(shadow, "shape", None)
        if shape is None or len(shape) != len(real_shape) or \
                getattr(shadow, "dtype", None) != real.dtype:
            raise ValueError(f"a shadow run gave {shape} for {real_shape}")
        shapes.append(shape)
    sizes = tuple(tuple(shape[axis] for shape in shapes) for axis in range(len(real_shape)))
    sizes = tuple(None if all(s == r for s in ss) and not every_axis else ss
                  for r, ss in zip(real_shape, sizes))
    if not any(sizes):
        return real.view(np.ndarray) if type(real) is FreeArray else real
    view = real.view(FreeArray)
    view._sizes, view._trace, view._ref = sizes, trace, ref
    return view


def real_shape(array):
    """An array's shape as ints, whatever its class."""
    return _SHAPE.__get__(array) if isinstance(array, np.ndarray) else tuple(array.shape)


def plain(value):
    """``value`` with every ``Dim`` its real size and every ``FreeArray`` a plain view, and
    whether it held any: a constant of the plan made from a free size."""
    cls = type(value)
    if cls is Dim:
        return value.real, True
    if cls is FreeArray:
        return value.view(np.ndarray), True
    if isinstance(value, (tuple, list)):  # (a TensorShape too: a tuple of its entries)
        items = [plain(v) for v in value]
        if any(free for _, free in items):
            values = [v for v, _ in items]
            return (list(values) if isinstance(value, list) else
                    cls(*values) if hasattr(cls, "_fields") else tuple(values)), True
        return value, False
    if cls is slice:
        (start, stop, step), free = plain((value.start, value.stop, value.step))
        return (slice(start, stop, step), True) if free else (value, False)
    if cls is dict:
        items = {k: plain(v) for k, v in value.items()}
        if any(free for _, free in items.values()):
            return {k: v for k, (v, _) in items.items()}, True
        return value, False
    return value, False


def shadow_inputs(array, axes):
    """The shadows of an input: each free axis (size 2 or more) one longer, and 2 long (the
    class's smallest), its rows the real ones over and over."""
    shadows = []
    for length in (lambda n: n + 1, lambda n: 2):
        shadow = array
        for axis in axes:
            n = shadow.shape[axis]
            shadow = np.take(shadow, np.arange(length(n)) % n, axis=axis)
        shadows.append(shadow)
    return shadows
