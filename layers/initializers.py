"""Keras's view of the weight initializers (``tf.keras.initializers``): the very objects that
``framework.initializers`` defines, registry included, so ``layers.initializers.Zeros`` is
``fw.zeros_initializer`` and a name resolves to the same class from either side."""
from framework.initializers import (INITIALIZERS, Constant, GlorotNormal, GlorotUniform,
                                    HeNormal, HeUniform, Identity, Initializer, LecunNormal,
                                    LecunUniform, Ones, Orthogonal, RandomNormal, RandomUniform,
                                    TruncatedNormal, VarianceScaling, Zeros, compute_fans, get)

__all__ = ["INITIALIZERS", "Constant", "GlorotNormal", "GlorotUniform", "HeNormal", "HeUniform",
           "Identity", "Initializer", "LecunNormal", "LecunUniform", "Ones", "Orthogonal",
           "RandomNormal", "RandomUniform", "TruncatedNormal", "VarianceScaling", "Zeros",
           "compute_fans", "get"]
