"""A ``tape-train`` run: its folder, then ``compile`` and ``fit``, then its curves.

There is one training loop, ``Model.fit``: the run builds the config's model
(``training.step.Sequential``, whose step updates every optimizer group from one tape), compiles
it and fits it with the callbacks that keep the run folder (``training.callbacks``: records,
checkpoints, progress) and those the config names (``[[callbacks]]``,
``training.config.callbacks``). What stays here is the folder's orchestration: the lock, the
checks made before anything is written, the resume, the records cut back to the checkpoint,
and the order of each epoch's writes.

One seed drives everything: ``fw.random.set_seed(seed)`` before the model is built seeds the
initializers and dropout, a NumPy generator of its own shuffles the batches, and the data split
takes the seed too. Both generators' states go into every checkpoint, so ``--resume`` continues
the very streams an uninterrupted run would have drawn from and ends with the same weights.

Under MPI (``mpiexec -n 4 tape-train CONFIG``) every rank runs ``fit`` on its shard of each
batch and the ranks average their gradients inside the step; only the root writes files and prints
(``training.parallel`` says who does what). Metrics are summed over each rank's rows and
combined, weighted by rows, so they are those of the whole training and test sets.

A run holds its folder's lock from the first check to the end (``training.runlock``), touches
the folder otherwise only once everything it needs has passed its checks (config, folder,
data, model, room for a checkpoint, the checkpoint), and writes each epoch's checkpoint before
the epoch's metrics record; the checkpoint holds every epoch's record too: whatever the moment
a run is killed, or its metrics file deleted, a resume finds a checkpoint and rebuilds the
records to match it (``training.runfolder`` has the folder's rules). A step whose loss or
gradients are not finite is handled before it is applied, as the config's ``on_nonfinite``
says (``training.divergence``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable

import numpy as np
from tqdm.auto import tqdm

import framework as fw

from .build import Training, build_training, training_labels
from .callbacks import RunBatches, RunCheckpoint, RunProgress, RunRecords
from .checkpoint import (CheckpointMismatchError, CheckpointReadError, read_extra,
                         restore_checkpoint, save_checkpoint)
from .config.callbacks import make_callbacks
from .config.reading import Source
from .data import load_dataset
from .divergence import Diverged, NonFiniteStep, finite_weights, stop_message
from .parallel import (check_batch_size, on_root, restore_random_state, start_rank_stream,
                       synchronize)
from .plot import MISSING, plot_curves
from .records import MetricsFile, RecordsError
from .runfolder import (CHECKPOINT, ConfigChanged, RunError, changed_keys, check_folder,
                        check_path, check_space, existing_files, prepare_folder, remove_leftovers,
                        write_config, writing)
from .runlock import FolderLock
from .step import evaluate

__all__ = ["ConfigChanged", "Diverged", "Interrupted", "OutputClosed", "RunError", "train"]

SHUFFLE_STREAM = 1  # the shuffling generator's seed is [seed, 1], apart from fw.random's
SEED_LIMIT = 2 ** 32  # scikit-learn's random_state (the data split) takes no larger seed


class _Stopped:
    """A run stopped from outside; ``checkpointed``: it has a checkpoint to resume from,
    ``wrote``: it has written to its folder (so starting again needs ``--overwrite``)."""

    def __init__(self, checkpointed: bool, wrote: bool):
        super().__init__()
        self.checkpointed, self.wrote = checkpointed, wrote


class Interrupted(_Stopped, KeyboardInterrupt):
    """Ctrl-C during a run."""


class OutputClosed(_Stopped, Exception):
    """The standard output was closed under the run (``tape-train ... | head -2``): the run
    stops there as after Ctrl-C, its last checkpoint intact."""


def log(message: str) -> None:
    """Print a line above the progress bar instead of through it (the root's, under MPI)."""
    if fw.distributed.is_root():
        tqdm.write(message)


def train(config: dict[str, Any], source: Source, *, resume: bool = False,
          overwrite: bool = False, progress: bool = True) -> dict[str, float]:
    """Run (or resume) the training a resolved config describes; return the final test metrics.

    The folder is locked (``runlock.FolderLock``) before its first check and until this
    returns; besides that lock file, nothing is written before the config, the run folder, the
    data, the model and (on resume) the checkpoint have passed every check, so a refused run
    leaves the folder as it was (``training.runfolder`` has the folder's rules). Ctrl-C raises
    ``Interrupted``, a closed stdout ``OutputClosed``; each says whether the run has a
    checkpoint to resume from.

    Under MPI every rank calls this with the same config; ``parallel.ReportedByRoot`` stops the
    other ranks when the root refuses the run folder or the checkpoint (the root says why)."""
    run = _Run(Path(config["output_dir"]), resume)
    try:
        return _train(run, config, source, overwrite, progress)
    except KeyboardInterrupt:
        raise Interrupted(run.last_saved is not None, run.wrote) from None
    except BrokenPipeError:  # the run's own writes raise RunError: this is stdout's
        raise OutputClosed(run.last_saved is not None, run.wrote) from None
    finally:
        run.lock.release()


class _Run:
    """Where a run stands with its folder: has it written there, which epoch did it save last."""

    def __init__(self, run_dir: Path, resume: bool):
        self.run_dir, self.resume = run_dir, resume
        self.wrote = False
        self.replacing = False  # the folder held another run when this one started
        self.committed = resume  # the folder's records are this run's (no longer staged)
        self.last_saved: int | None = None
        self.lock = FolderLock(run_dir)  # taken by the root alone
        self.history: list[dict[str, Any]] = []  # the epochs' records (the root's)


def _train(run: _Run, config: dict[str, Any], source: Source, overwrite: bool,
           progress: bool) -> dict[str, float]:
    run_dir, resume = run.run_dir, run.resume
    note = check_batch_size(config, source)
    _check_seed(config, source)
    on_root(lambda: _claim(run, overwrite), (RunError,))
    seed = config["seed"]
    fw.random.set_seed(seed)
    data = load_dataset(config["data"], seed, where=f"{source.path}: data")
    training = build_training(config, data, source)
    shuffle_rng = np.random.default_rng([seed, SHUFFLE_STREAM])  # the same batches on all ranks
    start_rank_stream(seed)
    root = fw.distributed.is_root()
    fmt = config["output"]["format"]
    metrics_file = MetricsFile(run_dir, "metrics", fmt, staged=not resume)
    steps_file = MetricsFile(run_dir, "steps", fmt, staged=not resume) \
        if config["output"]["step_metrics"] and root else None
    for group in training.groups:  # slots before any restore or broadcast: the same everywhere
        group.optimizer.build(group.variables)
    on_root(lambda: check_space(run_dir, _checkpoint_size(training)), (RunError,))
    epoch, step, extra = 0, 0, None
    if resume:
        extra = on_root(lambda: _resume(run_dir, training, config), (RunError,))
        shuffle_rng.bit_generator.state = extra["shuffle_rng"]
        restore_random_state(extra, seed)
        epoch, step = extra["epoch"], extra["step"]
        run.last_saved = epoch
    synchronize(training.model, list(training.optimizers.values()))
    goes_on = config["epochs"] > epoch
    on_root(lambda: _start_writing(run, config, metrics_file, steps_file, extra, goes_on,
                                   overwrite), (RunError,))
    run.wrote = True
    if resume:
        log(f"resumed {run_dir} at epoch {epoch}, step {step}")
    log(f"training {config['name']}: {data.task} on {config['data']['name']} "
        f"({len(data.x_train)} train / {len(data.x_test)} test examples), run folder {run_dir}"
        + (f", {fw.distributed.size()} MPI ranks" if fw.distributed.size() > 1 else ""))
    if note:
        log(note)
    if not goes_on:
        log(f"{run_dir} is at epoch {epoch} already and epochs = {config['epochs']}: nothing to "
            f"train (its config.toml is unchanged)")
    y_train, y_test = (training_labels(y, config, data.num_classes)
                       for y in (data.y_train, data.y_test))
    final = None
    if goes_on:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # on_nonfinite's
            final = _fit(run, config, training, data.x_train, y_train,
                         lambda: evaluate(training, data.x_test, y_test), epoch, step,
                         shuffle_rng, progress, metrics_file, steps_file,
                         (extra or {}).get("callbacks", {}))
    if final is None:
        final = evaluate(training, data.x_test, y_test)
    if config["output"]["plot"] and root:
        with writing(run_dir / "curves.png"):
            _plot(metrics_file, ["loss", *training.metrics], run_dir / "curves.png")
    return final


def _fit(run: _Run, config: dict[str, Any], training: Training, x: np.ndarray, y: np.ndarray,
         evaluate_test: Callable[[], dict[str, float]], epoch: int, step: int,
         shuffle_rng: np.random.Generator, progress: bool, metrics_file: MetricsFile,
         steps_file: MetricsFile | None, restored: dict[str, Any]) -> dict[str, float] | None:
    """Compile the model and ``fit`` it from ``epoch`` on, with the callbacks that keep the run
    folder (``training.callbacks``) around the config's own (``restored``: their state at a
    resumed checkpoint); the last epoch's test metrics. The steps run through ``fw.function``
    unless ``compile = false``, under MPI too (the gradient averaging is replayed)."""
    model, policy = training.model, config["on_nonfinite"]
    batches = RunBatches(x, y, config["batch_size"], shuffle_rng)
    model.attach(training, batches, policy)
    model.compile(optimizer=training.groups[0].optimizer, loss=training.loss_fn,
                  metrics=list(training.metrics.values()) or None,
                  run_eagerly=not config["compile"])
    records = RunRecords(training, config, batches, step, steps_file, evaluate=evaluate_test,
                         log=log, progress=progress)
    bar = RunProgress(records, config["epochs"])
    named = make_callbacks(config)
    checkpoint = RunCheckpoint(records, run.history, named, restored, last_saved=run.last_saved,
                               save=lambda extra: on_root(lambda: _save_epoch(
                                   run, training, extra, metrics_file, steps_file), (RunError,)))
    callbacks = [records, *([bar] if progress else []), *named.values(), checkpoint]
    try:
        model.fit(batches, epochs=config["epochs"], initial_epoch=epoch, verbose=0,
                  callbacks=callbacks)
    except NonFiniteStep as problem:  # on_nonfinite = "stop"
        raise Diverged(stop_message(str(run.run_dir), records.epoch, records.step,
                                    str(problem), run.last_saved)) from None
    finally:
        bar.close()
    return checkpoint.final


def _claim(run: _Run, overwrite: bool) -> None:
    """Lock the run folder (root only), then look at what it holds (``training.runfolder``)."""
    check_path(run.run_dir)
    run.lock.acquire()
    check_folder(run.run_dir, run.resume, overwrite)


def _checkpoint_size(training: Training) -> int:
    """About the bytes of one checkpoint: the model's and the optimizers' variables."""
    variables = [*training.model.variables,
                 *(v for optimizer in training.optimizers.values() for v in optimizer.variables)]
    return sum(math.prod(v.shape) * np.dtype(v.dtype.as_numpy_dtype).itemsize
               for v in variables)


def _check_seed(config: dict[str, Any], source: Source) -> None:
    if config["seed"] >= SEED_LIMIT:
        raise source.error("seed", f"expected an integer below 2**32 = {SEED_LIMIT} (the data "
                                   f"split's random_state takes no larger one), got "
                                   f"{config['seed']}")


def _start_writing(run: _Run, config: dict[str, Any], metrics_file: MetricsFile,
                   steps_file: MetricsFile | None, extra: dict[str, Any] | None,
                   goes_on: bool, overwrite: bool) -> None:
    """The run's first writes (root only): the folder, records cut back to the checkpoint on
    resume, and ``config.toml``, unless a resume trains no further than its checkpoint or the
    run replaces one in the folder (then the first checkpoint writes it)."""
    existing = existing_files(run.run_dir)
    run.replacing = extra is None and bool(existing)
    if run.replacing and not overwrite:  # (check_folder let it in: it has no checkpoint)
        log(f"{run.run_dir} holds {', '.join(existing)} of a run that stopped before its first "
            f"checkpoint: this run replaces them at its own first checkpoint")
    removed = prepare_folder(run.run_dir)
    run.wrote = True
    if removed:
        log(f"removed {', '.join(removed)} from {run.run_dir}: left by a run killed while saving")
    if extra is not None:
        run.history = _cut_records(metrics_file, steps_file, extra)
    if goes_on and not run.replacing:  # replacing a run: with its first checkpoint
        write_config(run.run_dir, config)


def _cut_records(metrics_file: MetricsFile, steps_file: MetricsFile | None,
                 extra: dict[str, Any]) -> list[dict[str, Any]]:
    """The records of a resumed run as they were at its checkpoint, which holds the records up
    to its own epoch: a crash between the checkpoint and that record's line loses nothing, and
    a missing file is rebuilt. Records in the other format (``output.format`` changed on
    resume) are converted first. Returns the epochs' records."""
    epoch, name = extra["epoch"], metrics_file.path.name
    # (a checkpoint from before "history" holds its own epoch's record only, if that)
    saved = extra.get("history", [extra["record"]] if "record" in extra else [])
    try:
        with writing(metrics_file.path):
            for file in (metrics_file, steps_file):
                converted = file and file.adopt_other_format()
                if converted:
                    log(f"converted {converted.name} to {file.path.name} (output.format is "
                        f"{file.fmt!r} now)")
            if not metrics_file.path.exists():
                metrics_file.rewrite(saved)
                lost = epoch - len(saved)
                log(f"{name} was missing: rebuilt from {CHECKPOINT}" + (
                    f"; the records of epochs 1 to {lost} are lost (that checkpoint holds "
                    f"only the later ones)" if lost else ""))
            elif saved and saved[-1]["epoch"] == epoch:
                metrics_file.truncate("epoch", epoch - 1, then=saved[-1])
            else:
                metrics_file.truncate("epoch", epoch)
            if steps_file is not None:
                if not steps_file.path.exists() and extra["step"]:
                    log(f"{steps_file.path.name} was missing: the records of steps 1 to "
                        f"{extra['step']} are lost (a checkpoint holds no steps)")
                steps_file.truncate("step", extra["step"])
            return metrics_file.read()
    except RecordsError as error:
        raise RunError(str(error)) from None


def _save_epoch(run: _Run, training: Training, extra: dict[str, Any], metrics_file: MetricsFile,
                steps_file: MetricsFile | None) -> bool:
    """The checkpoint, then the epoch's record (root only); False where the weights are not
    finite, so that the last good checkpoint stays. A new run's first checkpoint also puts its
    staged records and config in the place of an earlier run's (``_replace_old_run``)."""
    saved = finite_weights(training.model.variables)
    if saved:
        with writing(run.run_dir / CHECKPOINT):
            save_checkpoint(run.run_dir / CHECKPOINT, training.model, training.optimizers,
                            extra=extra)
        run.last_saved = extra["epoch"]
    if not run.committed and (saved or not run.replacing):
        _replace_old_run(run, extra["config"], metrics_file, steps_file)
    with writing(metrics_file.path):
        metrics_file.append(extra["history"][-1])
        if run.committed:
            metrics_file.commit()
    return saved


def _replace_old_run(run: _Run, config: dict[str, Any], metrics_file: MetricsFile,
                     steps_file: MetricsFile | None) -> None:
    """At a new run's first checkpoint (or first epoch, in a folder that held no run): its
    staged steps and ``config.toml`` take the place of an earlier run's, whose files this run
    does not write are removed."""
    run.committed = True
    with writing(run.run_dir):
        if steps_file is not None:
            steps_file.commit()
        if run.replacing:
            write_config(run.run_dir, config)
        written = {"config.toml", CHECKPOINT, metrics_file.path.name}
        if steps_file is not None:
            written.add(steps_file.path.name)
        remove_leftovers(run.run_dir, written)


def _resume(run_dir: Path, training: Training, config: dict[str, Any]) -> dict[str, Any]:
    """Compare the checkpoint's config with ``config``, then restore weights and optimizer
    slots; return the checkpoint's ``extra`` (epoch, step, both random streams, the last
    record). Run on the root alone under MPI; nothing is written."""
    path = run_dir / CHECKPOINT
    try:
        extra = read_extra(path)
        saved = extra.get("config")
        if not isinstance(saved, dict) or not isinstance(extra.get("epoch"), int):
            raise RunError(f"{path}: a checkpoint, but not one of a tape-train run (it has no "
                           f"config and epoch); start the run again with --overwrite")
        changes = changed_keys(saved, config)
        if changes:
            raise ConfigChanged(run_dir, changes, saved)
        restore_checkpoint(path, training.model, training.optimizers)
    except CheckpointReadError as error:
        raise RunError(f"{error}; start the run again with --overwrite") from None
    except CheckpointMismatchError as error:
        raise RunError(f"{path} holds another model than the config describes ({error}); start "
                       f"the run again with --overwrite") from None
    return extra


def _plot(metrics_file: MetricsFile, quantities: list[str], path: Path) -> None:
    records = metrics_file.read()
    if not records:
        return
    if plot_curves(records, quantities, path):
        log(f"curves: {path}")
    else:
        log(MISSING)
