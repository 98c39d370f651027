"""``fw.keras.metrics``, Keras's ``keras.metrics``: a view over ``framework.metrics``, imported when a
name is first used (the same objects)."""
from ._view import view

__getattr__, __dir__ = view("fw.keras.metrics", "framework.metrics")
