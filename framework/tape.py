"""``GradientTape``: records ops on tensors it watches and differentiates them in reverse.

A tape is a list of records ``(primitive, inputs, output, params, input arrays)`` in execution
order, plus the set of ids of the tensors it tracks (watched tensors, accessed trainable variables
and the outputs of recorded ops). Records hold their tensors, so those ids stay valid while the
records live; no tensor points back at a tape, so graphs are freed by reference counting alone.

``gradient`` scans the records forward once to find those that depend on the sources, then walks
just those backwards (execution order is already a topological order: no recursion, no sort),
adding up cotangents per tensor id. A non-persistent tape drops each record once passed, so
memory falls during the backward pass. A first-order pass that no tape records (every training
step) carries raw arrays instead of tensors and calls the ops' raw VJPs where they have one.
"""
import enum
import math
import warnings
from contextlib import contextmanager
from operator import is_

from . import backend, nest
from .context import state
from .dtypes import FLOATING_KINDS, is_floating
from .indexed_slices import IndexedSlices, add_cotangents, dense_cotangent
from .ops import add, broadcast_to, concat, reduce_sum, reshape, transpose
from .tensor import Tensor, Variable, wrap


class UnconnectedGradients(enum.Enum):
    """What ``gradient`` answers for a source the target does not depend on."""
    NONE = "none"
    ZERO = "zero"
    RAISE = "raise"  # beyond TensorFlow: an error that says why each source got no gradient


