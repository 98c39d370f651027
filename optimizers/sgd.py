"""Stochastic gradient descent, with Keras 3's momentum and Nesterov formulas."""
import numpy as np

from framework.engine import backend
from framework.tuning import kernels

from .base import OPTIMIZERS, Optimizer


@OPTIMIZERS.register(name="sgd")
class SGD(Optimizer):
    """``w -= lr * g``; with momentum ``m = momentum * m - lr * g`` then ``w += m``, or with
    Nesterov ``w += momentum * m - lr * g`` (the look-ahead form Keras uses)."""

    elementwise_update = True

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, **kwargs):
        super().__init__(learning_rate, **kwargs)
        if isinstance(momentum, bool) or not 0 <= momentum <= 1:
            raise ValueError(f"SGD: momentum must be a number in [0, 1], got {momentum!r}")
        self.momentum = float(momentum)
        self.nesterov = bool(nesterov)
        self._slot_names = ("momentum",) if self.momentum else ()

    def _update_step(self, gradient, variable, slots, learning_rate, step):
        if backend.is_device_array(variable) and kernels.fits(variable, gradient, *slots):
            kernels.sgd(gradient, variable, slots, learning_rate, self.momentum, self.nesterov)
            return
        scaled, look_ahead = self._scratch(variable, 2)
        np.multiply(gradient, variable.dtype.type(learning_rate), out=scaled)
        if not slots:
            variable -= scaled
            return
        (velocity,) = slots
        momentum = variable.dtype.type(self.momentum)
        velocity *= momentum
        velocity -= scaled
        if self.nesterov:
            np.multiply(velocity, momentum, out=look_ahead)
            look_ahead -= scaled
            variable += look_ahead
        else:
            variable += velocity
