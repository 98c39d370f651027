"""Learning-rate schedules with Keras's formulas: ``schedule(step)`` is the rate at that step.

An optimizer calls its schedule with its number of calls so far (0 for the first), so the rate
in use is always the schedule at that count, and restoring the count from a checkpoint
restores the schedule's position. Each schedule computes in float32 as Keras does (its initial
rate converted to a float32 tensor sets the dtype), so that a step on a boundary (a staircase,
a warm restart) falls on the same side as in Keras. ``get_config``/``from_config`` (and
``SCHEDULES.serialize``/``get``) write a schedule down and read it back.
"""
import itertools
import math

import numpy as np

from framework.registry import Configurable, Registry

__all__ = ["SCHEDULES", "CosineDecay", "CosineDecayRestarts", "ExponentialDecay",
           "InverseTimeDecay", "LearningRateSchedule", "PiecewiseConstantDecay",
           "PolynomialDecay"]

# The schedules by Keras's names (``"cosine_decay"``): each schedule class registers itself.
SCHEDULES = Registry("schedule")
_F = np.float32
_PI = _F(math.pi)


class LearningRateSchedule(Configurable):
    """Base class: ``__call__(step)`` returns the learning rate at integer ``step``; a
    subclass keeps each constructor argument as the attribute of the same name, which is what
    ``get_config`` writes down."""

    def __call__(self, step):
        raise NotImplementedError(f"{type(self).__name__} must define __call__(step)")


def _positive_steps(decay_steps, schedule, what="decay_steps"):
    if isinstance(decay_steps, bool) or not isinstance(decay_steps, (int, float)) \
            or decay_steps <= 0:
        raise ValueError(f"{schedule}: {what} must be > 0, got {decay_steps!r}")
    return decay_steps


class _RateDecay(LearningRateSchedule):
    """A decay by ``decay_rate`` over ``step / decay_steps`` (floored with ``staircase``)."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False,
                 name=None):
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = _positive_steps(decay_steps, name or type(self).__name__)
        self.decay_rate = decay_rate
        self.staircase = staircase
        self.name = name or type(self).__name__

    def _ratio(self, step):
        ratio = _F(step) / _F(self.decay_steps)
        return np.floor(ratio) if self.staircase else ratio


@SCHEDULES.register
class ExponentialDecay(_RateDecay):
    """``initial_learning_rate * decay_rate ** (step / decay_steps)``; with ``staircase`` the
    exponent is floored, so the rate drops in steps every ``decay_steps``."""

    def __call__(self, step):
        return float(_F(self.initial_learning_rate) * _F(self.decay_rate) ** self._ratio(step))


@SCHEDULES.register
class PolynomialDecay(LearningRateSchedule):
    """From the initial rate to ``end_learning_rate`` over ``decay_steps`` along
    ``(1 - step / decay_steps) ** power``, then constant; with ``cycle``, the decay starts again
    from the initial rate, over the next multiple of ``decay_steps``, each time it ends."""

    def __init__(self, initial_learning_rate, decay_steps, end_learning_rate=0.0001, power=1.0,
                 cycle=False, name="PolynomialDecay"):
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = _positive_steps(decay_steps, name)
        self.end_learning_rate = end_learning_rate
        self.power = power
        self.cycle = cycle
        self.name = name

    def __call__(self, step):
        step, steps = _F(step), _F(self.decay_steps)
        if self.cycle:
            steps = steps * (_F(1) if step == 0 else np.ceil(step / steps))
        else:
            step = min(step, steps)
        end = _F(self.end_learning_rate)
        fraction = _F(1) - step / steps
        return float((_F(self.initial_learning_rate) - end) * fraction ** _F(self.power) + end)


@SCHEDULES.register
class InverseTimeDecay(_RateDecay):
    """``initial_learning_rate / (1 + decay_rate * step / decay_steps)``; with ``staircase``
    the ratio ``step / decay_steps`` is floored."""

    def __call__(self, step):
        return float(_F(self.initial_learning_rate)
                     / (_F(1) + _F(self.decay_rate) * self._ratio(step)))


def _cosine(fraction, alpha, scale=_F(1)):
    """Keras's decayed factor ``(1 - alpha) * scale * (1 + cos(pi fraction)) / 2 + alpha``."""
    return (_F(1) - _F(alpha)) * (_F(0.5) * scale * (_F(1) + np.cos(_PI * fraction))) \
        + _F(alpha)


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

    def __call__(self, step):
        step, steps = _F(step), _F(self.decay_steps)
        initial = _F(self.initial_learning_rate)
        if self.warmup_target is None:
            return float(initial * _cosine(min(step, steps) / steps, self.alpha))
        target, warmup = _F(self.warmup_target), _F(self.warmup_steps)
        step = min(step, steps + warmup)
        if step < warmup:
            return float((target - initial) * (step / warmup) + initial)
        return float(target * _cosine((step - warmup) / steps, self.alpha))


@SCHEDULES.register
class CosineDecayRestarts(LearningRateSchedule):
    """Cosine decay with warm restarts (SGDR): a cosine over ``first_decay_steps``, then again
    from the top over ``t_mul`` times as many steps, and so on, each restart's height
    ``m_mul`` times the last's, each cosine ending at ``alpha`` times its height."""

    def __init__(self, initial_learning_rate, first_decay_steps, t_mul=2.0, m_mul=1.0,
                 alpha=0.0, name="SGDRDecay"):
        self.initial_learning_rate = initial_learning_rate
        self.first_decay_steps = _positive_steps(first_decay_steps, name, "first_decay_steps")
        self.t_mul = t_mul
        self.m_mul = m_mul
        self.alpha = alpha
        self.name = name

    def __call__(self, step):
        fraction = _F(step) / _F(self.first_decay_steps)
        t_mul = _F(self.t_mul)
        if t_mul == 1:
            restart = np.floor(fraction)
            fraction = fraction - restart
        else:  # the restart whose span holds the step, in the geometric series of spans
            restart = np.floor(np.log(_F(1) - fraction * (_F(1) - t_mul)) / np.log(t_mul))
            done = (_F(1) - t_mul ** restart) / (_F(1) - t_mul)
            fraction = (fraction - done) / t_mul ** restart
        height = _F(self.m_mul) ** restart
        return float(_F(self.initial_learning_rate) * _cosine(fraction, self.alpha, height))


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
