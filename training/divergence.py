"""What the runner does when a step's loss or gradients are not finite (``on_nonfinite``).

A diverging run (a learning rate far too large, say) produces an infinite loss, then NaN in
every weight; each step after that trains on NaN. ``on_nonfinite`` says what to do when a step
meets a loss or gradient that is not finite:

- ``"stop"`` (the default): the step is not applied and the run ends with one line naming the
  epoch and step (``Diverged``), so the last checkpoint, written after a good epoch, stays the
  last good one;
- ``"skip"``: that step's update is skipped (its loss counts in no mean) and training goes on;
- ``"continue"``: the update is applied anyway, as a hand-written loop would.

Whatever the policy, a checkpoint is never replaced by weights that are not finite
(``finite_weights``). The check is made on the gradients the optimizers would apply, before any
of them is, and on the loss; under MPI only on the gradients, which the allreduce made the same
on every rank, so that every rank takes the same decision without a collective of its own.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import framework as fw
from framework.engine.context import replayed
from layers.callbacks.finite import finite as _finite, finite_weights

from .runfolder import RunError

POLICIES = ("stop", "skip", "continue")


class NonFiniteStep(ArithmeticError):
    """A step's loss or gradient is not finite; raised before any update is applied."""


class Diverged(RunError):
    """A run stopped by ``on_nonfinite = "stop"``: its exit status tells it from bad input."""

    status = 3


@replayed  # (under fw.function, checked on every call, before any update)
def check_step(loss: fw.Tensor | None, variables: Sequence[Sequence[fw.Variable]],
               gradients: Sequence[Sequence[fw.Tensor | None]]) -> None:
    """Raise ``NonFiniteStep`` naming what is not finite: the loss, or the first variable whose
    gradient is not (``loss`` None: only the gradients are looked at)."""
    if loss is not None and not math.isfinite(float(loss)):
        raise NonFiniteStep(f"the loss is {float(loss)}")
    for group_variables, group_gradients in zip(variables, gradients, strict=True):
        for variable, gradient in zip(group_variables, group_gradients, strict=True):
            if gradient is not None and not _finite(gradient):
                raise NonFiniteStep(f"the gradient of {variable.path} is not finite")


def stop_message(run_dir: str, epoch: int, step: int, problem: str, last_good: int | None) -> str:
    kept = (f"{run_dir}/checkpoint.npz keeps epoch {last_good}" if last_good else
            "no checkpoint of this run was written")
    return (f"{run_dir}: the run diverged at epoch {epoch}, step {step}: {problem}; the step was "
            f"not applied and {kept}; lower the learning rate, or set on_nonfinite = \"skip\" "
            f"(skip such steps) or \"continue\" (train on)")
