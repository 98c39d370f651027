"""Keras-style layers on the framework: ``from layers import Dense, Sequential, MLP``.

``base`` holds ``Layer`` and ``Model`` (lazy build, tracking, names); ``core`` the Dense,
Flatten and Dropout layers; ``containers`` Sequential and MLP; ``initializers`` and
``activations`` the functions they are configured with, by Keras's names.
"""
from . import activations, initializers
from .base import LAYERS, Layer, Model
from .containers import MLP, Sequential
from .core import Dense, Dropout, Flatten

__all__ = ["LAYERS", "MLP", "Dense", "Dropout", "Flatten", "Layer", "Model", "Sequential", "activations",
           "initializers"]
