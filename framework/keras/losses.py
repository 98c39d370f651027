"""``fw.keras.losses``, Keras's ``keras.losses``: a view over ``framework.losses``, imported when a
name is first used (the same objects)."""
from ._view import view

__getattr__, __dir__ = view("fw.keras.losses", "framework.losses")
