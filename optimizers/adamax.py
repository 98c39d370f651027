"""Adamax (Adam under the infinity norm) with Keras 3's update formula, defaults and slots."""
import numpy as np

from . import checks
from .base import OPTIMIZERS, Optimizer


@OPTIMIZERS.register(name="adamax")
class Adamax(Optimizer):
    """``m += (g - m)(1 - beta_1)``, ``u = max(beta_2 u, |g|)`` and
    ``w -= lr m / ((1 - beta_1^t)(u + epsilon))``, with ``beta_1`` rounded to the variable's
    dtype before the power, as Keras does."""

    elementwise_update = True

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate, **kwargs)
        checks.check_adam_family("Adamax", beta_1, beta_2, epsilon)
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
        self._slot_names = ("momentum", "norm")

    def _update_step(self, gradient, variable, slots, learning_rate, step):
        m, u = slots
        scalar = variable.dtype.type
        constants = (scalar(1 - self.beta_1), scalar(self.beta_2), scalar(learning_rate),
                     scalar(1) - scalar(self.beta_1) ** scalar(step), scalar(self.epsilon))
        if self._fused("adamax", gradient, variable, slots, constants):
            return
        mix_1, beta_2, lr, debias, epsilon = constants
        tmp, denominator = self._scratch(variable, 2)
        np.subtract(gradient, m, out=tmp)
        tmp *= mix_1
        m += tmp
        u *= beta_2
        self._magnitude(gradient, tmp)
        np.maximum(u, tmp, out=u)
        np.add(u, epsilon, out=denominator)
        denominator *= debias
        np.multiply(m, lr, out=tmp)
        tmp /= denominator
        variable -= tmp
