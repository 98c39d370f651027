"""Keras-style optimizers on the framework: ``from optimizers import SGD, Adam``.

``base`` holds ``Optimizer`` (validation, clipping, weight decay, lazy slots, state); one module
per algorithm holds its update formula; ``schedules`` the learning-rate schedules;
``accumulate`` the gradient accumulator.
"""
from . import schedules
from .accumulate import GradientAccumulator
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .base import OPTIMIZERS, Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["OPTIMIZERS", "SGD", "Adagrad", "Adam", "AdamW", "GradientAccumulator", "Optimizer", "RMSprop", "get",
           "schedules"]

def get(identifier, **kwargs):
    """An optimizer from its name (``"adam"``, case-insensitive) and keyword arguments, a
    serialized dict, or an optimizer instance returned as is; for config-driven runs."""
    return OPTIMIZERS.get(identifier, **kwargs)
