"""Keras 3's training API as a mixin ``Model`` inherits (as Keras's ``Model`` inherits its
``Trainer``): ``compile``, ``fit``, ``evaluate``, the ``*_on_batch`` methods, and the steps a
subclass overrides, ``train_step(data)``, ``test_step(data)``, ``predict_step(data)``.

The contract of the "customizing what happens in fit" guide holds: a step reads
``self.compute_loss(x, y, y_pred, sample_weight)``, ``self.compute_metrics(...)``,
``self.metrics`` (the loss tracker, the compiled metrics, each output's loss, and any metric
the model holds as an attribute; all reset at each epoch's start), ``self.optimizer`` and
``self.trainable_variables``. The steps run compiled with ``fw.function`` unless
``run_eagerly=True``. ``fit`` is one short loop that calls the callbacks' hooks
(``layers.callbacks``); checkpoints, stopping, schedules and logging are callbacks.

Numbers as Keras 3 on TensorFlow: the epoch's loss is the mean of the batches' losses weighted
by their sizes; ``sample_weight`` (and ``class_weight``) weight the loss and the
``weighted_metrics``, not the ``metrics``; logs come with their keys sorted (TensorFlow's
``tf.function`` returns dicts so), nested dicts flattened.
"""
import framework as fw
from framework import metrics as metrics_module
from framework.engine import nest
from framework.engine.tensor import assign_add_all

from . import epoch_data
from .callbacks import CallbackList
from .compile_utils import CompileLoss, CompileMetrics

__all__ = ["Trainer"]


