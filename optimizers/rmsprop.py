"""RMSprop with Keras 3's formulas: plain or centered, with optional (heavy-ball) momentum."""
import numpy as np

from .base import OPTIMIZERS, Optimizer


@OPTIMIZERS.register(name="rmsprop")
class RMSprop(Optimizer):
    """``v = rho v + (1 - rho) g^2`` and ``w -= lr g / sqrt(v + epsilon)``; ``centered`` also
    tracks ``a = rho a + (1 - rho) g`` and divides by ``sqrt(v - a^2 + epsilon)``; with
    ``momentum``, ``m = momentum m + increment`` and ``w -= m``."""

    elementwise_update = True

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False,
                 **kwargs):
        super().__init__(learning_rate, **kwargs)
        for value, what in ((rho, "rho"), (momentum, "momentum")):
            if isinstance(value, bool) or not 0 <= value <= 1:
                raise ValueError(f"RMSprop: {what} must be in [0, 1], got {value!r}")
        if isinstance(epsilon, bool) or not epsilon >= 0:
            raise ValueError(f"RMSprop: epsilon must be >= 0, got {epsilon!r}")
        self.rho, self.momentum, self.epsilon = rho, momentum, epsilon
        self.centered = bool(centered)
        self._slot_names = (("velocity",) + (("momentum",) if momentum > 0 else ())
                            + (("average_gradient",) if centered else ()))

    def _update_step(self, gradient, variable, slots, learning_rate, step):
        named = dict(zip(self._slot_names, slots))
        velocity = named["velocity"]
        denominator, increment = self._scratch(variable, 2)
        velocity *= self.rho
        self._squared(gradient, denominator)
        denominator *= 1 - self.rho
        velocity += denominator
        if self.centered:
            average = named["average_gradient"]
            average *= self.rho
            np.multiply(gradient, 1 - self.rho, out=denominator)
            average += denominator
            np.multiply(average, average, out=denominator)
            np.subtract(velocity, denominator, out=denominator)
            denominator += self.epsilon
        else:
            np.add(velocity, self.epsilon, out=denominator)
        np.sqrt(denominator, out=denominator)
        np.multiply(gradient, variable.dtype.type(learning_rate), out=increment)
        increment /= denominator
        if "momentum" in named:
            named["momentum"] *= self.momentum
            named["momentum"] += increment
            variable -= named["momentum"]
        else:
            variable -= increment
