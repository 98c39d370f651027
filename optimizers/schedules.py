"""Learning-rate schedules with Keras's formulas: ``schedule(step)`` is the rate at that step.

An optimizer calls its schedule with its ``iterations`` before each update (0 for the first),
so the rate in use is always ``schedule(optimizer.iterations)``, and restoring ``iterations``
from a checkpoint restores the schedule's position.
"""
import itertools
import math

from framework.registry import Registry

__all__ = ["CosineDecay", "ExponentialDecay", "LearningRateSchedule", "PiecewiseConstantDecay"]


# The schedules by Keras's names (``"cosine_decay"``): each schedule class registers itself.
SCHEDULES = Registry("schedule")


class LearningRateSchedule:
    """Base class: ``__call__(step)`` returns the learning rate at integer ``step``."""

    def __call__(self, step):
        raise NotImplementedError(f"{type(self).__name__} must define __call__(step)")

    def __repr__(self):
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({fields})"


def _positive_steps(decay_steps, schedule):
    if decay_steps <= 0:
        raise ValueError(f"{schedule}: decay_steps must be > 0, got {decay_steps}")
    return decay_steps


@SCHEDULES.register
class ExponentialDecay(LearningRateSchedule):
    """``initial_learning_rate * decay_rate ** (step / decay_steps)``; with ``staircase`` the
    exponent is floored, so the rate drops in steps every ``decay_steps``."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False,
                 name="ExponentialDecay"):
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = _positive_steps(decay_steps, name)
        self.decay_rate = decay_rate
        self.staircase = staircase
        self.name = name

    def __call__(self, step):
        exponent = float(step) / self.decay_steps
        if self.staircase:
            exponent = math.floor(exponent)
        return self.initial_learning_rate * self.decay_rate ** exponent


@SCHEDULES.register
class CosineDecay(LearningRateSchedule):
    """Half a cosine from the initial rate down to ``alpha`` times it over ``decay_steps``,
    then constant; with ``warmup_target``, first a linear ramp over ``warmup_steps`` from the
    initial rate up to ``warmup_target``, which the cosine then decays from."""

    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0, name="CosineDecay",
                 warmup_target=None, warmup_steps=0):
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = _positive_steps(decay_steps, name)
        self.alpha = alpha
        self.name = name
        self.warmup_target = warmup_target
        self.warmup_steps = warmup_steps

    def _decayed(self, step, start):
        cosine = 0.5 * (1.0 + math.cos(math.pi * step / self.decay_steps))
        return start * ((1 - self.alpha) * cosine + self.alpha)

    def __call__(self, step):
        step = float(step)
        if self.warmup_target is None:
            return self._decayed(min(step, self.decay_steps), self.initial_learning_rate)
        step = min(step, self.decay_steps + self.warmup_steps)
        if step < self.warmup_steps:
            ramp = (self.warmup_target - self.initial_learning_rate) * step / self.warmup_steps
            return ramp + self.initial_learning_rate
        return self._decayed(step - self.warmup_steps, self.warmup_target)


@SCHEDULES.register
class PiecewiseConstantDecay(LearningRateSchedule):
    """``values[0]`` while ``step <= boundaries[0]``, ``values[i]`` while
    ``boundaries[i-1] < step <= boundaries[i]``, and ``values[-1]`` after the last boundary."""

    def __init__(self, boundaries, values, name="PiecewiseConstant"):
        boundaries, values = list(boundaries), list(values)
        if len(boundaries) != len(values) - 1:
            raise ValueError(f"{name}: boundaries must have one entry fewer than values, got "
                             f"{len(boundaries)} boundaries and {len(values)} values")
        if any(a >= b for a, b in itertools.pairwise(boundaries)):
            raise ValueError(f"{name}: boundaries must increase, got {boundaries}")
        self.boundaries = boundaries
        self.values = values
        self.name = name

    def __call__(self, step):
        step = float(step)
        for boundary, value in zip(self.boundaries, self.values):
            if step <= boundary:
                return value
        return self.values[-1]
