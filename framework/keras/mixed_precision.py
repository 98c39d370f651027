"""``fw.keras.mixed_precision``: Keras 3's dtype policies and ``LossScaleOptimizer``.

``set_global_policy("mixed_float16")`` makes the layers created afterwards compute in float16
while their variables stay float32: a layer casts its floating inputs to float16 and reads its
trainable weights as float16 casts (an op on the tape, so their gradients arrive in float32).
Keras's loss classes compute in float32 whatever the predictions' dtype. ``LossScaleOptimizer``
(``optimizers.LossScaleOptimizer``) scales the loss so that float16 gradients do not underflow.
"""
import sys

from ..engine import dtypes
from ..namespaces import unknown_name
from . import backend

__all__ = ["DTypePolicy", "LossScaleOptimizer", "Policy", "dtype_policy", "global_policy",
           "set_dtype_policy", "set_global_policy"]

_MIXED = {"mixed_float16": "float16"}  # (no bfloat16 in NumPy: mixed_bfloat16 is refused)
_state = {"policy": None}  # None: the policy of floatx()


class DTypePolicy:
    """A layer's two dtypes: ``compute_dtype`` for its computations and outputs,
    ``variable_dtype`` for its weights. ``DTypePolicy("float64")`` uses one for both;
    ``"mixed_float16"`` computes in float16 over float32 weights."""

    def __init__(self, name=None):
        name = backend.floatx() if name is None else name
        if not isinstance(name, str):
            try:  # (a dtype object: NumPy's, the framework's, a type)
                name = dtypes.as_dtype(name).name
            except (TypeError, ValueError):
                raise TypeError(f"'name' must be a string, such as 'mixed_float16'. Received: "
                                f"name={name!r} (of type {type(name)})") from None
        if name in _MIXED:
            compute, variable = _MIXED[name], "float32"
        else:
            try:
                compute = variable = dtypes.as_dtype(name).name
            except (TypeError, ValueError):
                raise ValueError(f"Cannot convert '{name}' to a mixed precision DTypePolicy. "
                                 f"Valid policies include 'mixed_float16' and the name of any "
                                 f"float dtype such as 'float32'.") from None
        self._name, self._compute_dtype, self._variable_dtype = name, compute, variable

    name = property(lambda self: self._name)
    compute_dtype = property(lambda self: self._compute_dtype)
    variable_dtype = property(lambda self: self._variable_dtype)

    def __eq__(self, other):
        return isinstance(other, DTypePolicy) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return f'<DTypePolicy "{self.name}">'

    def get_config(self):
        return {"name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


Policy = DTypePolicy


def set_global_policy(policy):
    """The policy of the layers created from now on (a name or a ``DTypePolicy``; None: back
    to ``floatx``)."""
    if policy is not None:
        policy = policy if isinstance(policy, DTypePolicy) else DTypePolicy(policy)
        if not dtypes.as_dtype(policy.compute_dtype).is_floating:
            raise ValueError(f"set_global_policy takes a floating policy, got "
                             f"'{policy.name}'")
    _state["policy"] = policy


def global_policy():
    """The policy layers get when created without a ``dtype``."""
    return _state["policy"] or DTypePolicy(backend.floatx())


set_dtype_policy, dtype_policy = set_global_policy, global_policy


def as_policy(dtype):
    """A layer's ``dtype`` argument as a policy: None is the global one."""
    if dtype is None:
        return global_policy()
    return dtype if isinstance(dtype, DTypePolicy) else DTypePolicy(dtype)


def __getattr__(attr):
    if attr == "LossScaleOptimizer":  # (the optimizer is above the engine: reached lazily)
        from optimizers import LossScaleOptimizer
        return LossScaleOptimizer
    raise unknown_name("fw.keras.mixed_precision", [*__all__, *vars(sys.modules[__name__])],
                       attr)
