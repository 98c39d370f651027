"""Keras 3's callbacks (``tf.keras.callbacks``): hooks ``fit`` and ``evaluate`` call.

``base``: ``Callback``, ``CallbackList``, ``History``, ``LambdaCallback``, ``TerminateOnNaN``;
``progbar``: ``ProgbarLogger``; ``monitor``: the callbacks that watch a logged value
(``EarlyStopping``, ``ReduceLROnPlateau``, ``ModelCheckpoint``) and ``LearningRateScheduler``;
``files``: ``CSVLogger``, ``TensorBoard``, ``BackupAndRestore``; ``parallel``: ``DataParallel``
(``fit`` over MPI ranks).

``CALLBACKS`` registers those a run config may name (``[[callbacks]] type = "early_stopping"``),
the ones built from plain arguments alone, by Keras's snake_case names. ``BackupAndRestore`` is
not among them: a run folder is already a backup (``tape-train --resume``).
"""
from framework.registry import Registry

from .base import Callback, CallbackList, History, LambdaCallback, TerminateOnNaN
from .files import BackupAndRestore, CSVLogger, TensorBoard
from .monitor import (EarlyStopping, LearningRateScheduler, ModelCheckpoint, MonitorCallback,
                      ReduceLROnPlateau)
from .parallel import DataParallel
from .progbar import ProgbarLogger

CALLBACKS = Registry("callback")
for _name, _cls in (("csv_logger", CSVLogger),
                    ("early_stopping", EarlyStopping), ("model_checkpoint", ModelCheckpoint),
                    ("reduce_lr_on_plateau", ReduceLROnPlateau), ("tensorboard", TensorBoard),
                    ("terminate_on_nan", TerminateOnNaN)):
    CALLBACKS.register(_cls, name=_name)
del _name, _cls

__all__ = ["CALLBACKS", "BackupAndRestore", "CSVLogger", "Callback", "CallbackList",
           "DataParallel", "EarlyStopping", "History", "LambdaCallback",
           "LearningRateScheduler", "ModelCheckpoint", "MonitorCallback", "ProgbarLogger",
           "ReduceLROnPlateau", "TensorBoard", "TerminateOnNaN"]
