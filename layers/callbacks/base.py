"""``Callback`` with every hook Keras 3 calls, ``CallbackList`` that calls them, and the small
callbacks: ``History``, ``LambdaCallback``, ``TerminateOnNaN``.

``fit`` calls the list's hooks; the list calls a batch hook only on the callbacks that override
it (Keras's ``_should_call_*_batch_hooks``), so a batch costs nothing for the others.
"""
import math

__all__ = ["Callback", "CallbackList", "History", "LambdaCallback", "SaveFrequency",
           "TerminateOnNaN"]

_BATCH_HOOKS = ("on_train_batch_begin", "on_train_batch_end", "on_test_batch_begin",
                "on_test_batch_end", "on_predict_batch_begin", "on_predict_batch_end")
_HOOKS = ("on_train_begin", "on_train_end", "on_test_begin",
          "on_test_end", "on_predict_begin", "on_predict_end")


class Callback:
    """The base class: override the hooks you need. ``self.model`` is the model being trained,
    ``self.params`` ``{"verbose", "epochs", "steps"}``; ``logs`` are dicts of Python floats at
    epoch and train ends, of the step's results at batch ends."""

    def __init__(self):
        self.params = {}
        self._model = None

    def set_params(self, params):
        self.params = params

    def set_model(self, model):
        self._model = model

    @property
    def model(self):
        return self._model

    def on_batch_begin(self, batch, logs=None):
        """Keras 2's name: called by ``on_train_batch_begin``."""

    def on_batch_end(self, batch, logs=None):
        """Keras 2's name: called by ``on_train_batch_end``."""

    def on_epoch_begin(self, epoch, logs=None):
        """At the start of an epoch of ``fit``."""

    def on_epoch_end(self, epoch, logs=None):
        """At the end of an epoch: ``logs`` holds the epoch's metrics and the ``val_*`` ones."""

    def on_train_batch_begin(self, batch, logs=None):
        self.on_batch_begin(batch, logs=logs)

    def on_train_batch_end(self, batch, logs=None):
        self.on_batch_end(batch, logs=logs)

    def on_test_batch_begin(self, batch, logs=None):
        """Before a batch of ``evaluate`` (and of validation in ``fit``)."""

    def on_test_batch_end(self, batch, logs=None):
        """After a batch of ``evaluate``."""

    def on_predict_batch_begin(self, batch, logs=None):
        """Before a batch of ``predict``."""

    def on_predict_batch_end(self, batch, logs=None):
        """After a batch of ``predict``."""

    def on_train_begin(self, logs=None):
        """At the start of ``fit``."""

    def on_train_end(self, logs=None):
        """At the end of ``fit``: ``logs`` are the last epoch's."""

    def on_test_begin(self, logs=None):
        """At the start of ``evaluate``."""

    def on_test_end(self, logs=None):
        """At the end of ``evaluate``: ``logs`` are its results."""

    def on_predict_begin(self, logs=None):
        """At the start of ``predict``."""

    def on_predict_end(self, logs=None):
        """At the end of ``predict``."""


def _overrides(callback, hook):
    """Whether ``callback`` does something at ``hook`` (the train batch hooks also through
    Keras 2's ``on_batch_*``)."""
    cls = type(callback)
    mine = getattr(cls, hook, None) is not getattr(Callback, hook) or hook in vars(callback)
    if hook.startswith("on_train_batch_"):
        old = hook.replace("train_batch", "batch")
        mine = mine or getattr(cls, old) is not getattr(Callback, old) or old in vars(callback)
    return mine


