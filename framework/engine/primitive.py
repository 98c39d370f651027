"""Primitives: each op's forward and its vector-Jacobian products, declared side by side.

A primitive is called with tensors (or Python values, converted to the dtype of the first tensor
argument, so ``x * 2.0`` stays float32). Its forward runs on arrays; the result is wrapped;
and only when some tape is recording on this thread does the op look further. That is the hot
path: one attribute read beyond the array maths when no tape is active.

The VJPs (one per argument, ``None`` for arguments with no gradient, such as indices) take the
cotangent ``g``, the output and the inputs as tensors, and are written with the framework's own
ops, so an outer tape records the backward pass and nested tapes give any order of derivative.
A VJP may receive a cotangent with extra leading axes (``jacobian`` stacks all rows that way)
and must let them broadcast through; it never reduces broadcasting itself: the tape does that
in one place (``framework.tape.sum_to_shape``).

The ops a training step spends its time in also give an ``array_vjp``: the same derivatives on
arrays, for every argument in one call. A first-order ``gradient`` that no tape records (every
training step) uses it: no tensor is wrapped and no op dispatched, and what the arguments'
gradients share (a ReLU mask, a softmax) is computed once. The tensor VJPs stay the definition,
serve every higher order, and the tests hold the two equal.
"""
import inspect
import itertools
from functools import partial
from typing import Callable, NamedTuple

import numpy as np

from . import backend
from .context import state
from .recording import record
from .tensor import Tensor, convert_to_tensor, scalar_like


class Primitive:
    """What the tape keeps of an op: its name, its VJP table (None: not differentiable), its
    first-order VJP on arrays, if it has one, that VJP's host form (``host_array_vjp``: the
    same one unless host tuning registered another, see ``define``), ``through``: a
    ``Through``, or None, and ``dynamic_shape``: whether its output's shape depends on its
    inputs' values (``unique``, a boolean mask), so that ``fw.function`` checks it on every
    call (a callable of the op's parameters where that depends on them)."""

    __slots__ = ("name", "vjps", "array_vjp", "host_array_vjp", "forward", "saves", "through",
                 "dynamic_shape")

    def __init__(self, name, vjps, array_vjp=None, host_array_vjp=None, forward=None,
                 saves=False, through=None, dynamic_shape=False):
        self.name = name
        self.vjps = vjps
        self.array_vjp = array_vjp
        self.host_array_vjp = host_array_vjp or array_vjp
        self.forward = forward  # on arrays (host forms chosen): what fw.function's replay calls
        self.saves = saves
        self.through = through
        self.dynamic_shape = dynamic_shape

    def __repr__(self):
        return f"<primitive {self.name}>"


class Through(NamedTuple):
    """An array VJP that goes through the op that produced the last input, in one step.

    When that input is the output of a ``producer`` op recorded just before, whose parameters
    (a dict) ``fits`` accepts, a first-order array pass that is not asked for that input's own
    gradient calls ``array_vjp`` in place of the two ops' VJPs: it takes the op's array VJP
    arguments and returns the op's gradients, the producer's inputs' in place of the last one.
    A loss on a softmax's probabilities pulls back to the logits as ``g * (p / sum(p) -
    one_hot)`` in two array operations, where the loss's VJP and the softmax's Jacobian took
    eight. The input's other consumers, if any, still reach the producer the usual way.
    """

    producer: Primitive
    fits: Callable
    array_vjp: Callable


