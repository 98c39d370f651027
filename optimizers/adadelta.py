"""Adadelta with Keras 3's update formula, defaults and slots."""
import numpy as np

from . import checks
from .base import OPTIMIZERS, Optimizer


@OPTIMIZERS.register(name="adadelta")
class Adadelta(Optimizer):
    """``a = rho a + (1 - rho) g^2``, ``d = -sqrt(D + epsilon) g / sqrt(a + epsilon)``,
    ``D = rho D + (1 - rho) d^2`` and ``w += lr d``: a step in the units of the weights, scaled
    by the learning rate as Keras does (1.0 gives the paper's unscaled step)."""

    elementwise_update = True

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate, **kwargs)
        checks.check_fraction(rho, "rho", "Adadelta", closed=True)
        checks.check_non_negative(epsilon, "epsilon", "Adadelta")
        self.rho, self.epsilon = rho, epsilon
        self._slot_names = ("accumulated_grad", "accumulated_delta_var")

    def _update_step(self, gradient, variable, slots, learning_rate, step):
        accumulated_grad, accumulated_delta = slots
        scalar = variable.dtype.type
        constants = (scalar(self.rho), scalar(1 - self.rho), scalar(learning_rate),
                     scalar(self.epsilon))
        if self._fused("adadelta", gradient, variable, slots, constants):
            return
        rho, mix, lr, epsilon = constants
        descent, tmp = self._scratch(variable, 2)  # descent: -d
        self._squared(gradient, tmp)
        tmp *= mix
        accumulated_grad *= rho
        accumulated_grad += tmp
        np.add(accumulated_delta, epsilon, out=descent)
        np.sqrt(descent, out=descent)
        descent *= gradient
        np.add(accumulated_grad, epsilon, out=tmp)
        np.sqrt(tmp, out=tmp)
        descent /= tmp
        if self._moments is None:
            np.multiply(descent, descent, out=tmp)
        else:  # Keras squares each occurrence's step: (D + eps) / (a + eps) times g^2 summed
            np.add(accumulated_delta, epsilon, out=tmp)
            tmp /= accumulated_grad + epsilon
            tmp *= self._moments.squares
        tmp *= mix
        accumulated_delta *= rho
        accumulated_delta += tmp
        descent *= lr
        variable -= descent
