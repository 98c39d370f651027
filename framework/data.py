"""Input pipelines (``fw.data.Dataset``), as ``tf.data``: a chain of transformations, run lazily.

An element is a nested structure (tuples and dicts; a list is a tensor, as in TensorFlow) of
host NumPy arrays while it moves along the chain; iterating a dataset wraps each one in
framework tensors, ``as_numpy_iterator`` hands the arrays themselves. Each dataset knows its
``cardinality`` (TensorFlow's rule per transformation, with ``INFINITE`` and ``UNKNOWN``).

Datasets whose elements are rows of arrays (``from_tensor_slices``, and a full-buffer
``shuffle`` of one) can also hand over many rows by one index array, so ``batch`` on them is one
fancy-indexing per batch instead of a Python loop over examples: the training runner batches
this way.

``shuffle`` is TensorFlow's buffer algorithm (fill ``buffer_size`` elements, emit a random one,
refill its place); a buffer at least as large as the dataset is a uniform permutation, drawn at
once. Its seed follows ``fw.random``: an explicit ``seed``, else one drawn from the global
generator when ``shuffle`` is called, so ``fw.random.set_seed`` at the start of a program fixes
every order. Beyond TensorFlow, ``seed`` may be a ``numpy.random.Generator`` that every epoch
draws from (a runner that checkpoints its generator's state resumes the same orders).
"""
import itertools

import numpy as np

from . import random
from .engine import backend, nest
from .tracing.function import TensorSpec  # (fw.TensorSpec: an element's component, as in TensorFlow)
from .engine.tensor import Tensor, convert_to_tensor, wrap

INFINITE = -1
UNKNOWN = -2
AUTOTUNE = -1


def _array(value):
    """A component as a host array: NumPy arrays keep their dtype, the rest converts as
    ``fw.constant`` does (Python floats float32, ints int32)."""
    if isinstance(value, (np.ndarray, np.generic)):
        return value
    array = backend.to_host((value if isinstance(value, Tensor) else convert_to_tensor(value))
                            ._value)
    return array[()] if array.ndim == 0 else array  # a scalar as NumPy gives it: np.float32(2)


