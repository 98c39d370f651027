"""Keras 3's attention layers: ``MultiHeadAttention``, ``Attention`` (Luong) and
``AdditiveAttention`` (Bahdanau), with Keras's arguments, weight shapes, names and order,
masks and numbers.

``MultiHeadAttention`` keeps Keras's ``EinsumDense`` weight layout (query, key and value kernels
``(dim, heads, key_dim)`` with biases ``(heads, key_dim)``, the output kernel ``(heads,
value_dim, *output_shape)``) but computes each projection as one matrix product on the kernel
seen as a matrix, and the attention itself as two batched products over ``(batch, heads)``;
inputs of other ranks, or other ``attention_axes``, follow Keras's einsum equations. The softmax
with a mask is one op (``framework.ops.fused.masked_softmax``: Keras's ``where(mask, x, -1e9)``,
the softmax, then ``where(mask, p, 0)``).

Which scores each layer returns is Keras's: ``MultiHeadAttention`` the softmax before its
dropout, ``Attention`` and ``AdditiveAttention`` after theirs.
"""
import math

import framework as fw
from framework.ops.fused import masked_softmax

from . import initializers, regularizers
from .base import LAYERS, Layer, serialized
from .core import Dropout

__all__ = ["AdditiveAttention", "Attention", "MultiHeadAttention"]


def keras_mask(tensor):
    """The mask a tensor carries (``_keras_mask``), or None."""
    return getattr(tensor, "_keras_mask", None)


def _as_bool(mask):
    mask = fw.convert_to_tensor(mask)
    return mask if mask.dtype == fw.bool else fw.cast(mask, fw.bool)


def _check_mask(layer, what, mask, expected):
    """A mask of the wrong shape is one line naming the layer and the shape it expected."""
    if tuple(mask.shape) != tuple(expected):
        raise ValueError(f"{type(layer).__name__} '{layer.name}': {what} must have shape "
                         f"{tuple(expected)}, got {tuple(mask.shape)}")


def _broadcasts(shape, to):
    return len(shape) <= len(to) and all(a in (1, b) for a, b in zip(shape[::-1], to[::-1]))


def causal_mask(query_length, value_length):
    """``(1, T, S)`` booleans: position ``i`` sees ``j <= i`` (Keras's ``row >= column``)."""
    rows = fw.reshape(fw.range(query_length), (1, query_length, 1))
    columns = fw.reshape(fw.range(value_length), (1, 1, value_length))
    return fw.greater_equal(rows, columns)


def _both(a, b):
    return b if a is None else a if b is None else fw.logical_and(a, b)


