"""``fw.keras.optimizers.schedules``: a view over ``optimizers.schedules``, so that
``from framework.keras.optimizers.schedules import ExponentialDecay`` works as TensorFlow's
import does (the same classes)."""
from .._view import view

__getattr__, __dir__ = view("fw.keras.optimizers.schedules", "optimizers.schedules")
