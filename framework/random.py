"""Seeded random tensors (``fw.random``).

One global generator, reseeded by ``set_seed``, drives every call without its own ``seed``; a call
with ``seed`` uses a generator of its own, so the same seed gives the same numbers on every
backend (values are drawn on the host and then moved, which also makes CPU and GPU runs agree).
The numbers are NumPy's (PCG64), not TensorFlow's Philox: seeded runs reproduce within this
framework, not across frameworks. The stateless ops (``stateless_uniform``, ``stateless_normal``,
``experimental.stateless_split`` and ``stateless_fold_in``) are TensorFlow's own: its Philox
stream for the seed (``framework.philox``), so they give TensorFlow's numbers.
"""
from types import SimpleNamespace

import numpy as np

from . import philox
from .engine import backend
from .engine.dtypes import float32
from .engine.dtypes import numpy_dtype as _numpy_dtype
from .engine.tensor import Variable
from .engine.tensor import convert_to_tensor as _convert_to_tensor
from .engine.tensor import wrap as _wrap
from .engine.primitive import define as _define
from .engine.context import replayed as _replayed  # (traced: drawn afresh on every call)

_global = {"rng": np.random.default_rng()}


def set_seed(seed):
    """Make every later unseeded random op reproducible."""
    _global["rng"] = np.random.default_rng(seed)


def generator(seed=None):
    """The generator a random op with this ``seed`` draws from."""
    return _global["rng"] if seed is None else np.random.default_rng(seed)


def get_state():
    """The global generator's state (for checkpoints that must resume bit-identically)."""
    return _global["rng"].bit_generator.state


def set_state(state):
    _global["rng"].bit_generator.state = state


def _out(values, dtype):
    return _wrap(backend.to_backend(values.astype(_numpy_dtype(dtype), copy=False)))


def _shape(shape):
    return tuple(int(d) for d in (shape if hasattr(shape, "__len__") else (shape,)))


CHUNK = 1 << 20  # values drawn in float64 at a time for a narrower dtype


def _drawn(draw, shape, dtype, parameters):
    """``draw(count)``'s float64 values in ``shape``, as ``dtype``. A narrower tensor (float32)
    is filled a chunk at a time, so that a large one never has its float64 draw, twice its
    size, beside it; the generators' streams are sequential, so the values are those of one
    draw. (Only where the distribution's ``parameters`` are scalars, not arrays broadcast
    over ``shape``.)"""
    dtype = _numpy_dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64))
    if dtype.itemsize >= 8 or count <= CHUNK or any(np.ndim(p) for p in parameters):
        return _out(draw(shape), dtype)
    values = np.empty(shape, dtype)
    flat = values.reshape(-1)  # (a view: the array is contiguous)
    for start in range(0, count, CHUNK):
        flat[start:start + CHUNK] = draw(min(CHUNK, count - start))
    return _wrap(backend.to_backend(values))


@_replayed(draws=True)
def normal(shape, mean=0.0, stddev=1.0, dtype=float32, seed=None, name=None):
    rng = generator(seed)
    return _drawn(lambda size: rng.normal(mean, stddev, size), _shape(shape), dtype,
                  (mean, stddev))


@_replayed(draws=True)
def uniform(shape, minval=0, maxval=None, dtype=float32, seed=None, name=None):
    dtype = _numpy_dtype(dtype)
    if dtype.kind in "iu":
        if maxval is None:
            raise ValueError("uniform: maxval is required for integer dtypes")
        return _out(generator(seed).integers(minval, maxval, _shape(shape)), dtype)
    maxval = 1.0 if maxval is None else maxval
    rng = generator(seed)
    return _drawn(lambda size: rng.uniform(minval, maxval, size), _shape(shape), dtype,
                  (minval, maxval))


@_replayed(draws=True)
def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=float32, seed=None, name=None):
    """Normal values, redrawn until within two standard deviations (TensorFlow's rule)."""
    rng = generator(seed)
    shape = _shape(shape)
    values = rng.standard_normal(shape)
    bad = np.abs(values) > 2
    while bad.any():
        values[bad] = rng.standard_normal(int(bad.sum()))
        bad = np.abs(values) > 2
    return _out(values * stddev + mean, dtype)


