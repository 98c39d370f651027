"""``fw.keras.datasets``: Keras's small datasets, read from the files Keras caches them in
(``~/.keras/datasets``, or ``$KERAS_HOME/datasets``), never downloaded: a file that is not there
is one ``FileNotFoundError`` naming the path to put it at and where Keras fetches it from.

Each ``load_data`` returns what Keras's returns from the same file (the same arrays, splits and
shuffles).
"""
from . import boston_housing, cifar10, fashion_mnist, imdb, mnist

__all__ = ["boston_housing", "cifar10", "fashion_mnist", "imdb", "mnist"]

from ...namespaces import suggest_close_names as _suggest  # noqa: E402

_suggest(__import__("sys").modules[__name__], "fw.keras.datasets")
