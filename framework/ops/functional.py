"""TensorFlow's higher-order functions: ``map_fn``, ``vectorized_map``, ``scan``, ``foldl``,
``foldr``.

Each is a Python loop over the first axis of ``elems`` (a tensor or a nested structure of
tensors that share it), calling ``fn`` on framework ops: every step is recorded by the tapes
like any other op (gradients flow to ``elems``, to an initializer and to captured variables),
and under ``fw.function`` the loop traces into the plan (its trip count is the first axis,
part of the signature). TensorFlow's structure and dtype rules are kept: ``map_fn``'s results
must have the structure and dtypes of ``fn_output_signature`` (``elems``'s when it is not
given), ``scan``'s and the folds' those of the accumulator. ``vectorized_map`` is ``map_fn``
with the structure taken from ``fn``'s results (TensorFlow vectorises it; here it loops).
"""
from ..engine import nest
from ..engine.dtypes import numpy_dtype
from ..engine.tensor import convert_to_tensor
from .array import unstack
from .shape import stack

__all__ = ["foldl", "foldr", "map_fn", "scan", "vectorized_map"]


def _rows(what, elems):
    """The flat leaves of ``elems`` as tensors, each unstacked along its first axis."""
    flat = [convert_to_tensor(e) for e in nest.flatten(elems)]
    if not flat:
        raise ValueError(f"{what}: elems must hold at least one tensor, got {elems!r}")
    counts = {t.shape[0] if t.ndim else None for t in flat}
    if None in counts or len(counts) != 1:
        raise ValueError(f"{what}: every tensor of elems needs the same first dimension, got "
                         f"shapes {[t.shape for t in flat]}")
    return flat, [unstack(t) for t in flat], counts.pop()


def _element(elems, rows, i):
    return nest.pack_sequence_as(elems, [r[i] for r in rows])


class _Leaf:
    def __repr__(self):
        return "."  # (TensorFlow's mark for a leaf when it shows a structure)


_LEAF = _Leaf()


def _skeleton(structure):
    """``structure`` with every leaf a mark: two structures match when their skeletons do."""
    return nest.pack_sequence_as(structure, [_LEAF] * len(nest.flatten(structure)))


def _checked(what, result, expected, dtypes):
    """``result``'s leaves as tensors, once its structure is ``expected``'s and its dtypes are
    ``dtypes`` (None: any)."""
    if _skeleton(result) != _skeleton(expected):
        raise ValueError(f"{what}: fn returned {_skeleton(result)!r}, which does not have the "
                         f"structure {_skeleton(expected)!r} it must have (give map_fn's "
                         f"fn_output_signature when fn's output differs from its input)")
    leaves = [convert_to_tensor(x) for x in nest.flatten(result)]
    for k, (leaf, dtype) in enumerate(zip(leaves, dtypes or ())):
        if dtype is not None and leaf._value.dtype != dtype:
            raise TypeError(f"{what}: output {k} of fn has dtype {leaf._value.dtype.name} where "
                            f"{dtype.name} is expected (fn_output_signature, or elems' dtype)")
    return leaves


def _signature_dtype(spec):
    """The dtype a ``fn_output_signature`` leaf names (a dtype or a ``TensorSpec``)."""
    return numpy_dtype(getattr(spec, "dtype", spec))


def _stacked(leaves_per_step, structure, dtypes, empty_shapes):
    """Each output leaf stacked over the steps, in ``structure``; with no step, empty tensors
    of ``dtypes`` (shape ``(0,) + empty_shapes[k]``), as TensorFlow's empty loops give."""
    if not leaves_per_step:
        from ..creation import zeros
        return nest.pack_sequence_as(structure, [
            zeros((0,) + shape, dtype) for shape, dtype in zip(empty_shapes, dtypes)])
    return nest.pack_sequence_as(structure, [stack(list(column))
                                             for column in zip(*leaves_per_step)])


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False,
           infer_shape=True, name=None, fn_output_signature=None):
    """``fn`` on each slice of ``elems`` along the first axis, the results stacked."""
    signature = fn_output_signature if fn_output_signature is not None else dtype
    flat, rows, n = _rows("map_fn", elems)
    expected = elems if signature is None else signature
    dtypes = ([t._value.dtype for t in flat] if signature is None
              else [_signature_dtype(s) for s in nest.flatten(signature)])
    steps = [_checked("map_fn", fn(_element(elems, rows, i)), expected, dtypes)
             for i in range(n)]
    return _stacked(steps, expected, dtypes, [()] * len(dtypes))


def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """``fn`` on each slice of ``elems`` along the first axis, the results (any structure)
    stacked: TensorFlow's result, computed by a loop."""
    _, rows, n = _rows("vectorized_map", elems)
    if n == 0:
        raise ValueError("vectorized_map: elems has no element to take fn's output from")
    results = [fn(_element(elems, rows, i)) for i in range(n)]
    steps = [_checked("vectorized_map", r, results[0], None) for r in results]
    return _stacked(steps, results[0], None, None)


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
         swap_memory=False, infer_shape=True, reverse=False, name=None):
    """The accumulator ``a = fn(a, element)`` after each element (the last first with
    ``reverse``), stacked in the elements' order; without ``initializer`` the first element
    starts it and is its own first output."""
    structure, steps, empty = _accumulate("scan", fn, elems, initializer, reverse, keep=True)
    dtypes = [t._value.dtype for t in empty]
    return _stacked(steps, structure, dtypes, [t.shape for t in empty])


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """``fn(fn(fn(initializer, e0), e1), ...)``: the accumulator after the last element."""
    return _accumulate("foldl", fn, elems, initializer, False, keep=False)


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """``foldl`` from the last element to the first."""
    return _accumulate("foldr", fn, elems, initializer, True, keep=False)


def _accumulate(what, fn, elems, initializer, reverse, keep):
    """Run the accumulator over the elements. ``keep``: (its structure, each step's leaves in
    the elements' order, the initial leaves); else the last accumulator."""
    flat, rows, n = _rows(what, elems)
    order = list(reversed(range(n))) if reverse else list(range(n))
    if initializer is None:
        if n == 0:
            raise ValueError(f"{what}: elems is empty and there is no initializer to start from")
        accumulator, order = _element(elems, rows, order[0]), order[1:]
        steps = {(n - 1 if reverse else 0): nest.flatten(accumulator)}
    else:
        accumulator, steps = initializer, {}
    structure = accumulator
    initial = last = [convert_to_tensor(x) for x in nest.flatten(accumulator)]
    dtypes = [t._value.dtype for t in initial]
    for i in order:
        accumulator = fn(accumulator, _element(elems, rows, i))
        steps[i] = last = _checked(what, accumulator, structure, dtypes)
    if not keep:
        return nest.pack_sequence_as(structure, last)
    return structure, [steps[i] for i in sorted(steps)], initial
