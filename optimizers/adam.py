"""Adam (with AMSGrad) and AdamW, with Keras 3's update formulas and defaults."""
import math

import numpy as np

from framework.tuning import kernels

from . import checks
from .base import OPTIMIZERS, Optimizer


def update_moments(gradient, m, v, mix_1, mix_2, tmp, squared):
    """Adam's moments in place, in Keras's order: ``m += (g - m) mix_1``, ``v += (g^2 - v)
    mix_2`` (``mix``: one minus the beta); ``tmp`` is scratch space, ``squared`` the
    optimizer's ``_squared``."""
    np.subtract(gradient, m, out=tmp)
    tmp *= mix_1
    m += tmp
    squared(gradient, tmp)
    tmp -= v
    tmp *= mix_2
    v += tmp


@OPTIMIZERS.register(name="adam")
class Adam(Optimizer):
    """``m += (g - m)(1 - beta_1)``, ``v += (g^2 - v)(1 - beta_2)``, and
    ``w -= lr_t * m / (sqrt(v) + epsilon)`` with ``lr_t = lr sqrt(1 - beta_2^t) / (1 - beta_1^t)``;
    ``amsgrad`` divides by the running maximum of ``v`` instead."""

    elementwise_update = True

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, **kwargs):
        super().__init__(learning_rate, **kwargs)
        checks.check_adam_family(type(self).__name__, beta_1, beta_2, epsilon)
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
        self.amsgrad = bool(amsgrad)
        self._slot_names = ("momentum", "velocity") + (("velocity_hat",) if amsgrad else ())
        self._constants = {}  # see _as_scalars

    def _update_step(self, gradient, variable, slots, learning_rate, step):
        m, v = slots[0], slots[1]
        scalar = variable.dtype.type
        beta_1, beta_2, mix_1, mix_2, epsilon = self._as_scalars(scalar)
        # In the variable's dtype, as Keras computes it: NumPy scalars take a Python number
        # operand in their own type (faster than converting it first), and the square root of
        # a float32 number taken in float64 and rounded is float32's own (math.sqrt skips a
        # ufunc call).
        alpha = (learning_rate * scalar(math.sqrt(1 - beta_2 ** step))
                 / (1 - beta_1 ** step))
        if variable.__class__ is not np.ndarray and self._moments is None \
                and kernels.fits(variable, gradient, *slots):
            kernels.adam(gradient, variable, slots, alpha, self.beta_1, self.beta_2,
                         self.epsilon)
            return
        (tmp,) = self._scratch(variable, 1)  # one buffer: less memory traffic on big weights
        update_moments(gradient, m, v, mix_1, mix_2, tmp, self._squared)
        if self.amsgrad:
            np.maximum(slots[2], v, out=slots[2])
            v = slots[2]
        np.sqrt(v, out=tmp)
        tmp += epsilon
        np.divide(m, tmp, out=tmp)
        tmp *= alpha
        variable -= tmp

    def _as_scalars(self, scalar):
        """``beta_1, beta_2, 1 - beta_1, 1 - beta_2, epsilon`` as NumPy scalars of the type
        ``scalar``, kept while the hyperparameters stay: an array op converts a Python float
        operand again on every call, and a small variable's update is a dozen such calls."""
        hyper = (scalar, self.beta_1, self.beta_2, self.epsilon)
        kept = self._constants.get(hyper)
        if kept is None:
            if len(self._constants) >= 8:  # hyperparameters changed: the old ones are done
                self._constants.clear()
            kept = self._constants[hyper] = tuple(map(scalar, (
                self.beta_1, self.beta_2, 1 - self.beta_1, 1 - self.beta_2, self.epsilon)))
        return kept


@OPTIMIZERS.register(name="adamw")
class AdamW(Adam):
    """Adam with decoupled weight decay: before each Adam step, ``w -= w * weight_decay * lr``."""

    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-7, amsgrad=False, **kwargs):
        if weight_decay is None:
            raise ValueError("AdamW: weight_decay must be a number (Adam is AdamW without it)")
        super().__init__(learning_rate, beta_1, beta_2, epsilon, amsgrad,
                         weight_decay=weight_decay, **kwargs)
