"""``fw.keras.optimizers``, Keras's ``keras.optimizers``: a view over ``optimizers``, imported when a
name is first used (the same objects)."""
from .._view import view

__getattr__, __dir__ = view("fw.keras.optimizers", "optimizers")
