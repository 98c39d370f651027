"""``GradientTape``: records ops on tensors it watches and differentiates them in reverse.

A tape is a list of records (``framework.recording``) in execution order, plus the tensors it
tracks. ``gradient`` scans the records forward once to find those that depend on the sources,
then walks just those backwards (execution order is already a topological order: no recursion,
no sort), adding up cotangents per tensor id. A non-persistent tape drops each record once
passed, so memory falls during the backward pass. A first-order pass that no tape records
(every training step) is an *array pass*: it carries arrays instead of tensors and calls the
ops' array VJPs where they have one. Jacobians are this walk with a leading axis of rows
(``framework.jacobian``).
"""
import warnings
from contextlib import contextmanager
from operator import is_

from . import backend, nest
from .context import hold, state
from .indexed_slices import IndexedSlices, add_cotangents, dense_cotangent
from .jacobian import Jacobians, checked_tensors as _tensors, zeros_like as _zeros_like
from ..ops import add, reduce_sum, reshape
from .recording import TapeRecording
from .tensor import Tensor, Variable, wrap, wrap_constant
from .unconnected import UnconnectedGradients, describe, unconnected_mode, why_unconnected

__all__ = ["GradientTape", "UnconnectedGradients", "sum_to_shape"]


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
        if tracer is not None and tracer.intercepts:  # fw.function records the pass as steps
            return tracer.gradient(self, target, sources, output_gradients, unconnected_gradients)
        return self.array_gradient(target, sources, output_gradients, unconnected_gradients)

    def array_gradient(self, target, sources, output_gradients=None,
                       unconnected_gradients=UnconnectedGradients.NONE, steps=None):
        """``gradient``, where ``steps`` (fw.function's recorder) may watch an array pass: it
        then makes the pass's array calls (``steps.vjp`` for an op's array VJP, ``steps.array_call``
        for the sums and additions) and writes each down, so the plan repeats this very walk.
        """
        mode = unconnected_gradients
        if mode is not UnconnectedGradients.NONE:
            mode = unconnected_mode(mode)
        self._begin_differentiation("gradient")
        targets = _tensors(target, "target")
        flat_sources = _tensors(sources, "source")
        # No tape records this pass (every training step): on arrays. (The recorder is no tape.)
        on_arrays = steps is not None or not state.recording
        seeds = None if output_gradients is None else _seeds(targets, output_gradients, on_arrays)
        grads = self._backward(targets, seeds, flat_sources, on_arrays=on_arrays,
                               release=self._frees(mode), steps=steps)
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

    def _backward(self, targets, seeds, sources, *, on_arrays=False, stacked_rows=False,
                  release=False, steps=None):
        """Cotangents of ``sources`` (None where unconnected), from the targets' ``seeds``
        (None: ones). A target that is itself a source counts its own seed, as in TensorFlow.

        ``on_arrays``: the seeds and every cotangent are arrays, pulled back by the array VJPs;
        only the sources' gradients are wrapped. ``stacked_rows``: the seeds have one leading
        axis of Jacobian rows, which every cotangent keeps. ``release``: drop each record once
        the walk has passed it (a non-persistent tape's last pass). ``steps``: the recorder an
        array pass makes its array calls through (see ``array_gradient``)."""
        records = self._records
        stale = self._stale_variables()
        remember = on_arrays and self._persistent and seeds is None
        grads = self._reusable_cotangents(targets, stale) if remember else {}
        reach, relevant, source_ids = self._relevant(sources, grads)
        if stale:
            self._check_versions(relevant, stale)
        get = grads.get
        # (remembered cotangents include their targets' seeds)
        remembered = grads.keys() & map(id, targets) if grads else ()
        for i, t in enumerate(targets):
            if id(t) in remembered or not (id(t) in reach or any(s is t for s in sources)):
                continue
            seed = _ones_like(t._value, on_arrays) if seeds is None else seeds[i]
            prev = get(id(t))
            grads[id(t)] = seed if prev is None else _plus(prev, seed, on_arrays, steps)
        lead = 1 if stacked_rows else 0
        # A cotangent is complete once the walk has passed its tensor's last consumer: the walk
        # lets go of it then, unless it answers for a source or is remembered for the next pass.
        pop = get if remember else grads.pop
        # An array pass on NumPy arrays takes the ops' host forms: its cotangents live where
        # its targets do (an op refuses to mix devices).
        on_host = on_arrays and targets and not backend.is_device_array(targets[0]._value)
        fused = []  # the ids of the tensors an op's VJP went through (see ``_through``)
        for i in reversed(relevant):
            r = records[i]
            prim, args, out = r.op, r.inputs, r.output
            if release:
                records[i] = None
            key = id(out)
            g = get(key) if key in source_ids else pop(key, None)
            if g is None:
                continue
            if g.__class__ is IndexedSlices:  # (a gather's sparse gradient, reaching an op)
                g = dense_cotangent(g, on_arrays) if steps is None else steps.array_call(
                    dense_cotangent, g, True)
            if on_arrays and prim.array_vjp is not None:
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
                if prim.through is not None and not lead:
                    vjp, args = self._through(prim.through, i, args, vjp, source_ids, fused)
                pulled = (vjp(g, out._value, needs, *r.arrays, **r.params) if steps is None
                          else steps.vjp(vjp, g, r, needs))
            else:
                if steps is not None:  # the tensor VJPs' ops follow: tell the recorder of g
                    steps.array_ref(g)
                pulled = _pull(prim, g, out, args, r.params, reach, on_arrays,
                               _as_read(r) if stale else None)
            for a, ga in zip(args, pulled):
                if ga is None:
                    continue
                if (ga.shape[1:] if lead else ga.shape) != a._value.shape:
                    shape = a._value.shape
                    ga = (sum_to_shape(ga, shape, lead) if not on_arrays else _fit_array(ga, shape)
                          if steps is None else steps.array_call(_fit_array, ga, shape))
                prev = get(id(a))
                grads[id(a)] = ga if prev is None else _plus(prev, ga, on_arrays, steps)
        if remember:  # (off the tape meanwhile: a failed pass leaves no partial ones)
            for key in fused:  # (what reached them is not all: the fused op's part went past)
                grads.pop(key, None)
            self._memo = (targets, len(records), grads)
        if on_arrays:
            return [None if g is None else g if g.__class__ is IndexedSlices else wrap(g)
                    for g in map(get, map(id, sources))]
        return [get(id(s)) for s in sources]

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


