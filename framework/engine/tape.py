"""``GradientTape``: records ops on tensors it watches and differentiates them in reverse.

A tape is a list of records (``framework.engine.recording``) in execution order, plus the
tensors it tracks. ``gradient`` scans the records forward once to find those that depend on the
sources, then walks just those backwards (execution order is already a topological order: no
recursion, no sort), adding up cotangents per tensor id. A non-persistent tape drops each record
once passed, so memory falls during the backward pass.

There are two walks. One on tensors (``_tensor_walk``), for a pass that a tape records (higher
orders) and for Jacobians (a leading axis of rows, ``framework.engine.jacobian``): the ops'
tensor VJPs, whose ops are recorded in turn. One on arrays (``_array_walk``), for the
first-order pass no tape records (every training step): the ops' array VJPs, nothing wrapped,
each call made through an ``ArrayCalls``, which calls it, or, under ``fw.function``, is the
tracer, which also writes it into its plan.
"""
import warnings
from contextlib import contextmanager
from functools import partial
from operator import is_

from . import backend, nest
from .context import hold, state
from .indexed_slices import IndexedSlices, add_cotangents, dense_cotangent
from .jacobian import Jacobians, checked_tensors as _tensors, zeros_like as _zeros_like
from ..ops import add, reduce_sum, reshape
from .recording import TapeRecording
from .tensor import Tensor, Variable, wrap, wrap_constant
from .unconnected import UnconnectedGradients, describe, unconnected_mode, why_unconnected

__all__ = ["ArrayCalls", "GradientTape", "UnconnectedGradients", "sum_to_shape"]


