"""How a recorded case names its op and inputs, shared by the recording script (run with
TensorFlow) and the test that replays it (with ``framework``): an op is a dotted path under the
module (``"math.log1p"`` under ``tf`` or ``fw``); a tensor input is ``{"tensor": values,
"dtype": name}``, a list of such a list of tensors, anything else a Python value."""
import numpy as np


def resolve(root, path):
    """The object at the dotted ``path`` under the module ``root``."""
    for part in path.split("."):
        root = getattr(root, part)
    return root


def build(spec, constant):
    """The argument ``spec`` describes, tensors made with ``constant`` (tf's or fw's)."""
    if isinstance(spec, dict) and "tensor" in spec:
        return constant(np.asarray(spec["tensor"], dtype=spec["dtype"]))
    if isinstance(spec, list) and spec and all(isinstance(s, dict) for s in spec):
        return [build(s, constant) for s in spec]
    return spec


def build_nested(spec, constant):
    """A print input: tensors inside lists and dicts built too."""
    if isinstance(spec, dict) and "tensor" not in spec:
        return {k: build_nested(v, constant) for k, v in spec.items()}
    if isinstance(spec, list):
        return [build_nested(x, constant) for x in spec]
    return build(spec, constant)


def flatten(value):
    """The leaves of nested lists and tuples (named tuples included)."""
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in flatten(item)]
    return [value]


def is_float(value):
    return hasattr(value, "dtype") and np.dtype(value.dtype.name).kind == "f"


def run(module, op, args, kwargs, weights_for, directions_for, order):
    """``op(*args, **kwargs)`` under nested tapes of ``module`` (tf or fw): the result, its
    leaves, with ``order`` 1 or more the gradient of ``sum(w * output)`` for
    ``weights_for(float outputs)`` with respect to every float input, and with ``order`` 2 the
    gradient of ``sum(v * gradient)`` for ``directions_for(gradients)`` (unconnected: zeros).
    ``order`` 0: the forward alone (TensorFlow has no gradient for the op)."""
    sources = [x for x in flatten([args, list(kwargs.values())]) if is_float(x) and order]

    def paired(tensors, weights):
        return module.math.add_n([module.reduce_sum(t * w) for t, w in zip(tensors, weights)])

    with module.GradientTape(persistent=True) as outer:
        outer.watch(sources)
        with module.GradientTape(persistent=True) as inner:
            inner.watch(sources)
            result = op(*args, **kwargs)
            outs = flatten(result)
            differentiable = [o for o in outs if is_float(o) and order]
            weights = weights_for(differentiable)
            total = paired(differentiable, weights) if differentiable else None
        grads = (inner.gradient(total, sources, unconnected_gradients="zero")
                 if total is not None and sources else [])
        directions = directions_for(grads)
        second = paired(grads, directions) if grads else None
    grads2 = (outer.gradient(second, sources, unconnected_gradients="zero")
              if second is not None and order >= 2 else [])
    return result, outs, weights, grads, directions, grads2


def jsonable(value):
    """A recorded value as JSON holds it: tuples as lists, NumPy arrays and scalars as Python
    values, recursively (the recording scripts compare configs and shapes in that form)."""
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value