class CallbackList:
    """The callbacks of one ``fit``/``evaluate``, called in order, with ``History`` and the
    progress bar added at the end when asked for (Keras's ``CallbackList``)."""

    def __init__(self, callbacks=None, add_history=False, add_progbar=False, model=None,
                 **params):
        from .progbar import ProgbarLogger  # (the bar builds on this module)
        self.callbacks = list(callbacks or [])
        for callback in self.callbacks:
            if not isinstance(callback, Callback):
                raise TypeError(f"callbacks must be fw.keras.callbacks.Callback objects, got "
                                f"{callback!r:.80}")
        if add_history and not any(isinstance(c, History) for c in self.callbacks):
            self.callbacks.append(History())
        if add_progbar and not any(isinstance(c, ProgbarLogger) for c in self.callbacks):
            self.callbacks.append(ProgbarLogger())
        self.params = params
        for callback in self.callbacks:
            if model is not None:
                callback.set_model(model)
            callback.set_params(params)
        self.model = model
        for hook in _HOOKS:
            setattr(self, hook, self._caller([getattr(c, hook) for c in self.callbacks]))
        for hook in _BATCH_HOOKS:
            setattr(self, hook, self._batch_caller(
                [getattr(c, hook) for c in self.callbacks if _overrides(c, hook)]))

    def append(self, callback):
        self.callbacks.append(callback)

    @staticmethod
    def _caller(methods):
        def call(logs=None):
            logs = {} if logs is None else logs
            for method in methods:
                method(logs)
        return call

    @staticmethod
    def _batch_caller(methods):
        def call(batch, logs=None):
            logs = {} if logs is None else logs
            for method in methods:
                method(batch, logs=logs)
        return call

    def on_epoch_begin(self, epoch, logs=None):
        for callback in self.callbacks:
            callback.on_epoch_begin(epoch, {} if logs is None else logs)

    def on_epoch_end(self, epoch, logs=None):
        for callback in self.callbacks:
            callback.on_epoch_end(epoch, {} if logs is None else logs)

    def __iter__(self):
        return iter(self.callbacks)


class History(Callback):
    """Records each epoch's logs: ``history.history`` (``{"loss": [...], "val_loss": [...]}``)
    and ``history.epoch``; ``fit`` returns it, and sets it as ``model.history``."""

    def __init__(self):
        super().__init__()
        self.history, self.epoch = {}, []

    def set_model(self, model):
        super().set_model(model)
        model.history = self

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for name, value in (logs or {}).items():
            self.history.setdefault(name, []).append(value)


class LambdaCallback(Callback):
    """A callback from functions: ``LambdaCallback(on_epoch_end=lambda epoch, logs: ...)``;
    epoch and batch hooks take ``(index, logs)``, the begin/end hooks ``(logs)``."""

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_train_begin=None,
                 on_train_end=None, on_train_batch_begin=None, on_train_batch_end=None,
                 **kwargs):
        super().__init__()
        given = dict(on_epoch_begin=on_epoch_begin, on_epoch_end=on_epoch_end,
                     on_train_begin=on_train_begin, on_train_end=on_train_end,
                     on_train_batch_begin=on_train_batch_begin,
                     on_train_batch_end=on_train_batch_end, **kwargs)
        for name, fn in given.items():
            if fn is None:
                continue
            if not name.startswith("on_") or not hasattr(Callback, name):
                raise TypeError(f"LambdaCallback: unknown hook {name!r}")
            if name in ("on_batch_begin", "on_batch_end"):
                name = name.replace("batch", "train_batch")
            setattr(self, name, _with_logs(fn, indexed=name in _BATCH_HOOKS or "epoch" in name))


def _with_logs(fn, indexed):
    if indexed:
        return lambda index, logs=None: fn(index, logs)
    return lambda logs=None: fn(logs)


class TerminateOnNaN(Callback):
    """Stops training at the first batch whose loss is NaN or infinite (Keras's message)."""

    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(float(loss)):
            print(f"Batch {batch}: Invalid loss, terminating training")
            self.model.stop_training = True


class SaveFrequency:
    """A ``save_freq`` of the saving callbacks: ``"epoch"``, or every that many batches
    (``batch_due()`` counts one batch and says whether to save now)."""

    def __init__(self, save_freq, error):
        if save_freq != "epoch" and not (isinstance(save_freq, int) and save_freq > 0):
            raise ValueError(error)
        self.save_freq, self._batches = save_freq, 0

    @property
    def per_epoch(self):
        return self.save_freq == "epoch"

    def batch_due(self):
        if self.per_epoch:
            return False
        self._batches += 1
        if self._batches < self.save_freq:
            return False
        self._batches = 0
        return True
