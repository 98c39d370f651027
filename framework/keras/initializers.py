"""``fw.keras.initializers``, Keras's ``keras.initializers``: a view over ``layers.initializers``, imported when a
name is first used (the same objects)."""
from ._view import view

__getattr__, __dir__ = view("fw.keras.initializers", "layers.initializers")
