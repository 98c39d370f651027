"""``fw.keras``: TensorFlow's ``tf.keras`` (Keras 3) over this framework, so that porting a
TF2 program is renaming ``tf`` to ``fw`` (and ``from tensorflow import keras`` to
``from framework import keras``).

Each submodule is a view over the package that holds the objects (``fw.keras.layers`` over
``layers``, ``fw.keras.optimizers`` over ``optimizers``, ``fw.keras.losses`` over
``fw.losses``...), imported the first time a program uses it: the engine still depends on
nothing above it. ``backend``, ``utils``, ``datasets``, ``mixed_precision`` and ``models`` are
Keras's helpers of those names. ``import framework.keras.backend as K`` works as
``import tensorflow.keras.backend as K`` does.
"""
import importlib

from ._view import view

_SUBMODULES = ("activations", "backend", "callbacks", "constraints", "datasets",
               "initializers", "layers", "losses", "metrics", "mixed_precision", "models",
               "optimizers", "regularizers", "utils")

# keras.<Name> at the top level, where Keras 3 (and tf.keras) defines it
_TOP = {"Input": "layers:Input", "InputLayer": "layers:InputLayer", "Layer": "layers:Layer",
        "Model": "layers:Model", "Sequential": "layers:Sequential",
        "Loss": "framework.losses:Loss", "Metric": "framework.metrics:Metric",
        "Optimizer": "optimizers:Optimizer", "Regularizer": "layers.regularizers:Regularizer",
        "Initializer": "layers.initializers:Initializer",
        "Variable": "framework.engine.tensor:Variable", "random": "framework.random",
        "DTypePolicy": "framework.keras.mixed_precision:DTypePolicy",
        **{name: f"framework.keras.{name}" for name in _SUBMODULES}}

__getattr__, __dir__ = view("fw.keras", names=_TOP)
__all__ = sorted(_TOP)