def _structure(value):
    """``value`` with every leaf a host array; lists are leaves (tensors), as in TensorFlow."""
    if isinstance(value, dict):
        return type(value)((k, _structure(v)) for k, v in value.items())
    if isinstance(value, tuple):
        items = [_structure(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    return _array(value)


def _leaves(element):
    return nest.flatten(element)


def _pack(like, leaves):
    return nest.pack_sequence_as(like, list(leaves))


def _map_leaves(fn, element):
    return _pack(element, map(fn, _leaves(element)))


def _to_tensors(element):
    return _map_leaves(lambda a: wrap(backend.to_backend(a)), element)


def _call(fn, element):
    """``fn`` on an element, a tuple unpacked into arguments as ``tf.data`` does."""
    args = _to_tensors(element)
    return fn(*args) if isinstance(args, tuple) and not hasattr(args, "_fields") else fn(args)


def _count(value, what):
    if isinstance(value, Tensor):
        value = value.numpy()
    if isinstance(value, bool) or int(value) != value:
        raise TypeError(f"{what} must be an integer, got {value!r}")
    return int(value)


class Dataset:
    """A sequence of elements, built from a source and a chain of transformations.

    ``elements`` makes a fresh iterator of host elements; ``rows`` (for row-indexed datasets)
    returns ``(count, take)`` with ``take(index_array)`` giving those rows stacked.
    """

    def __init__(self, elements, cardinality, spec=None, rows=None):
        self._elements, self._cardinality, self._spec, self._rows = (
            elements, cardinality, spec, rows)

    # --- sources ---------------------------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors, name=None):
        """One element per row of the components (all must have the same number of rows)."""
        data = _structure(tensors)
        leaves = _leaves(data)
        if not leaves or any(a.ndim == 0 for a in leaves):
            raise ValueError("from_tensor_slices needs components of rank 1 or more, got "
                             + ", ".join(f"shape {a.shape}" for a in leaves))
        n = leaves[0].shape[0]
        if any(a.shape[0] != n for a in leaves):
            raise ValueError(f"from_tensor_slices: the components have different numbers of "
                             f"rows: {[a.shape[0] for a in leaves]}")

        def take(index):
            return _map_leaves(lambda a: a[index], data)

        spec = _map_leaves(lambda a: TensorSpec(a.shape[1:], a.dtype), data)
        return Dataset(lambda: (_map_leaves(lambda a: a[i], data) for i in range(n)), n, spec,
                       rows=lambda: (n, take))

    @staticmethod
    def from_tensors(tensors, name=None):
        """One element: ``tensors`` whole."""
        data = _structure(tensors)
        return Dataset(lambda: iter([data]), 1, _map_leaves(lambda a: TensorSpec(a.shape, a.dtype),
                                                            data))

    @staticmethod
    def range(*args, output_type=np.int64, name=None):
        """``range(stop)``, ``range(start, stop[, step])``: int64 scalars, as TensorFlow's."""
        r = range(*(_count(a, "range argument") for a in args))
        dtype = np.dtype(output_type)
        return Dataset(lambda: map(dtype.type, r), len(r), TensorSpec((), dtype))

    @staticmethod
    def zip(*args, datasets=None, name=None):
        """Elements of the datasets side by side (a tuple, or the structure given), as long
        as the shortest."""
        if datasets is not None and args:
            raise TypeError("zip: give the datasets as arguments or as datasets=, not both")
        structure = datasets if datasets is not None else args[0] if len(args) == 1 and not \
            isinstance(args[0], Dataset) else args
        flat = nest.flatten(structure)
        for d in flat:
            if not isinstance(d, Dataset):
                raise TypeError(f"zip takes datasets, got {type(d).__name__}")
        counts = [d._cardinality for d in flat]
        if UNKNOWN in counts:
            count = UNKNOWN
        else:
            finite = [c for c in counts if c != INFINITE]
            count = min(finite) if finite else INFINITE
        spec = None if any(d._spec is None for d in flat) else _pack(
            structure, [d._spec for d in flat])
        return Dataset(lambda: (_pack(structure, parts) for parts in zip(
            *[d._elements() for d in flat])), count, spec)

    # --- iteration -------------------------------------------------------------------------------
    def __iter__(self):
        return map(_to_tensors, self._elements())

    def as_numpy_iterator(self):
        """The elements as NumPy arrays (in their structure)."""
        return self._elements()

    def cardinality(self):
        """The number of elements as an int64 tensor: ``INFINITE`` (-1) or ``UNKNOWN`` (-2)
        when it cannot be counted without running the pipeline."""
        return wrap(np.asarray(self._cardinality, np.int64))

    def __len__(self):
        if self._cardinality == INFINITE:
            raise TypeError("The dataset is infinite.")
        if self._cardinality == UNKNOWN:
            raise TypeError("The dataset length is unknown.")
        return self._cardinality

    def __bool__(self):
        return True  # (never through __len__, which may refuse)

    @property
    def element_spec(self):
        """The structure of ``TensorSpec`` of an element (a mapped dataset runs its function
        once on the first element to know it)."""
        if self._spec is None:
            first = next(iter(self._elements()), None)
            if first is None:
                raise ValueError("element_spec: the dataset is empty, so its element "
                                 "structure is unknown")
            self._spec = _map_leaves(lambda a: TensorSpec(a.shape, a.dtype), first)
        return self._spec

    def __repr__(self):
        return f"<Dataset element_spec={self._spec!r}>"

    # --- transformations -------------------------------------------------------------------------
    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        """``map_func`` on each element (a tuple's components as its arguments)."""
        source = self._elements
        return Dataset(lambda: (_structure(_call(map_func, e)) for e in source()),
                       self._cardinality)

    def filter(self, predicate, name=None):
        """The elements for which ``predicate`` gives a scalar True."""
        def keep(element):
            result = _array(_call(predicate, element))
            if result.shape != () or result.dtype != np.bool_:
                raise ValueError(f"filter: the predicate must return a scalar bool, got "
                                 f"{result.dtype.name} of shape {result.shape}")
            return bool(result)

        source = self._elements
        return Dataset(lambda: (e for e in source() if keep(e)), UNKNOWN, self._spec)

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None,
              deterministic=None, name=None):
        """Consecutive elements stacked along a new first axis (the last batch may be short
        unless ``drop_remainder``)."""
        size = _count(batch_size, "batch_size")
        if size < 1:
            raise ValueError(f"batch_size must be at least 1, got {size}")
        count = self._cardinality
        if count >= 0:
            count = count // size if drop_remainder else -(-count // size)
        spec = None if self._spec is None else _map_leaves(
            lambda s: TensorSpec((size if drop_remainder else None,) + s.shape, s.dtype),
            self._spec)
        return Dataset(lambda: self._batches(size, drop_remainder), count, spec)

    def _batches(self, size, drop_remainder):
        if self._rows is not None:  # rows by one index array per batch
            n, take = self._rows()
            stop = n - n % size if drop_remainder else n
            # (index arrays, not slices: a batch is a copy, never a view of the source)
            return (take(np.arange(i, min(i + size, stop))) for i in range(0, stop, size))
        return self._stacked(size, drop_remainder)

    def _stacked(self, size, drop_remainder):
        source = self._elements()
        while True:
            chunk = list(itertools.islice(source, size))
            if not chunk or (drop_remainder and len(chunk) < size):
                return
            firsts = _leaves(chunk[0])
            columns = zip(*[_leaves(e) for e in chunk])
            stacked = []
            for first, column in zip(firsts, columns):
                if any(a.shape != first.shape for a in column):
                    raise ValueError(f"batch: cannot stack elements of shapes "
                                     f"{sorted({a.shape for a in column})}; map them to one "
                                     f"shape first")
                stacked.append(np.stack(column))
            yield _pack(chunk[0], stacked)

    def unbatch(self, name=None):
        """Split each element along its first axis into elements."""
        def rows(source):
            for element in source():
                leaves = _leaves(element)
                for i in range(leaves[0].shape[0] if leaves else 0):
                    yield _pack(element, [a[i] for a in leaves])

        spec = None if self._spec is None else _map_leaves(
            lambda s: TensorSpec(s.shape[1:], s.dtype), self._spec)
        return Dataset(lambda: rows(self._elements), UNKNOWN, spec)

    def repeat(self, count=None, name=None):
        """The elements ``count`` times over (forever when None or -1); each pass starts the
        chain afresh (a shuffle reshuffles)."""
        times = -1 if count is None else _count(count, "count")
        source = self._elements

        def passes():
            for k in itertools.count():
                if times >= 0 and k >= times:
                    return
                empty = True
                for element in source():
                    empty = False
                    yield element
                if empty:
                    return

        c = self._cardinality
        if times < 0:
            card = 0 if c == 0 else UNKNOWN if c == UNKNOWN else INFINITE
        else:
            card = c if c < 0 and times else c * times if c >= 0 else 0
        return Dataset(passes, card, self._spec)

    def take(self, count, name=None):
        """The first ``count`` elements (all with -1)."""
        n = _count(count, "count")
        c = self._cardinality
        card = c if n < 0 else n if c == INFINITE else UNKNOWN if c == UNKNOWN else min(n, c)
        source = self._elements
        return Dataset(lambda: source() if n < 0 else itertools.islice(source(), n), card,
                       self._spec)

    def skip(self, count, name=None):
        """All but the first ``count`` elements (none with -1)."""
        n = _count(count, "count")
        c = self._cardinality
        card = c if c < 0 else 0 if n < 0 else max(c - n, 0)
        source = self._elements
        return Dataset(lambda: iter(()) if n < 0 else itertools.islice(source(), n, None),
                       card, self._spec)

    def enumerate(self, start=0, name=None):
        """``(index, element)`` pairs, the index an int64 scalar counting from ``start``."""
        return Dataset.zip(Dataset.range(start, np.iinfo(np.int64).max), self).with_cardinality(
            self._cardinality)

    def with_cardinality(self, cardinality):
        return Dataset(self._elements, int(cardinality), self._spec, self._rows)

    def concatenate(self, dataset, name=None):
        """This dataset's elements, then ``dataset``'s (of the same structure)."""
        a, b = self._cardinality, dataset._cardinality
        card = UNKNOWN if UNKNOWN in (a, b) else INFINITE if INFINITE in (a, b) else a + b
        first, second = self._elements, dataset._elements
        return Dataset(lambda: itertools.chain(first(), second()), card, self._spec)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True, name=None):
        """Elements in a random order, by TensorFlow's buffer algorithm (see the module)."""
        size = _count(buffer_size, "buffer_size")
        if size < 1:
            raise ValueError(f"buffer_size must be at least 1, got {size}")
        draw = _generators(seed, reshuffle_each_iteration)
        count = self._cardinality
        whole = 0 <= count <= size
        if whole and self._rows is not None:
            parent = self._rows

            def rows():
                n, take = parent()
                order = draw().permutation(n)
                return n, lambda index: take(order[index])

            return Dataset(lambda: _rows_elements(rows), count, self._spec, rows)
        source = self._elements
        return Dataset(lambda: _shuffled(source(), size, draw()), count, self._spec)

    def prefetch(self, buffer_size, name=None):
        """Accepted for TensorFlow code; elements are made on demand, so it changes nothing."""
        return self

    def cache(self, filename="", name=None):
        """Keep the elements in memory after the first complete pass, and replay them (a
        ``filename`` is accepted, the cache stays in memory)."""
        source, kept = self._elements, []

        def elements():
            if kept:
                return iter(kept[0])
            return _recording(source(), kept)

        return Dataset(elements, self._cardinality, self._spec)


