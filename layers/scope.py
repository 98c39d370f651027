"""Which layers are being called on this thread: where variable names and ``training`` come from.

Each ``Layer.__call__`` (and each ``build``) pushes a frame ``(layer, training)``. A variable
created meanwhile gets its ``path`` from the chain of layers in the frames
(``mlp/dense_1/kernel``, Keras 3's variable path), and a layer called without ``training``
takes its caller's, so
``model(x, training=True)`` reaches a ``Dropout`` deep inside.
"""
import functools
import re
import threading
from collections import defaultdict

from framework.module import name_scope

_name_counts = defaultdict(int)
_name_lock = threading.Lock()


class _CallStack(threading.local):
    """The layers being called or built on this thread, outermost first, with their training."""

    def __init__(self):
        self.frames = []


calls = _CallStack()


def unique_name(base):
    """Keras's auto names: ``dense``, ``dense_1``, ... unique in this process."""
    with _name_lock:
        count = _name_counts[base]
        _name_counts[base] += 1
    return base if count == 0 else f"{base}_{count}"


def reset_names():
    """Start the auto names afresh (``keras.backend.clear_session``)."""
    with _name_lock:
        _name_counts.clear()


def snake_case(name):
    """Keras's layer-name form of a class name: ``MyModel`` -> ``my_model``."""
    name = re.sub(r"\W+", "", name)
    name = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub("([a-z])([A-Z])", r"\1_\2", name).lower()


def scope_path(layer):
    """The '/'-joined names of the layers being called, ending with ``layer``."""
    frames = calls.frames
    names = [frame[0].name for frame in frames]
    if not frames or frames[-1][0] is not layer:
        names.append(layer.name)
    return "/".join(names)


def build_wrapper(build):
    """Make ``build`` run inside the layer's frame, once, and set ``built`` after it."""
    @functools.wraps(build)
    def build_once(self, input_shape=None, *shapes):  # (several: MultiHeadAttention's)
        if self.built:
            return
        frames = calls.frames
        enter = not frames or frames[-1][0] is not self
        if enter:
            frames.append((self, frames[-1][1] if frames else None))
        try:
            with name_scope(self.name):  # a tf.Variable made in build: "layer/v:0", as Keras's
                build(self, input_shape, *shapes)
        finally:
            if enter:
                frames.pop()
        self._build_input_shape = input_shape
        self.built = True
    return build_once
