"""Keras 3's preprocessing layers for numbers and categories: ``Normalization``,
``CategoryEncoding`` and ``Discretization`` (the lookups are in ``lookup``), with Keras's
arguments, defaults, config keys and output dtypes.

``call`` is made of framework ops (traced by ``fw.function``, recorded by the tape where
differentiable: ``Normalization``'s gradient reaches its input). ``adapt`` runs outside the
model, on the host data given to it: what it learns becomes the layer's state (Normalization's
weights ``mean``/``variance``/``count``, as Keras saves them; the bin boundaries in
``get_config``).
"""
import itertools
import math

import numpy as np

import framework as fw
from framework.engine import backend

from .base import LAYERS, Layer
from .node import is_symbolic
from .scope import calls

EPSILON = 1e-7  # keras.config.epsilon(): the floor of Normalization's standard deviation
ENCODINGS = ("one_hot", "multi_hot", "count")


def _batches(data, layer, steps=None):
    """``adapt``'s data as host arrays: one array (an array or a tensor), or the batches of an
    iterable (a ``fw.data.Dataset``, a list, a generator; the first of a pair ``(x, y)``)."""
    if isinstance(data, (np.ndarray, fw.Tensor)) or np.isscalar(data):
        return [_host(data)]
    if not hasattr(data, "__iter__"):
        raise TypeError(f"{layer}.adapt: data must be an array, a tensor or an iterable of "
                        f"batches, got {type(data).__name__}")
    batches = [_host(b[0] if isinstance(b, tuple) else b) for b in itertools.islice(data, steps)]
    if not batches:
        raise ValueError(f"{layer}.adapt: data has no batches")
    return batches


def _host(batch):
    return np.asarray(batch.numpy() if isinstance(batch, fw.Tensor) else batch)


def _encode(indices, depth, mode, dtype, count_weights=None):
    """Keras's ``encode_categorical_inputs``: ``one_hot`` adds an axis of ``depth`` (replacing a
    last axis of 1), ``multi_hot`` and ``count`` reduce the last axis (a 1-D input is one
    sample) to which of the ``depth`` tokens it holds, or how many times (each weighted by
    ``count_weights``)."""
    if mode == "one_hot":
        if indices.shape.rank > 1 and indices.shape[-1] == 1:
            indices = fw.squeeze(indices, -1)
        return fw.one_hot(indices, depth, dtype=dtype)
    hot = fw.one_hot(indices, depth, dtype=dtype)
    if count_weights is not None:
        hot = hot * fw.expand_dims(fw.cast(count_weights, dtype), -1)
    axis = -2 if indices.shape.rank > 1 else 0
    return fw.reduce_max(hot, axis=axis) if mode == "multi_hot" else \
        fw.reduce_sum(hot, axis=axis)


def _encoded_shape(input_shape, depth, mode):
    input_shape = tuple(input_shape)
    if mode == "int":
        return input_shape
    if mode == "one_hot":
        if len(input_shape) > 1 and input_shape[-1] == 1:
            return input_shape[:-1] + (depth,)
        return input_shape + (depth,)
    return input_shape[:-1] + (depth,) if len(input_shape) > 1 else (depth,)


def _choice(value, allowed, what, layer):
    if value not in allowed:
        raise ValueError(f"{layer}: {what} must be one of {', '.join(map(repr, allowed))}, "
                         f"got {value!r}")
    return value


def _positive_int(value, what, layer, minimum=1):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{layer}: {what} must be an integer >= {minimum}, got {value!r}")
    return int(value)


