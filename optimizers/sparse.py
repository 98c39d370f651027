"""Sparse gradients (``IndexedSlices``) as Keras 3 updates from them, for ``Optimizer``.

Keras 3 (TensorFlow backend) runs an optimizer's update formula on the ``IndexedSlices``
themselves. Where the formula is linear in the gradient the occurrences of a row add up, as
in the dense gradient; but ``ops.square`` and ``ops.abs`` act on each occurrence's row before
the rows are added. So when an id repeats (an ``Embedding`` looking the same word up twice),
a second moment takes the sum of the occurrences' squares, not the square of their sum, and
Adamax's norm the sum of their absolute values (recorded in
``tests/reference/sparse_optimizers_reference.json``). ``dense_gradients`` gives the dense
gradients and, for those whose indices repeat, those two sums (``Moments``); the update steps
take them through ``Optimizer._squared`` and ``Optimizer._magnitude``.
"""
from collections import namedtuple

from framework.engine import backend
from framework.engine.indexed_slices import IndexedSlices, dense_array, from_arrays

# Per row, the sum over its occurrences of each occurrence's square and absolute value.
Moments = namedtuple("Moments", "squares magnitudes")


def dense_gradients(transform, grads, moments=True):
    """``(arrays, moments)``: ``transform`` (an optimizer's unscaling and clipping, on a list of
    raw arrays) applied with each ``IndexedSlices`` in ``grads`` standing for its values, as
    Keras clips sparse gradients, then those made dense (the update steps take dense arrays);
    ``moments`` {index: Moments} for the sparse ones whose indices repeat (None if none, or
    when not asked: an accumulated gradient is dense by the time Keras updates from it)."""
    sparse = [g.__class__ is IndexedSlices for g in grads]
    if not any(sparse):
        return transform(grads), None
    arrays = transform([g._values._value if s else g for g, s in zip(grads, sparse)])
    dense, repeated = [], {}
    for index, (values, grad, is_sparse) in enumerate(zip(arrays, grads, sparse)):
        if not is_sparse:
            dense.append(values)
            continue
        indices = grad._indices._value
        dense.append(_scattered(values, indices, grad._dense_shape))
        if moments and len(backend.array_module(indices).unique(indices)) < len(indices):
            repeated[index] = Moments(_scattered(values * values, indices, grad._dense_shape),
                                      _scattered(abs(values), indices, grad._dense_shape))
    return dense, repeated or None



def _scattered(values, indices, shape):
    """The dense array with the rows ``values`` added at rows ``indices``."""
    return dense_array(from_arrays(values, indices, shape))
