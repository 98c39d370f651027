"""The ``Metric`` base class and the reductions every other metric builds on (``Mean``,
``Sum``, ``MeanMetricWrapper``), with Keras 3's numbers.

A metric's state lives in non-trainable ``fw.Variable``s that only ever add up (totals, counts,
confusion counts), as Keras's do with ``aggregation="sum"``: so states from several shards of
the data (MPI ranks) combine by adding their variables. An update's arithmetic runs on the
arrays' own module (NumPy or CuPy) inside primitives without gradient (``metric_op``): a metric
is never differentiated, and the runner updates one after every training step, so it must cost
little; being ops, they pass the one gate, and the variables change through ``assign_add``, so
a traced step updates its metrics on every call.
"""
import numpy as np

from ..engine import backend
from ..engine.dtypes import numpy_dtype
from ..ops.elementwise import divide_no_nan as ops_divide_no_nan
from ..engine.primitive import define
from ..registry import Registry, snake_case
from ..engine.tensor import Tensor, Variable, assign_add_all, convert_to_tensor

METRICS = Registry("metric")


def arrays(*values):
    """The raw arrays of ``values`` (tensors, arrays, lists, numbers; None stays None), all on
    the device of the first one that is on a GPU, so labels given as NumPy arrays meet device
    predictions."""
    raw = [v._value if isinstance(v, Tensor) else v if v is None or hasattr(v, "shape")
           else np.asarray(v) for v in values]
    device = next((a for a in raw if backend.is_device_array(a)), None)
    if device is not None:
        raw = [a if a is None or backend.is_device_array(a) else backend.to_device(a, "gpu")
               for a in raw]
    return raw


def same_rank(x1, x2, expand_rank_1=True):
    """Keras's squeeze_or_expand_to_same_rank for raw arrays: where the ranks differ by one
    and the higher-rank one ends in an axis of 1, squeeze it (or, against a rank-1 array,
    give the other a trailing axis instead)."""
    if x1.ndim == x2.ndim + 1 and x1.shape[-1] == 1:
        if x2.ndim == 1 and expand_rank_1:
            return x1, x2[..., None]
        return x1[..., 0], x2
    if x2.ndim == x1.ndim + 1 and x2.shape[-1] == 1:
        if x1.ndim == 1 and expand_rank_1:
            return x1[..., None], x2
        return x1, x2[..., 0]
    return x1, x2


