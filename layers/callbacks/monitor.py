"""The callbacks that watch one logged quantity (Keras's ``MonitorCallback``):
``EarlyStopping``, ``ReduceLROnPlateau`` and ``ModelCheckpoint``; and
``LearningRateScheduler``.

``mode="auto"`` takes the direction from the name: a loss goes down, a metric the way its class
improves (accuracy, AUC, precision and recall up; errors down); a name it cannot tell is
Keras's ValueError asking for ``mode``. A monitor missing from the epoch's logs is Keras's
warning, and the epoch is skipped.
"""
import os
import warnings

import numpy as np

from framework import metrics as metrics_module

from .base import Callback, SaveFrequency

__all__ = ["EarlyStopping", "LearningRateScheduler", "ModelCheckpoint", "MonitorCallback",
           "ReduceLROnPlateau"]

_UP = (metrics_module.Accuracy, metrics_module.BinaryAccuracy,
       metrics_module.CategoricalAccuracy, metrics_module.SparseCategoricalAccuracy,
       metrics_module.TopKCategoricalAccuracy, metrics_module.SparseTopKCategoricalAccuracy,
       metrics_module.AUC, metrics_module.Precision, metrics_module.Recall)
_DOWN = (metrics_module.MeanSquaredError, metrics_module.MeanAbsoluteError,
         metrics_module.RootMeanSquaredError)


def _direction(metric):
    if isinstance(metric, _UP):
        return "up"
    if isinstance(metric, _DOWN) or (isinstance(metric, metrics_module.MeanMetricWrapper)
                                     and "accuracy" not in getattr(metric._fn, "__name__", "")):
        return "down"
    return None


class MonitorCallback(Callback):
    """What the monitoring callbacks share: ``monitor``, ``mode``, ``baseline``, ``min_delta``
    and the improvement test ``current - min_delta`` beyond the reference (for ``min``:
    ``current + min_delta`` below it)."""

    def __init__(self, monitor="val_loss", mode="auto", baseline=None, min_delta=0):
        super().__init__()
        if mode not in ("auto", "min", "max"):
            warnings.warn(f"{type(self).__name__} mode '{mode}' is unknown, fallback to auto "
                          f"mode.", stacklevel=2)
            mode = "auto"
        self.monitor, self.mode, self.best = monitor, mode, baseline
        self.min_delta = abs(min_delta)
        self.monitor_op = None

    def _set_monitor_op(self):
        if self.mode in ("min", "max"):
            self.monitor_op = np.less if self.mode == "min" else np.greater
        else:
            name = self.monitor.removeprefix("val_")
            if name == "loss":
                self.monitor_op = np.less
            compiled = getattr(self.model, "_compile_metrics", None)
            for metric in compiled.metrics if compiled is not None else []:
                if metric.name == name and _direction(metric) is not None:
                    self.monitor_op = np.greater if _direction(metric) == "up" else np.less
            if self.monitor_op is None:
                raise ValueError(
                    f"{type(self).__name__} callback received monitor={self.monitor}, but "
                    f"Keras isn't able to automatically determine whether that metric should "
                    f"be maximized or minimized. Pass `mode='max'` in order to monitor based "
                    f"on the highest metric value, or pass `mode='min'` in order to use the "
                    f"lowest value.")
        if self.monitor_op is np.less:
            self.min_delta *= -1

    def _is_improvement(self, current, reference):
        return reference is None or bool(self.monitor_op(current - self.min_delta, reference))


class EarlyStopping(MonitorCallback):
    """Stops training when ``monitor`` has not improved by ``min_delta`` for ``patience``
    epochs (counting from ``start_from_epoch``); ``baseline`` is the value to beat;
    ``restore_best_weights`` puts back the best epoch's weights at the end."""

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto",
                 baseline=None, restore_best_weights=False, start_from_epoch=0):
        super().__init__(monitor, mode, baseline, min_delta)
        self.patience, self.verbose, self.baseline = patience, verbose, baseline
        self.restore_best_weights, self.start_from_epoch = restore_best_weights, start_from_epoch
        self.wait = self.stopped_epoch = self.best_epoch = 0
        self.best_weights = None

    def on_train_begin(self, logs=None):
        self.wait = self.stopped_epoch = self.best_epoch = 0
        self.best, self.best_weights = None, None

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor_op is None:
            self._set_monitor_op()
        current = (logs or {}).get(self.monitor)
        if current is None:
            warnings.warn(f"Early stopping conditioned on metric `{self.monitor}` which is not "
                          f"available. Available metrics are: {','.join(logs or {})}",
                          stacklevel=2)
        if current is None or epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights, self.best_epoch = self.model.get_weights(), epoch
        self.wait += 1
        if self._is_improvement(current, self.best):
            self.best, self.best_epoch = current, epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._is_improvement(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping")
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                print(f"Restoring model weights from the end of the best epoch: "
                      f"{self.best_epoch + 1}.")
            self.model.set_weights(self.best_weights)


class ReduceLROnPlateau(MonitorCallback):
    """Multiplies the learning rate by ``factor`` (not below ``min_lr``) when ``monitor`` has
    not improved for ``patience`` epochs, then waits ``cooldown`` epochs; logs the rate as
    ``learning_rate``."""

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto",
                 min_delta=1e-4, cooldown=0, min_lr=0.0, **kwargs):
        super().__init__(monitor, mode, min_delta=min_delta)
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau does not support a factor >= 1.0. Received "
                             f"factor={factor}")
        self.factor, self.patience, self.verbose = factor, patience, verbose
        self.cooldown, self.min_lr = cooldown, min_lr
        self.wait = self.cooldown_counter = 0

    def on_train_begin(self, logs=None):
        self.best, self.wait, self.cooldown_counter = None, 0, 0

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor_op is None:
            self._set_monitor_op()
        logs = {} if logs is None else logs
        logs["learning_rate"] = float(self.model.optimizer.learning_rate)
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(f"Learning rate reduction is conditioned on metric `{self.monitor}` "
                          f"which is not available. Available metrics are: "
                          f"{','.join(logs)}.", stacklevel=2)
            return
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if self._is_improvement(current, self.best):
            self.best, self.wait = current, 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience and self._reduce(epoch):
                self.cooldown_counter, self.wait = self.cooldown, 0

    def _reduce(self, epoch):
        old = float(self.model.optimizer.learning_rate)
        if old <= np.float32(self.min_lr):
            return False
        new = max(old * self.factor, self.min_lr)
        self.model.optimizer.learning_rate = new
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to {new}.")
        return True


