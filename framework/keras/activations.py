"""``fw.keras.activations``, Keras's ``keras.activations``: a view over ``layers.activations``, imported when a
name is first used (the same objects)."""
from ._view import view

__getattr__, __dir__ = view("fw.keras.activations", "layers.activations")
