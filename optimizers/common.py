"""What every Keras optimizer does besides its own update: gradient accumulation, moving
averages of the weights, loss scaling, and its config (``KerasCommon``, a base of
``Optimizer``, whose slots, scratch space and update layout it works with)."""
import inspect

import numpy as np

from framework.engine.tensor import mark_updated

from .schedules import SCHEDULES, LearningRateSchedule

# The slots ``Optimizer`` adds after the algorithm's own, with use_ema and accumulation.
AVERAGE, ACCUMULATOR = "average", "gradient_accumulator"


class KerasCommon:
    """Keras's ``gradient_accumulation_steps``, ``use_ema``/``ema_momentum``/
    ``ema_overwrite_frequency``, ``loss_scale_factor`` and ``get_config``, for ``Optimizer``."""

    def _unscaled(self, grads):
        """The gradients divided by ``loss_scale_factor`` (new arrays), or as they are."""
        scale = self.loss_scale_factor
        return grads if scale is None else [g / scale for g in grads]

    def _accumulated(self, grads, variables, applies):
        """Keras's accumulation: add the gradients into each variable's accumulator; on every
        ``gradient_accumulation_steps``-th call return ``(gradient + accumulator) / steps``
        instead, and zero every accumulator, as Keras does, those of variables without a
        gradient in this call included (else None: no update this call)."""
        column = self._all_slot_names().index(ACCUMULATOR)
        if not applies:
            for gradient, variable in zip(grads, variables):
                accumulator = self._slots[variable][column]._value
                accumulator += gradient
            return None
        steps = self.gradient_accumulation_steps
        means = [gradient + self._slots[variable][column]._value
                 for gradient, variable in zip(grads, variables)]
        for mean in means:
            mean /= steps
        accumulators = [slots[column] for slots in self._slots.values()]
        for accumulator in accumulators:
            accumulator._value.fill(0)
        mark_updated(accumulators)
        return means

    def _update_averages(self, plan, applied):
        """Keras's moving averages, on every call: ``a = m a + (1 - m) w``, with ``m`` 0 until
        the first update is counted (so the average starts at the weights); then, every
        ``ema_overwrite_frequency`` updates, the weights take their averages."""
        column = self._all_slot_names().index(AVERAGE)
        pairs = plan.columns(column, self._slots)
        for value, average in pairs:
            momentum = value.dtype.type(self.ema_momentum if applied else 0.0)
            (scaled,) = self._scratch(value, 1)
            np.multiply(value, 1 - momentum, out=scaled)
            average *= momentum
            average += scaled
        frequency = self.ema_overwrite_frequency
        if frequency and (applied + 1) % frequency == 0:
            for value, average in pairs:
                value[...] = average

    def finalize_variable_values(self, var_list):
        """With ``use_ema``, write each variable's moving average into it (Keras's end of
        training); else leave them. Every variable is checked before any is written."""
        if not self.use_ema:
            return
        var_list = list(var_list)
        for variable in var_list:
            if variable not in self._slots:
                raise ValueError(f"optimizer '{self.name}' has no moving average of variable "
                                 f"'{getattr(variable, 'name', variable)}': it has not updated "
                                 f"it")
        for variable in var_list:
            variable.assign(self.get_slot(variable, AVERAGE))

    def scale_loss(self, loss):
        """``loss`` times ``loss_scale_factor`` (the gradients are divided by it again)."""
        return loss if self.loss_scale_factor is None else loss * self.loss_scale_factor

    def get_config(self):
        """Keras's config: every constructor argument by its name, the learning rate as a
        number or a serialized schedule (a plain callable cannot be written down)."""
        config = {name: getattr(self, name)
                  for name in inspect.signature(type(self)).parameters}
        rate = self._learning_rate
        if isinstance(rate, LearningRateSchedule):
            config["learning_rate"] = SCHEDULES.serialize(rate)
        elif callable(rate):
            raise ValueError(f"optimizer '{self.name}': a learning rate given as a plain "
                             f"callable cannot be serialized; use a schedule")
        return config

    @classmethod
    def from_config(cls, config):
        """The optimizer ``get_config`` describes (a fresh one: no state)."""
        config = dict(config)
        if isinstance(config.get("learning_rate"), dict):
            config["learning_rate"] = SCHEDULES.get(config["learning_rate"])
        return cls(**config)