@LAYERS.register
class MultiHeadAttention(Layer):
    """Multi-head attention (Vaswani et al., 2017), Keras 3's layer.

    Called as ``mha(query, value, key=None, attention_mask=None, return_attention_scores=False,
    training=None, use_causal_mask=False)``; ``query`` is ``(B, T, dim)`` (or with more axes,
    see ``attention_axes``), ``value`` and ``key`` ``(B, S, dim)``. ``attention_mask`` (True
    where a query position may attend to a key position, ``(B, T, S)`` or broadcastable) is
    combined by logical and with the causal mask and with the inputs' own masks (Keras's
    ``_keras_mask``: a value mask ``(B, S)`` hides key positions, a query mask ``(B, T)`` query
    positions). The output has the query's shape, its last axis ``output_shape`` when given.
    """

    def __init__(self, num_heads, key_dim=None, value_dim=None, dropout=0.0, use_bias=True,
                 output_shape=None, attention_axes=None, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 seed=None, **kwargs):
        super().__init__(**kwargs)
        for what, value in (("num_heads", num_heads), ("key_dim", key_dim)):
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"MultiHeadAttention: {what} must be a positive integer "
                                 f"(the number of heads, and the size of each head for query "
                                 f"and key), got {value!r}")
        if value_dim is not None and (not isinstance(value_dim, int) or value_dim <= 0):
            raise ValueError(f"MultiHeadAttention: value_dim must be a positive integer or "
                             f"None, got {value_dim!r}")
        if not 0 <= dropout < 1:
            raise ValueError(f"MultiHeadAttention: dropout must be in [0, 1), got {dropout!r}")
        if isinstance(output_shape, int):
            output_shape = (output_shape,)
        if isinstance(attention_axes, int):
            attention_axes = (attention_axes,)
        self.num_heads, self.key_dim = num_heads, key_dim
        self.value_dim = value_dim or key_dim
        self.dropout = float(dropout)
        self.use_bias = bool(use_bias)
        self.output_shape = None if not output_shape else tuple(int(d) for d in output_shape)
        self.attention_axes = None if attention_axes is None else tuple(attention_axes)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.seed = seed
        self._dropout_layer = Dropout(self.dropout, seed=seed, dtype=self.dtype)
        self._axes = None

    # --- weights ------------------------------------------------------------------------------
    def _first_call(self, inputs, args, kwargs, training):
        """Build from the shapes of query, value and key (Keras's ``build`` takes all three)."""
        value = args[0] if args else kwargs.get("value")
        key = args[1] if len(args) > 1 else kwargs.get("key")
        if value is None:
            raise ValueError(f"MultiHeadAttention '{self.name}' is called as mha(query, value, "
                             f"key=None, ...): value is missing")
        self.build(tuple(inputs.shape), tuple(fw.convert_to_tensor(value).shape),
                   None if key is None else tuple(fw.convert_to_tensor(key).shape))
        return super()._first_call(inputs, args, kwargs, training)

    def build(self, query_shape, value_shape=None, key_shape=None):
        value_shape = query_shape if value_shape is None else tuple(value_shape)
        key_shape = value_shape if key_shape is None else tuple(key_shape)
        if tuple(value_shape[1:-1]) != tuple(key_shape[1:-1]):
            raise ValueError(f"MultiHeadAttention '{self.name}': value and key must agree on "
                             f"every axis but the last, got {value_shape} and {key_shape}")
        if len(query_shape) < 3:
            raise ValueError(f"MultiHeadAttention '{self.name}' expects query, value and key of "
                             f"rank 3 or more (batch, positions..., features), got query shape "
                             f"{tuple(query_shape)}")
        heads = self.num_heads
        self._query_dense = _Projection("query", self, (query_shape[-1], heads, self.key_dim),
                                        (heads, self.key_dim))
        self._key_dense = _Projection("key", self, (key_shape[-1], heads, self.key_dim),
                                      (heads, self.key_dim))
        self._value_dense = _Projection("value", self, (value_shape[-1], heads, self.value_dim),
                                        (heads, self.value_dim))
        out = self.output_shape or (query_shape[-1],)
        self._output_dense = _Projection("attention_output", self,
                                         (heads, self.value_dim, *out), out)
        for projection in (self._query_dense, self._key_dense, self._value_dense,
                           self._output_dense):  # (Keras's weight order)
            projection.build(None)
        rank = len(query_shape) + 1  # of the projected tensors: (B, positions..., heads, dim)
        axes = tuple(range(1, rank - 2)) if self.attention_axes is None else tuple(
            a if a >= 0 else rank - 1 + a for a in self.attention_axes)
        self._axes = axes
        self._equations = None if axes == (1,) and rank == 4 else _attention_equations(rank,
                                                                                         axes)

    @property
    def query_dense(self):
        return self._query_dense

    @property
    def key_dense(self):
        return self._key_dense

    @property
    def value_dense(self):
        return self._value_dense

    @property
    def output_dense(self):
        return self._output_dense

    # --- the forward pass ---------------------------------------------------------------------
    def call(self, query, value, key=None, query_mask=None, value_mask=None, key_mask=None,
             attention_mask=None, return_attention_scores=False, training=None,
             use_causal_mask=False):
        value = fw.convert_to_tensor(value, query.dtype)
        key = value if key is None else fw.convert_to_tensor(key, query.dtype)
        # Keras 3 takes the query's mask from the tensor alone (an explicit query_mask is
        # overwritten), the value's and key's from the arguments, filled from the tensors.
        query_mask = keras_mask(query)
        value_mask = keras_mask(value) if value_mask is None else value_mask
        key_mask = keras_mask(key) if key_mask is None else key_mask
        mask = self._attention_mask(query, value, query_mask, value_mask, key_mask,
                                    attention_mask, use_causal_mask)
        q = self._query_dense(query)
        k = self._key_dense(key)
        v = self._value_dense(value)
        outputs, scores = self._compute_attention(q, k, v, mask, training)
        outputs = self._output_dense(outputs)
        return (outputs, scores) if return_attention_scores else outputs

    def _attention_mask(self, query, value, query_mask, value_mask, key_mask, attention_mask,
                        use_causal_mask):
        """Keras's ``_compute_attention_mask``: every mask given, as booleans, combined by and."""
        batch, t, s = query.shape[0], query.shape[1], value.shape[1]
        mask = None
        if query_mask is not None:
            query_mask = _as_bool(query_mask)
            _check_mask(self, "the query's mask", query_mask, query.shape[:-1])
            mask = fw.expand_dims(query_mask, -1)
        for what, extra, tensor in (("value_mask", value_mask, value), ("key_mask", key_mask,
                                                                         value)):
            if extra is not None:
                extra = _as_bool(extra)
                _check_mask(self, what, extra, tensor.shape[:-1])
                mask = _both(mask, fw.expand_dims(extra, -len(self._axes) - 1))
        if use_causal_mask:
            mask = _both(mask, causal_mask(t, s))
        if attention_mask is not None:
            attention_mask = _as_bool(attention_mask)
            full = (batch, *query.shape[1:-1], *value.shape[1:-1])
            if not _broadcasts(attention_mask.shape, full):
                raise ValueError(f"MultiHeadAttention '{self.name}': attention_mask must have "
                                 f"shape {full} (or broadcast to it), got "
                                 f"{tuple(attention_mask.shape)}")
            mask = attention_mask if mask is None else fw.logical_and(attention_mask, mask)
        return mask

    def _compute_attention(self, query, key, value, mask, training):
        """The scaled dot products, the softmax (masked), its dropout and the weighted values:
        ``(outputs (B, T, heads, value_dim), scores (B, heads, T, S))`` by default."""
        query = query * (1.0 / math.sqrt(float(self.key_dim)))
        if self._equations is None:  # (B, T, N, H): products batched over (B, N)
            q = fw.transpose(query, (0, 2, 1, 3))
            k = fw.transpose(key, (0, 2, 1, 3))
            scores = fw.matmul(q, k, transpose_b=True)
        else:
            scores = fw.einsum(self._equations[0], key, query)
        norm_axes = tuple(range(scores.ndim - len(self._axes), scores.ndim))
        if mask is not None:
            for _ in range(scores.ndim - mask.ndim):  # the head axis (and missing batch axes)
                mask = fw.expand_dims(mask, -len(self._axes) * 2 - 1)
        scores = masked_softmax(scores, mask, norm_axes)
        weights = self._dropout_layer(scores, training=training)
        if self._equations is None:
            outputs = fw.transpose(fw.matmul(weights, fw.transpose(value, (0, 2, 1, 3))),
                                   (0, 2, 1, 3))
        else:
            outputs = fw.einsum(self._equations[1], weights, value)
        return outputs, scores

    supports_masking = True  # (the output carries the query's mask, as in Keras)

    def compute_mask(self, query, mask=None):
        return keras_mask(query) if mask is None else mask

    def compute_output_shape(self, query_shape, value_shape=None, key_shape=None):
        query_shape = tuple(query_shape)
        return query_shape[:-1] + self.output_shape if self.output_shape else query_shape

    def get_config(self):
        return {**super().get_config(), "num_heads": self.num_heads, "key_dim": self.key_dim,
                "value_dim": self.value_dim, "dropout": self.dropout, "use_bias": self.use_bias,
                "output_shape": self.output_shape, "attention_axes": self.attention_axes,
                "kernel_initializer": serialized(initializers.INITIALIZERS,
                                                 self.kernel_initializer),
                "bias_initializer": serialized(initializers.INITIALIZERS, self.bias_initializer),
                "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
                "bias_regularizer": regularizers.serialize(self.bias_regularizer),
                "seed": self.seed}


