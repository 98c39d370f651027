"""Keras-style optimizers on the framework: ``from optimizers import SGD, Adam``.

``base`` holds ``Optimizer`` (validation, clipping, weight decay, lazy slots, state); one module
per algorithm holds its update formula; ``schedules`` the learning-rate schedules;
``accumulate`` the gradient accumulator.
"""
from . import schedules
from .accumulate import GradientAccumulator
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .base import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["SGD", "Adagrad", "Adam", "AdamW", "GradientAccumulator", "Optimizer", "RMSprop", "get",
           "schedules"]

_BY_NAME = {"sgd": SGD, "adam": Adam, "adamw": AdamW, "rmsprop": RMSprop, "adagrad": Adagrad}


def get(identifier, **kwargs):
    """An optimizer from its name (``"adam"``, case-insensitive) and keyword arguments, or an
    optimizer instance returned as is; for config-driven runs."""
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, str) and identifier.lower() in _BY_NAME:
        return _BY_NAME[identifier.lower()](**kwargs)
    raise ValueError(f"unknown optimizer {identifier!r}; known names: {', '.join(_BY_NAME)}")