def _pull(prim, g, out, args, params, reach, on_arrays=False, read=None):
    """The cotangent of each argument (None where it needs none), from the tensor VJPs; on an
    array pass (an op without an array VJP) on the wrapped arrays, unwrapped again. An op that
    is not differentiable (``argmax``) pulls back nothing. ``read``: the inputs as the op read
    them, where a variable has changed since (``_as_read``)."""
    if prim.vjps is None:
        return ()
    if on_arrays:
        return [None if ga is None else ga._value
                for ga in _pull(prim, wrap(g), out, args, params, reach, read=read)]
    values = args if read is None else read
    return [None if vjp is None or id(a) not in reach else
            vjp(g, out, *values, **params) if params else vjp(g, out, *values)
            for a, vjp in zip(args, prim.vjps)]


def _as_read(r):
    """Record ``r``'s inputs as its op read them: a variable updated since stands in as the
    copy of its old value that the record kept (``TapeRecording.keep_values``)."""
    return tuple(wrap(array) if a.__class__ is Variable and array is not a._value
                 else a for a, array in zip(r.inputs, r.arrays))


def _plus(a, b, on_arrays, steps=None):
    if steps is not None:  # (fw.function's recorder: the addition becomes a step of its plan)
        return steps.array_call(_plus, a, b, True)
    if a.__class__ is IndexedSlices or b.__class__ is IndexedSlices:
        return add_cotangents(a, b, on_arrays)  # sparse + sparse stays sparse, else dense
    return a + b if on_arrays else add(a, b)


def _fit_array(g, shape):
    """``sum_to_shape`` on an array (array passes have no leading axes)."""
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


def _seeds(targets, output_gradients, on_arrays):
    """The user's ``output_gradients``, checked, as the cotangents the backward pass starts
    from (ones for a None entry; arrays when ``on_arrays``)."""
    given = nest.flatten(output_gradients)
    if len(given) != len(targets):
        raise ValueError(f"output_gradients has {len(given)} entries for {len(targets)} targets")
    seeds = []
    for i, (t, g) in enumerate(zip(targets, given)):
        if g is None:
            seeds.append(_ones_like(t._value, False))
            continue
        g = g if isinstance(g, Tensor) else wrap_constant(_array_like(t._value, g))
        if g.shape != t.shape:
            raise ValueError(f"output_gradients[{i}] has shape {g.shape}, but target {i} has "
                             f"shape {t.shape}")
        seeds.append(g)
    return [seed._value for seed in seeds] if on_arrays else seeds


def _ones_like(value, on_arrays):
    """A target's default seed (wrapped unless ``on_arrays``), made without the wrapper of ``ones``:
    every gradient() call makes one, mostly for a 0-d loss."""
    xp = backend.array_module(value)
    if value.ndim:
        ones = xp.empty(value.shape, dtype=value.dtype)
        ones.fill(1)
    else:
        ones = xp.array(1, dtype=value.dtype)
    return ones if on_arrays else wrap_constant(ones)


def _array_like(value, data):
    return backend.array_module(value).asarray(data, dtype=value.dtype)
