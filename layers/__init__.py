"""Keras-style layers on the framework: ``from layers import Dense, Sequential, MLP``.

``base`` holds ``Layer`` (lazy build, tracking through ``fw.Module``, names, losses) and
``model`` the ``Model`` class; ``core`` the Dense, Flatten and Dropout layers;
``activation_layers``, ``normalization`` and ``embedding`` the other layer types;
``containers`` Sequential and MLP; ``functional`` ``Input`` and ``Model(inputs, outputs)``;
``initializers``, ``activations`` and ``regularizers`` the things layers are configured with,
by Keras's names.
"""
from . import activations, initializers, regularizers
from .base import LAYERS, Layer
from .containers import MLP, Sequential
from .core import Dense, Dropout, Flatten
from .functional import Input, InputLayer
from .model import Model

__all__ = ["LAYERS", "MLP", "Dense", "Dropout", "Flatten", "Input", "InputLayer", "Layer", "Model",
           "Sequential", "activations", "initializers", "regularizers"]
