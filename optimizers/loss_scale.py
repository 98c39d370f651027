"""``LossScaleOptimizer``: Keras 3's dynamic loss scaling around another optimizer, for
``mixed_float16`` training where small float16 gradients would underflow to zero.

The loop multiplies its loss by ``scale_loss`` (the current scale) inside the tape; the
gradients are then the scaled ones. ``apply_gradients`` checks them: all finite, it divides
them by the scale, lets the inner optimizer update, and doubles the scale after
``dynamic_growth_steps`` finite steps in a row; any inf or NaN, it skips the update (the inner
optimizer's ``iterations`` do not move) and halves the scale. Keras's numbers and order.
"""
import numpy as np

import framework as fw
from framework.engine.indexed_slices import IndexedSlices
from framework.engine.tensor import Variable
from framework.engine.context import replayed

from .base import OPTIMIZERS, Optimizer

__all__ = ["LossScaleOptimizer"]

# Keras's optimizer arguments the wrapper refuses (they belong on the inner optimizer)
_INNER_ONLY = {"weight_decay": None, "clipnorm": None, "global_clipnorm": None,
               "clipvalue": None, "use_ema": False, "ema_momentum": 0.99,
               "ema_overwrite_frequency": None, "loss_scale_factor": None,
               "gradient_accumulation_steps": None}


class LossScaleOptimizer(Optimizer):
    """Dynamic loss scaling over ``inner_optimizer``: ``scale_loss`` in the tape, then
    ``apply_gradients`` on the scaled gradients (see the module docstring)."""

    def __init__(self, inner_optimizer, initial_scale=2.0 ** 15, dynamic_growth_steps=2000,
                 name=None, **kwargs):
        if not kwargs.pop("dynamic", True):
            raise ValueError("LossScaleOptimizer no longer supports `dynamic=False`. Instead, "
                             "simply set `loss_scale_factor` directly on the `inner_optimizer`.")
        for arg_name, default in _INNER_ONLY.items():
            if arg_name in kwargs and kwargs.pop(arg_name) != default:
                raise ValueError(f"LossScaleOptimizer does not support `{arg_name}`. Instead, "
                                 f"set `{arg_name}` on the `inner_optimizer`.")
        if kwargs:
            raise ValueError(f"LossScaleOptimizer does not support arguments: "
                             f"`{'`, `'.join(kwargs)}`.")
        if not isinstance(inner_optimizer, Optimizer):
            raise TypeError(f"LossScaleOptimizer: inner_optimizer must be an optimizer, got "
                            f"{inner_optimizer!r:.80}")
        if isinstance(dynamic_growth_steps, bool) or not isinstance(dynamic_growth_steps, int) \
                or dynamic_growth_steps < 1:
            raise ValueError(f"LossScaleOptimizer: dynamic_growth_steps must be a positive "
                             f"integer, got {dynamic_growth_steps!r}")
        super().__init__(learning_rate=0.0, name=name or "loss_scale_optimizer")
        self.inner_optimizer = inner_optimizer
        self.initial_scale = initial_scale
        self.dynamic_growth_steps = dynamic_growth_steps
        inner_optimizer.loss_scale_factor = None
        # (created on the current device, where the losses they scale live)
        self.step_counter = Variable(fw.zeros((), fw.int64), trainable=False,
                                     name=f"{self.name}/step_counter")
        self.dynamic_scale = Variable(fw.constant(initial_scale, fw.float32),
                                      trainable=False, name=f"{self.name}/dynamic_scale")

    @property
    def learning_rate(self):
        return self.inner_optimizer.learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        if "inner_optimizer" in vars(self):  # (the base's constructor sets its own 0.0 first)
            self.inner_optimizer.learning_rate = value

    @property
    def iterations(self):
        """The inner optimizer's updates: a skipped step does not count."""
        return self.inner_optimizer.iterations

    @property
    def variables(self):
        return [self.step_counter, self.dynamic_scale, *self.inner_optimizer.variables]

    def build(self, var_list):
        self.inner_optimizer.build(var_list)

    def scale_loss(self, loss):
        """``loss`` times the current scale (a float16 loss is promoted to float32, as Keras's
        multiplication by the float32 scale does)."""
        loss = fw.convert_to_tensor(loss)
        if loss.dtype == fw.float16:
            loss = fw.cast(loss, fw.float32)
        return loss * fw.cast(self.dynamic_scale, loss.dtype)

    def apply_gradients(self, grads_and_vars):
        """Unscale and apply finite gradients, or skip the step; then adjust the scale."""
        return self._apply_scaled(list(grads_and_vars))

    def apply(self, grads, trainable_variables):
        """Keras 3's spelling: the gradients and the variables as two lists."""
        return self.apply_gradients(zip(grads, trainable_variables))

    @replayed  # a traced fw.function checks each call's gradients and scale anew
    def _apply_scaled(self, pairs):
        grads = [grad for grad, _ in pairs]
        if not all(_finite(grad) for grad in grads if grad is not None):
            self.step_counter.assign(0)
            self.dynamic_scale.assign(self.dynamic_scale * 0.5)
            return self.iterations
        scale = self.dynamic_scale.numpy()[()]  # (a NumPy scalar: either device takes it)
        self.inner_optimizer.apply_gradients(
            [(None if grad is None else _divided(grad, scale), variable)
             for grad, variable in pairs])
        if int(self.step_counter.numpy()) == self.dynamic_growth_steps - 1:
            self.step_counter.assign(0)
            self.dynamic_scale.assign(self.dynamic_scale * 2.0)
        else:
            self.step_counter.assign_add(1)
        return self.iterations

    def finalize_variable_values(self, var_list):
        self.inner_optimizer.finalize_variable_values(var_list)

    def get_config(self):
        return {"name": self.name, "inner_optimizer": OPTIMIZERS.serialize(self.inner_optimizer),
                "initial_scale": self.initial_scale,
                "dynamic_growth_steps": self.dynamic_growth_steps}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        return cls(OPTIMIZERS.get(config.pop("inner_optimizer")), **config)


def _finite(grad):
    values = grad.values if isinstance(grad, IndexedSlices) else grad
    return bool(np.all(np.isfinite(fw.convert_to_tensor(values).numpy())))


def _divided(grad, scale):
    if isinstance(grad, IndexedSlices):
        return IndexedSlices(grad.values / scale.astype(grad.values.dtype.name), grad.indices,
                             grad.dense_shape)
    grad = fw.convert_to_tensor(grad)
    return grad / fw.cast(scale, grad.dtype)