# --- Normalization -------------------------------------------------------------------------
@LAYERS.register
class Normalization(Layer):
    """``(inputs - mean) / sqrt(variance)`` per position of ``axis`` (the axes kept; the others
    are reduced over by ``adapt``), the standard deviation floored at 1e-7; with
    ``invert=True``, ``mean + inputs * sqrt(variance)``.

    ``mean`` and ``variance`` are given, or learned by ``adapt(data)`` (Keras's population
    variance, batches merged by Keras's running formula) into the non-trainable weights
    ``mean``, ``variance`` and ``count`` (Keras's three, kept at 0 as Keras does), which
    ``save``/``load_weights`` carry. Called on data before either, the layer raises; inside
    a model it holds Keras's initial mean 0 and variance 1 until adapted or loaded (what
    Keras does), so a model can be defined, built and loaded before ``adapt``.
    """

    supports_masking = True

    def __init__(self, axis=-1, mean=None, variance=None, invert=False, **kwargs):
        super().__init__(**kwargs)
        if axis is None:
            axis = ()
        elif isinstance(axis, (int, np.integer)) and not isinstance(axis, bool):
            axis = (int(axis),)
        elif isinstance(axis, (list, tuple)) and all(
                isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in axis):
            axis = tuple(int(a) for a in axis)
        else:
            raise ValueError(f"Normalization: axis must be an integer, a list of integers or "
                             f"None, got {axis!r}")
        if (mean is None) != (variance is None):
            raise ValueError(f"Normalization: mean and variance must be given together, got "
                             f"mean={mean!r} and variance={variance!r}")
        if mean is not None:
            try:
                shapes = np.shape(np.asarray(mean, float)), np.shape(np.asarray(variance, float))
            except (TypeError, ValueError):
                raise ValueError(f"Normalization: mean and variance must be numbers or lists of "
                                 f"numbers, got mean={mean!r} and variance={variance!r}") from None
            if shapes[0] != shapes[1] or len(shapes[0]) > len(axis):
                raise ValueError(f"Normalization: mean and variance must have one shape of rank "
                                 f"at most {len(axis)} (axis={axis}), got {shapes[0]} and "
                                 f"{shapes[1]}")
        self.axis, self.invert = axis, bool(invert)
        self.input_mean, self.input_variance = mean, variance

    def build(self, input_shape):
        if hasattr(self, "_broadcast_shape"):
            return
        ndim = len(input_shape)
        if any(not -ndim <= a < ndim for a in self.axis):
            raise ValueError(f"Normalization '{self.name}': axis {self.axis} is out of bounds "
                             f"for inputs of rank {ndim}")
        keep = sorted(a % ndim for a in self.axis)
        if any(input_shape[d] is None for d in keep):
            raise ValueError(f"Normalization '{self.name}': the kept axes {self.axis} must have "
                             f"known sizes, got input shape {tuple(input_shape)}")
        self._keep = keep
        self._reduce_axis = tuple(d for d in range(ndim) if d not in keep)
        self._broadcast_shape = [input_shape[d] if d in keep else 1 for d in range(ndim)]
        self._state_shape = tuple(input_shape[d] for d in keep)
        if self.input_mean is None:
            self.adapt_mean = self.add_weight("mean", self._state_shape, "zeros", trainable=False)
            self.adapt_variance = self.add_weight("variance", self._state_shape, "ones",
                                                  trainable=False)
            self.count = self.add_weight("count", (), "zeros", trainable=False, dtype="int64")
        else:  # (the given values, as Keras: a trailing part of the kept axes' shape)
            shape = [1] * ndim
            given = np.shape(self.input_mean)
            for i in range(1, len(given) + 1):
                shape[keep[-i]] = given[-i]
            self._given = [np.broadcast_to(np.reshape(np.asarray(v, self.dtype), shape),
                                           self._broadcast_shape)
                           for v in (self.input_mean, self.input_variance)]

    def __call__(self, inputs, *args, **kwargs):
        if self.input_mean is None and not hasattr(self, "adapt_mean") and \
                not calls.frames and not is_symbolic(inputs):
            raise ValueError(f"Normalization '{self.name}' was called before adapt(): give it "
                             f"mean and variance, or call adapt(data) first")
        return super().__call__(inputs, *args, **kwargs)

    def call(self, inputs):
        inputs = fw.cast(inputs, self.dtype)
        if self.input_mean is None:
            mean = fw.reshape(fw.cast(self.adapt_mean, self.dtype), self._broadcast_shape)
            variance = fw.reshape(fw.cast(self.adapt_variance, self.dtype),
                                  self._broadcast_shape)
        else:
            mean, variance = (fw.constant(v) for v in self._given)
        scale = fw.maximum(fw.sqrt(variance), fw.constant(EPSILON, self.dtype))
        return mean + inputs * scale if self.invert else (inputs - mean) / scale

    def adapt(self, data, batch_size=None, steps=None):
        """Learn ``mean`` and ``variance`` from ``data``: an array or tensor (``batch_size``
        splits it, with the same result), or an iterable of batches read up to ``steps``
        (each a batch: Keras's assumption)."""
        if self.input_mean is not None:
            raise ValueError(f"Normalization '{self.name}': adapt() needs a layer made without "
                             f"mean and variance")
        batches = _batches(data, f"Normalization '{self.name}'", steps)
        if batch_size is not None and len(batches) == 1:
            whole = batches[0]
            batches = [whole[i:i + batch_size] for i in range(0, len(whole), batch_size)]
        shape = batches[0].shape
        kept = [a % len(shape) for a in self.axis if -len(shape) <= a < len(shape)]
        for batch in batches:  # (all checked before anything changes)
            if batch.ndim != len(shape) or any(batch.shape[d] != shape[d] for d in kept):
                raise ValueError(f"Normalization '{self.name}'.adapt: a batch of shape "
                                 f"{batch.shape} does not fit the first, {shape}, on the "
                                 f"axes {self.axis}")
        if not hasattr(self, "_broadcast_shape"):
            self.build(shape)
        elif len(shape) != len(self._broadcast_shape) or any(
                shape[d] != self._broadcast_shape[d] for d in self._keep):
            raise ValueError(f"Normalization '{self.name}'.adapt: batches of shape {shape} do "
                             f"not fit the layer's axes {self.axis} (built for "
                             f"{tuple(self._broadcast_shape)})")
        total_mean = total_var = np.zeros(self._state_shape)
        total_count = 0
        for batch in batches:
            batch = batch.astype(self.dtype)
            count = math.prod(batch.shape[d] for d in self._reduce_axis)
            mean = batch.mean(axis=self._reduce_axis)
            var = batch.var(axis=self._reduce_axis)
            total_count += count
            weight = count / total_count
            new_mean = total_mean * (1 - weight) + mean * weight
            total_var = (total_var + (total_mean - new_mean) ** 2) * (1 - weight) + \
                (var + (mean - new_mean) ** 2) * weight
            total_mean = new_mean
        for variable, value in ((self.adapt_mean, total_mean), (self.adapt_variance, total_var)):
            variable.assign(backend.to_device(np.asarray(value, self._variable_dtype),
                                              variable.device))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "invert": self.invert,
                "mean": np.array(self.input_mean).tolist(),
                "variance": np.array(self.input_variance).tolist()}


