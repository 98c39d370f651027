"""Fashion-MNIST: ``(x_train, y_train), (x_test, y_test)``, uint8, from the four gzip'd IDX
files Keras keeps in ``datasets/fashion-mnist``."""
import gzip

import numpy as np

from ._cache import ORIGIN, cached

_FILES = ("train-labels-idx1-ubyte.gz", "train-images-idx3-ubyte.gz",
          "t10k-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz")


def _read(name, offset):
    path = cached(name, "datasets/fashion-mnist", ORIGIN + name)
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), np.uint8, offset=offset)


def load_data():
    y_train, y_test = _read(_FILES[0], 8), _read(_FILES[2], 8)
    x_train = _read(_FILES[1], 16).reshape(len(y_train), 28, 28)
    x_test = _read(_FILES[3], 16).reshape(len(y_test), 28, 28)
    return (x_train, y_train), (x_test, y_test)
