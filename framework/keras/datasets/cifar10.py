"""CIFAR-10: ``(x_train, y_train), (x_test, y_test)``, uint8 images ``(n, 32, 32, 3)`` and
labels ``(n, 1)``, from the extracted ``cifar-10-batches-py`` directory Keras keeps (under
``datasets/cifar-10-batches-py-target/``, or directly under ``datasets/``)."""
import os
import pickle

import numpy as np

from ._cache import cached

_ORIGIN = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz, extracted"


class _ArraysOnly(pickle.Unpickler):
    """A batch file holds dicts, lists, bytes and NumPy arrays: nothing else is rebuilt."""

    _ALLOWED = {("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray",
                                                            "_reconstruct"),
                ("numpy", "ndarray"), ("numpy", "dtype")}

    def find_class(self, module, name):
        if (module, name) not in self._ALLOWED:
            raise pickle.UnpicklingError(f"a CIFAR batch may not hold {module}.{name}")
        return super().find_class(module, name)


def _batch(path):
    with open(path, "rb") as f:
        batch = {key.decode("utf8"): value
                 for key, value in _ArraysOnly(f, encoding="bytes").load().items()}
    data = np.asarray(batch["data"], dtype="uint8")
    return data.reshape(len(data), 3, 32, 32), np.asarray(batch["labels"], dtype="uint8")


def load_data():
    name = "cifar-10-batches-py"
    try:
        folder = cached(os.path.join("cifar-10-batches-py-target", name), origin=_ORIGIN)
    except FileNotFoundError:
        folder = cached(name, origin=_ORIGIN)
    parts = [_batch(os.path.join(folder, f"data_batch_{i}")) for i in range(1, 6)]
    x_test, y_test = _batch(os.path.join(folder, "test_batch"))
    x_train = np.concatenate([x for x, _ in parts])
    y_train = np.concatenate([y for _, y in parts])
    return ((x_train.transpose(0, 2, 3, 1), y_train.reshape(-1, 1)),
            (x_test.transpose(0, 2, 3, 1), y_test.reshape(-1, 1)))
