"""``TransformerEncoder``: one encoder block of a Transformer, as KerasHub's layer of that name
(its arguments, defaults and weight order), built from this package's layers.

Self-attention, dropout, the residual and a ``LayerNormalization``, then a feed-forward pair
of ``Dense`` layers, dropout, the residual and a second ``LayerNormalization`` (post-LN); with
``normalize_first`` each normalization moves before its sublayer (pre-LN). One input, so it
fits a ``Sequential`` and a config's ``[[model.layers]]``.
"""
import framework as fw

from . import activations, initializers
from .attention import MultiHeadAttention, keras_mask
from .base import LAYERS, Layer, serialized
from .core import Dense, Dropout
from .normalization import LayerNormalization

__all__ = ["TransformerEncoder"]


@LAYERS.register
class TransformerEncoder(Layer):
    """``TransformerEncoder(intermediate_dim, num_heads)`` on ``(batch, positions, dim)``.

    ``padding_mask`` (``(batch, positions)``, True where a position is real: no position
    attends to a padded one) and ``attention_mask`` (``(batch, positions, positions)``) are
    combined and passed to the attention, as in KerasHub; each head has ``dim // num_heads``
    features.
    """

    def __init__(self, intermediate_dim, num_heads, dropout=0.0, activation="relu",
                 layer_norm_epsilon=1e-5, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", normalize_first=False, **kwargs):
        super().__init__(**kwargs)
        for what, value in (("intermediate_dim", intermediate_dim), ("num_heads", num_heads)):
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"TransformerEncoder: {what} must be a positive integer, got "
                                 f"{value!r}")
        self.intermediate_dim, self.num_heads = intermediate_dim, num_heads
        self.dropout = float(dropout)
        self.activation = activations.get(activation)
        self.layer_norm_epsilon = float(layer_norm_epsilon)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.normalize_first = bool(normalize_first)
        self._dropouts = [Dropout(self.dropout, dtype=self.dtype) for _ in range(2)]

    def build(self, input_shape):
        dim = input_shape[-1]
        if dim is None or dim % self.num_heads:
            raise ValueError(f"TransformerEncoder '{self.name}': the inputs' last axis "
                             f"({dim}) must be a multiple of num_heads ({self.num_heads})")
        common = {"kernel_initializer": self.kernel_initializer,
                  "bias_initializer": self.bias_initializer, "dtype": self.dtype}
        self._self_attention_layer = MultiHeadAttention(
            self.num_heads, dim // self.num_heads, dropout=self.dropout,
            name="self_attention_layer", **common)
        self._self_attention_layer_norm = LayerNormalization(
            epsilon=self.layer_norm_epsilon, name="self_attention_layer_norm", dtype=self.dtype)
        self._feedforward_layer_norm = LayerNormalization(
            epsilon=self.layer_norm_epsilon, name="feedforward_layer_norm", dtype=self.dtype)
        self._feedforward_intermediate_dense = Dense(
            self.intermediate_dim, activation=self.activation,
            name="feedforward_intermediate_dense", **common)
        self._feedforward_output_dense = Dense(dim, name="feedforward_output_dense", **common)

    def call(self, inputs, padding_mask=None, attention_mask=None, training=None):
        x = inputs
        if self.normalize_first:
            x = self._self_attention_layer_norm(x)
        if padding_mask is None:
            padding_mask = keras_mask(inputs)  # (an Embedding(mask_zero=True)'s, say)
        mask = None
        if padding_mask is not None:  # (batch, 1, positions): padded keys are not attended to
            mask = fw.expand_dims(fw.cast(padding_mask, fw.bool), -2)
        if attention_mask is not None:
            given = fw.cast(attention_mask, fw.bool)
            mask = given if mask is None else fw.logical_and(given, mask)
        x = self._self_attention_layer(x, x, attention_mask=mask, training=training)
        x = self._dropouts[0](x, training=training) + inputs
        if not self.normalize_first:
            x = self._self_attention_layer_norm(x)
        residual = x
        if self.normalize_first:
            x = self._feedforward_layer_norm(x)
        x = self._feedforward_output_dense(self._feedforward_intermediate_dense(x))
        x = self._dropouts[1](x, training=training) + residual
        return x if self.normalize_first else self._feedforward_layer_norm(x)

    supports_masking = True

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "intermediate_dim": self.intermediate_dim,
                "num_heads": self.num_heads, "dropout": self.dropout,
                "activation": serialized(activations.ACTIVATIONS, self.activation),
                "layer_norm_epsilon": self.layer_norm_epsilon,
                "kernel_initializer": serialized(initializers.INITIALIZERS,
                                                 self.kernel_initializer),
                "bias_initializer": serialized(initializers.INITIALIZERS, self.bias_initializer),
                "normalize_first": self.normalize_first}
