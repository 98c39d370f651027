"""Weight constraints by Keras's names: ``Dense(4, kernel_constraint="non_neg")``.

A constraint maps a weight to its projected value; an optimizer assigns that value to the
variable after each update (``Variable.constraint``), as Keras 3 does. The numbers are Keras's:
the norms divide by ``epsilon + norm`` (``keras.backend.epsilon()``), computed with the
framework's ops so they run on either backend and under ``fw.function``.
"""
import framework as fw
from framework.keras import backend as keras_backend
from framework.registry import Configurable, Registry

__all__ = ["CONSTRAINTS", "Constraint", "MaxNorm", "MinMaxNorm", "NonNeg", "UnitNorm", "get",
           "max_norm", "min_max_norm", "non_neg", "serialize", "unit_norm"]

CONSTRAINTS = Registry("constraint")


class Constraint(Configurable):
    """The base: ``constraint(w)`` is ``w`` projected; subclasses override ``__call__``."""

    def __call__(self, w):
        return w


def _norms(w, axis):
    return fw.sqrt(fw.reduce_sum(fw.square(w), axis=axis, keepdims=True))


def _rescaled(w, norms, desired):
    return w * (desired / (keras_backend.epsilon() + norms))


@CONSTRAINTS.register
class MaxNorm(Constraint):
    """Rescale the slices along ``axis`` whose norm exceeds ``max_value`` down to it."""

    def __init__(self, max_value=2, axis=0):
        self.max_value, self.axis = max_value, axis

    def __call__(self, w):
        norms = _norms(fw.convert_to_tensor(w), self.axis)
        return _rescaled(w, norms, fw.clip_by_value(norms, 0.0, float(self.max_value)))


@CONSTRAINTS.register
class NonNeg(Constraint):
    """Negative weights become 0."""

    def __call__(self, w):
        w = fw.convert_to_tensor(w)
        return fw.maximum(w, fw.zeros_like(w))


@CONSTRAINTS.register
class UnitNorm(Constraint):
    """The slices along ``axis`` rescaled to norm 1."""

    def __init__(self, axis=0):
        self.axis = axis

    def __call__(self, w):
        w = fw.convert_to_tensor(w)
        return w / (keras_backend.epsilon() + _norms(w, self.axis))


@CONSTRAINTS.register
class MinMaxNorm(Constraint):
    """Norms along ``axis`` moved into ``[min_value, max_value]``, by the fraction ``rate``."""

    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value, self.max_value, self.rate, self.axis = min_value, max_value, rate, axis

    def __call__(self, w):
        w = fw.convert_to_tensor(w)
        norms = _norms(w, self.axis)
        clipped = fw.clip_by_value(norms, float(self.min_value), float(self.max_value))
        return _rescaled(w, norms, self.rate * clipped + (1 - self.rate) * norms)


# Keras's lower-case spellings are the classes themselves (``keras.constraints.max_norm(3)``).
max_norm, non_neg, unit_norm, min_max_norm = MaxNorm, NonNeg, UnitNorm, MinMaxNorm


def get(identifier):
    """The constraint for a name (the class with its defaults), a ``{"class_name", "config"}``
    dict, a class, or a callable (returned as is); None stays None."""
    return None if identifier is None else CONSTRAINTS.get(identifier)


def serialize(constraint):
    """``{"class_name": ..., "config": ...}``, what ``get`` reads back; None stays None."""
    return None if constraint is None else CONSTRAINTS.serialize(constraint)