def define(name, forward, *vjps, each_arg=None, array_vjp=None, saves=False, same_dtype=False,
           host_forward=None, host_array_vjp=None, through=None, dynamic_shape=False):
    """The public op for ``forward`` (on arrays) with one VJP per argument.

    A variadic primitive (``concat``, ``einsum``) gives instead ``each_arg``: one VJP that also
    takes the argument's position as its first parameter. ``array_vjp(g, out, needs, *args,
    **params)``, on arrays, returns a gradient (or None) for each argument, computing those whose
    entry in the tuple ``needs`` is true. With ``saves`` the forward returns ``(out, saved)``:
    intermediates the array VJP reuses (a cross-entropy's softmax), which the record keeps and
    every VJP receives as the keyword ``saved``. ``same_dtype`` refuses mixed operand dtypes, as
    TensorFlow does, instead of NumPy's silent promotion. The op is a plain closure, specialised
    for one and two arguments: a call costs a few attribute reads beyond the maths; its ``run``
    skips the conversions for a wrapper that has done them.

    ``host_forward`` and ``host_array_vjp`` register host tuning (``framework.host``): forms
    that run in place of ``forward`` and ``array_vjp`` on NumPy arrays, with the same numbers
    (the tape picks the VJP by the cotangent's class; ``op.run_on_host`` is ``run`` for a
    wrapper that knows its arrays are NumPy's). The definitions stay what every other array
    runs, and what the tests hold the host forms equal to (``op.forward`` beside
    ``op.host_forward``, ``primitive.array_vjp`` beside ``primitive.host_array_vjp``).
    ``through`` (a ``Through``) declares an array VJP through the op that produced the last
    argument. ``dynamic_shape`` (see ``Primitive``) marks an output whose shape the values
    decide. A primitive without VJPs is not differentiable (a sort order, a count): it is still
    recorded and traced like every op, so no computation escapes the gate.
    """
    arity = None if each_arg is not None else len(vjps) if vjps else _arity(forward)
    table = _EachArg(each_arg) if each_arg is not None else (tuple(vjps) or None)
    definition = forward
    if host_forward is not None:
        forward = _prefer_host(definition, host_forward)
    prim = Primitive(name, table, array_vjp, host_array_vjp, forward, saves, through,
                     dynamic_shape)
    op_name = name  # the closures take TensorFlow's ``name=None`` argument, and ignore it

    def unary(x, name=None, **params):
        try:
            value = x._value
        except AttributeError:
            (x,) = _convert_args(op_name, (x,))
            value = x._value
        try:
            out = forward(value, **params) if params else forward(value)
        except Exception as e:
            raise _op_error(op_name, (x,), e) from e
        t = _new(Tensor)
        t._value = out
        t._keras_mask = None
        if state.recording:
            record(prim, (x,), t, params, (value,))
        return t

    def binary(x, y, name=None, **params):
        if x.__class__ is not Tensor or y.__class__ is not Tensor:
            x, y = _operands(op_name, x, y)
        xv, yv = x._value, y._value
        if same_dtype and xv.dtype is not yv.dtype and xv.dtype != yv.dtype:
            raise TypeError(f"{op_name}: both operands must have the same dtype, got "
                            f"{xv.dtype.name} and {yv.dtype.name}; use fw.cast to convert")
        try:
            out = forward(xv, yv, **params) if params else forward(xv, yv)
        except Exception as e:
            raise _op_error(op_name, (x, y), e) from e
        t = _new(Tensor)
        t._value = out
        t._keras_mask = None
        if state.recording:
            record(prim, (x, y), t, params, (xv, yv))
        return t

    def variadic(*args, name=None, **params):
        try:
            values = [a._value for a in args]
        except AttributeError:
            args = _convert_args(op_name, args)
            values = [a._value for a in args]
        return run(args, values, params)

    def runner(forward):
        def run(args, values, params):
            """The op on tensors ``args`` (a tuple) whose arrays are ``values``: for a wrapper
            that has converted and checked its arguments already."""
            try:
                out = forward(*values, **params)
            except Exception as e:
                raise _op_error(op_name, args, e) from e
            if saves:
                out, saved = out
            t = _new(Tensor)
            t._value = out
            t._keras_mask = None
            if state.recording:
                record(prim, args, t, dict(params, saved=saved) if saves else params, values)
            return t
        return run

    run = runner(forward)
    op = unary if arity == 1 and not saves else binary if arity == 2 and not saves else variadic
    op.__name__ = op.__qualname__ = name
    op.__doc__ = definition.__doc__
    op.primitive = prim
    op.forward, op.host_forward = definition, host_forward or definition
    op.run = run
    op.run_on_host = run if host_forward is None else runner(host_forward)
    return op


