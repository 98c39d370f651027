"""Keras's metrics (``fw.metrics``, as ``tf.keras.metrics``): stateful objects that accumulate
over batches, ``update_state(y_true, y_pred, sample_weight=None)``, ``result()``,
``reset_state()``, with Keras 3's numbers.

``METRICS`` names the classes as Keras's ``metrics.get`` does: by class name
(``"SparseCategoricalAccuracy"``), snake_case name (``"sparse_categorical_accuracy"``) and
Keras's short aliases (``"mse"``, ``"mae"``); ``get`` instantiates a class it is given by name.
"""
from .accuracy import (Accuracy, BinaryAccuracy, CategoricalAccuracy, MeanAbsoluteError,
                       MeanSquaredError, RootMeanSquaredError, SparseCategoricalAccuracy,
                       SparseTopKCategoricalAccuracy, TopKCategoricalAccuracy, accuracy,
                       binary_accuracy, categorical_accuracy, sparse_categorical_accuracy,
                       sparse_top_k_categorical_accuracy, top_k_categorical_accuracy)
from .base import METRICS, Mean, MeanMetricWrapper, Metric, Sum
from .confusion import AUC, Precision, Recall


def get(identifier):
    """Keras's ``metrics.get``: an instance for a class's name or a ``{"class_name",
    "config"}`` dict, a metric or callable as it is; None stays None."""
    return None if identifier is None else METRICS.get(identifier)


def serialize(metric):
    """``{"class_name": ..., "config": metric.get_config()}``."""
    return METRICS.serialize(metric)


def deserialize(config):
    """The inverse of ``serialize``."""
    return METRICS.get(config)


__all__ = ["AUC", "Accuracy", "BinaryAccuracy", "CategoricalAccuracy", "METRICS", "Mean",
           "MeanAbsoluteError", "MeanMetricWrapper", "MeanSquaredError", "Metric", "Precision",
           "Recall", "RootMeanSquaredError", "SparseCategoricalAccuracy",
           "SparseTopKCategoricalAccuracy", "Sum", "TopKCategoricalAccuracy", "accuracy",
           "binary_accuracy", "categorical_accuracy", "deserialize", "get", "serialize",
           "sparse_categorical_accuracy", "sparse_top_k_categorical_accuracy",
           "top_k_categorical_accuracy"]
