"""Metrics from confusion counts at thresholds: ``Precision``, ``Recall``, ``AUC``.

Each keeps (weighted) counts of true/false positives/negatives per threshold, where a
prediction is positive when strictly greater than the threshold (Keras's rule). ``AUC`` uses
Keras's 200 thresholds by default, evenly spaced with the ends moved out by 1e-7 so that
predictions of exactly 0 and 1 fall inside; with evenly spaced thresholds every prediction is
put in its bucket once and the counts are cumulative sums, as Keras computes them, rather than
one comparison per threshold. The counting and the curves' arithmetic run on arrays inside
primitives without gradient (``metric_op``); the counts add up through ``assign_add``.
"""
import numpy as np

from ..engine import backend
from ..losses import EPSILON
from ..engine.tensor import assign_add_all
from .base import METRICS, Metric, divide_no_nan, metric_op, same_rank

NEG_INF = -1e10  # Keras's stand-in for -inf: the threshold of top_k, and the score it masks


def _prepare(metric, y_true, y_pred, sample_weight, top_k=None, class_id=None, dtype=None):
    """Keras's preamble of update_confusion_matrix_variables: float arrays of one rank, the
    weights broadcast to the predictions, the top_k mask and the class_id column applied."""
    xp = backend.array_module(y_pred)
    y_pred, y_true = same_rank(y_pred.astype(dtype), y_true.astype(dtype))
    if sample_weight is not None:
        sample_weight = sample_weight.astype(dtype)[..., None]
        _, sample_weight = same_rank(y_true, sample_weight, expand_rank_1=False)
    if top_k is not None:
        y_pred = _keep_top_k(y_pred, top_k, xp)
    if class_id is not None:
        if y_pred.ndim == 1:
            raise ValueError(f"{metric}: with class_id, y_pred must have shape "
                             f"(num_samples, num_classes), got {y_pred.shape}")
        y_true, y_pred = y_true[..., class_id, None], y_pred[..., class_id, None]
    if sample_weight is not None:
        sample_weight = xp.broadcast_to(sample_weight, y_pred.shape)
    return y_true, y_pred, sample_weight, xp


def _keep_top_k(y_pred, k, xp):
    """Keras's _filter_top_k: every score but each row's k highest (ties: the first ones, as
    top_k picks them) becomes NEG_INF."""
    rows = y_pred.reshape(-1, y_pred.shape[-1])
    order = xp.argsort(-rows, axis=-1, kind="stable")[:, :k]
    kept = xp.zeros(rows.shape, bool)
    kept[xp.arange(rows.shape[0])[:, None], order] = True
    return xp.where(kept, rows, rows.dtype.type(NEG_INF)).reshape(y_pred.shape)


def _counts_by_comparison(y_true, y_pred, sample_weight, thresholds, xp):
    """(tp, fp, tn, fn) per threshold, comparing every prediction with every threshold."""
    labels = y_true.reshape(1, -1).astype(bool)
    positive = y_pred.reshape(1, -1) > xp.asarray(thresholds, y_pred.dtype)[:, None]
    weights = (xp.ones_like(y_pred) if sample_weight is None else sample_weight).reshape(1, -1)

    def count(label, prediction):
        return xp.where(label & prediction, weights, 0).sum(axis=1).astype(y_pred.dtype)

    return (count(labels, positive), count(~labels, positive), count(~labels, ~positive),
            count(labels, ~positive))


def _counts_by_bucket(y_true, y_pred, sample_weight, num_thresholds, with_epsilon, xp):
    """The same counts for evenly spaced thresholds: each prediction's bucket (Keras's
    ``ceil(p * (n - 1)) - 1``), weighted label sums per bucket, reversed cumulative sums."""
    dtype = y_pred.dtype
    weights = dtype.type(1) if sample_weight is None else sample_weight.reshape(-1)
    y_pred = xp.clip(y_pred.reshape(-1), 0, 1)
    y_true = (y_true.reshape(-1) != 0).astype(dtype)
    true_labels, false_labels = y_true * weights, (1 - y_true) * weights
    buckets = xp.ceil(y_pred * dtype.type(num_thresholds - 1)) - 1
    if with_epsilon:
        buckets = xp.maximum(buckets, 0)
    buckets = buckets.astype(np.intp)
    inside = buckets >= 0  # a prediction of 0 is above no threshold of [0, ..., 1]

    def cumulative(values):
        per_bucket = xp.bincount(buckets[inside], xp.broadcast_to(values, y_pred.shape)[inside],
                                 minlength=num_thresholds).astype(dtype)
        return xp.cumsum(per_bucket[::-1])[::-1]

    tp, fp = cumulative(true_labels), cumulative(false_labels)
    return tp, fp, false_labels.sum() - fp, true_labels.sum() - tp