class _Projection(Layer):
    """One of MultiHeadAttention's ``EinsumDense`` sublayers: a kernel ``(*inputs, *outputs)``
    and a bias ``outputs`` (Keras's shapes and names), applied to the last ``len(inputs)``
    axes as one matrix product on the kernel seen as a matrix."""

    def __init__(self, name, owner, kernel_shape, outputs):
        super().__init__(name=name, dtype=owner.dtype)
        self._kernel_shape, self._outputs = tuple(kernel_shape), tuple(outputs)
        self._owner = owner
        self.kernel = self.bias = None

    _untracked_attributes = Layer._untracked_attributes | {"_owner"}

    def build(self, input_shape):
        owner = self._owner
        self.kernel = self.add_weight("kernel", self._kernel_shape, owner.kernel_initializer,
                                      regularizer=owner.kernel_regularizer)
        if owner.use_bias:
            self.bias = self.add_weight("bias", self._outputs, owner.bias_initializer,
                                        regularizer=owner.bias_regularizer)

    def call(self, inputs):
        bound = len(self._kernel_shape) - len(self._outputs)
        lead = tuple(inputs.shape[:inputs.ndim - bound])
        rows = fw.reshape(inputs, (-1, math.prod(self._kernel_shape[:bound])))
        kernel = fw.reshape(self.kernel, (rows.shape[1], -1))
        if self.bias is None:
            outputs = fw.matmul(rows, kernel)
        else:
            outputs = fw.nn.dense(rows, kernel, fw.reshape(self.bias, (-1,)))
        return fw.reshape(outputs, lead + self._outputs)