# --- categories ----------------------------------------------------------------------------
@LAYERS.register
class CategoryEncoding(Layer):
    """Integer tokens in ``[0, num_tokens)`` as vectors of ``num_tokens``: ``one_hot`` one per
    token, ``multi_hot`` (the default) which tokens each sample holds along its last axis,
    ``count`` how many times (each weighted by ``count_weights`` in ``call``). Float32 out
    (the layer's dtype), as Keras; ``sparse`` outputs are not supported."""

    def __init__(self, num_tokens=None, output_mode="multi_hot", sparse=False, **kwargs):
        super().__init__(**kwargs)
        self.num_tokens = _positive_int(num_tokens, "num_tokens", "CategoryEncoding")
        self.output_mode = _choice(output_mode, ENCODINGS, "output_mode", "CategoryEncoding")
        if sparse:
            raise ValueError("CategoryEncoding: sparse=True is not supported (dense outputs "
                             "only)")
        self.sparse = False

    def call(self, inputs, count_weights=None):
        if count_weights is not None and self.output_mode != "count":
            raise ValueError(f"CategoryEncoding '{self.name}': count_weights needs "
                             f"output_mode='count', not {self.output_mode!r}")
        return _encode(fw.cast(inputs, fw.int64), self.num_tokens, self.output_mode,
                       self.dtype, count_weights)

    def compute_output_shape(self, input_shape):
        return _encoded_shape(input_shape, self.num_tokens, self.output_mode)

    def get_config(self):
        return {**super().get_config(), "num_tokens": self.num_tokens,
                "output_mode": self.output_mode}


def _summary(values, epsilon):
    """Keras's quantile summary of ``values``: every ``1/epsilon``-th of them sorted (all when
    fewer), each weighing the count it stands for (row 0 the values, row 1 the weights)."""
    values = np.sort(np.reshape(values, [-1]))
    step = max(values.size * epsilon, 1)
    kept = values[int(step - 1)::int(step)]
    return np.stack([kept, np.full(kept.shape, step, kept.dtype)])


def _compressed(summary, epsilon):
    """Keras's compression: the values at the cumulative-weight fractions ``epsilon``,
    ``2 epsilon``, ... 1, interpolated, and their weights (float32)."""
    if summary.shape[1] * epsilon < 1:
        return summary
    fractions = epsilon + np.arange(0.0, 1.0, epsilon)
    cumulative = summary[1].cumsum()
    bins = np.interp(fractions, cumulative / cumulative[-1], summary[0])
    cumulative = np.interp(fractions, cumulative / cumulative[-1], cumulative)
    return np.stack((bins, np.diff(cumulative, prepend=0.0))).astype("float32")