class GradientTape(TapeRecording, Jacobians):
    """Record operations for automatic differentiation, with ``tf.GradientTape``'s semantics."""

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = persistent
        self._watch_accessed = watch_accessed_variables
        self._recording = False
        self._used = False
        self._clear()

    # --- recording ------------------------------------------------------------------------------
    def __enter__(self):
        if self._recording:
            raise ValueError("This tape is already recording; a tape cannot be entered twice.")
        state.recording.append(self)
        hold(self)
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

    # --- differentiation ------------------------------------------------------------------------
    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE):
        """d(sum of targets)/d(source) for each source, in the structure of ``sources``."""
        tracer = state.tracer
        if tracer is not None and tracer.intercepts:  # fw.function writes the pass into its plan
            return tracer.gradient(self, target, sources, output_gradients, unconnected_gradients)
        # No tape records this pass (every training step): on arrays.
        return self.differentiate(target, sources, output_gradients, unconnected_gradients,
                                  None if state.recording else CALL)

    def differentiate(self, target, sources, output_gradients, unconnected_gradients, calls):
        """``gradient``: a walk on tensors when ``calls`` is None (a tape records it), else a
        walk on arrays making its array calls through ``calls`` (an ``ArrayCalls``)."""
        mode = unconnected_gradients
        if mode is not UnconnectedGradients.NONE:
            mode = unconnected_mode(mode)
        self._begin_differentiation("gradient")
        targets = _tensors(target, "target")
        flat_sources = _tensors(sources, "source")
        seeds = None if output_gradients is None else _seeds(targets, output_gradients)
        if calls is None:
            grads = self._tensor_walk(targets, seeds, flat_sources, 0, self._frees(mode))
        else:
            grads = self._array_walk(targets, seeds and [seed._value for seed in seeds],
                                     flat_sources, self._frees(mode), calls)
        if mode is not UnconnectedGradients.NONE:
            grads = [g if g is not None else self._unconnected(s, i, targets, mode, s.shape)
                     for i, (g, s) in enumerate(zip(grads, flat_sources))]
        self._done()
        return grads if flat_sources is sources else nest.pack_sequence_as(sources, grads)

    def _frees(self, mode):
        """Whether the walk frees the records: on a non-persistent tape, unless a "raise"
        answer still needs them to say why a source is unconnected (then ``_done`` does)."""
        return not self._persistent and mode is not UnconnectedGradients.RAISE

    def _done(self):
        if not self._persistent:
            self._release()

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

    # --- the two walks ----------------------------------------------------------------------
    # Both give the cotangents of ``sources`` (None where unconnected) from the targets' ``seeds``
    # (None: ones); a target that is itself a source counts its own seed, as in TensorFlow.
    # ``release``: drop each record once passed (a non-persistent tape's last pass). A cotangent
    # is complete once the walk has passed its tensor's last consumer: the walk lets go of it
    # then, unless it answers for a source (or an array walk remembers it for the next pass).

    def _tensor_walk(self, targets, seeds, sources, lead, release):
        """The walk a tape records (higher orders) or a Jacobian takes (``lead`` = 1: every
        cotangent has a leading axis of rows): tensors, pulled back by the ops' tensor VJPs,
        so that those ops are recorded in turn."""
        stale = self._stale_variables()
        grads = {}
        reach, relevant, source_ids = self._start(targets, seeds, sources, grads, stale,
                                                  _ones_tensor, _add_tensors)
        get = grads.get
        for _, r, g in self._reached(relevant, grads, grads.pop, source_ids, release):
            if g.__class__ is IndexedSlices:  # (a gather's sparse gradient, reaching an op)
                g = dense_cotangent(g, False)
            pulled = _pull(r.op, g, r.output, r.inputs, r.params, reach,
                           _as_read(r) if stale else None)
            for a, ga in zip(r.inputs, pulled):
                if ga is not None:
                    shape = a._value.shape
                    if (ga.shape[1:] if lead else ga.shape) != shape:
                        ga = sum_to_shape(ga, shape, lead)
                    prev = get(id(a))
                    grads[id(a)] = ga if prev is None else _add_tensors(prev, ga)
        return [get(id(s)) for s in sources]

    def _array_walk(self, targets, seeds, sources, release, calls):
        """The first-order walk no tape records (every training step): arrays, pulled back by
        the ops' array VJPs (their host forms on NumPy arrays: an op refuses to mix devices,
        so the cotangents live where the targets do), each made through ``calls``; only the
        sources' gradients are wrapped. A persistent tape remembers the cotangents it
        completed for its next pass (``_reusable_cotangents``)."""
        stale = self._stale_variables()
        remember = self._persistent and seeds is None
        grads = self._reusable_cotangents(targets, stale) if remember else {}
        reach, relevant, source_ids = self._start(targets, seeds, sources, grads, stale,
                                                  _ones, partial(calls.array_call, _add_arrays))
        get = grads.get
        on_host = bool(targets) and not backend.is_device_array(targets[0]._value)
        call, call_vjp = calls.array_call, calls.vjp
        fused = []  # the ids of the tensors an op's VJP went through (see ``_through``)
        for i, r, g in self._reached(relevant, grads, get if remember else grads.pop, source_ids,
                                  release):
            prim, args = r.op, r.inputs
            if g.__class__ is IndexedSlices:
                g = call(dense_cotangent, g, True)
            if prim.array_vjp is None:
                pulled = calls.tensor_vjps(prim, g, r, reach, _as_read(r) if stale else None)
            else:
                if len(args) == 2:  # (most ops: spelled out, a comprehension costs a call)
                    a0, a1 = args
                    needs = (id(a0) in reach, id(a1) in reach)
                elif len(args) == 1:
                    needs = (id(args[0]) in reach,)
                elif len(args) == 3:  # (a dense layer's)
                    a0, a1, a2 = args
                    needs = (id(a0) in reach, id(a1) in reach, id(a2) in reach)
                else:
                    needs = tuple([id(a) in reach for a in args])
                vjp = prim.host_array_vjp if on_host else prim.array_vjp
                if prim.through is not None:
                    vjp, args = self._through(prim.through, i, args, vjp, source_ids, fused)
                pulled = call_vjp(vjp, g, r, needs)
            for a, ga in zip(args, pulled):
                if ga is not None:
                    if len(ga.shape) != a._value.ndim or ga.shape != a._value.shape:
                        ga = call(_fit_array, ga, a._value)
                    prev = get(id(a))
                    grads[id(a)] = ga if prev is None else call(_add_arrays, prev, ga)
        if remember:  # (off the tape meanwhile: a failed pass leaves no partial ones)
            for key in fused:  # (what reached them is not all: the fused op's part went past)
                grads.pop(key, None)
            self._memo = (targets, len(self._records), grads)
        return [None if g is None else g if g.__class__ is IndexedSlices else wrap(g)
                for g in map(get, map(id, sources))]

    def _start(self, targets, seeds, sources, grads, stale, ones, plus):
        """What a walk covers (``_relevant``), checked against ``stale`` variables, with the
        targets' seeds (or ``ones``) added into ``grads`` (by ``plus``) where the walk reaches."""
        reach, relevant, source_ids = self._relevant(sources, grads)
        if stale:
            self._check_versions(relevant, stale)
        get = grads.get
        # (remembered cotangents include their targets' seeds)
        remembered = grads.keys() & map(id, targets) if grads else ()
        for i, t in enumerate(targets):
            if id(t) in remembered or not (id(t) in reach or any(s is t for s in sources)):
                continue
            seed = ones(t._value) if seeds is None else seeds[i]
            prev = get(id(t))
            grads[id(t)] = seed if prev is None else plus(prev, seed)
        return reach, relevant, source_ids

    def _reached(self, relevant, grads, take, source_ids, release):
        """The ``relevant`` records, last first, each with its index and its output's complete
        cotangent (``take``n from ``grads``: kept there for a source); none the walk never
        reached."""
        records = self._records
        for i in reversed(relevant):
            r = records[i]
            if release:
                records[i] = None
            key = id(r.output)
            g = grads.get(key) if key in source_ids else take(key, None)
            if g is not None:
                yield i, r, g

    def _through(self, through, i, args, vjp, source_ids, fused):
        """The array VJP for record ``i`` (inputs ``args``) and the tensors it pulls back to:
        ``through``'s, and its producer's input in place of the last input, when the record
        before produced that input and no source is that input; else ``vjp`` and ``args``."""
        produced = args[-1]
        before = self._records[i - 1] if i else None
        if (before is None or before.op is not through.producer or before.output is not produced
                or id(produced) in source_ids or not through.fits(before.params)):
            return vjp, args
        fused.append(id(produced))
        return through.array_vjp, args[:-1] + before.inputs

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
        for i, r in enumerate(records):
            for a in r.inputs:
                if id(a) in reach:
                    relevant.append(i)
                    if id(r.output) not in known:
                        reach.add(id(r.output))
                    break
        return reach, relevant, source_ids

    def _reusable_cotangents(self, targets, stale):
        """The cotangents (by tensor id) that the last array pass of this persistent tape
        completed, if it was for the same targets, nothing was recorded since, and no variable
        the tape read has changed since; else an empty dict. The tape lets go of them
        meanwhile: the pass adds its own and hands them back when it completes.

        They are complete: a tensor that pass reached has all its consumers among the records
        it walked. So a second ``gradient`` (one optimizer per layer) walks only what the first
        did not cover, with the numbers a fresh walk gives; array VJPs never write into their
        cotangents, so sharing them is safe.
        """
        memo, self._memo = self._memo, None
        if memo is None or stale:
            return {}  # (a stale variable: the fresh walk's version check explains it)
        known_targets, count, cotangents = memo
        if count != len(self._records) or len(known_targets) != len(targets) or not all(
                map(is_, known_targets, targets)):
            return {}
        return cotangents

    def _check_versions(self, relevant, stale):
        """Refuse to differentiate through a ``stale`` variable (updated after the tape read
        it) whose value one of the ``relevant`` records did not keep: a write that went around
        ``assign`` and the optimizers (see ``context.before_update``)."""
        for i in relevant:
            r = self._records[i]
            for a, array in zip(r.inputs, r.arrays):
                if id(a) in stale and array is a._value:
                    raise RuntimeError(
                        f"variable '{a.name}' was modified in place on its raw array after the "
                        f"tape used it, so the recorded computation no longer matches its "
                        f"value; update variables with assign() or an optimizer")

    def _unconnected(self, source, index, targets, mode, shape):
        if mode is UnconnectedGradients.ZERO:
            return wrap_constant(_zeros_like(source._value, shape))
        if mode is UnconnectedGradients.RAISE:
            raise ValueError(f"source {index} ({describe(source)}) gets no gradient: "
                             f"{why_unconnected(self, source, targets)}")
        return None