class Trainer:
    """Keras's ``Trainer``; see the module's docstring."""

    compiled = False
    optimizer = None
    run_eagerly = False
    stop_training = False
    train_function = test_function = predict_function = None
    _compile_loss = _compile_metrics = _loss_tracker = None
    _steps_per_execution = 1
    _initial_epoch = None  # set by BackupAndRestore when it resumes a run

    # --- compile --------------------------------------------------------------------------------
    def compile(self, optimizer="rmsprop", loss=None, loss_weights=None, metrics=None,
                weighted_metrics=None, run_eagerly=False, steps_per_execution=1,
                jit_compile="auto", auto_scale_loss=True):
        """Configure training. ``optimizer``, ``loss`` and each metric are objects or Keras's
        names; ``loss`` (and ``loss_weights``, ``metrics``) may be a list or dict per output.
        ``jit_compile`` is accepted (there is no XLA to hand the steps to)."""
        if isinstance(steps_per_execution, bool) or not isinstance(steps_per_execution, int) \
                or steps_per_execution < 1:
            raise ValueError(f"compile(): steps_per_execution must be a positive integer, got "
                             f"{steps_per_execution!r}")
        compile_metrics = CompileMetrics(self, metrics, weighted_metrics) \
            if metrics is not None or weighted_metrics is not None else None
        self.optimizer = _optimizer(optimizer)
        self.loss = loss
        self._compile_loss = CompileLoss(self, loss, loss_weights) if loss is not None else None
        self._compile_metrics = compile_metrics
        self._loss_tracker = LossTracker(name="loss")
        self.run_eagerly = bool(run_eagerly)
        self.jit_compile = jit_compile
        self._steps_per_execution = steps_per_execution
        self.train_function = self.test_function = self.predict_function = None
        self.compiled = True

    def _assert_compile_called(self, method_name=None):
        if not self.compiled:
            raise ValueError("You must call `compile()` before using the model.")

    # --- what a step reads ----------------------------------------------------------------------
    @property
    def metrics(self):
        """The loss tracker, the compiled metrics, each output's loss tracker, then the metrics
        the model holds as attributes (Keras's order)."""
        found = []
        if self.compiled:
            found.append(self._loss_tracker)
            if self._compile_metrics is not None:
                found.append(self._compile_metrics)
            if self._compile_loss is not None:
                found.extend(self._compile_loss.metrics)
        own = {id(m) for m in found}
        for value in vars(self).values():
            for item in value if isinstance(value, (list, tuple)) else (value,):
                if isinstance(item, metrics_module.Metric) and id(item) not in own:
                    own.add(id(item))
                    found.append(item)
        return found

    @property
    def metrics_names(self):
        return [m.name for m in self.metrics]

    def reset_metrics(self):
        for metric in self.metrics:
            metric.reset_state()

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """The compiled loss plus the model's own losses (regularization, ``add_loss``)."""
        losses = []
        if self._compile_loss is not None:
            loss = self._compile_loss(y, y_pred, sample_weight)
            if loss is not None:
                losses.append(loss)
        losses.extend(fw.cast(fw.reduce_sum(loss), "float32") for loss in self.losses)
        if not losses:
            raise ValueError("No loss to compute. Provide a `loss` argument in `compile()`.")
        total = losses[0]
        for loss in losses[1:]:
            total = total + loss
        return total

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        """Update the compiled metrics; return every metric's result (``get_metrics_result``)."""
        if self._compile_metrics is not None:
            self._compile_metrics.update_state(y, y_pred, sample_weight)
        return self.get_metrics_result()

    def get_metrics_result(self):
        results = {}
        for metric in self.metrics:
            result = metric.result()
            results.update(result if isinstance(result, dict) else {metric.name: result})
        return results

    # --- the steps ------------------------------------------------------------------------------
    def train_step(self, data):
        """One optimizer step on ``data`` (``(x, y)`` or ``(x, y, sample_weight)``); returns the
        logs."""
        x, y, sample_weight = epoch_data.unpack(data)
        with fw.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight)
        self._loss_tracker.update_state(loss, sample_weight=_batch_size(x))
        variables = self.trainable_variables
        self.optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return self.compute_metrics(x, y, y_pred, sample_weight=sample_weight)

    def test_step(self, data):
        x, y, sample_weight = epoch_data.unpack(data)
        y_pred = self(x, training=False)
        loss = self.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight,
                                 training=False)
        self._loss_tracker.update_state(loss, sample_weight=_batch_size(x))
        return self.compute_metrics(x, y, y_pred, sample_weight=sample_weight)

    def predict_step(self, data):
        x, _, _ = epoch_data.unpack(data)
        return self(x, training=False)

    def make_train_function(self, force=False):
        if self.train_function is None or force:
            self.train_function = self._compiled(self.train_step)
        return self.train_function

    def make_test_function(self, force=False):
        if self.test_function is None or force:
            self.test_function = self._compiled(self.test_step)
        return self.test_function

    def make_predict_function(self, force=False):
        if self.predict_function is None or force:
            self.predict_function = self._compiled(self.predict_step)
        return self.predict_function

    def _compiled(self, step):
        return step if self.run_eagerly else _FlatStep(step)

    # --- fit and evaluate -----------------------------------------------------------------------
    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None,
            validation_split=0.0, validation_data=None, shuffle=True, class_weight=None,
            sample_weight=None, initial_epoch=0, steps_per_epoch=None, validation_steps=None,
            validation_batch_size=None, validation_freq=1):
        """Train for ``epochs`` epochs; returns the ``History`` (Keras's keys and values)."""
        self._assert_compile_called("fit")
        if validation_split and validation_data is None:
            (x, y, sample_weight), validation_data = epoch_data.split(
                x, y, sample_weight, validation_split)
        data = epoch_data.make(x, y, sample_weight, batch_size, shuffle, class_weight)
        steps = steps_per_epoch or data.steps
        callbacks = CallbackList(callbacks, add_history=True, add_progbar=verbose != 0,
                                 model=self, verbose=_verbosity(verbose), epochs=epochs,
                                 steps=steps)
        self.stop_training = False
        train_function = self.make_train_function()
        batches = _Batches(data, steps_per_epoch)
        callbacks.on_train_begin()
        epoch_logs = None
        initial_epoch = self._initial_epoch if self._initial_epoch is not None else initial_epoch
        self._initial_epoch = None
        for epoch in range(initial_epoch, epochs):
            self.reset_metrics()
            callbacks.on_epoch_begin(epoch)
            logs = self._run_epoch(batches, train_function, callbacks.on_train_batch_begin,
                                   callbacks.on_train_batch_end, "train_step")
            epoch_logs = self._logs_of(logs)
            if validation_data is not None and _due(epoch, validation_freq):
                val_x, val_y, val_weight = epoch_data.unpack(validation_data)
                val_logs = self.evaluate(val_x, val_y, sample_weight=val_weight,
                                         batch_size=validation_batch_size or batch_size,
                                         steps=validation_steps, callbacks=callbacks,
                                         return_dict=True)
                epoch_logs.update({f"val_{name}": value for name, value in val_logs.items()})
            callbacks.on_epoch_end(epoch, epoch_logs)
            if self.stop_training:
                break
        callbacks.on_train_end(logs=epoch_logs)
        return self.history

    def _run_epoch(self, batches, step_function, on_begin, on_end, what):
        """Run ``step_function`` on each batch of one epoch, the hooks around each group of
        ``steps_per_execution`` steps; return the last logs."""
        logs, step, every, pending = None, None, self._steps_per_execution, 0
        training = what == "train_step"
        for step, batch in batches.epoch():
            if not pending:
                on_begin(step)
            logs = step_function(batch)
            if logs.__class__ is not dict and not isinstance(logs, dict):
                raise AttributeError(f"'{type(logs).__name__}' object has no attribute 'items': "
                                     f"{type(self).__name__}.{what} must return a dict of "
                                     f"logs, got {logs!r:.80}")
            pending += 1
            if pending == every:
                on_end(step, logs)
                pending = 0
            if training and self.stop_training:
                break
        if pending:
            on_end(step, logs)
        return logs

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", sample_weight=None,
                 steps=None, callbacks=None, return_dict=False, **kwargs):
        """The loss and metrics over ``x``: a list in ``metrics`` order (one value alone as a
        float), or a dict with ``return_dict=True``."""
        self._assert_compile_called("evaluate")
        data = epoch_data.make(x, y, sample_weight, batch_size, shuffle=False)
        if not isinstance(callbacks, CallbackList):
            callbacks = CallbackList(callbacks, add_progbar=verbose != 0, model=self,
                                     verbose=_verbosity(verbose), epochs=1,
                                     steps=steps or data.steps)
        test_function = self.make_test_function()
        self.reset_metrics()
        callbacks.on_test_begin()
        logs = self._run_epoch(_Batches(data, steps), test_function,
                               callbacks.on_test_batch_begin, callbacks.on_test_batch_end,
                               "test_step")
        logs = self._logs_of(logs)
        callbacks.on_test_end(logs)
        return logs if return_dict else self._flatten_metrics_in_order(logs)

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None,
                       return_dict=False):
        """One ``train_step`` on one batch; the results are that batch's alone (the metrics
        are reset first, as Keras 3 does)."""
        self._assert_compile_called("train_on_batch")
        self.reset_metrics()
        data = epoch_data.ArrayData(x, y, sample_weight, class_weight=class_weight)
        logs = self._logs_of(self.make_train_function()(_whole(data)))
        return logs if return_dict else self._flatten_metrics_in_order(logs)

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        self._assert_compile_called("test_on_batch")
        self.reset_metrics()
        data = epoch_data.ArrayData(x, y, sample_weight)
        logs = self._logs_of(self.make_test_function()(_whole(data)))
        return logs if return_dict else self._flatten_metrics_in_order(logs)

    def predict_on_batch(self, x):
        outputs = self.make_predict_function()((epoch_data.ArrayData(x).epoch().__next__()[0],))
        return nest.pack_sequence_as(outputs, [t.numpy() for t in nest.flatten(outputs)])

    # --- logs -----------------------------------------------------------------------------------
    def _logs_of(self, logs):
        """The step's logs as TensorFlow's compiled step returns them (keys sorted, nested
        dicts flattened in place), as Python floats; the values from the metrics themselves
        when the logs name the same ones (Keras's ``_get_metrics_result_or_logs``)."""
        logs = _flat_logs(logs or {})
        results = _flat_logs(self.get_metrics_result())
        source = results if set(logs) == set(results) else logs
        return {name: _float(source[name]) for name in logs}

    def _flatten_metrics_in_order(self, logs):
        names = []
        for metric in self.metrics:
            names += [m.name for m in metric.metrics] if isinstance(metric, CompileMetrics) \
                else [metric.name]
        values = [logs[name] for name in names if name in logs]
        values += [logs[name] for name in sorted(logs) if name not in names]
        return values[0] if len(values) == 1 else values


