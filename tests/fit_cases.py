"""The models and data of tests/reference/make_fit_reference.py, rebuilt with the framework:
the same set initial weights and arrays, so ``fit`` here and in Keras 3 start alike."""
import json
import os

import numpy as np

import framework as fw
import layers
import optimizers

REFERENCE = json.load(open(os.path.join(os.path.dirname(__file__), "reference",
                                        "fit_reference.json")))
DATA = {k: np.asarray(v, np.int64 if k == "labels" else np.float32)
        for k, v in REFERENCE["data"].items()}


def weights(shapes, seed):
    rng = np.random.default_rng(seed)
    return [rng.normal(0, 0.5, s).astype(np.float32) for s in shapes]


def mlp(outputs, hidden=6, seed=1, activation=None):
    model = layers.Sequential([layers.Input((4,)), layers.Dense(hidden, activation="tanh"),
                               layers.Dense(outputs, activation=activation)])
    model.set_weights(weights([(4, hidden), (hidden,), (hidden, outputs), (outputs,)], seed))
    return model


def sparse_logits():
    return fw.losses.SparseCategoricalCrossentropy(from_logits=True)


def compiled(lr=0.05):
    model = mlp(3)
    model.compile(optimizer=optimizers.SGD(lr), loss=sparse_logits(), metrics=["accuracy"])
    return model


def close(actual, expected, atol=2e-5, rtol=2e-4):
    np.testing.assert_allclose(np.asarray(actual, np.float64), np.asarray(expected, np.float64),
                               atol=atol, rtol=rtol)


def assert_history(history, recorded, atol=2e-5):
    assert list(history.history) == list(recorded["history"])
    for key, values in recorded["history"].items():
        close(history.history[key], values, atol=atol)
    assert history.epoch == recorded["epoch"]


class Interrupt(layers.callbacks.Callback):
    """Raises at the end of the given epoch, as a killed run stops."""

    def __init__(self, epoch):
        super().__init__()
        self.epoch = epoch

    def on_epoch_end(self, epoch, logs=None):
        if epoch == self.epoch:
            raise KeyboardInterrupt


def dropout_model():
    """Shuffled batches, dropout and Adam's slots: every stream a resume must continue."""
    fw.random.set_seed(11)
    model = layers.Sequential([layers.Input((4,)), layers.Dense(8, activation="tanh"),
                               layers.Dropout(0.3), layers.Dense(3)])
    model.compile(optimizer=optimizers.Adam(0.02),
                  loss=fw.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model
