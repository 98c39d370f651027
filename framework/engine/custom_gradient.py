"""``fw.custom_gradient``: a function that supplies its own gradient, TensorFlow's form.

The decorated function returns ``(y, grad_fn)``. Its body runs with the user's tapes paused, and
one record stands for the whole call; the backward pass calls ``grad_fn(dy)``, which returns one
gradient per input. If the body reads trainable variables, ``grad_fn`` must accept
``variables=`` and return ``(input_grads, variable_grads)``, as in TensorFlow.
"""
import functools
import inspect

from . import nest
from .context import state
from .primitive import Primitive
from .recording import record
from .tape import GradientTape
from .tensor import Tensor, convert_to_tensor, wrap
from .context import tracing_tapes


def custom_gradient(f):
    @functools.wraps(f)
    def wrapper(*args):
        inputs = [convert_to_tensor(a) for a in args]
        outer, state.recording = state.recording, tracing_tapes(state.recording)
        try:
            with GradientTape() as spy:  # only to learn which variables the body reads
                y, grad_fn = f(*inputs)
        finally:
            state.recording = outer
        if not isinstance(y, Tensor):
            raise TypeError(f"custom_gradient: {f.__name__} must return (tensor, grad_fn), "
                            f"got a {type(y).__name__} as its first value")
        if any(y is x for x in inputs):  # a new tensor, as TensorFlow's identity on the outputs:
            y = wrap(y._value)           # the record must not make an input its own output
        variables = [v for v in spy.watched_variables() if all(v is not x for x in inputs)]
        if variables and not _takes_variables(grad_fn):
            raise TypeError(f"custom_gradient: {f.__name__} reads the variables "
                            f"{[v.name for v in variables]}, so its grad_fn must accept a keyword "
                            f"argument 'variables' and return (input_grads, variable_grads)")
        if state.recording:
            prim = Primitive(f"custom_gradient({f.__name__})",
                             _CallOnce(grad_fn, len(inputs), variables))
            args = tuple(inputs) + tuple(variables)
            record(prim, args, y, {}, [a._value for a in args])
        return y
    return wrapper


def _takes_variables(grad_fn):
    try:
        params = inspect.signature(grad_fn).parameters.values()
    except (TypeError, ValueError):  # a builtin or C callable: let the call itself decide
        return True
    return any(p.name == "variables" or p.kind is p.VAR_KEYWORD for p in params)


class _CallOnce:
    """Per-argument VJPs that share one call of ``grad_fn`` per cotangent."""

    def __init__(self, grad_fn, n_inputs, variables):
        self._grad_fn, self._n, self._variables = grad_fn, n_inputs, variables
        self._last = (None, None)

    def __getitem__(self, k):
        return lambda g, out, *args: self._grads(g, args)[k]

    def _grads(self, g, args):
        if self._last[0] is not g:
            if self._variables:
                dx, dvars = self._grad_fn(g, variables=self._variables)
                grads = nest.flatten(dx) + list(dvars)
            else:
                grads = nest.flatten(self._grad_fn(g))
            expected = self._n + len(self._variables)
            if len(grads) != expected:
                raise ValueError(f"custom_gradient: grad_fn returned {len(grads)} gradients for "
                                 f"{self._n} inputs and {len(self._variables)} variables")
            # Python numbers and arrays take their argument's dtype (2.0 for a float64 input)
            self._last = (g, [d if d is None or isinstance(d, Tensor) else
                              convert_to_tensor(d, a.dtype) for d, a in zip(grads, args)])
        return self._last[1]
