"""``DataParallel``: ``fit`` over MPI ranks (``mpiexec -n 2 python train.py``), as ``tape-train``
trains under MPI, in Horovod's shape::

    x, y = fw.distributed.shard(x, y)            # this rank's rows
    saving = fw.keras.callbacks.ModelCheckpoint("m.weights.h5", save_weights_only=True)
    model.fit(x, y, batch_size=32, callbacks=[fw.keras.callbacks.DataParallel(saving)])

Every rank fits its shard; each step's gradients are averaged over the ranks before the optimizer
applies them (one fused allreduce per step, inside the compiled step too:
``fw.distributed.average_gradients``), so every rank takes the step one process takes on the
ranks' batches together: with equal shards, their mean gradient. As ``fit`` begins, rank 0's
weights, optimizer state and starting epoch (a ``BackupAndRestore`` resume) are given to every
rank (so the model must be built, or declare its input: ``layers.Input``); each epoch's logs
are averaged over the ranks (the whole data's means, for equal shards).
The callbacks given to ``DataParallel`` run on rank 0 alone, so files are written once. In one
process nothing changes. When ``fit`` ends, the optimizer is as it was before (its own
``apply_gradients``, no averaging), so a later ``fit`` without ``DataParallel``, or on one
rank's data alone, trains that rank's model alone.
"""
import framework as fw

from .base import Callback, CallbackList

__all__ = ["DataParallel"]


class DataParallel(Callback):
    """See the module's docstring; ``callbacks``: those that run on rank 0 alone (files, logs)."""

    def __init__(self, *callbacks):
        super().__init__()
        self._root = CallbackList(callbacks)
        self._callbacks = callbacks
        self._averaged = None  # the optimizer whose apply_gradients averages, during fit

    def set_model(self, model):
        super().set_model(model)
        self._root = CallbackList(self._callbacks, model=model)
        optimizer = getattr(model, "optimizer", None)
        if fw.distributed.size() > 1 and optimizer is not None \
                and "apply_gradients" not in vars(optimizer):
            optimizer.apply_gradients = _averaging(optimizer)
            self._averaged = optimizer
            model.train_function = None  # a step traced before would not average

    def set_params(self, params):
        super().set_params(params)
        for callback in self._root:
            callback.set_params(params)

    def _on_root(self, hook, *args):
        if fw.distributed.is_root():
            getattr(self._root, hook)(*args)

    def on_train_begin(self, logs=None):
        self._on_root("on_train_begin", logs)  # (a BackupAndRestore restores on the root)
        if fw.distributed.size() > 1:
            model = self.model
            model._require_built("DataParallel (broadcasting rank 0's weights as fit begins)")
            model.optimizer.build(model.trainable_variables)
            fw.distributed.broadcast_variables([model, model.optimizer], root=0)
            model._initial_epoch = fw.distributed.broadcast_object(model._initial_epoch)

    def on_epoch_end(self, epoch, logs=None):
        if logs and fw.distributed.size() > 1:
            keys = sorted(logs)
            logs.update(zip(keys, fw.distributed.allreduce_mean([logs[k] for k in keys])))
        self._on_root("on_epoch_end", epoch, logs)

    def on_train_end(self, logs=None):
        self._on_root("on_train_end", logs)
        if self._averaged is not None:  # the optimizer's own apply_gradients again
            del self._averaged.apply_gradients
            self._averaged = None
            self.model.train_function = None  # (its trace averaged)

    def on_epoch_begin(self, epoch, logs=None):
        self._on_root("on_epoch_begin", epoch, logs)

    def on_train_batch_begin(self, batch, logs=None):
        self._on_root("on_train_batch_begin", batch, logs)

    def on_train_batch_end(self, batch, logs=None):
        self._on_root("on_train_batch_end", batch, logs)

    def on_test_begin(self, logs=None):
        self._on_root("on_test_begin", logs)

    def on_test_end(self, logs=None):
        self._on_root("on_test_end", logs)


def _averaging(optimizer):
    """``optimizer.apply_gradients`` on the gradients averaged over the ranks."""
    apply = type(optimizer).apply_gradients

    def apply_gradients(grads_and_vars):
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        grads = fw.distributed.average_gradients([g for g, _ in pairs], [v for _, v in pairs])
        return apply(optimizer, zip(grads, [v for _, v in pairs]))
    return apply_gradients
