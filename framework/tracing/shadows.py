"""The shadow runs of a trace with free sizes (``framework.tracing.sizes``).

While ``fw.function`` traces a call whose ``input_signature`` has None dimensions, every step
of the trace also runs on "shadow" values: the same computation with the free dimensions of
the inputs at two other sizes (``sizes.shadow_inputs``). A traced array's dimensions that
differ between the runs are free (its ``FreeArray`` view hands them to Python as ``Dim``);
those that agree are fixed. A shadow run that fails proves nothing: the trace then serves its
own sizes only. ``ShadowRuns`` is the ``Tracer``'s part that keeps the runs.
"""
import copy

import numpy as np

from .. import random as fw_random
from ..engine.indexed_slices import IndexedSlices
from ..engine.tensor import Tensor, wrap
from . import sizes


class ShadowRuns:
    """The shadow values of a trace's slots, one dict per run (``_shadows``), beside the real
    ones (``_reals``); the ``Tracer`` it is part of gives the refs, constants and variables."""

    def start_shadows(self, free):
        """``free``: whether the trace has free sizes (else no step runs a shadow).
        ``general`` stays true while no Python of the trace has read a free size
        (``size_read``: where one was); ``shape_guards``: the guards of outputs whose values
        decide their shapes, which a general plan leaves out."""
        self.free = self.general = free
        self.size_read = None
        self.shape_guards = []
        self._shadows = ({}, {})  # per shadow run: slot number -> its shadow value
        self._reals = {}  # slot number -> its real value

    def free_input(self, ref, array, axes):
        """An input with free ``axes`` (sizes 2 and more; none: the same in every run): its
        shadows, and the view of it the trace sees."""
        shadows = sizes.shadow_inputs(np.asarray(array), axes)
        for run, shadow in zip(self._shadows, shadows):
            run[ref[1]] = shadow
        return sizes.free_view(array, shadows, self, ref)

    def _shadow(self, ref, run):
        """Shadow run ``run``'s value of a ref (KeyError: a slot with no shadow)."""
        kind = ref[0]
        if kind == "s":
            return self._shadows[run][ref[1]]
        if kind == "c":
            return self.constants[ref[1]]
        if kind == "v":
            return self.variables[ref[1]]()._value
        if kind == "var":
            return self.variables[ref[1]]()
        if kind == "obj":
            return self.objects[ref[1]]()
        if kind == "tensor":
            return wrap(self._shadow(ref[1], run))
        if kind == "seq":
            items = [self._shadow(r, run) for r in ref[2]]
            return items if ref[1] is list else ref[1](items)
        if kind == "map":
            return {k: self._shadow(r, run) for k, r in ref[1].items()}
        if kind == "slice":
            return slice(*[self._shadow(r, run) for r in ref[1]])
        if kind == "size":
            return sizes.real_shape(self._shadow(ref[1], run))[ref[2]]
        if kind == "arith":
            return ref[1](*[self._shadow(r, run) for r in ref[2]])
        if kind == "num":
            return ref[1]
        raise KeyError(ref)

    def _shadow_step(self, fn, refs, kwargs, outs, results, many, every_axis=False):
        """Run ``fn`` on each shadow run's values of ``refs`` and ``kwargs``. ``results``: the
        real run's, a list with one entry per ``outs`` (``many``: ``fn`` returns a sequence of
        them). Each new slot of ``outs`` gets its shadows; returns ``results`` as the trace's
        Python should see them (``sizes.free_view``): as they are where the trace is no longer
        general, or where a shadow run failed, which ends the proof."""
        if not self.general:
            return results
        try:
            runs = []
            for run in range(len(self._shadows)):
                shadow = fn(*[self._shadow(r, run) for r in refs],
                            **{k: self._shadow(r, run) for k, r in kwargs.items()})
                runs.append(list(shadow) if many else [shadow])
            views = []
            for i, (out, real) in enumerate(zip(outs, results)):
                if out is not None and out[0] == "s" and out[1] not in self._shadows[0]:
                    shadows = [shadow[i] for shadow in runs]
                    for run, shadow in zip(self._shadows, shadows):
                        run[out[1]] = shadow
                    if real is not None and real.__class__ is not IndexedSlices:
                        view = sizes.free_view(real, shadows, self, out, every_axis)
                        if view is not real:
                            self.bind(out, view)
                        real = view
                views.append(real)
            return views
        except Exception as e:  # (any failure: the shadow is not the same computation)
            self.general = False
            self.size_read = self.size_read or \
                f"the shadow run of {getattr(fn, '__name__', fn)} failed: {e}"
            return results

    def _shadow_call(self, fn, refs, kwrefs, outs, result, before):
        """The shadows of a replayed call's results: a random draw's (``replayed(draws=True)``)
        drawn again on the shadows of its arguments, from the global generator's state
        ``before`` it (put back as the real draw left it after) or from copies of the
        generators it is given; any other call's are its real results, where none of its
        arguments is free."""
        tensors = [result] if outs and isinstance(result, Tensor) else list(result)
        if before is None:
            if any(self._free_ref(r) for r in refs + list(kwrefs.values())):
                self.general = False
                self.size_read = self.size_read or \
                    f"{getattr(fn, '__name__', fn)} returned tensors from free sizes"
                return
            for out, t in zip(outs, tensors):
                for run in self._shadows:
                    run[out[1]] = t._value
            return
        after = fw_random.get_state()
        fw_random.set_state(before)
        try:
            with self.paused():
                views = self._shadow_step(
                    lambda *a, **k: [t._value for t in _as_list(fn(*_fresh(a), **_fresh(k)))],
                    refs, kwrefs, outs, [t._value for t in tensors], True)
        finally:
            fw_random.set_state(after)
        for t, view in zip(tensors, views):
            t._value = view

    def _free_ref(self, ref):
        """Whether a call's argument holds a value with free sizes."""
        kind = ref[0]
        if kind == "s":
            real = self._reals.get(ref[1])
            shadows = [run.get(ref[1]) for run in self._shadows]
            if real is None or any(shadow is None for shadow in shadows):
                return True
            if real.__class__ is IndexedSlices:
                real, shadows = real._values._value, [s._values._value for s in shadows]
            return any(sizes.real_shape(s) != sizes.real_shape(real) for s in shadows)
        if kind == "tensor":
            return self._free_ref(ref[1])
        if kind == "seq":
            return any(self._free_ref(r) for r in ref[2])
        if kind == "map":
            return any(self._free_ref(r) for r in ref[1].values())
        return False


def _fresh(args):
    """A draw's arguments with a copy of each NumPy generator, which the shadow runs move on
    in place of the real one."""
    if isinstance(args, dict):
        return {k: copy.deepcopy(v) if isinstance(v, np.random.Generator) else v
                for k, v in args.items()}
    return [copy.deepcopy(a) if isinstance(a, np.random.Generator) else a for a in args]


def _as_list(result):
    return [result] if isinstance(result, Tensor) else list(result)
