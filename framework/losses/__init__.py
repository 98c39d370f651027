"""Losses with Keras's formulas and numbers (``fw.losses``, as ``tf.keras.losses``).

The functions (``functions``) are per example: they reduce only the class (last) axis, and the
caller takes the mean. The classes (``classes``: ``SparseCategoricalCrossentropy(...)``) add
Keras 3's ``reduction`` and ``sample_weight``; by default the sum over all per-example losses
divided by their number.

``LOSSES`` names them all as Keras's ``losses.get`` does: a function by its snake_case name
(``"mean_squared_error"``, ``"mse"``), a class by its class name (``"MeanSquaredError"``, which
``get`` instantiates).
"""
from .classes import (REDUCTIONS, BinaryCrossentropy, CategoricalCrossentropy,
                      CategoricalHinge, CosineSimilarity, Hinge, Huber, KLDivergence, LogCosh,
                      Loss, LossFunctionWrapper, MeanAbsoluteError, MeanAbsolutePercentageError,
                      MeanSquaredError, MeanSquaredLogarithmicError, Poisson,
                      SparseCategoricalCrossentropy, SquaredHinge, reduce_weighted)
from .functions import (BCE, EPSILON, KLD, LABEL_FORMS, LOSSES, MAE, MAPE, MSE, MSLE, bce,
                        binary_crossentropy, categorical_crossentropy, categorical_hinge,
                        cosine_similarity, hinge, huber, kl_divergence, kld, log_cosh, mae, mape,
                        mean_absolute_error, mean_absolute_percentage_error, mean_squared_error,
                        mean_squared_logarithmic_error, mse, msle, poisson,
                        sparse_categorical_crossentropy, squared_hinge, expects)


def get(identifier):
    """Keras's ``losses.get``: a function for a function's name (``"mse"``), an instance for a
    class's name or a ``{"class_name", "config"}`` dict, a callable as it is; None stays None."""
    return None if identifier is None else LOSSES.get(identifier)


def serialize(loss):
    """A function's name, or a class instance's ``{"class_name", "config"}``."""
    return LOSSES.serialize(loss)


def deserialize(config):
    """The inverse of ``serialize``."""
    return LOSSES.get(config)


__all__ = [
    "BCE", "BinaryCrossentropy", "CategoricalCrossentropy", "CategoricalHinge",
    "CosineSimilarity", "EPSILON", "Hinge", "Huber", "KLD", "KLDivergence", "LOSSES", "LogCosh",
    "Loss", "LossFunctionWrapper", "MAE", "MAPE", "MSE", "MSLE", "MeanAbsoluteError",
    "MeanAbsolutePercentageError", "MeanSquaredError", "MeanSquaredLogarithmicError", "Poisson",
    "REDUCTIONS", "SparseCategoricalCrossentropy", "SquaredHinge", "bce", "binary_crossentropy",
    "categorical_crossentropy", "categorical_hinge", "cosine_similarity", "deserialize", "get",
    "hinge", "huber", "kl_divergence", "kld", "log_cosh", "mae", "mape", "mean_absolute_error",
    "mean_absolute_percentage_error", "mean_squared_error", "mean_squared_logarithmic_error",
    "mse", "msle", "poisson", "reduce_weighted", "serialize", "sparse_categorical_crossentropy",
    "squared_hinge"]
