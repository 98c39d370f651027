"""Where Keras caches its datasets, and the one error for a file that is not there."""
import os

ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"


def cached(name, subdir="datasets", origin=None):
    """The path of Keras's cached file ``name`` (``~/.keras/datasets/<name>``); the error names
    it when it is missing (no download here: fetch ``origin`` yourself)."""
    home = os.environ.get("KERAS_HOME") or os.path.join(os.path.expanduser("~"), ".keras")
    path = os.path.join(home, subdir, name)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path} is not there: this framework never downloads; put "
                                f"the file there (from {origin or ORIGIN + name})")
    return path