class GradientTape:
    """Record operations for automatic differentiation, with ``tf.GradientTape``'s semantics."""

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = persistent
        self._watch_accessed = watch_accessed_variables
        self._recording = False
        self._used = False
        self._clear()

    def _clear(self):
        self._records = []
        self._tracked = set()
        self._watched = []  # watched tensors and variables, holding them alive
        self._versions = {}  # id(variable) -> (variable, its version when first watched)
        self._escaped = []  # recorded tensors whose value went to NumPy
        self._cotangents = None  # a persistent tape's last raw pass: see _known_cotangents

    # --- recording ------------------------------------------------------------------------------
    def __enter__(self):
        if self._recording:
            raise ValueError("This tape is already recording; a tape cannot be entered twice.")
        state.recording.append(self)
        self._recording = True
        return self

    def __exit__(self, *exc_info):
        if self._recording:
            state.recording.remove(self)
            self._recording = False

    @contextmanager
    def stop_recording(self):
        """Pause recording on this tape (ops inside are not differentiated through it)."""
        if not self._recording:
            raise ValueError("Tape is not recording.")
        self.__exit__()
        try:
            yield
        finally:
            self.__enter__()

    def reset(self):
        """Forget everything recorded and watched, as if the context were exited and re-entered.

        Like TensorFlow, only inside the context: elsewhere ``ValueError("Tape is not recording.")``.
        """
        if not self._recording:
            raise ValueError("Tape is not recording.")
        self._clear()

    def watch(self, tensor):
        """Track a tensor, a variable, or any nested structure of them."""
        for t in nest.flatten(tensor):
            if not isinstance(t, Tensor):
                raise TypeError(f"watch() takes tensors and variables, got {type(t).__name__}: "
                                f"{t!r}; convert it with fw.constant first")
            if not is_floating(t.dtype):
                warnings.warn(f"The dtype of the watched tensor must be floating (e.g. float32), "
                              f"got {t.dtype.name}; its gradient will be None", stacklevel=2)
                continue
            if id(t) not in self._tracked:
                self._watch_new(t)

    def _watch_new(self, t):
        """Start tracking a floating tensor or variable the tape does not track yet (a
        variable's version is noted, see ``_check_versions``); False for any other dtype."""
        if t._value.dtype.kind not in FLOATING_KINDS:  # is_floating, inline: every first read
            return False
        self._tracked.add(id(t))
        self._watched.append(t)
        if isinstance(t, Variable):
            self._versions[id(t)] = (t, t._version)
        return True

    def _note_assign(self, variable):
        """An assign while recording: take a new snapshot unless a recorded op read the old value."""
        if id(variable) in self._versions and not any(
                a is variable for record in self._records if record for a in record[1]):
            self._versions[id(variable)] = (variable, variable._version)

    def watched_variables(self):
        """The variables this tape watches, in the order they were created."""
        return tuple(sorted((v for v in self._watched if isinstance(v, Variable)),
                            key=lambda v: v._uid))

    # --- differentiation ------------------------------------------------------------------------
    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE):
        """d(sum of targets)/d(source) for each source, in the structure of ``sources``."""
        tracer = state.tracer
        if tracer is not None and tracer.intercepts:  # fw.function records the pass as steps
            return tracer.gradient(self, target, sources, output_gradients, unconnected_gradients)
        mode = unconnected_gradients
        if mode is not UnconnectedGradients.NONE:
            mode = _unconnected_mode(mode)
        self._begin_differentiation("gradient")
        targets = _tensors(target, "target")
        flat_sources = _tensors(sources, "source")
        # No tape records this pass (every training step): cotangents stay raw arrays.
        raw = not state.recording
        seeds = None if output_gradients is None else _seeds(targets, output_gradients, raw)
        grads = self._backward(targets, seeds, flat_sources, 0, self._frees(mode), raw,
                               reuse=raw and self._persistent and seeds is None)
        if mode is not UnconnectedGradients.NONE:
            grads = [g if g is not None else self._unconnected(s, i, targets, mode, s.shape)
                     for i, (g, s) in enumerate(zip(grads, flat_sources))]
        self._release()
        return grads if flat_sources is sources else nest.pack_sequence_as(sources, grads)

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor=True):
        """The full Jacobian of ``target`` for each source: shape ``target.shape + source.shape``.

        With ``experimental_use_pfor`` all rows go through one backward pass whose cotangent has
        an extra leading axis (chunks of ``parallel_iterations`` rows bound its memory); without
        it, one backward pass per row.
        """
        mode = _unconnected_mode(unconnected_gradients)
        self._begin_differentiation("jacobian")
        (target,) = _tensors([target], "target")
        flat_sources = _tensors(sources, "source")
        n = math.prod(target.shape)
        eye = _eye_like(target, n)
        parts = self._rows(target, flat_sources, n, parallel_iterations, experimental_use_pfor,
                           lambda rows: reshape(eye[rows], _count(rows) + target.shape),
                           self._frees(mode))
        out = []
        for i, (chunks, s) in enumerate(zip(parts, flat_sources)):
            if chunks is None:
                out.append(self._unconnected(s, i, [target], mode, target.shape + s.shape))
            else:
                out.append(reshape(_join(chunks), target.shape + s.shape))
        self._release()
        return nest.pack_sequence_as(sources, out)

    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                       parallel_iterations=None, experimental_use_pfor=True):
        """Per-example Jacobians, ``[b, y..., x...]``, when ``target[i]`` depends on ``source[i]`` only."""
        mode = _unconnected_mode(unconnected_gradients)
        self._begin_differentiation("batch_jacobian")
        target, source = _tensors((target, source), "target/source")
        if target.ndim < 1 or source.ndim < 1 or target.shape[0] != source.shape[0]:
            raise ValueError(f"batch_jacobian needs target and source with the same leading "
                             f"(batch) dimension, got {target.shape} and {source.shape}")
        ny = math.prod(target.shape[1:])
        eye = _eye_like(target, ny)

        def seed(rows):  # row j of every example at once: (m, b, y...)
            block = reshape(eye[rows], _count(rows) + (1,) + target.shape[1:])
            return broadcast_to(block, (block.shape[0],) + target.shape)

        (chunks,) = self._rows(target, [source], ny, parallel_iterations,
                               experimental_use_pfor, seed, self._frees(mode))
        if chunks is None:
            result = self._unconnected(source, 0, [target], mode,
                                       target.shape + source.shape[1:])
        else:
            stacked = transpose(_join(chunks), (1, 0) + tuple(range(2, source.ndim + 1)))
            result = reshape(stacked, target.shape + source.shape[1:])
        self._release()
        return result

    def _rows(self, target, sources, n, parallel_iterations, use_pfor, seed_for, free):
        """Backward passes over the rows of a Jacobian: per source, a list of row blocks."""
        step = (parallel_iterations or n) if use_pfor else 1
        starts = list(range(0, n, max(step, 1))) or [0]
        parts = [[] for _ in sources]
        for k, start in enumerate(starts):
            rows = slice(start, min(start + step, n))
            seed = seed_for(rows)
            last = k == len(starts) - 1
            grads = self._backward([target], [seed], sources, 1, last and free, False)
            for part, g in zip(parts, grads):
                part.append(g)
        return [None if any(g is None for g in part) else part for part in parts]

    def _frees(self, mode):
        """Whether the walk frees the records: on a non-persistent tape, unless a "raise"
        answer still needs them to say why a source is unconnected (then ``_release`` does)."""
        return not self._persistent and mode is not UnconnectedGradients.RAISE

    def _release(self):
        """After a non-persistent tape's one differentiation, drop all but the watched variables
        (``watched_variables()`` still answers, as in TensorFlow)."""
        if not self._persistent:
            self._watched = [v for v in self._watched if isinstance(v, Variable)]
            for kept in (self._records, self._tracked, self._escaped):
                kept.clear()

    def _begin_differentiation(self, what):
        if self._used:
            raise RuntimeError(
                f"A non-persistent GradientTape can only be used to compute one set of gradients "
                f"(or jacobians); this {what}() call is the second. Create the tape with "
                f"GradientTape(persistent=True) to differentiate several times.")
        if self._recording:
            if not self._persistent:
                self.__exit__()
            else:
                warnings.warn(
                    "Calling GradientTape.gradient on a persistent tape inside its context is "
                    "significantly less efficient than calling it outside the context (it causes "
                    "the gradient ops to be recorded on the tape, leading to increased CPU and "
                    "memory usage). Only call GradientTape.gradient inside the context if you "
                    "actually want to trace the gradient in order to compute higher order "
                    "derivatives.", stacklevel=3)
        if not self._persistent:
            self._used = True

    def _backward(self, targets, seeds, sources, lead, free, raw, reuse=False):
        """Cotangents of ``sources`` (None where unconnected); ``lead`` batch axes lead ``g``.

        ``seeds``: the targets' cotangents, or None for ones. ``raw``: the seeds and every
        cotangent are raw arrays, pulled back by the raw VJPs, and only the sources' gradients
        are wrapped (no leading axes then). ``reuse`` (a persistent tape's raw pass from the
        default seeds) starts from the cotangents an earlier such pass for the same targets
        completed, and keeps this pass's for the next one."""
        records = self._records
        # Complete already, when reused: only what they do not cover is pulled back.
        grads = self._known_cotangents(targets) if reuse else {}
        reach, relevant, source_ids = self._relevant(sources, grads)
        self._check_versions(relevant)
        get = grads.get
        for i, t in enumerate(targets):
            if id(t) in reach:
                seed = _ones_like(t._value, raw) if seeds is None else seeds[i]
                prev = get(id(t))
                grads[id(t)] = seed if prev is None else _plus(prev, seed, raw)
        # A cotangent is complete once the walk has passed its tensor's last consumer: the walk
        # lets go of it then, unless it answers for a source or is kept for the next pass.
        pop = get if reuse else grads.pop
        for i in reversed(relevant):
            prim, args, out, params, values = records[i]
            if free:
                records[i] = None
            key = id(out)
            g = get(key) if key in source_ids else pop(key, None)
            if g is None:
                continue
            if g.__class__ is IndexedSlices:  # (a gather's sparse gradient, reaching an op)
                g = dense_cotangent(g, raw)
            if raw and prim.raw_vjp is not None:
                needs = tuple([id(a) in reach for a in args])
                pulled = prim.raw_vjp(g, out._value, needs, *values, **params)
            else:
                pulled = _pull(prim, g, out, args, params, reach, raw)
            for a, ga in zip(args, pulled):
                if ga is None:
                    continue
                shape = a._value.shape
                if (ga.shape[lead:] if lead else ga.shape) != shape:
                    ga = _fit_raw(ga, shape) if raw else sum_to_shape(ga, shape, lead)
                key = id(a)
                prev = get(key)
                grads[key] = ga if prev is None else _plus(prev, ga, raw)
        if reuse:  # (taken off the tape meanwhile: a failed pass leaves no partial ones)
            self._cotangents = (targets, len(records), grads)
        if raw:
            return [None if g is None else g if g.__class__ is IndexedSlices else wrap(g)
                    for g in map(get, map(id, sources))]
        return [get(id(s)) for s in sources]

    def _relevant(self, sources, known):
        """What a walk from ``sources`` covers: the ids of the tensors they reach whose
        cotangents are not ``known`` already, the indices of the records that read one of
        those, and the ids of the sources the tape tracks. The reach stops at a known
        cotangent: the records beyond it have nothing left to pull back."""
        tracked, records = self._tracked, self._records
        source_ids = tracked.intersection(map(id, sources))
        if not known and source_ids.issuperset(map(id, self._watched)):
            # Everything recorded descends from a watched tensor, so from the sources: no scan.
            return tracked, range(len(records)), source_ids
        reach, relevant = source_ids.difference(known), []
        for i, (_, args, out, _, _) in enumerate(records):
            for a in args:
                if id(a) in reach:
                    relevant.append(i)
                    if id(out) not in known:
                        reach.add(id(out))
                    break
        return reach, relevant, source_ids

    def _known_cotangents(self, targets):
        """The complete cotangents (by tensor id) of this tape's last raw pass, when it was for
        the same targets and nothing was recorded since; else an empty dict. The tape lets go
        of them meanwhile: the pass adds its own and hands them back when it completes.

        A tensor that the earlier pass's sources reach has all its consumers among the records
        that pass walked, so its cotangent there is complete: a second ``gradient`` of a
        persistent tape (one optimizer per layer, say) walks only what the first did not cover,
        and gets exactly the numbers a fresh walk would. Raw VJPs never write into their
        cotangents, so sharing them is safe; they cost the memory of one cotangent per tensor
        the passes reached, for as long as the tape lives.
        """
        memo, self._cotangents = self._cotangents, None
        if memo is None:
            return {}
        known_targets, count, cotangents = memo
        if count != len(self._records) or len(known_targets) != len(targets) or not all(
                map(is_, known_targets, targets)):
            return {}
        return cotangents

    def _check_versions(self, relevant):
        """Refuse to differentiate through a variable updated after the tape read it."""
        for var, version in self._versions.values():
            if var._version != version:
                break
        else:
            return  # (the usual case: one comparison per variable)
        stale = {k for k, (var, version) in self._versions.items() if var._version != version}
        for i in relevant:
            for a in self._records[i][1]:
                if id(a) in stale:
                    raise RuntimeError(
                        f"variable '{a.name}' was modified (assign or apply_gradients) after the "
                        f"tape used it, so the recorded computation no longer matches its value. "
                        f"Compute every gradient you need before applying any update.")

    def _unconnected(self, source, index, targets, mode, shape):
        if mode is UnconnectedGradients.ZERO:
            return wrap(_zeros_like(source._value, shape))
        if mode is UnconnectedGradients.RAISE:
            raise ValueError(f"source {index} ({_describe(source)}) gets no gradient: "
                             f"{self._why_unconnected(source, targets)}")
        return None

    def _why_unconnected(self, source, targets):
        if not is_floating(source.dtype):
            return (f"its dtype is {source.dtype.name}; only floating tensors are "
                    f"differentiable (fw.cast it to float32 before the computation)")
        if id(source) not in self._tracked:
            if isinstance(source, Variable) and not source.trainable:
                return "it is a non-trainable variable, which the tape does not watch on access"
            return ("the tape never watched it: call tape.watch() on it inside the tape, or use "
                    "a trainable fw.Variable (and watch_accessed_variables=True)")
        reach = {id(source)}
        for _, args, out, _, _ in self._records:
            if any(id(a) in reach for a in args):
                reach.add(id(out))
        escaped = [t for t in self._escaped if id(t) in reach]
        if escaped:
            return (f"the target depends on it only through a value that left the tape via "
                    f".numpy()/NumPy/float() ({_describe(escaped[0])}); keep the computation in "
                    f"framework ops")
        return "the target does not depend on it (no recorded op connects them)"