class _FlatStep:
    """``fw.function`` of a step, called with the batch's tensors as separate arguments and
    answering a flat tuple: the function's fast paths (a key from the tensors' shapes alone,
    results without a structure to rebuild) instead of walking nested ``data`` and logs each
    step. A dict of logs comes back as ``("logs", *keys, *values)``, the keys being constants
    of each traced plan; anything else as ``("other", result)``. (The marker is a string
    because a function returns strings as they are, while a Python number comes back as a
    tensor, which would cost an op to compare.) One traced function per structure of ``data``
    (one per ``fit``)."""

    def __init__(self, step):
        self.step, self._functions = step, {}

    def __call__(self, data):
        if data.__class__ is tuple and all(leaf.__class__ is fw.Tensor for leaf in data):
            key, leaves, structure = len(data), data, tuple  # (x, y): the usual batch, at once
        else:
            leaves = [fw.convert_to_tensor(leaf) for leaf in nest.flatten(data)]
            structure = nest.pack_sequence_as(data, [None] * len(leaves)) \
                if isinstance(data, (tuple, list, dict)) else None
            key = repr(structure)
        function = self._functions.get(key)
        if function is None:
            function = self._functions[key] = fw.function(self._flat(structure))
        out = function(*leaves)
        if out[0] == "other":
            return out[1]
        count = len(out) // 2  # (the marker, then as many keys as values)
        return dict(zip(out[1:count + 1], out[count + 1:]))

    def _flat(self, structure):
        step = self.step
        if structure is tuple:
            def unflatten(flat):
                return flat
        elif structure is None:
            def unflatten(flat):
                return flat[0]
        else:
            def unflatten(flat):
                return nest.pack_sequence_as(structure, list(flat))

        def run(*flat):
            logs = step(unflatten(flat))
            if logs.__class__ is dict and not any(isinstance(v, (dict, list, tuple))
                                                  for v in logs.values()):
                return ("logs", *logs, *logs.values())
            return ("other", logs)
        return run


