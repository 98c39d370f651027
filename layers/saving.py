"""``save_weights`` / ``load_weights`` for layers and models, and Keras 3 ``.weights.h5`` files.

Our own weights file is a checkpoint of the layer alone, written and read by ``fw.train``
(one implementation: atomic, a truncated file or a shape mismatch is one error naming the file
or the variable, and a failed load changes nothing).

``load_weights`` also reads a Keras 3 ``.weights.h5`` file (when ``h5py`` is installed), told
apart by its content, not its name. Keras keys a layer's variables by where its saving walk
first meets the layer, not by the layer's name: from the model, ``layers`` first for a
``Sequential``, then the attributes in sorted order; a layer is under its attribute's name, a
layer in a list or dict under ``<attribute>/<snake_case class name>`` with ``_1``, ``_2``...
for the second and later of a class in that container (a layer met earlier still takes its
name there); the variables a layer creates itself are ``<path>/vars/0``, ``/1``... trainable
ones first. ``keras_layout`` walks our layers the same way, so a model trained in Keras loads
into the equivalent model here and predicts the same numbers.
"""
import os

import numpy as np

import framework as fw
from framework.engine import backend
from framework.checkpoint_file import CheckpointError

from .scope import snake_case

_HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
_KERAS_SKIPPED = ("optimizer",)  # a compiled Keras model's optimizer state: not the weights'


def save_weights(self, filepath, overwrite=True):
    """Write this layer's variables to ``filepath`` (the framework's format, atomically)."""
    filepath = os.fspath(filepath)
    if not overwrite and os.path.exists(filepath):
        raise FileExistsError(f"save_weights: {filepath} exists and overwrite=False")
    self._require_built("save_weights()")
    fw.train.Checkpoint(model=self).write(filepath)


def load_weights(self, filepath, skip_mismatch=False):
    """Load weights that ``save_weights`` wrote, or a Keras 3 ``.weights.h5`` file; every
    variable must find a value of its shape, or nothing is loaded."""
    filepath = os.fspath(filepath)
    self._require_built("load_weights()")
    if not os.path.isfile(filepath):
        raise FileNotFoundError(f"load_weights: {filepath}: no such file")
    with open(filepath, "rb") as f:
        keras_file = f.read(len(_HDF5_SIGNATURE)) == _HDF5_SIGNATURE
    if keras_file:
        _load_keras_h5(self, filepath)
    else:
        fw.train.restore_exactly(filepath, model=self)


# --- Keras 3's layout ----------------------------------------------------------------------------
def keras_layout(model):
    """``{group path: [variables]}`` as Keras 3 saves ``model`` (``""`` is the model itself);
    the file holds variable ``i`` of a group at ``<path>/vars/<i>``."""
    from .base import Layer
    layout, visited = {}, set()
    stack = [("", model)]
    while stack:  # (iterative: deep models are fine)
        path, layer = stack.pop()
        if id(layer) in visited:
            continue
        visited.add(id(layer))
        layout[path] = _keras_own_variables(layer)
        children = []
        for attribute, value in _keras_attributes(layer):
            where = f"{path}/{attribute}" if path else attribute
            if isinstance(value, Layer):
                children.append((where, value))
            elif isinstance(value, (list, tuple, dict)):
                children.extend(_keras_container(where, value, Layer))
        stack.extend(reversed(children))
    return layout


def _keras_attributes(layer):
    """``(name, value)`` in the order Keras's saving walk visits a layer's attributes."""
    from .containers import Sequential
    names = {name for name in vars(layer) if name not in layer._untracked_attributes
             and not name.startswith("__")}
    if hasattr(type(layer), "layers"):
        names.add("layers")  # (a Model's property: its direct sublayers, as Keras's)
    first = [("layers", layer.layers)] if isinstance(layer, Sequential) else []
    return first + [(name, getattr(layer, name)) for name in sorted(names)]


def _keras_container(path, container, layer_type):
    """Keras's names for the layers of a list or dict: class names, numbered per class."""
    items = container.values() if isinstance(container, dict) else container
    used, out = {}, []
    for item in items:
        if not isinstance(item, layer_type):
            continue
        name = snake_case(type(item).__name__)
        if name in used:
            used[name] += 1
            name = f"{name}_{used[name]}"
        else:
            used[name] = 0
        out.append((f"{path}/{name}", item))
    return out


def _keras_own_variables(layer):
    """A layer's own variables in Keras's order: those created trainable, then the others."""
    own = list({id(v): v for _, v in layer._own_variables()}.values())  # (each once)
    created_trainable = [v for v in own if v.trainable or any(v is f for f in layer._frozen)]
    return created_trainable + [v for v in own if not any(v is t for t in created_trainable)]


def _load_keras_h5(model, filepath):
    try:
        import h5py
    except ImportError:
        raise ImportError(f"load_weights: {filepath} is an HDF5 (Keras .weights.h5) file, "
                          f"which needs h5py: pip install 'tape-framework[h5]' (or h5py)") from None
    try:
        with h5py.File(filepath, "r") as f:
            stored = {}
            f.visititems(lambda name, obj: stored.__setitem__(name, obj[()])
                         if isinstance(obj, h5py.Dataset) else None)
    except OSError as error:
        raise CheckpointError(f"{filepath}: not a readable HDF5 file (truncated or "
                              f"corrupted?): {error}") from None
    pairs, problems = [], []
    for path, variables in keras_layout(model).items():
        group = f"{path}/vars" if path else "vars"
        for i, variable in enumerate(variables):
            key = f"{group}/{i}"
            value = stored.pop(key, None)
            if value is None:
                problems.append(f"no '{key}' for variable '{_name(variable)}'")
            elif value.shape != variable.shape:
                problems.append(f"variable '{_name(variable)}' has shape {variable.shape}, "
                                f"'{key}' in the file {value.shape}")
            else:
                pairs.append((variable, value))
    unused = sorted(k for k in stored if k.split("/", 1)[0] not in _KERAS_SKIPPED)
    if unused:
        problems.append(f"values the model has no variable for: {unused}")
    if problems:
        raise ValueError(f"load_weights({filepath!r}): the file does not fit "
                         f"'{model.name}': " + "; ".join(problems) + " (nothing was loaded)")
    for variable, value in pairs:
        variable.assign(backend.to_device(np.asarray(value, variable.dtype), variable.device))


def _name(variable):
    return getattr(variable, "path", None) or variable.name