def _pull(prim, g, out, args, params, reach, raw=False):
    """The cotangent of each argument (None where it needs none), from the tensor VJPs; on a
    raw pass (an op without a raw VJP) on the wrapped arrays, unwrapped again."""
    if raw:
        return [None if ga is None else ga._value
                for ga in _pull(prim, wrap(g), out, args, params, reach)]
    return [None if vjp is None or id(a) not in reach else
            vjp(g, out, *args, **params) if params else vjp(g, out, *args)
            for a, vjp in zip(args, prim.vjps)]


def _plus(a, b, raw):
    if a.__class__ is IndexedSlices or b.__class__ is IndexedSlices:
        return add_cotangents(a, b, raw)  # sparse + sparse stays sparse, else dense
    return a + b if raw else add(a, b)


def _fit_raw(g, shape):
    """``sum_to_shape`` on a raw array (raw passes have no leading axes)."""
    return g.sum(axis=_broadcast_axes(g.shape, shape, 0)).reshape(shape)


def sum_to_shape(g, shape, lead=0):
    """Sum a broadcast cotangent back to an input's ``shape`` (keeping ``lead`` batch axes)."""
    gshape = g._value.shape
    axes = _broadcast_axes(gshape, shape, lead)
    if axes:
        g = reduce_sum(g, axis=axes)
    return reshape(g, tuple(gshape[:lead]) + tuple(shape))


