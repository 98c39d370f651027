"""``fw.keras.callbacks``, Keras's ``keras.callbacks``: a view over ``layers.callbacks``, imported when a
name is first used (the same objects)."""
from ._view import view

__getattr__, __dir__ = view("fw.keras.callbacks", "layers.callbacks")
