"""``fw.keras.layers``, Keras's ``keras.layers``: a view over ``layers``, imported when a
name is first used (the same objects)."""
from ._view import view

__getattr__, __dir__ = view("fw.keras.layers", "layers")