def _broadcast_axes(gshape, shape, lead):
    """The axes of a cotangent of shape ``gshape`` that broadcasting added to or stretched
    from ``shape`` (after ``lead`` batch axes)."""
    extra = len(gshape) - lead - len(shape)
    return tuple(range(lead, lead + extra)) + tuple(
        lead + extra + i for i, d in enumerate(shape) if d == 1 and gshape[lead + extra + i] != 1)


def _unconnected_mode(value):
    if value.__class__ is UnconnectedGradients:
        return value
    try:
        return UnconnectedGradients(value.value if isinstance(value, UnconnectedGradients)
                                    else str(value).lower())
    except ValueError:
        raise ValueError(f"unconnected_gradients must be 'none', 'zero' or 'raise', "
                         f"got {value!r}") from None


def _tensors(structure, what):
    """The leaves of ``structure`` (a tensor or any nest of them) as a list, each checked: a
    plain list of tensors is returned as it is (so ``gradient`` knows it needs no packing)."""
    if isinstance(structure, Tensor):
        return [structure]
    if structure.__class__ is list:
        for t in structure:
            if not isinstance(t, Tensor):
                break
        else:
            return structure
    items = nest.flatten(structure)
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            raise TypeError(f"{what} {i} is a {type(t).__name__}, not a tensor or variable: "
                            f"{t!r:.80}")
    return items