def _recording(iterator, kept):
    seen = []
    for element in iterator:
        seen.append(element)
        yield element
    kept.append(seen)


def _rows_elements(rows):
    n, take = rows()
    return (take(i) for i in range(n))


def _generators(seed, reshuffle):
    """A function giving each iteration's generator."""
    if isinstance(seed, np.random.Generator):
        return lambda: seed
    base = _count(seed, "seed") if seed is not None else int(
        random.generator().integers(2 ** 63))
    epochs = itertools.count()
    return lambda: np.random.default_rng([base, next(epochs) if reshuffle else 0])


def _shuffled(source, size, rng):
    """TensorFlow's shuffle buffer: fill it, then emit a random entry and put the next
    element in its place; drain it at random once the input ends."""
    buffer = []
    for element in source:
        if len(buffer) < size:
            buffer.append(element)
            continue
        i = int(rng.integers(size))
        yield buffer[i]
        buffer[i] = element
    for i in rng.permutation(len(buffer)):
        yield buffer[i]


class _Experimental:
    """``fw.data.experimental``: the constants TensorFlow code reaches for."""

    AUTOTUNE = AUTOTUNE
    INFINITE_CARDINALITY = INFINITE
    UNKNOWN_CARDINALITY = UNKNOWN

    @staticmethod
    def cardinality(dataset):
        return dataset.cardinality()


experimental = _Experimental()
INFINITE_CARDINALITY, UNKNOWN_CARDINALITY = INFINITE, UNKNOWN
