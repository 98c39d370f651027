"""Nadam (Adam with Nesterov momentum) with Keras 3's update formula, defaults and slots."""
import numpy as np

from . import checks
from .adam import update_moments
from .base import OPTIMIZERS, Optimizer


@OPTIMIZERS.register(name="nadam")
class Nadam(Optimizer):
    """Adam's moments, and a Nesterov step under Dozat's momentum schedule
    ``u_t = beta_1 (1 - 0.5 * 0.96^t)``: with ``P_t = u_1 ... u_t``,
    ``m_hat = u_{t+1} m / (1 - P_{t+1}) + (1 - u_t) g / (1 - P_t)`` and
    ``w -= lr m_hat / (sqrt(v / (1 - beta_2^t)) + epsilon)``. Keras computes the schedule in the
    variables' dtype, from the betas rounded to it, and so does this."""

    elementwise_update = True

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate, **kwargs)
        checks.check_adam_family("Nadam", beta_1, beta_2, epsilon)
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
        self._slot_names = ("momentum", "velocity")
        self._products = {}  # scalar type -> (step, P_step): Keras's u_product, kept running

    def _u_product(self, scalar, step):
        """``P_step`` in the type ``scalar``, multiplied up in Keras's order. It follows from
        the step alone, so a restored ``iterations`` restores it: it is recomputed from the
        start when the step is not the next one."""
        done, product = self._products.get(scalar, (0, scalar(1)))
        if done > step:
            done, product = 0, scalar(1)
        beta_1, decay, half = scalar(self.beta_1), scalar(0.96), scalar(0.5)
        for t in range(done + 1, step + 1):
            product = product * beta_1 * (scalar(1) - half * decay ** scalar(t))
        self._products[scalar] = (step, product)
        return product

    def _update_step(self, gradient, variable, slots, learning_rate, step):
        m, v = slots
        scalar = variable.dtype.type
        one, half, decay = scalar(1), scalar(0.5), scalar(0.96)
        beta_1, beta_2 = scalar(self.beta_1), scalar(self.beta_2)
        u_t = beta_1 * (one - half * decay ** scalar(step))
        u_next = beta_1 * (one - half * decay ** scalar(step + 1))
        product = self._u_product(scalar, step)
        constants = (one - beta_1, one - beta_2, u_next, one - product * u_next, one - u_t,
                     one - product, one - beta_2 ** scalar(step), scalar(learning_rate),
                     scalar(self.epsilon))
        if self._fused("nadam", gradient, variable, slots, constants):
            return
        mix_1, mix_2, u_next, next_debias, one_minus_u_t, debias, debias_2, lr, epsilon = \
            constants
        m_hat, tmp = self._scratch(variable, 2)
        update_moments(gradient, m, v, mix_1, mix_2, tmp, self._squared)
        np.multiply(m, u_next, out=m_hat)
        m_hat /= next_debias
        np.multiply(gradient, one_minus_u_t, out=tmp)
        tmp /= debias
        m_hat += tmp
        m_hat *= lr
        np.divide(v, debias_2, out=tmp)
        np.sqrt(tmp, out=tmp)
        tmp += epsilon
        m_hat /= tmp
        variable -= m_hat
