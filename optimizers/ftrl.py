"""FTRL-Proximal with Keras 3's update formula, defaults and slots."""
import numpy as np

from . import checks
from .base import OPTIMIZERS, Optimizer


@OPTIMIZERS.register(name="ftrl")
class Ftrl(Optimizer):
    """Follow-the-regularized-leader (McMahan et al.), as Keras writes it: with ``p =
    -learning_rate_power`` and ``n' = n + g^2``, ``z += g + 2 l2_shrinkage w - (n'^p - n^p) /
    lr w``, then ``w = (clip(z, -l1, l1) - z) / (n'^p / lr + 2 (l2 + beta / (2 lr)))``: weights
    whose ``|z|`` stays under ``l1`` are exactly zero (sparse models)."""

    elementwise_update = True

    def __init__(self, learning_rate=0.001, learning_rate_power=-0.5,
                 initial_accumulator_value=0.1, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, l2_shrinkage_regularization_strength=0.0,
                 beta=0.0, **kwargs):
        super().__init__(learning_rate, **kwargs)
        if isinstance(learning_rate_power, bool) or not learning_rate_power <= 0:
            raise ValueError(f"Ftrl: learning_rate_power must be <= 0, "
                             f"got {learning_rate_power!r}")
        for value, what in ((initial_accumulator_value, "initial_accumulator_value"),
                            (l1_regularization_strength, "l1_regularization_strength"),
                            (l2_regularization_strength, "l2_regularization_strength"),
                            (l2_shrinkage_regularization_strength,
                             "l2_shrinkage_regularization_strength"), (beta, "beta")):
            checks.check_non_negative(value, what, "Ftrl")
        self.learning_rate_power = learning_rate_power
        self.initial_accumulator_value = initial_accumulator_value
        self.l1_regularization_strength = l1_regularization_strength
        self.l2_regularization_strength = l2_regularization_strength
        self.l2_shrinkage_regularization_strength = l2_shrinkage_regularization_strength
        self.beta = beta
        self._slot_names = ("accumulator", "linear")

    def _slot_initial_value(self, slot_name):
        return self.initial_accumulator_value if slot_name == "accumulator" else 0.0

    def _update_step(self, gradient, variable, slots, learning_rate, step):
        accumulator, linear = slots
        scalar = variable.dtype.type
        lr = scalar(learning_rate)
        l2 = self.l2_regularization_strength + self.beta / (scalar(2) * lr)
        constants = (lr, scalar(-self.learning_rate_power),
                     scalar(self.l1_regularization_strength),
                     scalar(2 * self.l2_shrinkage_regularization_strength), scalar(2) * l2)
        if self._fused("ftrl", gradient, variable, slots, constants):
            return
        lr, power, l1, shrinkage, two_l2 = constants
        new, powered, tmp = self._scratch(variable, 3)
        self._squared(gradient, new)
        new += accumulator
        np.power(new, power, out=powered)
        np.power(accumulator, power, out=tmp)
        np.subtract(powered, tmp, out=tmp)
        tmp /= lr
        tmp *= variable
        np.multiply(variable, shrinkage, out=accumulator)  # n is read: its slot is scratch now
        accumulator += gradient
        accumulator -= tmp
        linear += accumulator
        powered /= lr
        powered += two_l2
        np.clip(linear, -l1, l1, out=tmp)
        tmp -= linear
        np.divide(tmp, powered, out=variable)
        accumulator[...] = new