def _letters(count, start=0):
    return "abcdefghijklmnopqrstuvwxyz"[start:start + count]


def _attention_equations(rank, axes):
    """Keras's ``_build_attention_equation``: the query-key product and the combination over
    ``axes`` of projected tensors of ``rank`` (batch and other axes, then heads, then dim)."""
    target = _letters(rank)
    batch = [i for i in range(rank) if i not in axes and i != rank - 1]
    source, offset = "", rank
    for i in range(rank):
        if i in batch or i == rank - 1:
            source += target[i]
        else:
            source += _letters(1, offset)
            offset += 1
    product = ("".join(target[i] for i in batch) + "".join(target[i] for i in axes)
               + "".join(source[i] for i in axes))
    return f"{source},{target}->{product}", f"{product},{source}->{target}"


class _BaseDenseAttention(Layer):
    """What ``Attention`` and ``AdditiveAttention`` share: the call convention
    (``[query, value]`` or ``[query, value, key]``, ``mask=[query_mask, value_mask]``), the
    masked softmax over value positions, dropout on the weights, the query mask on the
    outputs."""

    def __init__(self, use_scale, dropout, seed, **kwargs):
        super().__init__(**kwargs)
        if not 0 <= dropout < 1:
            raise ValueError(f"{type(self).__name__}: dropout must be in [0, 1), got {dropout!r}")
        self.use_scale = bool(use_scale)
        self.dropout = float(dropout)
        self.seed = seed
        self._dropout_layer = Dropout(self.dropout, seed=seed, dtype=self.dtype)

    def _check_list(self, inputs):
        """Inputs (or their shapes) as a list of 2 or 3 tensors (shapes)."""
        if not isinstance(inputs, (list, tuple)) or not 2 <= len(inputs) <= 3 or any(
                isinstance(x, int) for x in inputs):
            raise ValueError(f"{type(self).__name__} '{self.name}' is called on a list [query, "
                             f"value] or [query, value, key], got {type(inputs).__name__}")

    def _inputs(self, inputs, mask):
        name = f"{type(self).__name__} '{self.name}'"
        self._check_list(inputs)
        tensors = [fw.convert_to_tensor(x) for x in inputs]
        tensors = [x if x.dtype == self.dtype or x.dtype.kind != "f" else fw.cast(x, self.dtype)
                   for x in tensors]
        if mask is None and any(keras_mask(x) is not None for x in inputs):
            mask = [keras_mask(x) for x in inputs]
        if mask is not None and (not isinstance(mask, (list, tuple)) or not 2 <= len(mask) <= 3):
            raise ValueError(f"{name}: mask must be a list [query_mask, value_mask], got "
                             f"{type(mask).__name__}")
        masks = [None, None] if mask is None else [None if m is None else _as_bool(m)
                                                   for m in mask[:2]]
        for what, m, x in zip(("query_mask", "value_mask"), masks, tensors):
            if m is not None:
                _check_mask(self, what, m, x.shape[:-1])
        query, value = tensors[:2]
        return query, value, tensors[2] if len(tensors) > 2 else value, masks

    def build(self, input_shape):
        self._check_list(input_shape)
        self._build_weights(input_shape[0])

    def call(self, inputs, mask=None, training=False, return_attention_scores=False,
             use_causal_mask=False):
        query, value, key, (query_mask, value_mask) = self._inputs(inputs, mask)
        scores = self._calculate_scores(query, key)
        scores_mask = None if value_mask is None else fw.expand_dims(value_mask, -2)
        if use_causal_mask:
            scores_mask = _both(scores_mask, causal_mask(scores.shape[-2], scores.shape[-1]))
        weights = masked_softmax(scores, scores_mask, (scores.ndim - 1,), fill=False)
        weights = self._dropout_layer(weights, training=training)
        outputs = fw.matmul(weights, value)
        if query_mask is not None:
            outputs = fw.where(fw.expand_dims(query_mask, -1), outputs, 0.0)
        return (outputs, weights) if return_attention_scores else outputs

    supports_masking = True

    def compute_mask(self, inputs, mask=None):
        """The query's mask (given, or carried by the query), as Keras."""
        if mask is None and isinstance(inputs, (list, tuple)) and inputs:
            mask = [keras_mask(inputs[0])]
        return None if not mask or mask[0] is None else fw.convert_to_tensor(mask[0])

    def compute_output_shape(self, input_shape):
        return (*input_shape[0][:-1], input_shape[1][-1])

    def get_config(self):
        return {**super().get_config(), "use_scale": self.use_scale, "dropout": self.dropout,
                "seed": self.seed}