class LossTracker(metrics_module.Mean):
    """Keras's loss tracker: the ``Mean`` of the batches' losses weighted by their sizes, with a
    direct path for the case every training step takes (a scalar loss, an integer weight): one
    assignment to both variables where the general path reduces and broadcasts. Same
    arithmetic, in the metric's float32, and through the gate (ops and an assignment), so a
    compiled step updates it on every call."""

    def update_state(self, values, sample_weight=None):
        if sample_weight.__class__ is int and values.__class__ is fw.Tensor and not values.ndim:
            weight = self._dtype.type(sample_weight)
            if values.dtype != self._dtype:
                values = fw.cast(values, self._dtype)
            assign_add_all(((self.total, values * weight), (self.count, weight)))
        else:
            super().update_state(values, sample_weight)


class _Batches:
    """An epoch's batches with their step numbers: a whole pass, or at most ``steps`` batches
    read from an iterator that continues across epochs; an epoch that meets the end of a pass
    ends there, and the next starts a new pass (what Keras 3's ``EpochIterator`` does)."""

    def __init__(self, data, steps):
        self.data, self.steps, self._iterator = data, steps, None

    def epoch(self):
        if self.steps is None:
            yield from enumerate(self.data.epoch())
            return
        if self._iterator is None:
            self._iterator = self.data.epoch()
        for step in range(self.steps):
            batch = next(self._iterator, None)
            if batch is None:
                self._iterator = None
                return
            yield step, batch


def _whole(data):
    """The single batch of all of ``data``."""
    data.batch_size = max(data.size, 1)
    return next(data.epoch())


def _flat_logs(logs):
    flat = {}
    for name in sorted(logs):
        value = logs[name]
        flat.update(_flat_logs(value) if isinstance(value, dict) else {name: value})
    return flat


def _float(value):
    return float(value) if isinstance(value, fw.Tensor) or hasattr(value, "dtype") or \
        isinstance(value, (int, float)) else value


def _batch_size(x):
    return nest.flatten(x)[0].shape[0]


def _due(epoch, validation_freq):
    if isinstance(validation_freq, int):
        return (epoch + 1) % validation_freq == 0
    return epoch + 1 in validation_freq


def _verbosity(verbose):
    return 1 if verbose == "auto" else verbose


def _optimizer(identifier):
    """An optimizer object, or one from its name. The optimizers package sits beside layers,
    not under it: it is imported here, on first need, as a caller of both would."""
    if isinstance(identifier, str) or isinstance(identifier, dict):
        import optimizers
        return optimizers.get(identifier)
    return identifier
