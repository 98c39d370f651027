"""``Embedding``: integer indices to rows of a trainable table, with Keras's arguments.

The lookup is ``fw.gather`` on the table, so the table's gradient comes from gather's rule (a
sparse one, proportional to the rows looked up, where the framework gives it).
"""
import framework as fw

from . import constraints, initializers, regularizers
from .base import LAYERS, Layer, serialized

__all__ = ["Embedding"]


def _positive_int(value, name):
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"Embedding: {name} must be a positive integer, got {value!r}")
    return value


@LAYERS.register
class Embedding(Layer):
    """``embeddings[inputs]``: inputs of any shape of indices in ``[0, input_dim)`` give
    outputs of shape ``inputs.shape + (output_dim,)``.

    ``embeddings_initializer`` defaults to Keras's ``"uniform"``, ``RandomUniform(-0.05, 0.05)``.
    ``mask_zero`` makes ``compute_mask`` mark index 0 as padding: the output carries that
    mask (``_keras_mask``) to the layers after it, as in Keras.
    """

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform",
                 embeddings_regularizer=None, mask_zero=False, embeddings_constraint=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.input_dim = _positive_int(input_dim, "input_dim")
        self.output_dim = _positive_int(output_dim, "output_dim")
        self.embeddings_initializer = initializers.get(embeddings_initializer)
        self.embeddings_regularizer = regularizers.get(embeddings_regularizer)
        self.mask_zero = bool(mask_zero)
        self.embeddings_constraint = constraints.get(embeddings_constraint)
        self.embeddings = None

    def build(self, input_shape=None):
        self.embeddings = self.add_weight("embeddings", (self.input_dim, self.output_dim),
                                          self.embeddings_initializer,
                                          regularizer=self.embeddings_regularizer,
                                          constraint=self.embeddings_constraint)

    def _autocast(self, inputs):
        """Indices are not cast to the layer's float dtype (``call`` makes them integers)."""
        return fw.convert_to_tensor(inputs)

    def call(self, inputs):
        if inputs.dtype.kind not in "iu":  # (a float Input's ids, say) int32, as in Keras
            inputs = fw.cast(inputs, fw.int32)
        try:  # (the gather checks its indices on every call, compiled too)
            return fw.gather(self.embeddings, inputs)
        except IndexError as error:
            raise ValueError(f"Embedding '{self.name}': indices must lie in [0, "
                             f"{self.input_dim}): {error}") from None

    def compute_mask(self, inputs, mask=None):
        """``inputs != 0`` with ``mask_zero``, else None."""
        if not self.mask_zero:
            return None
        return fw.not_equal(fw.convert_to_tensor(inputs), 0)

    def compute_output_shape(self, input_shape):
        return (*input_shape, self.output_dim)

    def get_config(self):
        return {**super().get_config(), "input_dim": self.input_dim,
                "output_dim": self.output_dim,
                "embeddings_initializer": serialized(initializers.INITIALIZERS,
                                                     self.embeddings_initializer),
                "embeddings_regularizer": regularizers.serialize(self.embeddings_regularizer),
                "mask_zero": self.mask_zero,
                "embeddings_constraint": constraints.serialize(self.embeddings_constraint)}
