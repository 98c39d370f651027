"""``fw.keras.constraints``, Keras's ``keras.constraints``: a view over ``layers.constraints``, imported when a
name is first used (the same objects)."""
from ._view import view

__getattr__, __dir__ = view("fw.keras.constraints", "layers.constraints")