class LearningRateScheduler(Callback):
    """Sets the learning rate at each epoch's start to ``schedule(epoch, lr)`` (or
    ``schedule(epoch)``); logs it as ``learning_rate``."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule, self.verbose = schedule, verbose

    def on_epoch_begin(self, epoch, logs=None):
        optimizer = self.model.optimizer
        try:
            rate = self.schedule(epoch, float(optimizer.learning_rate))
        except TypeError:  # a schedule of the epoch alone (Keras 2's form)
            rate = self.schedule(epoch)
        if not isinstance(rate, (float, int, np.floating, np.integer)):
            rate = float(rate)
        optimizer.learning_rate = float(rate)
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to {rate}.")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = float(self.model.optimizer.learning_rate)


class ModelCheckpoint(MonitorCallback):
    """Saves the model (or its weights) at each epoch's end, or every ``save_freq`` batches,
    to ``filepath`` formatted with ``epoch`` (from 1) and the logs
    (``"{epoch:02d}-{val_loss:.2f}.weights.h5"``); with ``save_best_only`` only when
    ``monitor`` improved. Weights go through ``save_weights`` (the framework's atomic format,
    whatever the extension)."""

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False,
                 save_weights_only=False, mode="auto", save_freq="epoch",
                 initial_value_threshold=None):
        super().__init__(monitor, mode, initial_value_threshold)
        self.filepath = os.fspath(filepath)
        self.verbose, self.save_best_only = verbose, save_best_only
        self.save_weights_only, self.save_freq = save_weights_only, save_freq
        self._frequency = SaveFrequency(save_freq, f"Unrecognized save_freq: {save_freq}. "
                                                   f"Expected save_freq are 'epoch' or "
                                                   f"integer values")
        if save_weights_only and not self.filepath.endswith(".weights.h5"):
            raise ValueError(f"When using `save_weights_only=True` in `ModelCheckpoint`, the "
                             f"filepath provided must end in `.weights.h5` (Keras weights "
                             f"format). Received: filepath={self.filepath}")
        if not save_weights_only and not self.filepath.endswith((".keras", ".h5")):
            raise ValueError(f"The filepath provided must end in `.keras` (Keras model format). "
                             f"Received: filepath={self.filepath}")
        self._epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if self._frequency.batch_due():
            self._save(self._epoch, batch, logs)

    def on_epoch_end(self, epoch, logs=None):
        if self._frequency.per_epoch:
            self._save(epoch, None, logs)

    def _save(self, epoch, batch, logs):
        if self.monitor_op is None and self.save_best_only:
            self._set_monitor_op()
        logs = {name: float(value) for name, value in (logs or {}).items()}
        try:
            filepath = self.filepath.format(epoch=epoch + 1, **logs, **(
                {} if batch is None else {"batch": batch + 1}))
        except KeyError as e:
            raise KeyError(f'Failed to format this callback filepath: "{self.filepath}". '
                           f'Reason: {e}') from None
        if self.save_best_only:
            current = logs.get(self.monitor)
            if current is None:
                warnings.warn(f"Can save best model only with {self.monitor} available.",
                              stacklevel=2)
            elif not self._is_improvement(current, self.best):
                if self.verbose > 0:
                    print(f"\nEpoch {epoch + 1}: {self.monitor} did not improve from "
                          f"{self.best:.5f}")
                return
            else:
                self.best = current
        directory = os.path.dirname(filepath)
        if directory:
            os.makedirs(directory, exist_ok=True)
        if self.save_weights_only:
            self.model.save_weights(filepath, overwrite=True)
        else:
            self.model.save(filepath)
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: finished saving model to {filepath}")