def _seeds(targets, output_gradients, raw):
    """The user's ``output_gradients``, checked, as the cotangents the backward pass starts
    from (ones for a None entry; raw arrays when ``raw``)."""
    given = nest.flatten(output_gradients)
    if len(given) != len(targets):
        raise ValueError(f"output_gradients has {len(given)} entries for {len(targets)} targets")
    seeds = []
    for i, (t, g) in enumerate(zip(targets, given)):
        if g is None:
            seeds.append(_ones_like(t._value, False))
            continue
        g = g if isinstance(g, Tensor) else wrap(_array_like(t._value, g))
        if g.shape != t.shape:
            raise ValueError(f"output_gradients[{i}] has shape {g.shape}, but target {i} has "
                             f"shape {t.shape}")
        seeds.append(g)
    return [seed._value for seed in seeds] if raw else seeds


def _describe(t):
    kind = f"variable '{t.name}'" if isinstance(t, Variable) else "tensor"
    return f"{kind} of shape {t.shape} and dtype {t.dtype.name}"


def _ones_like(value, raw):
    """A target's default seed (wrapped unless ``raw``), made without the wrapper of ``ones``:
    every gradient() call makes one, mostly for a 0-d loss."""
    xp = backend.array_module(value)
    if value.ndim:
        ones = xp.empty(value.shape, dtype=value.dtype)
        ones.fill(1)
    else:
        ones = xp.array(1, dtype=value.dtype)
    return ones if raw else wrap(ones)


def _zeros_like(value, shape):
    return backend.array_module(value).zeros(shape, dtype=value.dtype)


def _array_like(value, data):
    return backend.array_module(value).asarray(data, dtype=value.dtype)


def _eye_like(target, n):
    return wrap(backend.array_module(target._value).eye(n, dtype=target.dtype))


def _count(rows):
    """The number of Jacobian rows in a block, as a shape prefix (explicit: it may be 0)."""
    return (rows.stop - rows.start,)


def _join(chunks):
    return chunks[0] if len(chunks) == 1 else concat(chunks, axis=0)