@LAYERS.register
class Discretization(Layer):
    """Floats to the index of their bin: ``i`` where ``bin_boundaries[i-1] <= x <
    bin_boundaries[i]`` (int32 out, as Keras), or encoded as ``CategoryEncoding`` does
    (``one_hot``, ``multi_hot``, ``count``, float32).

    ``adapt(data)`` learns ``num_bins - 1`` boundaries with Keras's own approximate quantiles
    (a summary of every ``1/epsilon``-th sorted value per batch, merged and interpolated at
    the ``1/num_bins`` fractions of the cumulative count): the same numbers as Keras. The
    boundaries learned go into ``get_config`` (as Keras's), so a saved model keeps them."""

    def __init__(self, bin_boundaries=None, num_bins=None, epsilon=0.01, output_mode="int",
                 sparse=False, **kwargs):
        super().__init__(**kwargs)
        if (bin_boundaries is None) == (num_bins is None):
            raise ValueError(f"Discretization: give exactly one of bin_boundaries and num_bins, "
                             f"got bin_boundaries={bin_boundaries!r} and num_bins={num_bins!r}")
        if bin_boundaries is not None:
            bounds = np.asarray(bin_boundaries, dtype=float) if all(
                isinstance(b, (int, float)) and not isinstance(b, bool)
                for b in bin_boundaries) else None
            if bounds is None or bounds.ndim != 1 or (np.diff(bounds) < 0).any():
                raise ValueError(f"Discretization: bin_boundaries must be a sorted list of "
                                 f"numbers, got {bin_boundaries!r}")
            bin_boundaries = [float(b) for b in bin_boundaries]
        if num_bins is not None:
            num_bins = _positive_int(num_bins, "num_bins", "Discretization", 2)
        if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or \
                not 0 < epsilon < 1:
            raise ValueError(f"Discretization: epsilon must be a number in (0, 1), got "
                             f"{epsilon!r}")
        self.output_mode = _choice(output_mode, ("int",) + ENCODINGS, "output_mode",
                                   "Discretization")
        if sparse:
            raise ValueError("Discretization: sparse=True is not supported (dense outputs "
                             "only)")
        self.bin_boundaries, self.num_bins, self.epsilon = bin_boundaries, num_bins, epsilon
        self.sparse = False

    @classmethod
    def from_config(cls, config):
        """An adapted layer's config holds both ``num_bins`` and the boundaries learned."""
        config = dict(config)
        bounds = config.pop("bin_boundaries", None)
        layer = cls(**config) if config.get("num_bins") is not None else \
            cls(bin_boundaries=bounds, **config)
        layer.bin_boundaries = bounds
        return layer

    def adapt(self, data, steps=None):
        """Learn the boundaries of ``num_bins`` quantile bins from ``data`` (an array, a tensor,
        or an iterable of batches read up to ``steps``)."""
        if self.num_bins is None:
            raise ValueError(f"Discretization '{self.name}': adapt() needs num_bins, not "
                             f"bin_boundaries")
        summary = np.array([[], []], dtype="float32")
        for batch in _batches(data, f"Discretization '{self.name}'", steps):
            merged = np.concatenate((_summary(batch.astype("float32"), self.epsilon), summary),
                                    axis=1)
            summary = _compressed(np.take(merged, np.argsort(merged[0]), axis=1), self.epsilon)
        self.bin_boundaries = _compressed(summary, 1.0 / self.num_bins)[0, :-1].tolist()

    def call(self, inputs):
        if self.bin_boundaries is None:
            raise ValueError(f"Discretization '{self.name}' was called before adapt(): give it "
                             f"bin_boundaries, or call adapt(data) first")
        boundaries = fw.constant(self.bin_boundaries, dtype=inputs.dtype
                                 if inputs.dtype.is_floating else self.dtype)
        flat = fw.reshape(fw.cast(inputs, boundaries.dtype), [-1])
        indices = fw.reshape(fw.searchsorted(boundaries, flat, side="right"), inputs.shape)
        if self.output_mode == "int":
            return indices
        return _encode(indices, len(self.bin_boundaries) + 1, self.output_mode, self.dtype)

    def compute_output_shape(self, input_shape):
        depth = self.num_bins if self.bin_boundaries is None else len(self.bin_boundaries) + 1
        return _encoded_shape(input_shape, depth, self.output_mode)

    def get_config(self):
        config = {**super().get_config(), "bin_boundaries": self.bin_boundaries,
                  "num_bins": self.num_bins, "epsilon": self.epsilon,
                  "output_mode": self.output_mode, "sparse": self.sparse}
        del config["trainable"]  # (Keras's Discretization config has no trainable)
        return config