def _confusion_counts_array(y_true, y_pred, sample_weight, *, metric, thresholds, even,
                            with_epsilon, top_k, class_id, from_logits, dtype):
    """``(tp, fp, tn, fn)`` at each threshold, stacked: the counts one batch adds."""
    y_true, y_pred, weights, xp = _prepare(metric, y_true, y_pred, sample_weight, top_k,
                                           class_id, dtype)
    if from_logits:
        y_pred = (1 / (1 + xp.exp(-y_pred))).astype(y_pred.dtype)
    if even:
        counts = _counts_by_bucket(y_true, y_pred, weights, len(thresholds), with_epsilon, xp)
    else:
        counts = _counts_by_comparison(y_true, y_pred, weights, thresholds, xp)
    return xp.stack([xp.broadcast_to(c, (len(thresholds),)) for c in counts])


_confusion_counts = metric_op("confusion_counts", _confusion_counts_array)
_KINDS = ("true_positives", "false_positives", "true_negatives", "false_negatives")


def _ratio_array(tp, other, *, single):
    value = divide_no_nan(tp, tp + other)
    return value[0] if single else value


_ratio = metric_op("confusion_ratio", _ratio_array)


def _evenly_spaced(thresholds):
    """Keras's is_evenly_distributed_thresholds: 0, 1/(n-1), ..., 1 for n >= 3."""
    n = len(thresholds)
    return n >= 3 and np.allclose(thresholds, np.arange(n, dtype=np.float32) / (n - 1),
                                  atol=EPSILON)


def _threshold_list(thresholds, default):
    values = [default] if thresholds is None else (
        list(thresholds) if isinstance(thresholds, (list, tuple)) else [thresholds])
    bad = [t for t in values if not 0 <= t <= 1]
    if thresholds is not None and bad:
        raise ValueError(f"thresholds must be in [0, 1], got {bad}")
    return values


class _ThresholdMetric(Metric):
    """Precision and Recall: counts of two kinds at ``thresholds`` (default 0.5; with
    ``top_k``, every prediction kept by the top-k mask is positive)."""

    _kinds = ()

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.init_thresholds, self.top_k, self.class_id = thresholds, top_k, class_id
        self.thresholds = _threshold_list(thresholds, 0.5 if top_k is None else NEG_INF)
        self._even = _evenly_spaced(self.thresholds)
        for kind in self._kinds:
            setattr(self, kind, self.add_variable((len(self.thresholds),), name=kind))

    def update_state(self, y_true, y_pred, sample_weight=None):
        counts = _confusion_counts(
            y_true, y_pred, sample_weight, metric=type(self).__name__,
            thresholds=tuple(self.thresholds), even=self._even, with_epsilon=False,
            top_k=self.top_k, class_id=self.class_id, from_logits=False, dtype=self._dtype)
        assign_add_all([(getattr(self, kind), counts[_KINDS.index(kind)])
                        for kind in self._kinds])

    def result(self):
        tp, other = (getattr(self, kind) for kind in self._kinds)
        return _ratio(tp, other, single=len(self.thresholds) == 1)

    def get_config(self):
        return {**super().get_config(), "thresholds": self.init_thresholds,
                "top_k": self.top_k, "class_id": self.class_id}


@METRICS.register
class Precision(_ThresholdMetric):
    """tp / (tp + fp): of the predictions above the threshold, the share that are positive."""
    _kinds = ("true_positives", "false_positives")


@METRICS.register
class Recall(_ThresholdMetric):
    """tp / (tp + fn): of the positive labels, the share predicted above the threshold."""
    _kinds = ("true_positives", "false_negatives")


_CURVES = {"roc": "ROC", "pr": "PR"}
_SUMMATIONS = ("interpolation", "majoring", "minoring")