def _pull(prim, g, out, args, params, reach, read=None):
    """The cotangent of each argument (None where it needs none), from the tensor VJPs. An op
    that is not differentiable (``argmax``) pulls back nothing. ``read``: the inputs as the op
    read them, where a variable has changed since (``_as_read``)."""
    if prim.vjps is None:
        return ()
    values = args if read is None else read
    return [None if vjp is None or id(a) not in reach else
            vjp(g, out, *values, **params) if params else vjp(g, out, *values)
            for a, vjp in zip(args, prim.vjps)]


def _as_read(r):
    """Record ``r``'s inputs as its op read them: a variable updated since stands in as the
    copy of its old value that the record kept (``TapeRecording.keep_values``)."""
    return tuple(wrap(array) if a.__class__ is Variable and array is not a._value
                 else a for a, array in zip(r.inputs, r.arrays))


class ArrayCalls:
    """How an array walk makes its array calls: this one just calls them. fw.function's tracer
    is the other (``framework.tracing.tracer.Tracer``): it also writes each call down as a step
    of its plan, so that a replay repeats this very walk."""

    def vjp(self, vjp, g, record, needs):
        """An op's array VJP, on the cotangent ``g`` of ``record``'s output."""
        return vjp(g, record.output._value, needs, *record.arrays, **record.params)

    def array_call(self, fn, *args):
        """A sum, addition or densifying of cotangents."""
        return fn(*args)

    def tensor_vjps(self, prim, g, record, reach, read):
        """An op without an array VJP: its tensor VJPs, on ``g`` wrapped, unwrapped again."""
        return [None if ga is None else ga._value for ga in _pull(
            prim, wrap(g), record.output, record.inputs, record.params, reach, read)]


