"""Lion (evolved sign momentum) with Keras 3's update formula, defaults and slot."""
import numpy as np

from . import checks
from .base import OPTIMIZERS, Optimizer


@OPTIMIZERS.register(name="lion")
class Lion(Optimizer):
    """``w -= lr sign(beta_1 m + (1 - beta_1) g)``, then ``m = beta_2 m + (1 - beta_2) g``:
    every weight moves by exactly the learning rate, so Lion wants a smaller one than Adam."""

    elementwise_update = True

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.99, **kwargs):
        super().__init__(learning_rate, **kwargs)
        if isinstance(beta_1, bool) or not isinstance(beta_1, (int, float)) \
                or not 0 < beta_1 <= 1:
            raise ValueError(f"Lion: beta_1 must be in (0, 1] (0 makes it SignSGD), "
                             f"got {beta_1!r}")
        checks.check_fraction(beta_2, "beta_2", "Lion", closed=True)
        self.beta_1, self.beta_2 = beta_1, beta_2
        self._slot_names = ("momentum",)

    def _update_step(self, gradient, variable, slots, learning_rate, step):
        (m,) = slots
        scalar = variable.dtype.type
        beta_1, beta_2 = scalar(self.beta_1), scalar(self.beta_2)
        constants = (beta_1, scalar(1) - beta_1, beta_2, scalar(1) - beta_2,
                     scalar(learning_rate))
        if self._fused("lion", gradient, variable, slots, constants):
            return
        beta_1, mix_1, beta_2, mix_2, lr = constants
        direction, tmp = self._scratch(variable, 2)
        np.multiply(m, beta_1, out=direction)
        np.multiply(gradient, mix_1, out=tmp)
        direction += tmp
        np.sign(direction, out=direction)
        direction *= lr
        variable -= direction
        m *= beta_2
        np.multiply(gradient, mix_2, out=tmp)
        m += tmp