@METRICS.register
class AUC(Metric):
    """The area under the ROC (``curve="ROC"``) or precision-recall (``"PR"``) curve, a
    Riemann sum over ``num_thresholds`` thresholds; ``summation_method`` "interpolation"
    (trapezoids; for PR, Davis & Goadrich's interpolation, as Keras), "majoring" or
    "minoring". ``from_logits`` applies a sigmoid to the predictions first.

    Keras's ``multi_label`` and ``label_weights`` are not supported (all labels are pooled,
    Keras's default).
    """

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation",
                 name=None, dtype=None, thresholds=None, multi_label=False, num_labels=None,
                 label_weights=None, from_logits=False):
        if multi_label or num_labels is not None or label_weights is not None:
            raise ValueError("AUC: multi_label, num_labels and label_weights are not supported; "
                             "use one AUC per label")
        if str(curve).lower() not in _CURVES:
            raise ValueError(f"AUC: curve must be 'ROC' or 'PR', got {curve!r}")
        if str(summation_method).lower() not in _SUMMATIONS:
            raise ValueError(f"AUC: summation_method must be one of {_SUMMATIONS}, got "
                             f"{summation_method!r}")
        self._given = thresholds is not None
        if self._given:
            inner = sorted(_threshold_list(thresholds, None))
            self._even = _evenly_spaced([0.0] + inner + [1.0])
        else:
            if num_thresholds <= 1:
                raise ValueError(f"AUC: num_thresholds must be an integer > 1, got "
                                 f"{num_thresholds}")
            inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
            self._even = True
        super().__init__(name=name, dtype=dtype)
        self.num_thresholds = len(inner) + 2
        self.curve, self.summation_method = _CURVES[str(curve).lower()], summation_method.lower()
        self.multi_label, self.num_labels, self.label_weights = False, None, None
        self.from_logits = from_logits
        self._thresholds = [0.0 - EPSILON] + inner + [1.0 + EPSILON]
        for kind in ("true_positives", "false_positives", "true_negatives", "false_negatives"):
            setattr(self, kind, self.add_variable((self.num_thresholds,), name=kind))

    @property
    def thresholds(self):
        return list(self._thresholds)

    def update_state(self, y_true, y_pred, sample_weight=None):
        counts = _confusion_counts(
            y_true, y_pred, sample_weight, metric="AUC", thresholds=tuple(self._thresholds),
            even=self._even, with_epsilon=True, top_k=None, class_id=None,
            from_logits=self.from_logits, dtype=self._dtype)
        assign_add_all([(variable, counts[i]) for i, variable in enumerate(self.variables)])

    def result(self):
        return _area(*self.variables, curve=self.curve, summation=self.summation_method)

    @staticmethod
    def _area_array(tp, fp, tn, fn, *, curve, summation):
        """The area under the curve from the confusion counts (a Riemann sum)."""
        if curve == "PR" and summation == "interpolation":
            return AUC._interpolated_pr(tp, fp, fn)
        recall = divide_no_nan(tp, tp + fn)
        if curve == "ROC":
            x, y = divide_no_nan(fp, fp + tn), recall
        else:
            x, y = recall, divide_no_nan(tp, tp + fp)
        xp = backend.array_module(tp)
        heights = {"interpolation": (y[:-1] + y[1:]) / 2, "minoring": xp.minimum(y[:-1], y[1:]),
                   "majoring": xp.maximum(y[:-1], y[1:])}[summation]
        return ((x[:-1] - x[1:]) * heights).sum().astype(tp.dtype)

    @staticmethod
    def _interpolated_pr(tp, fp, fn):
        """Keras's interpolate_pr_auc: precision interpolated between thresholds as the
        positives' count changes linearly (Davis & Goadrich, 2006)."""
        xp = backend.array_module(tp)
        dtp = tp[:-1] - tp[1:]
        p = tp + fp
        dp = p[:-1] - p[1:]
        slope = divide_no_nan(dtp, xp.maximum(dp, 0))
        intercept = tp[1:] - slope * p[1:]
        both = (p[:-1] > 0) & (p[1:] > 0)
        ratio = xp.where(both, divide_no_nan(p[:-1], xp.maximum(p[1:], 0)), 1)
        increments = divide_no_nan(slope * (dtp + intercept * xp.log(ratio)),
                                   xp.maximum(tp[1:] + fn[1:], 0))
        return increments.sum().astype(tp.dtype)

    def get_config(self):
        config = {**super().get_config(), "num_thresholds": self.num_thresholds,
                  "curve": self.curve, "summation_method": self.summation_method,
                  "multi_label": False, "num_labels": None, "label_weights": None,
                  "from_logits": self.from_logits}
        if self._given:
            config["thresholds"] = self._thresholds[1:-1]
        return config


_area = metric_op("auc", AUC._area_array)