def _prefer_host(definition, on_host):
    """``on_host`` for a NumPy first argument, else ``definition`` (see ``define``)."""
    def either(first, *rest, **params):
        if first.__class__ is _ndarray:
            return on_host(first, *rest, **params)
        return definition(first, *rest, **params)
    return either


def primitive(*vjps, **options):
    """Decorator form of ``define`` (the same options): the decorated function is the
    forward."""
    def declare(forward):
        return define(forward.__name__.strip("_"), forward, *vjps, **options)
    return declare


def _arity(forward):
    """How many positional array arguments a forward takes (None: any number)."""
    if hasattr(forward, "nin"):  # a ufunc
        return forward.nin
    params = inspect.signature(forward).parameters.values()
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return None
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)


_new = object.__new__
_ndarray = np.ndarray


class _EachArg:
    """The VJP table of a variadic primitive: position ``k`` maps to ``vjp(k, ...)``."""

    __slots__ = ("_vjp",)

    def __init__(self, vjp):
        self._vjp = vjp

    def __getitem__(self, k):
        return partial(self._vjp, k)

    def __iter__(self):  # zip(args, table) pairs each argument with its VJP
        return map(self.__getitem__, itertools.count())


def _operands(name, x, y):
    """Both operands of a binary op as tensors; a Python number takes the other's dtype."""
    try:
        if y.__class__ in _NUMBERS and isinstance(x, Tensor):
            return x, scalar_like(y, x._value.dtype)
        if isinstance(x, Tensor) and isinstance(y, Tensor):
            return x, y  # variables
        if x.__class__ in _NUMBERS and isinstance(y, Tensor):
            return scalar_like(x, y._value.dtype), y
        # a NumPy array and a number: the array's dtype, as TF infers it from its typed input;
        # two numbers: the first one's (``fw.divide(7.0, 2)`` is float32, as in TF)
        if y.__class__ in _NUMBERS and (x.__class__ in _NUMBERS or isinstance(x, _ARRAYS)):
            x = convert_to_tensor(x)
            return x, scalar_like(y, x._value.dtype)
        if x.__class__ in _NUMBERS and isinstance(y, _ARRAYS):
            y = convert_to_tensor(y)
            return scalar_like(x, y._value.dtype), y
    except TypeError as e:  # 2.5 for an integer tensor: say which op refused it
        raise TypeError(f"{name}: {e}") from None
    return _convert_args(name, (x, y))


_NUMBERS = (int, float, bool)
_ARRAYS = (np.ndarray, np.generic)


def _convert_args(name, args):
    """Tensors pass through; Python values take the dtype of the first tensor argument."""
    like = next((a.dtype for a in args if isinstance(a, Tensor)), None)
    try:
        return [a if isinstance(a, Tensor) else _convert(a, like) for a in args]
    except TypeError as e:
        raise TypeError(f"{name}: {e}") from None


def _convert(value, like):
    if like is None:
        return convert_to_tensor(value)
    if isinstance(value, (int, float, bool)):
        return scalar_like(value, like)
    if getattr(value, "per_call_size", False):  # (a traced size: a tensor of each call)
        return convert_to_tensor(value, like)
    # Lists and NumPy arrays take the tensor's dtype, as TensorFlow converts an op's operands.
    return convert_to_tensor(value, like if isinstance(value, (list, tuple)) or hasattr(
        value, "dtype") else None)


def _op_error(name, args, error):
    """Re-raise a failed forward with the op's name, its inputs' shapes, dtypes and devices."""
    if len({backend.device_of(a._value) for a in args}) > 1:
        return device_error(name, args)
    kind = type(error) if isinstance(error, (ValueError, TypeError, IndexError)) else ValueError
    return kind(f"{name}: {error} (inputs: {_describe(args)})")


def device_error(name, args):
    """The error for an op whose inputs live on different devices, naming the op and each
    input's device: CuPy refuses such a mix in arithmetic, and the ops that would merely index
    one input with the other check it themselves, so no data crosses devices silently."""
    return ValueError(f"{name}: inputs live on different devices ({_describe(args)}); "
                      f"move them with fw.to_device first")


def _describe(args):
    return ", ".join(f"{a.dtype.name}{list(a.shape)} on {a.device}" for a in args)