@_replayed(draws=True)
def shuffle(value, seed=None, name=None):
    """``value``'s rows in a random order."""
    from .ops import gather
    value = _convert_to_tensor(value)
    return gather(value, generator(seed).permutation(value.shape[0]))


@_replayed(draws=True)
def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """``num_samples`` class indices per row of ``logits`` (batch, classes), each drawn with
    probability ``softmax(logits)``: a (batch, num_samples) int64 tensor (Gumbel-max)."""
    logits = _convert_to_tensor(logits)
    if logits.ndim != 2:
        raise ValueError(f"categorical: logits must be 2-D (batch, classes), got shape "
                         f"{logits.shape}")
    dtype = _numpy_dtype(dtype) or np.dtype("int64")
    if dtype not in (np.dtype("int32"), np.dtype("int64")):
        raise TypeError(f"categorical: dtype must be int32 or int64, got {dtype.name}")
    values = backend.to_host(logits._value).astype(np.float64)
    batch, classes = values.shape
    gumbel = generator(seed).gumbel(size=(batch, int(num_samples), classes))
    return _out((values[:, None, :] + gumbel).argmax(-1), dtype)


# --- TensorFlow's stateless ops ------------------------------------------------------------------
def _seed_pair(seed, op):
    """The seed as a host array of TensorFlow's dtype for it (int32 for small Python ints)."""
    values = backend.to_host(_convert_to_tensor(seed)._value)
    if values.shape != (2,) or values.dtype.kind not in "iu":
        raise ValueError(f"{op}: seed must be two integers (shape [2]), got {seed!r}")
    return values


def _uniform_values(words, shape, minval, maxval, dtype, op):
    """TensorFlow's uniform numbers from a stream of 32-bit words (``words(count)``): floats
    in [minval, maxval) (maxval 1 by default); integers in [minval, maxval), or the dtype's
    whole range when both bounds are None."""
    dtype, shape = _numpy_dtype(dtype), _shape(shape)
    count = int(np.prod(shape))
    if dtype.name in ("float32", "float64"):
        if dtype.itemsize == 8:
            bits = words(2 * count)
            unit = philox.unit_doubles(bits[0::2], bits[1::2])
        else:
            unit = philox.unit_floats(words(count))
        low, high = dtype.type(minval), dtype.type(1 if maxval is None else maxval)
        return _out((unit.astype(dtype) * (high - low) + low).reshape(shape), dtype)
    if dtype.name not in ("int32", "int64", "uint32", "uint64"):
        raise TypeError(f"{op}: dtype {dtype.name} is not supported (float32, float64, int32, "
                        f"int64)")
    wide = dtype.itemsize == 8
    bits = words(count * (2 if wide else 1)).astype(np.uint64)
    if wide:  # (the second word is the high half)
        bits = bits[1::2] << np.uint64(32) | bits[0::2]
    if minval is None and maxval is None:
        return _out(bits.astype(np.uint64 if wide else np.uint32).view(dtype).reshape(shape),
                    dtype)
    if minval is None or maxval is None:
        raise ValueError(f"{op}: integers need both minval and maxval, or neither (the whole "
                         f"range)")
    span = int(maxval) - int(minval)
    if span <= 0:
        raise ValueError(f"{op}: need minval < maxval, got {minval} and {maxval}")
    values = (bits % np.uint64(span)).astype(np.int64) + int(minval)
    return _out(values.reshape(shape), dtype)


