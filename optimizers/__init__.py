"""Keras-style optimizers on the framework: ``from optimizers import SGD, Adam``.

``base`` holds ``Optimizer`` (validation, clipping, weight decay, lazy slots, state),
``common`` what every Keras optimizer adds (gradient accumulation, moving averages, loss
scaling, configs) and ``checks`` the argument checks; one module per algorithm holds its update
formula; ``layout`` how variables are grouped for an update; ``schedules`` the learning-rate
schedules.
"""
from . import schedules
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .base import OPTIMIZERS, Optimizer
from .ftrl import Ftrl
from .lion import Lion
from .loss_scale import LossScaleOptimizer
from .nadam import Nadam
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["OPTIMIZERS", "SGD", "Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "Ftrl", "Lion", "LossScaleOptimizer",
           "Nadam", "Optimizer", "RMSprop", "get", "schedules"]


def get(identifier, **kwargs):
    """An optimizer from its name (``"adam"``, case-insensitive) and keyword arguments, a
    serialized dict, or an optimizer instance returned as is; for config-driven runs."""
    return OPTIMIZERS.get(identifier, **kwargs)
