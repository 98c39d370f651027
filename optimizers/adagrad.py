"""Adagrad with Keras 3's formula and defaults."""
import numpy as np

from .base import OPTIMIZERS, Optimizer


@OPTIMIZERS.register(name="adagrad")
class Adagrad(Optimizer):
    """``acc += g^2`` and ``w -= lr g / sqrt(acc + epsilon)``; ``acc`` starts at
    ``initial_accumulator_value``, so early steps are not huge."""

    elementwise_update = True

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7,
                 **kwargs):
        super().__init__(learning_rate, **kwargs)
        if isinstance(initial_accumulator_value, bool) or not initial_accumulator_value >= 0:
            raise ValueError(f"Adagrad: initial_accumulator_value must be >= 0, "
                             f"got {initial_accumulator_value!r}")
        if isinstance(epsilon, bool) or not epsilon >= 0:
            raise ValueError(f"Adagrad: epsilon must be >= 0, got {epsilon!r}")
        self.initial_accumulator_value = initial_accumulator_value
        self.epsilon = epsilon
        self._slot_names = ("accumulator",)

    def _slot_initial_value(self, slot_name):
        return self.initial_accumulator_value

    def _update_step(self, gradient, variable, slots, learning_rate, step):
        (accumulator,) = slots
        denominator, increment = self._scratch(variable, 2)
        self._squared(gradient, denominator)
        accumulator += denominator
        np.add(accumulator, self.epsilon, out=denominator)
        np.sqrt(denominator, out=denominator)
        np.multiply(gradient, variable.dtype.type(learning_rate), out=increment)
        increment /= denominator
        variable -= increment
