"""Keras's loss classes: a loss function, its settings, and Keras 3's reduction of the batch.

``loss = fw.losses.CategoricalCrossentropy(from_logits=True)`` then ``loss(y_true, y_pred,
sample_weight=None)``. The per-example losses are multiplied by ``sample_weight`` and reduced:

- ``"sum_over_batch_size"`` (the default) and ``"mean"``: the sum divided by the NUMBER of
  per-example losses, not by the sum of the weights (a weight of 0 still counts in the
  divisor, as in Keras);
- ``"mean_with_sample_weight"``: the sum divided by the sum of the weights;
- ``"sum"``: the sum; ``"none"`` or None: the weighted per-example losses.
"""
from ..ops import cast, reduce_sum, size
from ..ops.elementwise import divide_no_nan
from ..registry import snake_case
from ..engine.tensor import convert_to_tensor
from . import functions as F
from .functions import LOSSES, same_rank

REDUCTIONS = ("sum_over_batch_size", "sum", "mean", "mean_with_sample_weight", "none", None)


def reduce_weighted(losses, sample_weight=None, reduction="sum_over_batch_size"):
    """Keras's reduce_weighted_values: weight the per-example ``losses``, then reduce them."""
    weights = None
    if sample_weight is not None:
        weights, losses = same_rank(cast(sample_weight, losses.dtype), losses)
        losses = losses * weights
    if reduction in ("none", None) or losses.ndim == 0 or losses.shape == (0,):
        return losses
    total = reduce_sum(losses)
    if reduction == "sum":
        return total
    if reduction == "mean_with_sample_weight" and weights is not None:
        divisor = reduce_sum(weights)
        return total / divisor if float(divisor) else total * 0.0
    # (the count as an op: under fw.function a value of each call, so one trace serves
    # every batch size of an input_signature's None dimension)
    return divide_no_nan(total, cast(size(losses), total.dtype))


def _register(cls):
    """Register a loss class under its class name: the snake_case name is its function's."""
    return LOSSES.register(cls, name=cls.__name__)


@_register
class Loss:
    """The base class: a subclass defines ``call(y_true, y_pred)`` (per-example losses).

    ``dtype`` (default float32, Keras's floatx) is the dtype predictions are computed in.
    """

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None):
        if reduction not in REDUCTIONS:
            raise ValueError(f"{type(self).__name__}: reduction must be one of "
                             f"{REDUCTIONS}, got {reduction!r}")
        self.name = name or snake_case(type(self).__name__)
        self.reduction = reduction
        self.dtype = "float32" if dtype is None else convert_to_tensor(0.0, dtype).dtype.name

    def call(self, y_true, y_pred):
        raise NotImplementedError(f"{type(self).__name__} must define call(y_true, y_pred)")

    def __call__(self, y_true, y_pred, sample_weight=None):
        y_pred = convert_to_tensor(y_pred)
        if y_pred.dtype != self.dtype and y_pred.dtype.kind == "f":
            y_pred = cast(y_pred, self.dtype)
        return reduce_weighted(self.call(y_true, y_pred), sample_weight, self.reduction)

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name} reduction={self.reduction}>"


@_register
class LossFunctionWrapper(Loss):
    """A loss class around a per-example function ``fn(y_true, y_pred, **kwargs)``."""

    def __init__(self, fn, reduction="sum_over_batch_size", name=None, dtype=None, **kwargs):
        super().__init__(name=name, reduction=reduction, dtype=dtype)
        self.fn = fn
        self._fn_kwargs = kwargs

    def call(self, y_true, y_pred):
        y_true, y_pred = same_rank(convert_to_tensor(y_true), y_pred)
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self):
        return {**super().get_config(), **self._fn_kwargs}


def _plain(class_name, fn, default_name):
    """A LossFunctionWrapper subclass for ``fn``, with Keras's constructor ``(reduction, name,
    dtype)``: for the losses that take no setting of their own."""
    def __init__(self, reduction="sum_over_batch_size", name=default_name, dtype=None):
        LossFunctionWrapper.__init__(self, fn, reduction=reduction, name=name, dtype=dtype)

    return _register(type(class_name, (LossFunctionWrapper,), {
        "__init__": __init__, "__module__": __name__, "labels": fn.labels,
        "__doc__": f"The batch's reduction of ``{fn.__name__}`` (see there)."}))


