"""The callbacks that write files: ``CSVLogger``, ``TensorBoard`` (scalars through
``fw.summary``) and ``BackupAndRestore`` (an interrupted ``fit`` resumes bit for bit).

``BackupAndRestore`` writes one ``fw.train`` checkpoint (atomically, through
``framework.checkpoint_file``: a save cut short leaves the previous one whole) holding the
model's weights, the optimizer's step count, learning rate and slots, the epoch, and
``fw.random``'s global generator, which draws ``fit``'s shuffling and every unseeded random
op (dropout): restored, the next epochs see the same data order and the same draws as if the
run had never stopped. Weights that are not finite (a diverged run, stopped by
``TerminateOnNaN`` say) never replace the backup: the last good one stays, and is kept when
``fit`` ends.
"""
import collections
import csv
import os

import numpy as np

import framework as fw

from .base import Callback, SaveFrequency
from .finite import finite_weights

__all__ = ["BackupAndRestore", "CSVLogger", "TensorBoard"]


class CSVLogger(Callback):
    """Writes each epoch's logs to ``filename`` as CSV: ``epoch`` then the keys sorted; without
    validation data the ``val_*`` columns are there, as ``NA`` (Keras 3's file)."""

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.filename, self.sep, self.append = os.fspath(filename), separator, append
        self.writer = self.keys = self.csv_file = None
        self.append_header = True

    def on_train_begin(self, logs=None):
        if self.append and os.path.exists(self.filename):
            with open(self.filename) as f:
                self.append_header = not bool(len(f.readline()))
        if self.csv_file is not None and not self.csv_file.closed:
            self.csv_file.close()
        self.csv_file = open(self.filename, "a" if self.append else "w", newline="")
        self.writer = self.keys = None

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.keys is None:
            self.keys = sorted(logs)
            if self.keys and not any(key.startswith("val_") for key in self.keys):
                self.keys += [f"val_{key}" for key in self.keys]
        if self.writer is None:
            dialect = type("Dialect", (csv.excel,), {"delimiter": self.sep})
            self.writer = csv.DictWriter(self.csv_file, fieldnames=["epoch"] + self.keys,
                                         dialect=dialect)
            if self.append_header:
                self.writer.writeheader()
        row = collections.OrderedDict(epoch=epoch)
        row.update((key, logs.get(key, "NA")) for key in self.keys)
        self.writer.writerow(row)
        self.csv_file.flush()

    def on_train_end(self, logs=None):
        self.csv_file.close()
        self.writer = None


class TensorBoard(Callback):
    """Writes the epoch's logs as scalars to ``log_dir/train`` and ``log_dir/validation``
    (``epoch_loss``, ``epoch_accuracy``...; ``val_`` dropped in the validation run), and with
    ``update_freq`` an integer the batch logs every that many batches (``batch_loss``)."""

    def __init__(self, log_dir="logs", histogram_freq=0, write_graph=True, write_images=False,
                 write_steps_per_second=False, update_freq="epoch", profile_batch=0,
                 embeddings_freq=0, embeddings_metadata=None):
        super().__init__()
        if update_freq != "epoch" and not (isinstance(update_freq, int) and update_freq > 0):
            raise ValueError(f"TensorBoard: update_freq must be 'epoch' or a positive integer, "
                             f"got {update_freq!r}")
        self.log_dir, self.update_freq = os.fspath(log_dir), update_freq
        self._writers, self._step = {}, 0

    def _writer(self, name):
        if name not in self._writers:
            self._writers[name] = fw.summary.create_file_writer(
                os.path.join(self.log_dir, name))
        return self._writers[name]

    def on_train_batch_end(self, batch, logs=None):
        self._step += 1
        if self.update_freq != "epoch" and self._step % self.update_freq == 0:
            with self._writer("train").as_default():
                for name, value in (logs or {}).items():
                    if value is not None:  # (a step the runner skipped has no loss to plot)
                        fw.summary.scalar(f"batch_{name}", float(value), step=self._step)

    def on_epoch_end(self, epoch, logs=None):
        for run, prefix in (("train", ""), ("validation", "val_")):
            values = {name[len(prefix):]: value for name, value in (logs or {}).items()
                      if name.startswith(prefix) and (prefix or not name.startswith("val_"))}
            if values:
                with self._writer(run).as_default():
                    for name, value in values.items():
                        fw.summary.scalar(f"epoch_{name}", float(value), step=epoch)

    def on_train_end(self, logs=None):
        for writer in self._writers.values():
            writer.close()
        self._writers = {}


