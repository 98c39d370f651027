"""``Model.save("m.keras")`` and ``load_model``: Keras 3's ``.keras`` file, a zip holding
``metadata.json``, ``config.json`` (the model's class and config, as Keras writes them) and the
weights.

The weights are the framework's own checkpoint (``model.weights.ckpt``, written by
``fw.train``: atomic, checked on load), not Keras's ``model.weights.h5``, so a ``.keras`` file
written here is read here; ``Sequential`` and functional models round-trip (a subclassed model
has no config to rebuild it from: save its weights instead).
"""
import json
import os
import tempfile
import zipfile

import framework as fw
from framework.version import __version__

from .containers import Sequential
from .functional import Functional
from .model_config import functional_from_config

__all__ = ["load_model", "save_model"]

_WEIGHTS = "model.weights.ckpt"
_CLASSES = {"Sequential": Sequential, "Functional": Functional}


def save_model(model, filepath, overwrite=True, zipped=None, **kwargs):
    """Write ``model`` (its architecture and weights) to ``filepath``, a ``.keras`` file."""
    filepath = os.fspath(filepath)
    if not filepath.endswith(".keras"):
        raise ValueError(f"Invalid filepath extension for saving. Please add the `.keras` "
                         f"extension, got {filepath!r}")
    if zipped is False or kwargs:
        raise ValueError(f"save: only the zipped .keras format is written here, got "
                         f"zipped={zipped!r} {sorted(kwargs)}")
    if not overwrite and os.path.exists(filepath):
        raise FileExistsError(f"save: {filepath} exists and overwrite=False")
    if not isinstance(model, (Sequential, Functional)):
        raise ValueError(f"save: {type(model).__name__} '{model.name}' is a subclassed model, "
                         f"which has no config to rebuild it from; use save_weights")
    model._require_built("save()")
    config = {"module": "keras", "class_name": _class_name(model), "config": model.get_config(),
              "registered_name": None}
    metadata = {"keras_version": "3", "framework_version": __version__}
    directory = os.path.dirname(os.path.abspath(filepath))
    with tempfile.TemporaryDirectory(dir=directory) as scratch:
        weights = os.path.join(scratch, _WEIGHTS)
        fw.train.Checkpoint(model=model).write(weights)
        partial = os.path.join(scratch, "model.keras")
        with zipfile.ZipFile(partial, "w") as archive:
            archive.writestr("metadata.json", json.dumps(metadata))
            archive.writestr("config.json", json.dumps(config))
            archive.write(weights, _WEIGHTS)
        os.replace(partial, filepath)  # (atomic: a failed save leaves the old file)


def _class_name(model):
    """Keras's ``class_name``: ``Sequential``, ``Functional``, or the subclass's name (a
    ``CustomModel`` built functionally), which loading finds in ``custom_objects``."""
    return type(model).__name__


def _from_config(config, custom_objects, filepath):
    name = config.get("class_name")
    cls = (custom_objects or {}).get(name) or _CLASSES.get(name)
    if cls is None:
        raise ValueError(f"load_model: {filepath} holds a {name!r} model; pass its class: "
                         f"load_model(..., custom_objects={{{name!r}: {name}}})")
    if issubclass(cls, Sequential):
        return cls.from_config(config["config"], custom_objects=custom_objects)
    return functional_from_config(cls, config["config"], custom_objects)


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):  # noqa: A002
    """The model ``save`` wrote to ``filepath``, with its weights. ``custom_objects`` maps the
    class names of layers defined in the program to their classes."""
    filepath = os.fspath(filepath)
    if not os.path.isfile(filepath):
        raise FileNotFoundError(f"load_model: {filepath}: no such file")
    try:
        with zipfile.ZipFile(filepath) as archive:
            config = json.loads(archive.read("config.json"))
            names = archive.namelist()
            if _WEIGHTS not in names:
                raise ValueError(f"load_model: {filepath} holds no {_WEIGHTS} "
                                 f"({'Keras weights (model.weights.h5)' if 'model.weights.h5' in names else 'no weights'}); "
                                 f"only .keras files written by this framework are read")
            with tempfile.TemporaryDirectory() as scratch:
                weights = archive.extract(_WEIGHTS, scratch)
                model = _from_config(config, custom_objects, filepath)
                model._require_built("load_model()")
                fw.train.restore_exactly(weights, model=model)
    except (zipfile.BadZipFile, KeyError, json.JSONDecodeError) as error:
        raise ValueError(f"load_model: {filepath} is not a readable .keras file "
                         f"({error})") from None
    return model