@LAYERS.register
class Attention(_BaseDenseAttention):
    """Dot-product attention (Luong): scores ``query @ key^T`` (times a learned ``scale``
    with ``use_scale``), or with ``score_mode="concat"`` ``concat_score_weight *
    sum(tanh(scale * (query + key)))``; then the softmax over value positions."""

    def __init__(self, use_scale=False, score_mode="dot", dropout=0.0, seed=None, **kwargs):
        super().__init__(use_scale, dropout, seed, **kwargs)
        if score_mode not in ("dot", "concat"):
            raise ValueError(f"Attention: score_mode must be 'dot' or 'concat', got "
                             f"{score_mode!r}")
        self.score_mode = score_mode
        self.scale = self.concat_score_weight = None

    def _build_weights(self, query_shape):
        if self.use_scale:
            self.scale = self.add_weight("scale", (), "ones")
        if self.score_mode == "concat":
            self.concat_score_weight = self.add_weight("concat_score_weight", (), "ones")

    def _calculate_scores(self, query, key):
        if self.score_mode == "dot":
            scores = fw.matmul(query, key, transpose_b=True)
            return scores if self.scale is None else scores * self.scale
        summed = fw.expand_dims(query, -2) + fw.expand_dims(key, -3)
        if self.scale is not None:
            summed = self.scale * summed
        return self.concat_score_weight * fw.reduce_sum(fw.tanh(summed), axis=-1)

    def get_config(self):
        return {**super().get_config(), "score_mode": self.score_mode}


@LAYERS.register
class AdditiveAttention(_BaseDenseAttention):
    """Additive attention (Bahdanau): scores ``sum(scale * tanh(query + key))`` over the
    features, ``scale`` a learned vector (glorot-uniform) with ``use_scale``, else 1."""

    def __init__(self, use_scale=True, dropout=0.0, seed=None, **kwargs):
        super().__init__(use_scale, dropout, seed, **kwargs)
        self.scale = None

    def _build_weights(self, query_shape):
        if self.use_scale:
            self.scale = self.add_weight("scale", (query_shape[-1],), "glorot_uniform")

    def _calculate_scores(self, query, key):
        summed = fw.tanh(fw.expand_dims(query, -2) + fw.expand_dims(key, -3))
        return fw.reduce_sum(summed if self.scale is None else self.scale * summed, axis=-1)
