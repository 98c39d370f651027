"""The epoch loop behind ``tape-train``: train, evaluate, record, checkpoint, plot.

The training step is the one a user writes by hand (see ``train_step``): one tape records the
forward pass, every optimizer's gradients are taken from it, and only then are updates applied,
because the tape refuses to differentiate through a variable that changed after it was read.

One seed drives everything: ``fw.random.set_seed(seed)`` before the model is built seeds the
initializers and dropout, a NumPy generator of its own shuffles the batches, and the data split
takes the seed too. Both generators' states go into every checkpoint, so ``--resume`` continues
the very streams an uninterrupted run would have drawn from and ends with the same weights.

Under MPI (``mpiexec -n 4 tape-train CONFIG``) every rank runs this loop on its shard of each
batch and the ranks average their gradients; only the root writes files and prints
(``training.parallel`` says who does what). Metrics are summed over each rank's rows and
combined, weighted by rows, so they are those of the whole training and test sets.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

import framework as fw

from .build import Training, build_training, training_labels
from .checkpoint import restore_checkpoint, save_checkpoint
from .config import Source, dump_toml
from .data import iterate_batches, load_dataset, num_batches
from .parallel import (check_batch_size, on_root, random_states, restore_random_state,
                       start_rank_stream, synchronize)
from .plot import MISSING, plot_curves
from .records import MetricsFile

CHECKPOINT = "checkpoint.npz"
RUN_FILES = ("config.toml", CHECKPOINT, "metrics.jsonl", "metrics.csv", "steps.jsonl",
             "steps.csv", "curves.png")
# Keys a resumed run may change: how long it goes on and where its records go.
RESUMABLE_CHANGES = ("epochs", "name", "output_dir", "output")
SHUFFLE_STREAM = 1  # the shuffling generator's seed is [seed, 1], apart from fw.random's
EVALUATION_BATCH = 1000


class RunError(RuntimeError):
    """The run folder or checkpoint does not allow what was asked (start, resume)."""


def log(message: str) -> None:
    """Print a line above the progress bar instead of through it (the root's, under MPI)."""
    if fw.distributed.is_root():
        tqdm.write(message)


def train_step(training: Training, x: np.ndarray, y: np.ndarray,
               batch_rows: int) -> tuple[fw.Tensor, fw.Tensor]:
    """One step, written exactly as in a hand-made loop; returns (loss, predictions).

    ``x, y`` are this rank's rows (``fw.distributed.shard``) of a batch of ``batch_rows`` rows:
    all of them in one process, where the loss is their mean. Under MPI the wrapped tape
    averages the ranks' gradients, so each rank's loss is its rows' summed loss over
    ``batch_rows / size``: their average is then exactly the whole batch's mean, also when the
    shards differ in size or one is empty (a last batch with fewer rows than ranks), where a
    plain mean per rank would weigh the rows of a short shard more.
    """
    ranks = fw.distributed.size()
    with fw.GradientTape(persistent=len(training.groups) > 1) as tape:
        predictions = training.model(x, training=True)
        per_example = training.loss_fn(y, predictions)
        if ranks == 1:
            loss = fw.reduce_mean(per_example)
        else:
            loss = fw.reduce_sum(per_example) * (ranks / batch_rows)
    tape = fw.distributed.DistributedGradientTape(tape)
    variables = [group.variables for group in training.groups]
    gradients = [tape.gradient(loss, group_variables) for group_variables in variables]
    for group, group_gradients, group_variables in zip(training.groups, gradients, variables,
                                                      strict=True):
        group.optimizer.apply_gradients(zip(group_gradients, group_variables, strict=True))
    return loss, predictions


def evaluate(training: Training, x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Mean loss and metrics over the test split ``x`` in inference mode (dropout off), in
    large batches; keys ``test_loss``, ``test_<metric>``. Under MPI each rank evaluates its
    shard of the split and the means are combined by rows: the whole split is evaluated."""
    x, y = fw.distributed.shard(x, y)
    totals = dict.fromkeys(["loss", *training.metrics], 0.0)
    for start in range(0, len(x), EVALUATION_BATCH):
        xb, yb = x[start:start + EVALUATION_BATCH], y[start:start + EVALUATION_BATCH]
        predictions = training.model(xb, training=False)
        loss = fw.reduce_mean(training.loss_fn(yb, predictions))
        _accumulate(totals, training, float(loss) * len(xb), yb, predictions.numpy())
    return {f"test_{name}": value for name, value in _means(totals, len(x)).items()}


def _accumulate(totals: dict[str, float], training: Training, loss_sum: float, y: np.ndarray,
                predictions: np.ndarray) -> None:
    """Add a batch's summed loss and its metrics times its rows (none for an empty shard)."""
    totals["loss"] += loss_sum
    if len(y):
        for name, metric in training.metrics.items():
            totals[name] += metric(y, predictions) * len(y)


def _means(totals: dict[str, float], rows: int) -> dict[str, float]:
    """Means over the rows of every rank: each rank's sums over its ``rows``, combined."""
    means = fw.distributed.allreduce_mean([total / rows if rows else 0.0
                                           for total in totals.values()], weight=rows)
    return dict(zip(totals, means, strict=True))


def train(config: dict[str, Any], source: Source, *, resume: bool = False,
          overwrite: bool = False, progress: bool = True) -> dict[str, float]:
    """Run (or resume) the training a resolved config describes; return the final test metrics.

    Under MPI every rank calls this with the same config; ``parallel.ReportedByRoot`` stops the
    other ranks when the root refuses the run folder or the checkpoint (the root says why)."""
    run_dir = Path(config["output_dir"])
    note = check_batch_size(config, source)
    on_root(lambda: _prepare_folder(run_dir, resume, overwrite), (RunError,))
    seed = config["seed"]
    fw.random.set_seed(seed)
    data = load_dataset(config["data"], seed, where=f"{source.path}: data")
    training = build_training(config, data, source)
    y_train, y_test = (training_labels(y, config) for y in (data.y_train, data.y_test))
    shuffle_rng = np.random.default_rng([seed, SHUFFLE_STREAM])  # the same batches on all ranks
    start_rank_stream(seed)
    root = fw.distributed.is_root()
    fmt = config["output"]["format"]
    metrics_file = MetricsFile(run_dir, "metrics", fmt)
    steps_file = MetricsFile(run_dir, "steps", fmt) \
        if config["output"]["step_metrics"] and root else None
    for group in training.groups:  # slots before any restore or broadcast: the same everywhere
        group.optimizer.build(group.variables)
    epoch, step = 0, 0
    if resume:
        extra = on_root(lambda: _resume(run_dir, training, config, metrics_file, steps_file),
                        (RunError,))
        shuffle_rng.bit_generator.state = extra["shuffle_rng"]
        restore_random_state(extra, seed)
        epoch, step = extra["epoch"], extra["step"]
        log(f"resumed {run_dir} at epoch {epoch}, step {step}")
    synchronize(training.model, list(training.optimizers.values()))
    if root:
        (run_dir / "config.toml").write_text(dump_toml(config), encoding="utf-8")
    log(f"training {config['name']}: {data.task} on {config['data']['name']} "
        f"({len(data.x_train)} train / {len(data.x_test)} test examples), run folder {run_dir}"
        + (f", {fw.distributed.size()} MPI ranks" if fw.distributed.size() > 1 else ""))
    if note:
        log(note)
    final = None
    # Traced once, then replayed; MPI's gradient averaging runs eagerly.
    step_fn = fw.function(train_step) if config["compile"] and fw.distributed.size() == 1 \
        else train_step
    for epoch in range(epoch + 1, config["epochs"] + 1):
        started = time.perf_counter()
        record, step = _train_epoch(training, data.x_train, y_train, config, epoch, step,
                                    shuffle_rng, progress, steps_file, step_fn)
        record.update(evaluate(training, data.x_test, y_test))
        extra = {"epoch": epoch, "step": step, "config": config,
                 "shuffle_rng": shuffle_rng.bit_generator.state, "fw_rng": fw.random.get_state()}
        states = random_states()
        if states is not None:
            extra["fw_rng_ranks"] = states
        if root:
            metrics_file.append(record)
            save_checkpoint(run_dir / CHECKPOINT, training.model, training.optimizers,
                            extra=extra)
        seconds = time.perf_counter() - started
        steps = num_batches(len(data.x_train), config["batch_size"])
        log(f"epoch {epoch}/{config['epochs']}  {_summary(record)}  "
            f"({seconds:.2f} s, {steps / seconds:.0f} steps/s)")
        final = {key: value for key, value in record.items() if key.startswith("test_")}
    if final is None:
        final = evaluate(training, data.x_test, y_test)
    if config["output"]["plot"] and root:
        _plot(metrics_file, ["loss", *training.metrics], run_dir / "curves.png")
    return final


def _train_epoch(training: Training, x: np.ndarray, y: np.ndarray, config: dict[str, Any],
                 epoch: int, step: int, rng: np.random.Generator, progress: bool,
                 steps_file: MetricsFile | None,
                 step_fn=train_step) -> tuple[dict[str, Any], int]:
    """One pass over the shuffled training set; the epoch's record and the new step count.

    Under MPI each step's loss is the ranks' combined one (a small collective) only where it is
    shown or recorded: with a progress bar or ``output.step_metrics``."""
    ranks = fw.distributed.size()
    report = ranks > 1 and (progress or config["output"]["step_metrics"])
    totals = dict.fromkeys(["loss", *training.metrics], 0.0)
    rows = 0
    batches = num_batches(len(x), config["batch_size"])
    with tqdm(total=batches, desc=f"epoch {epoch}/{config['epochs']}", unit="step", leave=False,
              disable=not progress or not fw.distributed.is_root(), dynamic_ncols=True) as bar:
        for xb, yb in iterate_batches(x, y, config["batch_size"], rng):
            rates = _learning_rates(training)
            xs, ys = fw.distributed.shard(xb, yb)
            loss, predictions = step_fn(training, xs, ys, len(xb))
            step += 1
            loss = float(loss)
            _accumulate(totals, training, loss * len(xb) / ranks, ys, predictions.numpy())
            rows += len(xs)
            if report:  # the ranks' shares average to the whole batch's mean (see train_step)
                loss = fw.distributed.allreduce_mean(loss)
            if steps_file is not None:
                steps_file.append({"epoch": epoch, "step": step, "loss": loss, **rates})
            if not bar.disable:
                bar.set_postfix(loss=f"{loss:.4f}",
                                lr=",".join(f"{r:.3g}" for r in rates.values()), refresh=False)
            bar.update()
    record = {"epoch": epoch, "step": step}
    record.update(_means(totals, rows))
    record.update(rates)
    return record, step


def _summary(record: dict[str, Any]) -> str:
    """An epoch's record as one line: losses and metrics to 4 places, learning rates to 3 digits."""
    return "  ".join(f"{key} {value:.3g}" if key.startswith("lr") else f"{key} {value:.4f}"
                     for key, value in record.items() if key not in ("epoch", "step"))


def _learning_rates(training: Training) -> dict[str, float]:
    """The rate each optimizer uses for the coming step: ``lr``, or ``lr/<group>`` per group."""
    if len(training.groups) == 1:
        return {"lr": training.groups[0].learning_rate()}
    return {f"lr/{group.name}": group.learning_rate() for group in training.groups}


def _prepare_folder(run_dir: Path, resume: bool, overwrite: bool) -> None:
    """Refuse to write over a finished or interrupted run unless told how to treat it."""
    existing = [name for name in RUN_FILES if (run_dir / name).exists()]
    if resume:
        if not (run_dir / CHECKPOINT).exists():
            raise RunError(f"{run_dir}: no {CHECKPOINT} to resume from; start the run without "
                           f"--resume")
        return
    if existing and not overwrite:
        raise RunError(f"{run_dir} already holds a run ({', '.join(existing)}); pass --resume "
                       f"to continue it or --overwrite to start again (or --output DIR)")
    for name in existing:  # only the runner's own files: anything else there stays
        (run_dir / name).unlink()
    run_dir.mkdir(parents=True, exist_ok=True)


def _resume(run_dir: Path, training: Training, config: dict[str, Any],
            metrics_file: MetricsFile, steps_file: MetricsFile | None) -> dict[str, Any]:
    """Restore weights and optimizer slots, cut the records back, and return the checkpoint's
    ``extra`` (epoch, step, both random streams); run on the root alone under MPI."""
    extra = restore_checkpoint(run_dir / CHECKPOINT, training.model, training.optimizers)
    changed = _changed_keys(extra["config"], config)
    if changed:
        raise RunError(f"{run_dir}: cannot resume with a different config ({', '.join(changed)} "
                       f"changed; only {', '.join(RESUMABLE_CHANGES)} may); use --overwrite "
                       f"to start again, or --output DIR for a new run")
    metrics_file.truncate("epoch", extra["epoch"])
    if steps_file is not None:
        steps_file.truncate("step", extra["step"])
    return extra


def _changed_keys(saved: dict[str, Any], current: dict[str, Any], prefix: str = "") -> list[str]:
    """Dotted keys whose values differ, leaving out the top-level keys a resume may change."""
    changed = []
    for key in sorted({*saved, *current}):
        if not prefix and key in RESUMABLE_CHANGES:
            continue
        old, new = saved.get(key), current.get(key)
        if isinstance(old, dict) and isinstance(new, dict):
            changed += _changed_keys(old, new, f"{prefix}{key}.")
        elif old != new:
            changed.append(f"{prefix}{key}")
    return changed


def _plot(metrics_file: MetricsFile, quantities: list[str], path: Path) -> None:
    records = metrics_file.read()
    if not records:
        return
    if plot_curves(records, quantities, path):
        log(f"curves: {path}")
    else:
        log(MISSING)
