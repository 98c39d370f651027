"""``fw.keras.regularizers``, Keras's ``keras.regularizers``: a view over ``layers.regularizers``, imported when a
name is first used (the same objects)."""
from ._view import view

__getattr__, __dir__ = view("fw.keras.regularizers", "layers.regularizers")
