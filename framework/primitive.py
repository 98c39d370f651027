"""Primitives: each op's forward and its vector-Jacobian products, declared side by side.

A primitive is called with tensors (or Python values, converted to the dtype of the first tensor
argument, so ``x * 2.0`` stays float32). Its forward runs on raw arrays; the result is wrapped;
and only when some tape is recording on this thread does the op look further. That is the hot
path: one attribute read beyond the array maths when no tape is active.

The VJPs (one per argument, ``None`` for arguments with no gradient, such as indices) take the
cotangent ``g``, the output and the inputs as tensors, and are written with the framework's own
ops, so an outer tape records the backward pass and nested tapes give any order of derivative.
A VJP may receive a cotangent with extra leading axes (``jacobian`` stacks all rows that way)
and must let them broadcast through; it never reduces broadcasting itself: the tape does that
in one place (``framework.tape.sum_to_shape``).
"""
from functools import partial

from . import backend
from .context import state
from .tensor import Tensor, convert_to_tensor, wrap


class Primitive:
    """One differentiable operation; calling it runs the op and records it where needed."""

    __slots__ = ("name", "forward", "vjps", "same_dtype")

    def __init__(self, name, forward, vjps=None, same_dtype=False):
        self.name = name
        self.forward = forward
        self.vjps = vjps  # None: not differentiable, never recorded
        self.same_dtype = same_dtype

    def __call__(self, *args, **params):
        try:
            values = [a._value for a in args]
        except AttributeError:
            args = _convert_args(self.name, args)
            values = [a._value for a in args]
        if self.same_dtype and values[0].dtype != values[1].dtype:
            raise TypeError(
                f"{self.name}: both operands must have the same dtype, got "
                f"{values[0].dtype.name} and {values[1].dtype.name}; use fw.cast to convert")
        try:
            out = wrap(self.forward(*values, **params))
        except Exception as e:
            raise _op_error(self.name, args, e) from e
        if state.recording and self.vjps is not None:
            record(self, args, out, params)
        return out

    def __repr__(self):
        return f"<primitive {self.name}>"


def primitive(*vjps, each_arg=None, same_dtype=False):
    """Declare a primitive from its forward (decorated) and one VJP per argument.

    A variadic primitive (``concat``, ``einsum``) gives instead ``each_arg``: one VJP that also
    takes the argument's position as its first parameter.
    """
    table = _EachArg(each_arg) if each_arg is not None else (tuple(vjps) or None)

    def declare(forward):
        return Primitive(forward.__name__.strip("_"), forward, table, same_dtype)
    return declare


class _EachArg:
    """The VJP table of a variadic primitive: position ``k`` maps to ``vjp(k, ...)``."""

    __slots__ = ("_vjp",)

    def __init__(self, vjp):
        self._vjp = vjp

    def __getitem__(self, k):
        return partial(self._vjp, k)


def record(prim, args, out, params):
    """Append the op to every recording tape that watches one of its inputs."""
    for tape in state.recording:
        tracked = tape._tracked
        if tape._watch_accessed:
            for a in args:
                if a._trainable and id(a) not in tracked:
                    tape._watch_variable(a)
        for a in args:
            if id(a) in tracked:
                tape._records.append((prim, args, out, params))
                tracked.add(id(out))
                break


def _convert_args(name, args):
    """Tensors pass through; other values take the dtype of the first tensor argument."""
    like = next((a.dtype for a in args if isinstance(a, Tensor)), None)
    try:
        return [a if isinstance(a, Tensor) else convert_to_tensor(a, _dtype_for(a, like))
                for a in args]
    except TypeError as e:
        raise TypeError(f"{name}: {e}") from None


def _dtype_for(value, like):
    if like is None or not isinstance(value, (int, float, bool, list, tuple)):
        return None
    return like


def _op_error(name, args, error):
    """Re-raise a failed forward with the op's name, its inputs' shapes, dtypes and devices."""
    desc = ", ".join(f"{a.dtype.name}{list(a.shape)} on {a.device}" for a in args)
    devices = {backend.device_of(a._value) for a in args}
    kind = type(error) if isinstance(error, (ValueError, TypeError, IndexError)) else ValueError
    if len(devices) > 1:
        return ValueError(f"{name}: inputs live on different devices ({desc}); "
                          f"move them with fw.to_device first")
    return kind(f"{name}: {error} (inputs: {desc})")

