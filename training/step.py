"""The runner's model and its step: ``tape-train`` trains through ``Model.fit``.

``Sequential`` here is the ``layers.Sequential`` a config describes, with the train step a
user writes by hand for several optimizers (``train_step``): one tape records the forward
pass, every optimizer's gradients are taken from it, and only then are updates applied, because
the tape refuses to differentiate through a variable that changed after it was read. With one
optimizer this is ``fit``'s own step; with one optimizer per layer group (the layer-wise
config) the tape is persistent and each optimizer updates its group's variables. Under MPI the
gradients go through ``fw.distributed.average_gradients``, so the gradient averaging is inside
the (compiled) step.

The step's logs are ``{"loss": this batch's loss}``; the epoch's means are the run's records
(``training.callbacks.RunRecords``). A step whose loss or gradients are not finite raises
``divergence.NonFiniteStep`` before any update; ``on_nonfinite = "skip"`` turns it into the
logs ``{"loss": None}`` (the step is skipped), ``"stop"`` lets it end ``fit``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

import framework as fw
import layers

from .divergence import NonFiniteStep, check_step
from .parallel import metric_results

if TYPE_CHECKING:
    from .build import Training

__all__ = ["EVALUATION_BATCH", "Sequential", "evaluate", "means", "train_step"]

EVALUATION_BATCH = 1000


def train_step(training: Training, x: Any, y: Any, batch_rows: int,
               check_finite: bool = False) -> tuple[fw.Tensor, fw.Tensor]:
    """One step, written exactly as in a hand-made loop; returns (loss, predictions).

    ``x, y`` are this rank's rows (``fw.distributed.shard``) of a batch of ``batch_rows`` rows
    (a tensor under MPI, an input of the compiled step): all of them in one process, where the
    loss is their mean. Under MPI ``fw.distributed.average_gradients`` averages the ranks'
    gradients (as ``DistributedGradientTape`` would, but also on each call of a compiled
    step), so each rank's loss is its rows' summed loss over
    ``batch_rows / size``: their average is then exactly the whole batch's mean, also when the
    shards differ in size or one is empty (a last batch with fewer rows than ranks), where a
    plain mean per rank would weigh the rows of a short shard more.

    ``check_finite``: raise ``divergence.NonFiniteStep`` before any update when the loss or a
    gradient is not finite (see ``training.divergence``).
    """
    ranks = fw.distributed.size()
    with fw.GradientTape(persistent=len(training.groups) > 1) as tape:
        predictions = training.model(x, training=True)
        per_example = training.loss_fn(y, predictions)
        if ranks == 1:
            loss = fw.reduce_mean(per_example)
        else:
            loss = fw.reduce_sum(per_example) * (ranks / batch_rows)
    variables = [group.variables for group in training.groups]
    gradients = [tape.gradient(loss, group_variables) for group_variables in variables]
    if ranks > 1:  # one fused allreduce per optimizer, replayed by a compiled step
        gradients = [fw.distributed.average_gradients(group_gradients, group_variables)
                     for group_gradients, group_variables in zip(gradients, variables)]
    if check_finite:
        check_step(loss if ranks == 1 else None, variables, gradients)
    for group, group_gradients, group_variables in zip(training.groups, gradients, variables,
                                                      strict=True):
        group.optimizer.apply_gradients(zip(group_gradients, group_variables, strict=True))
    return loss, predictions


class Sequential(layers.Sequential):
    """The config's model: a ``layers.Sequential`` whose ``fit`` step is ``train_step`` above,
    for every optimizer group of the run (``attach`` gives it the run's objects). It keeps the
    class name, so that its default name, its variables' paths and a ``.keras`` file saved of
    it (``model_checkpoint``) are a ``Sequential``'s: the step is the run's, not the model's."""

    _untracked_attributes = layers.Sequential._untracked_attributes | {"_run", "_batches"}

    def __init__(self, layers_=None, name=None):
        super().__init__(layers_, name=name)
        self._run = self._batches = None
        self._policy = "stop"

    def attach(self, training: Training, batches: Any, policy: str) -> None:
        """The run's optimizer groups, loss and metrics (``training``), the batches ``fit`` is
        given and ``on_nonfinite``."""
        self._run, self._batches, self._policy = training, batches, policy

    def train_step(self, data):
        x, y, batch_rows = data if len(data) == 3 else (*data, None)  # (rows: under MPI)
        loss, predictions = train_step(self._run, x, y, batch_rows,
                                       check_finite=self._policy != "continue")
        if self._compile_metrics is not None and len(y):  # (an empty shard under MPI: none)
            self._compile_metrics.update_state(y, predictions)
        return {"loss": loss}

    def make_train_function(self, force=False):
        """The compiled step, under ``on_nonfinite = "skip"`` wrapped so that a step whose loss
        or gradients are not finite is skipped: its logs are ``{"loss": None}``."""
        if self.train_function is None or force:
            compiled = super().make_train_function(force=True)
            if self._policy == "skip":
                self.train_function = _skipping(compiled)
        return self.train_function


def _skipping(step):
    def run(data):
        try:
            return step(data)
        except NonFiniteStep:
            return {"loss": None}
    return run


def evaluate(training: Training, x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Mean loss and metrics over the test split ``x`` in inference mode (dropout off), in
    large batches; keys ``test_loss``, ``test_<metric>``. Under MPI each rank evaluates its
    shard of the split and the means are combined by rows: the whole split is evaluated."""
    x, y = fw.distributed.shard(x, y)
    loss_sum = 0.0
    for start in range(0, len(x), EVALUATION_BATCH):
        xb, yb = x[start:start + EVALUATION_BATCH], y[start:start + EVALUATION_BATCH]
        predictions = training.model(xb, training=False)
        loss_sum += float(fw.reduce_mean(training.loss_fn(yb, predictions))) * len(xb)
        if len(yb):
            for metric in training.metrics.values():
                metric.update_state(yb, predictions.numpy())
    return {f"test_{name}": value
            for name, value in means(loss_sum, len(x), training.metrics).items()}


def means(loss_sum: float, rows: int, metrics: dict[str, fw.metrics.Metric]) -> dict[str, float]:
    """The mean loss over the rows of every rank (each rank's ``loss_sum`` over its ``rows``,
    combined) and the metrics' results over every rank's rows; the metrics start afresh."""
    loss = fw.distributed.allreduce_mean(loss_sum / rows if rows else 0.0, weight=rows)
    return {"loss": loss, **metric_results(metrics)}
