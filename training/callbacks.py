"""What ``tape-train`` adds to ``fit``: its batches and the callbacks that keep a run folder.

- ``RunBatches``: the batches ``fit`` trains on, drawn from the run's own shuffling generator
  (seeded ``[seed, 1]``, checkpointed, so a resume continues its very order) and cut into this
  rank's shard under MPI;
- ``RunRecords`` (first): per step, the loss into the epoch's mean and ``steps.<format>``; per
  epoch, the means and the test split's evaluation, as the epoch's logs the callbacks after it
  see, in Keras's names: ``loss``, the metrics, ``val_loss`` and ``val_<metric>`` for the test
  split, and the learning rates;
- ``RunCheckpoint`` (last): per epoch, the checkpoint (atomic, with the optimizers' slots, both
  random streams, every record and the config's callbacks' state: ``BackupAndRestore``'s
  contract), then the epoch's record and its log line;
- ``RunProgress``: the progress bar, on a terminal only.

Saving, evaluating and logging are the run's (``training.loop`` passes them in); this module
knows when, not where.
"""

from __future__ import annotations

import inspect
import sys
import time
from typing import Any, Callable

import numpy as np
from tqdm.auto import tqdm

import framework as fw
from layers.callbacks import Callback

from .build import Training
from .data import iterate_batches, num_batches
from .parallel import random_states
from .step import means

__all__ = ["RunBatches", "RunCheckpoint", "RunProgress", "RunRecords", "callback_state",
           "learning_rates"]


class RunBatches:
    """An iterable of one epoch's ``(x, y)`` shards per pass (``fit`` takes it as a dataset),
    under MPI ``(x, y, rows)`` with the whole batch's rows; ``batch_rows`` and ``shard_rows``
    are the current batch's rows, whole and this rank's."""

    def __init__(self, x: np.ndarray, y: np.ndarray, batch_size: int, rng: np.random.Generator):
        self.x, self.y, self.batch_size, self.rng = x, y, batch_size, rng
        self.batch_rows = self.shard_rows = 0

    def cardinality(self) -> int:
        return num_batches(len(self.x), self.batch_size)

    def __iter__(self):
        ranks = fw.distributed.size()
        for xb, yb in iterate_batches(self.x, self.y, self.batch_size, self.rng):
            xs, ys = fw.distributed.shard(xb, yb)
            self.batch_rows, self.shard_rows = len(xb), len(xs)
            yield (xs, ys) if ranks == 1 else (xs, ys, np.array(len(xb), np.float32))


def learning_rates(training: Training) -> dict[str, float]:
    """The rate each optimizer uses for the coming step: ``lr``, or ``lr/<group>`` per group."""
    if len(training.groups) == 1:
        return {"lr": training.groups[0].learning_rate()}
    return {f"lr/{group.name}": group.learning_rate() for group in training.groups}


class RunRecords(Callback):
    """The run's records, first of the callbacks (see the module's docstring): each step's loss
    into the epoch's mean and ``steps_file``; at each epoch's end, the epoch's ``record`` (its
    means, learning rates and the ``evaluate()``'s ``test_*`` metrics), given to the callbacks
    after it as Keras's logs. ``step`` counts steps over the whole run."""

    def __init__(self, training: Training, config: dict[str, Any], batches: RunBatches,
                 step: int, steps_file: Any, *, evaluate: Callable[[], dict[str, float]],
                 log: Callable[[str], None], progress: bool):
        super().__init__()
        self.training, self.config, self.batches = training, config, batches
        self.step, self.steps_file, self.evaluate, self.log = step, steps_file, evaluate, log
        self.ranks = fw.distributed.size()
        # Under MPI a step's loss is combined over the ranks (a small collective) only where it
        # is shown or recorded.
        self.report = self.ranks > 1 and (progress or config["output"]["step_metrics"])
        self.loss: float | None = None
        self.rates: dict[str, float] = {}
        self.record: dict[str, Any] = {}
        self.epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.started, self.epoch = time.perf_counter(), epoch + 1
        self.loss_sum, self.rows, self.skipped = 0.0, 0, 0

    def on_train_batch_begin(self, batch, logs=None):
        self.rates = learning_rates(self.training)
        self.step += 1

    def on_train_batch_end(self, batch, logs=None):
        loss = logs["loss"]
        if loss is None:  # skipped (on_nonfinite = "skip")
            self.skipped += 1
        else:
            loss = float(loss)
            self.loss_sum += loss * self.batches.batch_rows / self.ranks
            self.rows += self.batches.shard_rows
            if self.report:  # the ranks' shares average to the whole batch's mean (train_step)
                loss = fw.distributed.allreduce_mean(loss)
        self.loss = loss
        if self.steps_file is not None:
            self.steps_file.append({"epoch": self.epoch, "step": self.step,
                                    "loss": float("nan") if loss is None else loss,
                                    **self.rates})

    def on_epoch_end(self, epoch, logs=None):
        epoch, metrics = epoch + 1, self.training.metrics
        batches = self.batches.cardinality()
        record = {"epoch": epoch, "step": self.step}
        if self.skipped == batches:  # every step skipped (alike on every rank): nothing to mean
            record.update(dict.fromkeys(["loss", *metrics], float("nan")))
        else:
            record.update(means(self.loss_sum, self.rows, metrics))
        record.update(self.rates)
        if self.skipped:
            self.log(f"epoch {epoch}: skipped {self.skipped} of {batches} steps whose loss or "
                     f"gradients were not finite (on_nonfinite = \"skip\")")
        record.update(self.evaluate())
        self.record = record
        if logs is not None:  # what the callbacks after this one see, in Keras's names
            logs.clear()
            logs.update({("val_" + key[5:] if key.startswith("test_") else key): value
                         for key, value in record.items() if key not in ("epoch", "step")})