MeanSquaredError = _plain("MeanSquaredError", F.mean_squared_error, "mean_squared_error")
MeanAbsoluteError = _plain("MeanAbsoluteError", F.mean_absolute_error, "mean_absolute_error")
MeanAbsolutePercentageError = _plain("MeanAbsolutePercentageError",
                                     F.mean_absolute_percentage_error,
                                     "mean_absolute_percentage_error")
MeanSquaredLogarithmicError = _plain("MeanSquaredLogarithmicError",
                                     F.mean_squared_logarithmic_error,
                                     "mean_squared_logarithmic_error")
LogCosh = _plain("LogCosh", F.log_cosh, "log_cosh")
KLDivergence = _plain("KLDivergence", F.kl_divergence, "kl_divergence")
Poisson = _plain("Poisson", F.poisson, "poisson")
Hinge = _plain("Hinge", F.hinge, "hinge")
SquaredHinge = _plain("SquaredHinge", F.squared_hinge, "squared_hinge")
CategoricalHinge = _plain("CategoricalHinge", F.categorical_hinge, "categorical_hinge")


@_register
class Huber(LossFunctionWrapper):
    """The batch's reduction of ``huber`` (quadratic up to ``delta``, linear beyond)."""
    labels = F.huber.labels

    def __init__(self, delta=1.0, reduction="sum_over_batch_size", name="huber_loss",
                 dtype=None):
        super().__init__(F.huber, reduction=reduction, name=name, dtype=dtype, delta=delta)
        self.delta = delta


@_register
class CosineSimilarity(LossFunctionWrapper):
    """The batch's reduction of ``cosine_similarity`` (negative: -1 for aligned vectors)."""
    labels = F.cosine_similarity.labels

    def __init__(self, axis=-1, reduction="sum_over_batch_size", name="cosine_similarity",
                 dtype=None):
        super().__init__(F.cosine_similarity, reduction=reduction, name=name, dtype=dtype,
                         axis=axis)
        self.axis = axis


class _Crossentropy(LossFunctionWrapper):
    """Binary and categorical cross-entropy: ``from_logits``, ``label_smoothing``, ``axis``;
    the default name is the class's snake_case name (``"binary_crossentropy"``)."""

    _fn = None

    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction="sum_over_batch_size", name=None, dtype=None):
        super().__init__(type(self)._fn, reduction=reduction, name=name, dtype=dtype,
                         from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)
        self.from_logits, self.label_smoothing, self.axis = from_logits, label_smoothing, axis


@_register
class BinaryCrossentropy(_Crossentropy):
    """The batch's reduction of ``binary_crossentropy`` (probabilities, or logits)."""
    labels = F.binary_crossentropy.labels

    _fn = staticmethod(F.binary_crossentropy)


@_register
class CategoricalCrossentropy(_Crossentropy):
    """The batch's reduction of ``categorical_crossentropy`` (one-hot or soft labels)."""
    labels = F.categorical_crossentropy.labels

    _fn = staticmethod(F.categorical_crossentropy)


@_register
class SparseCategoricalCrossentropy(LossFunctionWrapper):
    """The mean over the batch of ``sparse_categorical_crossentropy`` for integer labels.

    ``ignore_class`` (Keras's masking of one label value) is not supported: only its default,
    None, is accepted, so a Keras config round-trips.
    """
    labels = F.sparse_categorical_crossentropy.labels

    def __init__(self, from_logits=False, ignore_class=None, reduction="sum_over_batch_size",
                 axis=-1, name="sparse_categorical_crossentropy", dtype=None):
        if ignore_class is not None:
            raise ValueError(f"SparseCategoricalCrossentropy: ignore_class={ignore_class!r} is "
                             f"not supported (only None); drop those examples, or give them "
                             f"sample_weight 0")
        super().__init__(F.sparse_categorical_crossentropy, reduction=reduction, name=name,
                         dtype=dtype, from_logits=from_logits, axis=axis)
        self.from_logits, self.ignore_class, self.axis = from_logits, ignore_class, axis

    def call(self, y_true, y_pred):  # integer labels: no rank fix-up, and no float round trip
        return F.sparse_categorical_crossentropy(y_true, y_pred, self.from_logits, self.axis)

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction, "from_logits": self.from_logits,
                "ignore_class": None}
