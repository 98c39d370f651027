"""``fw.keras.models``: ``Model``, ``Sequential``, ``load_model``, ``save_model`` and
``clone_model``, the objects of the ``layers`` package, imported when first used."""
from ._view import view

__getattr__, __dir__ = view("fw.keras.models", names={
    "Model": "layers:Model", "Sequential": "layers:Sequential",
    "load_model": "layers.keras_file:load_model", "save_model": "layers.keras_file:save_model",
    "clone_model": "layers.cloning:clone_model"})