CALL = ArrayCalls()


def _add_arrays(a, b):
    if a.__class__ is IndexedSlices or b.__class__ is IndexedSlices:
        return add_cotangents(a, b, True)  # sparse + sparse stays sparse, else dense
    return a + b


def _add_tensors(a, b):
    if a.__class__ is IndexedSlices or b.__class__ is IndexedSlices:
        return add_cotangents(a, b, False)
    return add(a, b)


def _fit_array(g, like):
    """``sum_to_shape`` on an array, to the shape of the array ``like`` (array passes have no
    leading axes; the shape is read here, so a traced step reads each call's own)."""
    shape = like.shape
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


def _seeds(targets, output_gradients):
    """The user's ``output_gradients``, checked, as the cotangents the backward pass starts
    from (ones for a None entry)."""
    given = nest.flatten(output_gradients)
    if len(given) != len(targets):
        raise ValueError(f"output_gradients has {len(given)} entries for {len(targets)} targets")
    seeds = []
    for i, (t, g) in enumerate(zip(targets, given)):
        if g is None:
            seeds.append(_ones_tensor(t._value))
            continue
        g = g if isinstance(g, Tensor) else wrap_constant(_array_like(t._value, g))
        if g.shape != t.shape:
            raise ValueError(f"output_gradients[{i}] has shape {g.shape}, but target {i} has "
                             f"shape {t.shape}")
        seeds.append(g)
    return seeds


def _ones(value):
    """A target's default seed, made without the wrapper of ``ones``: every gradient() call
    makes one, mostly for a 0-d loss."""
    xp = backend.array_module(value)
    if value.ndim:
        ones = xp.empty(value.shape, dtype=value.dtype)
        ones.fill(1)
        return ones
    return xp.array(1, dtype=value.dtype)


def _ones_tensor(value):
    return wrap_constant(_ones(value))


def _array_like(value, data):
    return backend.array_module(value).asarray(data, dtype=value.dtype)
