"""Keras 3's callbacks (``tf.keras.callbacks``): hooks ``fit`` and ``evaluate`` call.

``base``: ``Callback``, ``CallbackList``, ``History``, ``LambdaCallback``, ``TerminateOnNaN``;
``progbar``: ``ProgbarLogger``; ``monitor``: the callbacks that watch a logged value
(``EarlyStopping``, ``ReduceLROnPlateau``, ``ModelCheckpoint``) and ``LearningRateScheduler``;
``files``: ``CSVLogger``, ``TensorBoard``, ``BackupAndRestore``.
"""
from .base import Callback, CallbackList, History, LambdaCallback, TerminateOnNaN
from .files import BackupAndRestore, CSVLogger, TensorBoard
from .monitor import (EarlyStopping, LearningRateScheduler, ModelCheckpoint, MonitorCallback,
                      ReduceLROnPlateau)
from .progbar import ProgbarLogger

__all__ = ["BackupAndRestore", "CSVLogger", "Callback", "CallbackList", "EarlyStopping",
           "History", "LambdaCallback", "LearningRateScheduler", "ModelCheckpoint",
           "MonitorCallback", "ProgbarLogger", "ReduceLROnPlateau", "TensorBoard",
           "TerminateOnNaN"]