class BackupAndRestore(Callback):
    """Backs the training state up to ``backup_dir`` at each epoch's end (or every
    ``save_freq`` batches); a ``fit`` started again with the same callback restores it and
    resumes after the last backed-up epoch, bit for bit. With ``save_freq`` an integer it also
    backs up every that many batches, and a resumed run redoes the interrupted epoch from
    that mid-epoch state, as Keras's does (bit for bit only with ``"epoch"``). The backup is
    deleted when ``fit`` ends normally (``delete_checkpoint``), and its folder if then
    empty; not after weights that were not finite, whose backup it kept back.
    ``double_checkpoint`` is accepted: Keras keeps a second copy in case a save is cut short,
    which the atomic write already guarantees."""

    _FILE = "backup.ckpt"

    def __init__(self, backup_dir, save_freq="epoch", double_checkpoint=False,
                 delete_checkpoint=True):
        super().__init__()
        if not backup_dir:
            raise ValueError("Empty `backup_dir` argument passed")
        self._frequency = SaveFrequency(save_freq, f"Invalid value for argument `save_freq`. "
                                                   f"Received: save_freq={save_freq}. Expected "
                                                   f"either 'epoch' or an integer value.")
        self.backup_dir, self.save_freq = os.fspath(backup_dir), save_freq
        self.delete_checkpoint = delete_checkpoint
        self._path = os.path.join(self.backup_dir, self._FILE)
        self._epoch = 0
        self._held_back = False  # a save was refused: the weights were not finite

    def _checkpoint(self, extra):
        return fw.train.Checkpoint(model=self.model, optimizer=self.model.optimizer,
                                   extra=extra)

    def on_train_begin(self, logs=None):
        self._held_back = False
        if not os.path.exists(self._path):
            return
        self.model._require_built("BackupAndRestore (restoring its backup as fit begins)")
        extra = {}
        fw.train.restore_exactly(self._path, model=self.model, optimizer=self.model.optimizer,
                                 extra=extra)
        fw.random.set_state(_state_from_json(extra["random_state"]))
        self.model._initial_epoch = extra["epoch"] + 1

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if self._frequency.batch_due():
            self._save(self._epoch - 1)  # the epoch under way is redone on resume

    def on_epoch_end(self, epoch, logs=None):
        if self._frequency.per_epoch:
            self._save(epoch)

    def _save(self, epoch):
        if not finite_weights(self.model.weights):
            self._held_back = True
            print(f"BackupAndRestore: the weights are not finite at epoch {epoch + 1}; "
                  f"{self._path} keeps the last good backup")
            return
        os.makedirs(self.backup_dir, exist_ok=True)
        extra = {"epoch": epoch, "random_state": _state_to_json(fw.random.get_state())}
        self._checkpoint(extra).write(self._path)

    def on_train_end(self, logs=None):
        if self.delete_checkpoint and not self._held_back and os.path.exists(self._path):
            os.remove(self._path)
            if not os.listdir(self.backup_dir):
                os.rmdir(self.backup_dir)


def _state_to_json(state):
    """A NumPy bit generator's state as JSON values (its integers may pass 2**63)."""
    return {key: _state_to_json(value) if isinstance(value, dict) else
            (str(value) if isinstance(value, (int, np.integer)) else value)
            for key, value in state.items()}


def _state_from_json(state):
    return {key: _state_from_json(value) if isinstance(value, dict) else
            (int(value) if isinstance(value, str) and value.lstrip("-").isdigit() else value)
            for key, value in state.items()}
