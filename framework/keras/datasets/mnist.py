"""MNIST digits: ``(x_train, y_train), (x_test, y_test)``, uint8, from ``mnist.npz``."""
import numpy as np

from ._cache import cached


def load_data(path="mnist.npz"):
    with np.load(cached(path), allow_pickle=False) as f:
        return (f["x_train"], f["y_train"]), (f["x_test"], f["y_test"])