def _normal_values(words, shape, mean, stddev, dtype, op):
    """TensorFlow's Box-Muller normals from a stream of 32-bit words."""
    dtype, shape = _numpy_dtype(dtype), _shape(shape)
    count = int(np.prod(shape))
    pairs = -(-count // 2)
    if dtype.name == "float32":
        unit = philox.unit_floats(words(2 * pairs))
        values = philox.box_muller(unit[0::2], unit[1::2], dtype)
    elif dtype.name == "float64":
        bits = words(4 * pairs)
        values = philox.box_muller(philox.unit_doubles(bits[0::4], bits[1::4]),
                                   philox.unit_doubles(bits[2::4], bits[3::4]), dtype)
    else:
        raise TypeError(f"{op}: dtype {dtype.name} is not supported (float32, float64)")
    return _out(values[:count].reshape(shape) * dtype.type(stddev) + dtype.type(mean), dtype)


def _stateless_array(seed, *, values, shape, low, high, dtype, op):
    """The numbers of a stateless op for the seed array: a function of the seed alone, so an
    op (a primitive without gradient) that a trace reads on every call."""
    seed = _seed_pair(seed, op)
    return values(lambda n: philox.words(seed, n), shape, low, high, dtype, op)._value


_stateless = _define("stateless_random", _stateless_array)


def stateless_uniform(shape, seed, minval=0, maxval=None, dtype=float32, name=None,
                      alg="auto_select"):
    """``tf.random.stateless_uniform``: TensorFlow's numbers for ``seed`` (two integers)."""
    return _stateless(_seed_tensor(seed), values=_uniform_values, shape=_shape(shape),
                      low=minval, high=maxval, dtype=dtype, op="stateless_uniform")


def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype=float32, name=None,
                     alg="auto_select"):
    """``tf.random.stateless_normal``: TensorFlow's Box-Muller on its Philox stream for
    ``seed`` (within an ulp or two of its float32 values)."""
    return _stateless(_seed_tensor(seed), values=_normal_values, shape=_shape(shape),
                      low=mean, high=stddev, dtype=dtype, op="stateless_normal")


def _seed_tensor(seed):
    return _convert_to_tensor(list(seed) if isinstance(seed, tuple) else seed)


def _stateless_split(seed, num=2, alg="auto_select"):
    """``num`` new seeds from ``seed``: rows of TensorFlow's whole-range integers."""
    dtype = _seed_pair(seed, "stateless_split").dtype
    return stateless_uniform([num, 2], seed, minval=None, maxval=None, dtype=dtype)


def _stateless_fold_in(seed, data, alg="auto_select"):
    """A new seed from ``seed`` and an integer ``data`` (a step, a replica's index), in
    ``data``'s dtype (int32 for a Python int), as TensorFlow's."""
    from .ops import cast, stack  # (ops sit above this module's draws)
    data = _convert_to_tensor(data)
    first = stateless_uniform([], seed, minval=None, maxval=None, dtype=data.dtype)
    return stack([first, cast(data, data.dtype)])


experimental = SimpleNamespace(stateless_split=_stateless_split,
                               stateless_fold_in=_stateless_fold_in)


# --- tf.random.Generator ---------------------------------------------------------------------
_MASK64 = (1 << 64) - 1


def _int64(word):
    """A 64-bit word as the int64 TensorFlow's state holds it."""
    word &= _MASK64
    return word - (1 << 64) if word >> 63 else word


def _seed_state(seed):
    """TensorFlow's state for ``Generator.from_seed``: an int cut into 64-bit words from the
    low one (a negative int's sign filling the rest), a sequence right-aligned after zeros."""
    if isinstance(seed, (int, np.integer)):
        seed = int(seed)
        return [_int64(seed >> shift) for shift in (0, 64, 128)]
    words = [int(w) for w in np.asarray(backend.to_host(_convert_to_tensor(seed)._value))
             .reshape(-1)]
    if len(words) > 3:
        raise ValueError(f"Generator.from_seed: a seed of {len(words)} words does not fit the "
                         f"Philox state of 3")
    return [0] * (3 - len(words)) + [_int64(w) for w in words]


def _state_words(generator):
    return [int(w) & _MASK64 for w in backend.to_host(generator.state._value)]


def _set_state(generator, words):
    """Write three words into the state variable, on whichever device it lives."""
    state = generator.state
    state.assign(backend.to_device(np.array([_int64(int(w)) for w in words], np.int64),
                                   backend.device_of(state._value)))


