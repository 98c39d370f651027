"""``fw.numpy_function`` and ``fw.py_function``: a Python function as one step of a program.

``numpy_function`` hands ``func`` NumPy arrays; ``py_function`` hands it tensors. Both return
tensors of ``Tout`` (one dtype: one tensor; a list: a list). As in TensorFlow, a
``numpy_function`` is opaque to the tape (its outputs have no gradient), while a
``py_function``'s ops run under the caller's tapes, so gradients flow through them.

Under ``fw.function`` the Python function is an effect, not a value: it is called on every call
with that call's inputs. The one hook is ``_call_python``, a ``framework.engine.context.replayed`` step: the
recorder runs it once while tracing and the plan calls it again on each replay, its outputs
becoming the plan's values. The one exception: a ``py_function`` that a tape inside the traced
function differentiates runs inline, so the tape and the recorder see its ops (they replay
with each call's values; its Python itself runs while tracing only).
"""
import functools

import numpy as np

from .engine.context import state
from .engine.dtypes import numpy_dtype
from .engine.tensor import Tensor, convert_to_tensor
from .engine.context import replayed, tracing_tapes


def numpy_function(func=None, inp=None, Tout=None, stateful=True, name=None):
    """``func(*arrays)`` on the NumPy values of ``inp``, its results as tensors of ``Tout``
    (``tf.numpy_function``); without ``func`` or ``inp``, a decorator / decorated function."""
    if func is None or inp is None:
        return _decorator(numpy_function, func, Tout, "numpy_function", stateful=stateful)
    dtypes, single = _dtypes(Tout, "numpy_function")
    return _call_python(_on_arrays, func, _inputs(inp), dtypes, single)


def py_function(func=None, inp=None, Tout=None, name=None):
    """``func(*tensors)`` on ``inp``, its results as tensors of ``Tout`` (``tf.py_function``):
    differentiable through the framework ops ``func`` uses."""
    if func is None or inp is None:
        return _decorator(py_function, func, Tout, "py_function")
    dtypes, single = _dtypes(Tout, "py_function")
    inputs = _inputs(inp)
    if len(state.recording) > len(tracing_tapes(state.recording)):  # a user's tape records
        return _on_tensors(func, inputs, dtypes, single)
    return _call_python(_on_tensors, func, inputs, dtypes, single)


@replayed  # (the hook into fw.function: called again on every call, with that call's inputs)
def _call_python(run, func, inputs, dtypes, single):
    return run(func, inputs, dtypes, single)


def _on_arrays(func, inputs, dtypes, single):
    return _outputs(func(*[t.numpy() for t in inputs]), dtypes, single, func, "numpy_function")


def _on_tensors(func, inputs, dtypes, single):
    return _outputs(func(*inputs), dtypes, single, func, "py_function")


def _decorator(op, func, Tout, label, **options):
    """TensorFlow's decorator forms: ``@op(Tout=...)`` and ``op(func, Tout=...)``."""
    if Tout is None:
        raise TypeError(f"{label}: missing required argument 'Tout'")

    def decorate(f):
        @functools.wraps(f)
        def call(*args):
            return op(f, list(args), Tout, **options)
        return call
    return decorate if func is None else decorate(func)


def _dtypes(Tout, label):
    """``Tout`` as a tuple of dtype names, and whether it named one dtype (one tensor out)."""
    if Tout is None:
        raise TypeError(f"{label}: missing required argument 'Tout'")
    single = not isinstance(Tout, (list, tuple))
    try:
        return tuple(numpy_dtype(t).name for t in ([Tout] if single else Tout)), single
    except TypeError:
        raise TypeError(f"{label}: Tout must be a dtype or a list of dtypes, got "
                        f"{Tout!r}") from None


def _inputs(inp):
    return [convert_to_tensor(x) for x in (inp if isinstance(inp, (list, tuple)) else [inp])]


def _outputs(result, dtypes, single, func, label):
    """``func``'s result as tensors of ``dtypes``: tensors and NumPy arrays must have their
    dtype already (TensorFlow's check); Python values are converted to it."""
    values = [] if result is None and not dtypes else \
        list(result) if isinstance(result, (list, tuple)) else [result]
    where = f"{label}: {getattr(func, '__name__', 'func')}"
    if len(values) != len(dtypes):
        raise ValueError(f"{where} returns {len(values)} values, but Tout expects "
                         f"{len(dtypes)}")
    tensors = []
    for k, (value, dtype) in enumerate(zip(values, dtypes)):
        if isinstance(value, Tensor) or isinstance(value, (np.ndarray, np.generic)):
            if value.dtype != np.dtype(dtype):
                raise TypeError(f"{where}: value {k} returned is {np.dtype(value.dtype).name}, "
                                f"but Tout expects {dtype}")
            value = value if isinstance(value, Tensor) else np.array(value)  # (a copy)
        tensors.append(convert_to_tensor(value, dtype))
    return tensors[0] if single else tensors


__all__ = ["numpy_function", "py_function"]