class Metric:
    """Keras's ``Metric``: ``update_state(...)`` accumulates, ``result()`` reads (a scalar
    float32 tensor), ``reset_state()`` starts again; calling the metric updates, then reads.

    A subclass creates its state in ``__init__`` with ``add_variable(shape, initializer,
    name=...)`` and defines ``update_state`` and ``result``.
    """

    def __init__(self, name=None, dtype=None):
        self.name = name or snake_case(type(self).__name__)
        self._dtype = numpy_dtype(dtype or "float32")
        if self._dtype.kind != "f":
            raise ValueError(f"{type(self).__name__}: dtype must be a floating dtype, got "
                             f"{self._dtype.name}")
        self._variables = []

    @property
    def dtype(self):
        return self._dtype.name

    @property
    def variables(self):
        """The state variables (non-trainable), in the order they were added."""
        return list(self._variables)

    def add_variable(self, shape, initializer="zeros", dtype=None, aggregation="sum",
                     name=None):
        """A new non-trainable state variable (Keras's ``add_variable``).

        ``initializer``: ``"zeros"``, ``"ones"`` or a callable ``(shape, dtype)`` such as a
        ``layers.initializers`` object. ``aggregation`` must be ``"sum"``: states from several
        shards of the data combine by adding (see the module's docstring)."""
        if aggregation != "sum":
            raise ValueError(f"{type(self).__name__}.add_variable({name!r}): aggregation must "
                             f"be 'sum' (metric states combine by adding), got {aggregation!r}")
        dtype = numpy_dtype(dtype or self._dtype)
        shape = tuple(shape)
        if initializer in ("zeros", "ones"):
            value = (np.zeros if initializer == "zeros" else np.ones)(shape, dtype)
        elif callable(initializer):
            value = initializer(shape=shape, dtype=dtype)
        else:
            raise ValueError(f"{type(self).__name__}.add_variable({name!r}): initializer must "
                             f"be 'zeros', 'ones' or a callable, got {initializer!r}")
        variable = Variable(value, trainable=False, name=name, dtype=dtype)
        variable.name = name  # a Keras variable's name: no scope, no ":0"
        self._variables.append(variable)
        return variable

    def add_weight(self, shape=(), initializer="zeros", dtype=None, name=None):
        """Keras's older name for ``add_variable``."""
        return self.add_variable(shape, initializer, dtype=dtype, name=name)

    def update_state(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define update_state")

    def result(self):
        raise NotImplementedError(f"{type(self).__name__} must define result")

    def reset_state(self):
        """Every state variable back to zeros."""
        for variable in self._variables:
            variable.assign(backend.array_module(variable._value).zeros_like(variable._value))

    def __call__(self, *args, **kwargs):
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"


def metric_op(name, forward):
    """A metric's arithmetic on arrays as a primitive without gradient (a metric's value has
    none): tapes and ``fw.function`` see it like any op, so a traced step updates and reads
    its metrics on every call. It takes anything (tensors, arrays, lists; None for an absent
    weight) and returns a tensor."""
    op = define(name, lambda *values, **params: forward(*_present(values, params), **params))

    def call(*values, **params):
        given = tuple(v is not None for v in values)
        tensors = [convert_to_tensor(v) for v in values if v is not None]
        device = next((t.device for t in tensors if t.device != "cpu"), None)
        if device is not None:  # labels given as NumPy arrays meet device predictions
            tensors = [t if t.device == device else convert_to_tensor(
                backend.to_device(t._value, "gpu")) for t in tensors]
        return op(*tensors, given=given, **params)
    return call


def _present(values, params):
    """The arrays of a metric op's arguments with None back where none was given."""
    given = params.pop("given")
    values = iter(values)
    return [next(values) if g else None for g in given]


def divide_no_nan(a, b):
    """a / b, and 0 where b is 0 (Keras's divide_no_nan), on raw arrays."""
    xp = backend.array_module(b)
    safe = xp.where(b == 0, 1, b)
    return xp.where(b == 0, 0, a / safe).astype(a.dtype, copy=False)


def reduce_to_samplewise(values, sample_weight, reduce, dtype):
    """Keras's reduce_to_samplewise_values: the per-sample values, weighted, and the weights.

    ``values`` and ``sample_weight`` are cast to ``dtype``; ``reduce`` (``"mean"`` or
    ``"sum"``) reduces the values' axes beyond the weights' before weighting, then every axis
    but the first of both (Mean averages a rank-2 value's row, Sum adds it up)."""
    xp = backend.array_module(values)
    values = values.astype(dtype, copy=False)

    def reduced(x, axes):
        axes = tuple(axes)
        return (x.mean(axis=axes) if reduce == "mean" else x.sum(axis=axes)) if axes else x

    if sample_weight is not None:
        values, sample_weight = same_rank(values, sample_weight.astype(dtype, copy=False))
        weight_ndim = sample_weight.ndim
        values = reduced(values, range(weight_ndim, values.ndim))
        sample_weight = xp.broadcast_to(sample_weight, values.shape)
        values = values * sample_weight
        sample_weight = reduced(sample_weight, range(1, weight_ndim))
    return reduced(values, range(1, values.ndim)), sample_weight


def _weighted_sum_array(values, sample_weight, *, dtype):
    values, _ = reduce_to_samplewise(values, sample_weight, "sum", dtype)
    return values.sum()


def _weighted_mean_parts_array(values, sample_weight, *, dtype):
    """``[sum of the weighted per-sample values, their count or summed weights]``."""
    values, sample_weight = reduce_to_samplewise(values, sample_weight, "mean", dtype)
    xp = backend.array_module(values)
    count = sample_weight.sum() if sample_weight is not None else (
        values.shape[0] if values.ndim else 1)
    return xp.stack([values.sum(), xp.asarray(count, dtype=dtype)])


_weighted_sum = metric_op("weighted_sum", _weighted_sum_array)
_weighted_mean_parts = metric_op("weighted_mean", _weighted_mean_parts_array)


@METRICS.register
class Sum(Metric):
    """The (weighted) sum of the values given; rank-2 values are summed whole."""

    def __init__(self, name="sum", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable((), name="total")

    def update_state(self, values, sample_weight=None):
        assign_add_all([(self.total, _weighted_sum(values, sample_weight, dtype=self._dtype))])

    def result(self):
        return self.total.read_value()


@METRICS.register
class Mean(Metric):
    """The (weighted) mean of the values given: ``total / count``, where ``count`` adds the
    samples (the rows of rank-2 values, each row averaged first) or their weights."""

    def __init__(self, name="mean", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable((), name="total")
        self.count = self.add_variable((), name="count")

    def update_state(self, values, sample_weight=None):
        total_and_count = _weighted_mean_parts(values, sample_weight, dtype=self._dtype)
        assign_add_all([(self.total, total_and_count[0]), (self.count, total_and_count[1])])

    def result(self):
        return ops_divide_no_nan(self.total, self.count)


@METRICS.register
class MeanMetricWrapper(Mean):
    """The mean of a per-sample function ``fn(y_true, y_pred, **kwargs)`` over every sample
    seen: the shape of Keras's accuracy and error metrics."""

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name=name or getattr(fn, "__name__", "mean_metric_wrapper"),
                         dtype=dtype)
        self._fn = fn
        self._fn_kwargs = kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        super().update_state(self._fn(y_true, y_pred, **self._fn_kwargs), sample_weight)

    def get_config(self):
        return {**super().get_config(), "fn": getattr(self._fn, "__name__", repr(self._fn)),
                **self._fn_kwargs}

    @classmethod
    def from_config(cls, config):
        """A config's ``fn`` names a loss function (``fw.losses``) or a metric function
        (``fw.metrics.binary_accuracy``)."""
        config = dict(config)
        if isinstance(config.get("fn"), str):
            config["fn"] = _function_named(config["fn"])
        return cls(**config)


def _function_named(name):
    from .. import losses, metrics  # (the packages that hold the functions import this one)
    found = getattr(metrics, name, None)
    if callable(found) and not isinstance(found, type):
        return found
    found = losses.LOSSES.lookup(name)
    if isinstance(found, type):
        raise ValueError(f"MeanMetricWrapper needs a function, but {name!r} names the class "
                         f"{found.__name__}")
    return found
