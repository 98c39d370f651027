"""``fw.nn`` (tf.nn): a view of ops declared once in ``framework/ops``; each name is the same
object as its top-level or ``fw.math`` alias. ``dense`` and ``bias_add_relu`` are the fused
forms Dense layers call (a product, a bias and a ReLU in one op)."""
import sys as _sys

from .namespaces import suggest_close_names as _suggest_close_names
from .ops.activation import (approx_max_k, approx_min_k, batch_normalization,
                             compute_average_loss, crelu, dropout, elu, in_top_k, l2_loss,
                             l2_normalize, leaky_relu, log_poisson_loss, moments,
                             normalize_moments, relu6, scale_regularization_loss, selu,
                             sigmoid_cross_entropy_with_logits, silu, softsign,
                             sufficient_statistics, swish, top_k,
                             weighted_cross_entropy_with_logits, weighted_moments, zero_fraction)
from .ops.convolution import (avg_pool, avg_pool1d, avg_pool2d, conv1d, conv2d,
                              conv2d_transpose, depthwise_conv2d, max_pool, max_pool1d,
                              max_pool2d, separable_conv2d)
from .ops.math import erf, sigmoid, tanh
from .ops.nn import (bias_add, bias_add_relu, dense, embedding_lookup, gelu, log_softmax, relu,
                     softmax, softmax_cross_entropy_with_logits, softplus,
                     sparse_softmax_cross_entropy_with_logits)

_suggest_close_names(_sys.modules[__name__], "fw.nn")