class RunCheckpoint(Callback):
    """The run's checkpoint, last of the callbacks: at each epoch's end, once every callback
    has seen the epoch, ``save(extra)`` (``training.loop``: atomic, the root's) writes the
    weights, the optimizers' slots, the shuffling generator's and every rank's ``fw.random``
    state, the records (``records.history``) and the state of the config's callbacks
    (``named``, by their position in ``[[callbacks]]``: a plateau's wait and best, say), then
    the epoch's record; it says whether the checkpoint was replaced (not by weights that are
    not finite). ``BackupAndRestore``'s contract: ``restored`` (a resumed checkpoint's
    callback states) is put back as ``fit`` begins, after the callbacks reset themselves, so a
    resumed run goes on as the uninterrupted one. ``final`` is the last epoch's test
    metrics."""

    def __init__(self, records: RunRecords, history: list[dict[str, Any]],
                 named: dict[int, Callback], restored: dict[str, Any], *,
                 save: Callable[[dict[str, Any]], bool], last_saved: int | None):
        super().__init__()
        self.records, self.history, self.named, self.restored = records, history, named, restored
        self.save, self.last_saved = save, last_saved
        self.final: dict[str, float] | None = None

    def on_train_begin(self, logs=None):
        for position, callback in self.named.items():
            vars(callback).update(self.restored.get(str(position), {}))

    def on_epoch_end(self, epoch, logs=None):
        records, epoch = self.records, epoch + 1
        record, batches = records.record, records.batches
        extra = {"epoch": epoch, "step": records.step, "config": records.config,
                 "history": [*self.history, record],
                 "shuffle_rng": batches.rng.bit_generator.state,
                 "fw_rng": fw.random.get_state(),
                 "callbacks": {str(position): callback_state(callback)
                               for position, callback in self.named.items()}}
        states = random_states()
        if states is not None:
            extra["fw_rng_ranks"] = states
        saved = self.save(extra)
        self.history.append(record)
        seconds = time.perf_counter() - records.started
        records.log(f"epoch {epoch}/{records.config['epochs']}  {_summary(record)}  "
                    f"({seconds:.2f} s, {batches.cardinality() / seconds:.0f} steps/s)")
        if saved:
            self.last_saved = epoch
        else:
            records.log(f"epoch {epoch}: the weights are not finite, so checkpoint.npz was not "
                        f"replaced" + (f" (it keeps epoch {self.last_saved})"
                                       if self.last_saved else ""))
        self.final = {key: value for key, value in record.items() if key.startswith("test_")}


def callback_state(callback: Callback) -> dict[str, Any]:
    """What a callback has counted or found during training: its attributes that hold a plain
    value (a wait, a best value, a step count) and are not constructor arguments (those come
    from the config, and some are changed once on first use, such as ``min_delta``'s sign)."""
    arguments = {name for cls in type(callback).__mro__ if "__init__" in vars(cls)
                 for name in inspect.signature(cls.__init__).parameters}
    return {name: value for name, value in vars(callback).items()
            if name not in arguments and (value is None or isinstance(value, (bool, int, float,
                                                                             str)))}


class RunProgress(Callback):
    """A progress bar per epoch with the step's loss and learning rates (``records``'), drawn
    only on a terminal: on a log file, a pipe or CI its ``\\r`` redraws would leave
    fragments."""

    def __init__(self, records: RunRecords, epochs: int):
        super().__init__()
        self.records, self.epochs, self.bar = records, epochs, None

    def on_epoch_begin(self, epoch, logs=None):
        shown = fw.distributed.is_root() and _is_terminal(sys.stderr)
        self.bar = tqdm(total=self.records.batches.cardinality(),
                        desc=f"epoch {epoch + 1}/{self.epochs}", unit="step", leave=False,
                        disable=not shown, dynamic_ncols=True)

    def on_train_batch_end(self, batch, logs=None):
        loss = self.records.loss
        if not self.bar.disable and loss is not None:
            self.bar.set_postfix(loss=f"{loss:.4f}",
                                 lr=",".join(f"{r:.3g}" for r in self.records.rates.values()),
                                 refresh=False)
        self.bar.update()

    def on_epoch_end(self, epoch, logs=None):
        self.close()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def _is_terminal(stream: Any) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


def _summary(record: dict[str, Any]) -> str:
    """An epoch's record as one line: losses and metrics to 4 places, learning rates to 3 digits."""
    return "  ".join(f"{key} {value:.3g}" if key.startswith("lr") else f"{key} {value:.4f}"
                     for key, value in record.items() if key not in ("epoch", "step"))