def _move(generator, numbers):
    """Move ``generator``'s 128-bit counter on by 256 per number, as TensorFlow's kernels
    reserve."""
    low, high, key = _state_words(generator)
    moved = ((high << 64 | low) + 256 * numbers) & ((1 << 128) - 1)
    _set_state(generator, [moved, moved >> 64, key])


@_replayed  # (under fw.function: drawn afresh, and the state moved on, on every call)
def _draw(generator, values, shape, a, b, dtype, op):
    """Numbers from ``generator``'s stream (``values``: _uniform_values or _normal_values)."""
    low, high, key = _state_words(generator)
    counter = [low & 0xFFFFFFFF, low >> 32, high & 0xFFFFFFFF, high >> 32]
    out = values(lambda n: philox.stream([key & 0xFFFFFFFF, key >> 32], counter, n), shape, a,
                 b, dtype, f"Generator.{op}")
    _move(generator, int(np.prod(_shape(shape))))
    return out


@_replayed
def _skip(generator, delta):
    _move(generator, int(delta))


class Generator:
    """``tf.random.Generator`` with TensorFlow's Philox algorithm and numbers: ``state`` is an
    int64 variable ``[counter low, counter high, key]``; a draw reads TensorFlow's stream from
    the counter and moves it on by 256 per number, as TensorFlow's kernels do, so a sequence of
    draws repeats TensorFlow's (uniform and integer numbers bit for bit, float32 normals within
    an ulp or two)."""

    def __init__(self, copy_from=None, state=None, alg=None):
        if alg not in (None, 1, "philox", "auto_select"):
            raise ValueError(f"Generator: only the Philox algorithm is supported, got {alg!r}")
        if copy_from is not None:
            state = backend.to_host(copy_from.state._value)
        values = np.asarray(state, dtype=np.int64).reshape(-1)
        if values.shape != (3,):
            raise ValueError(f"Generator: a Philox state has 3 int64 words, got {state!r}")
        self.state = Variable(values, trainable=False, name="generator_state")

    @classmethod
    def from_seed(cls, seed, alg=None):
        return cls(state=_seed_state(seed), alg=alg)

    @classmethod
    def from_state(cls, state, alg):
        return cls(state=backend.to_host(_convert_to_tensor(state)._value), alg=alg)

    @classmethod
    def from_key_counter(cls, key, counter, alg):
        return cls(state=[*np.asarray(counter).reshape(-1), int(np.asarray(key))], alg=alg)

    @classmethod
    def from_non_deterministic_state(cls, alg=None):
        return cls.from_seed(np.random.SeedSequence().entropy, alg)

    @property
    def algorithm(self):
        return 1  # (TensorFlow's number for Philox)

    @property
    def key(self):
        return self.state[2]

    def reset(self, state):
        _set_state(self, backend.to_host(_convert_to_tensor(state, np.int64)._value))

    def reset_from_seed(self, seed):
        self.reset(_seed_state(seed))

    def skip(self, delta):
        """Move the counter on as ``delta`` numbers would."""
        _skip(self, delta)

    def uniform(self, shape, minval=0, maxval=None, dtype=float32, name=None):
        return _draw(self, _uniform_values, shape, minval, maxval, dtype, "uniform")

    def uniform_full_int(self, shape, dtype=np.uint64, name=None):
        return _draw(self, _uniform_values, shape, None, None, dtype, "uniform_full_int")

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=float32, name=None):
        return _draw(self, _normal_values, shape, mean, stddev, dtype, "normal")

    def make_seeds(self, count=1):
        """``count`` seeds for the stateless ops: int64 keys over zeros, shape [2, count]."""
        keys = self.uniform_full_int([count], dtype=np.int64)
        return _wrap(backend.to_backend(np.stack([backend.to_host(keys._value),
                                                 np.zeros(count, np.int64)])))

    def split(self, count=1):
        """``count`` new generators, each keyed by a number from this one."""
        keys = backend.to_host(self.uniform_full_int([count], dtype=np.int64)._value)
        return [Generator(state=[0, 0, int(key)]) for key in keys]
