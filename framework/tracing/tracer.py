"""The recorder behind ``fw.function``: one run of the Python function becomes a plan.

Tracing runs the user's function once, on the call's real values, while a ``Tracer`` follows
every op (it is one of the thread's listeners, ``framework.engine.recording.Listener``, beside
the recording tapes, so the ops need no hook of their own), every replayed framework call
(``framework.engine.context.replayed``: assigns, optimizer updates, random draws) and every
first-order ``tape.gradient``: the tape's array walk makes its array calls (array VJPs, sums,
additions) through the tracer (an ``ArrayCalls``), which writes each down. The steps refer to
values by slot: an input, a variable (read live at each step, through a weak reference), a
constant (a captured tensor or a Python value), or the result of an earlier step.

``framework.tracing.plan`` turns the steps into the replay: straight-line Python source with one
line per raw array call, compiled once.

What a traced value may not do is decided here too: ``bool()``/``int()`` on it becomes a guard
(the replay checks the value and asks for a new trace when it differs: both branches stay
right), and ``.numpy()``/``float()`` raises, naming the user's line.
"""
import os
import sys
import weakref
from contextlib import contextmanager

import numpy as np

from .. import random as fw_random
from ..engine.context import state
from ..engine.indexed_slices import IndexedSlices
from ..engine.recording import Listener
from ..engine.tape import ArrayCalls
from ..engine.dtypes import numpy_dtype
from ..engine.tensor import Tensor, TensorShape, Variable, wrap_constant
from . import sizes
from .shadows import ShadowRuns

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_PACKAGES = tuple(os.path.join(_ROOT, name) + os.sep for name in ("framework", "layers",
                                                                  "optimizers"))


class TraceError(TypeError):
    """A traced function did something whose result would be frozen into the plan."""


class Step:
    """One line of the plan: ``outs = fn(*args, **kwargs)``.

    ``kind``: "op" (a raw array function: args are array refs), "call" (a replayed framework
    function: args are tensors, variables and Python values), or "guard" (``fn`` is ``bool``
    or ``int``, ``expect`` the traced answer). ``unpack``: the function returns a sequence,
    one entry per ``outs`` (None entries ignored); ``result`` says how a call's output is
    taken: "tensor" (its array), "tensors" (a list of tensors: their arrays), or None."""

    __slots__ = ("kind", "fn", "args", "kwargs", "outs", "unpack", "result", "expect")

    def __init__(self, kind, fn, args, kwargs=None, outs=(), unpack=False, result=None,
                 expect=None):
        self.kind, self.fn, self.args, self.kwargs = kind, fn, args, kwargs or {}
        self.outs, self.unpack, self.result, self.expect = list(outs), unpack, result, expect


class Tracer(Listener, ArrayCalls, ShadowRuns):
    """Follows one trace. Refs to values are tuples: ("s", k) slot k (a traced array), ("v", k)
    variable k's array, ("c", k) constant k (an array or Python value); call steps also use
    ("tensor", ref) for a ref passed wrapped as a tensor, ("var", k) for variable k itself,
    ("obj", k) for a weakly held object, ("seq", type, [refs]) and ("map", {key: ref})."""

    follows_every_op = True  # kept active where custom_gradient pauses the user's tapes

    def __init__(self, free=False):
        self.steps = []
        self.constants = []
        self.variables = []  # weak references, index = the ref's k
        self.objects = []  # weak references to Python objects that calls take (optimizers)
        self.inputs = []  # slot of each tensor input
        self.slot_count = 0
        self._by_id = {}  # id(tensor) -> ref
        self._by_array = {}  # id(array) -> ref
        self._var_index = {}  # id(variable) -> k
        self._obj_index = {}
        self._alive = []  # everything whose id is a key above stays alive while tracing
        self._unseen = {}  # id(tensor) -> where a tensor wrapping an unseen array was made
        self.intercepts = True  # False while a gradient is taken with the tensor VJPs
        # ``free``: the inputs have free sizes (``framework.tracing.sizes``): every step also
        # runs on the slots' shadows (two runs, at other sizes: ``ShadowRuns``)
        self.start_shadows(free)
        self.done = False

    def assigned(self, variable):
        """A variable written in place outside a replayed call: a replay would not repeat
        the write, so refuse it while tracing rather than freeze it."""
        raise TraceError(
            f"{user_line()}: variable '{variable.name}' was updated in place on its raw array "
            f"inside fw.function, which a replay would not repeat; update it with assign(), "
            f"assign_add() or an optimizer, or mark the updating function with "
            f"framework.engine.context.replayed")

    # --- refs -------------------------------------------------------------------------------
    def new_slot(self, array, *tensors):
        ref = ("s", self.slot_count)
        self.slot_count += 1
        self.bind(ref, array, *tensors)
        if self.free:
            self._reals[ref[1]] = array
        return ref

    def bind(self, ref, array, *tensors):
        """Make ``array`` and ``tensors`` resolve to ``ref`` (an alias keeps the first)."""
        self._alive.append(array)
        self._by_array.setdefault(id(array), ref)
        for t in tensors:
            self._alive.append(t)
            self._by_id[id(t)] = ref

    def ref(self, t):
        """The ref of tensor ``t``: traced, a variable, an alias of a traced array, or a
        constant captured by value (a tensor made outside the trace, or from Python values)."""
        r = self._by_id.get(id(t))
        if r is not None:
            return r
        if isinstance(t, Variable):
            return ("v", self.variable_index(t))
        r = self._by_array.get(id(t._value))
        if r is None:
            made = self._unseen.get(id(t))
            if made is not None:
                raise TraceError(
                    f"{made}: a tensor computed behind the gate (on raw arrays, not by an op) "
                    f"inside fw.function: a replay would repeat the first call's value. Compute "
                    f"it with framework ops (or define a primitive for it, framework.engine.primitive"
                    f".define)")
            r = self.constant(t._value)
        self._alive.append(t)
        self._by_id[id(t)] = r
        return r

    def array_ref(self, array):
        """The ref of a raw array a backward pass hands over: traced, or a constant (a seed
        of ones), which a tensor wrapping it later resolves to as well."""
        r = self._by_array.get(id(array))
        if r is None:
            r = self.constant(array)
            self.bind(r, array)
        return r

    def variable_index(self, variable):
        k = self._var_index.get(id(variable))
        if k is None:
            k = self._var_index[id(variable)] = len(self.variables)
            self.variables.append(weakref.ref(variable))
            self._alive.append(variable)
        return k

    def constant(self, value):
        if self.free:
            value, free = sizes.plain(value)
            if free:
                self.reads_size(value, by_step=False)
        self.constants.append(value)
        return ("c", len(self.constants) - 1)

    # --- free sizes (framework.tracing.sizes) -----------------------------------------------
    def reads_size(self, what, by_step=None):
        """The trace's Python made a free size a value: the plan serves this size only.
        ``by_step``: whether a step made it (a size read inside a step is the step's own)."""
        if by_step is None:
            by_step = sizes.in_step()
        if self.general and not self.done and not by_step:
            self.general = False
            self.size_read = f"{user_line()} ({what!r})"

    def is_traced(self, t):
        """Whether ``t``'s value may differ between calls (not a captured constant)."""
        return self.ref(t)[0] != "c"

    # --- what the ops and hooks report ------------------------------------------------------
    def wrapped(self, t):
        """A tensor made around a raw array (``tensor.wrap``): fine if the array is one the
        trace computed; otherwise noted, and refused if the plan ever needs it."""
        if id(t._value) not in self._by_array:
            self._unseen[id(t)] = user_line()
            self._alive.append(t)

    def recorded(self, prim, args, out, params, values):
        self.op(prim, args, out, params)

    def escaped(self, tensor):
        self._escape(tensor)

    def op(self, prim, args, out, params, values=None):
        """An op ran: a step calling its forward on its inputs' refs."""
        forward = getattr(prim, "forward", None)
        if forward is None:  # custom_gradient's record: its body's ops are traced already
            return
        refs = [self.ref(a) for a in args]
        kwargs = {k: self._param_ref(v) for k, v in params.items() if k != "saved"}
        saves = getattr(prim, "saves", False)
        if saves:
            outs = [self.new_slot(out._value, out), self.new_slot(params["saved"])]
            self.steps.append(Step("op", forward, refs, kwargs, outs, unpack=True))
        else:
            outs = [self.new_slot(out._value, out)]
            self.steps.append(Step("op", forward, refs, kwargs, outs))
        dynamic = getattr(prim, "dynamic_shape", False)
        dynamic = dynamic and (dynamic is True or dynamic(params))
        out._value = self._shadow_step(
            forward, refs, kwargs, outs, [out._value, params["saved"]] if saves else [out._value],
            saves, every_axis=dynamic)[0]
        if dynamic:
            # the values decide the shape: a replay whose shape differs traces again, so that
            # no size read from it in Python is frozen (a plan that read none needs no check)
            guard = Step("guard", _shape, [outs[0]], expect=sizes.real_shape(out._value))
            self.steps.append(guard)
            self.shape_guards.append(guard)

    def _param_ref(self, value):
        """An op's parameter: a constant, unless it holds an array the trace computed (the
        indices of a sparse gradient's scatter): then that array's slot; or a free size
        (``sizes.Dim``): then its expression, computed on every call."""
        if type(value) is sizes.Dim:
            return self._size_ref(value)
        if value.__class__ is slice:  # (bounds given as tensors or sizes: values of each call)
            bounds = (value.start, value.stop, value.step)
            if any(b is not None and b.__class__ is not int for b in bounds):
                refs = [self._param_ref(b) for b in bounds]
                if any(r[0] != "c" for r in refs):
                    return ("slice", refs)
        elif value.__class__ in (tuple, list, TensorShape):
            refs = [self._param_ref(v) for v in value]
            if any(r[0] != "c" for r in refs):
                return ("seq", list if value.__class__ is list else tuple, refs)
        elif hasattr(value, "shape") and hasattr(value, "dtype"):
            ref = self._by_array.get(id(value))
            if ref is not None:
                return ref
        return self.constant(value)

    def array_step(self, fn, refs, values, kwargs=None, kwarg_values=None):
        """Run a raw array function now and record it: the recorder's own steps (a backward
        walk's array VJPs, sums and additions). Returns its result."""
        result = fn(*values, **(kwarg_values or {}))
        many = isinstance(result, (tuple, list))
        outs, computed = [], False
        for r in (result if many else [result]):
            # A VJP that hands a cotangent back unchanged (an addition's) does so on every
            # call with the same needs and shapes: its output is that input, with no step.
            passed = None if r is None else next(
                (ref for ref, v in zip(refs, values) if v is r and ref[0] in ("s", "c")), None)
            computed = computed or (r is not None and passed is None)
            outs.append(None if r is None else passed or self.new_slot(r))
        if computed:
            self.steps.append(Step("op", fn, refs, kwargs, [
                o if o is None or not any(o is ref for ref in refs) else None for o in outs],
                unpack=many))
            if self.general:
                views = self._shadow_step(fn, refs, kwargs or {}, outs,
                                          list(result) if many else [result], many)
                result = result.__class__(views) if many else views[0]
        for r, ref in zip(result if many else [result], outs):
            if r.__class__ is IndexedSlices:
                self._bind_parts(ref, r)
        return result, outs if many else outs[0]

    def _bind_parts(self, ref, slices):
        """Steps that take the values and indices out of the ``IndexedSlices`` at ``ref``,
        bound to those of ``slices``: the ops that read them later (a densifying scatter)."""
        for part, name in ((slices._values, "_values"), (slices._indices, "_indices")):
            refs = [ref, self.constant(name)]
            outs = [self.new_slot(part._value, part)]
            self.steps.append(Step("op", _part, refs, outs=outs))
            part._value = self._shadow_step(_part, refs, {}, outs, [part._value], False)[0]

    def call(self, fn, args, kwargs):
        """A replayed framework function (``framework.engine.context.replayed``): run it now with the
        recorder paused, and record a step that calls it again on each replay."""
        # An iterator (zip(grads, variables)) is read once: the call and the replay get a list.
        args = [list(a) if hasattr(a, "__next__") else a for a in args]
        kwargs = {k: list(v) if hasattr(v, "__next__") else v for k, v in kwargs.items()}
        refs = [self._call_ref(a) for a in args]
        kwrefs = {k: self._call_ref(v) for k, v in kwargs.items()}
        draws = self.general and getattr(fn, "draws", False)
        before = fw_random.get_state() if draws else None
        with self.paused():
            result = fn(*args, **kwargs)
        step = Step("call", fn, refs, kwrefs)
        if isinstance(result, Tensor) and not isinstance(result, Variable):
            step.outs, step.result = [self.new_slot(result._value, result)], "tensor"
        elif result.__class__ is list and result and all(t.__class__ is Tensor for t in result):
            step.outs, step.result = [self.new_slot(t._value, t) for t in result], "tensors"
        self.steps.append(step)
        if self.general and step.outs:
            self._shadow_call(fn, refs, kwrefs, step.outs, result, before)
        return result

    def _size_ref(self, dim):
        """A free size given to a step: its expression, where the trace knows it."""
        if dim.expr is not None and dim.trace is self:
            return dim.expr
        return self.constant(dim)

    def size_tensor(self, dim, dtype):
        """A free size as a scalar tensor of ``dtype`` (int32 by default, as ``fw.shape``'s):
        a step computes it from its expression on every call."""
        dtype = np.dtype(np.int32) if dtype is None else numpy_dtype(dtype)
        value = np.asarray(dim.real, dtype)
        if dim.expr is None or dim.trace is not self or self.done or not self.general:
            self.reads_size(dim)
            return wrap_constant(value)
        tensor = wrap_constant(value)
        ref = self.new_slot(value, tensor)
        self.steps.append(Step("op", _size_array, [dim.expr, self.constant(dtype)], outs=[ref]))
        if dim.shadow is not None:
            for run, shadow in zip(self._shadows, dim.shadow):
                run[ref[1]] = np.asarray(shadow, dtype)
        return tensor

    def _call_ref(self, a):
        if type(a) is sizes.Dim:
            return self._size_ref(a)
        if isinstance(a, Variable):
            return ("var", self.variable_index(a))
        if isinstance(a, Tensor):
            return ("tensor", self.ref(a))
        if hasattr(a, "shape") and hasattr(a, "dtype") and not isinstance(a, np.generic):
            return self.array_ref(a)  # a raw array (an optimizer's gradients)
        if a.__class__ in (list, tuple, TensorShape):  # (a shape as a tuple of its entries)
            return ("seq", list if a.__class__ is list else tuple,
                    [self._call_ref(x) for x in a])
        if a.__class__ is dict:
            return ("map", {k: self._call_ref(v) for k, v in a.items()})
        if a is None or isinstance(a, (int, float, str, bytes, np.generic, np.dtype, type)) \
                or callable(a) and not hasattr(a, "__self__"):
            return self.constant(a)
        try:
            ref = weakref.ref(a)
        except TypeError:
            return self.constant(a)
        k = self._obj_index.get(id(a))
        if k is None:
            k = self._obj_index[id(a)] = len(self.objects)
            self.objects.append(ref)
            self._alive.append(a)
        return ("obj", k)

    def guard(self, t, convert):
        """``bool(t)`` or ``int(t)`` on a traced tensor: the plan checks it on every replay."""
        value = convert(t._value)
        if self.is_traced(t):
            self.steps.append(Step("guard", convert, [self.ref(t)], expect=value))
        return value

    def _escape(self, t):
        if self.is_traced(t):
            raise TraceError(
                f"{user_line()}: .numpy(), float(), int() or np.asarray() on a tensor inside "
                f"fw.function: while the function is traced the value belongs to this one call, "
                f"and a replay would reuse it. Keep the computation in fw ops (fw.cond and "
                f"fw.where for choices), or return the tensor and call .numpy() on the result.")

    # --- gradients --------------------------------------------------------------------------
    def gradient(self, tape, target, sources, output_gradients, unconnected_gradients):
        """``tape.gradient`` while tracing. A first-order pass (no other tape records it) is the
        tape's own array walk, making its array calls through this tracer (its ``ArrayCalls``
        methods), so each becomes a step; a pass that a tape records is the walk on tensors,
        whose ops the tracer follows like any other."""
        taped = any(t is not self and not (t is tape and not tape._persistent)
                       for t in state.recording)
        if taped:
            self.intercepts = False
            try:
                return tape.gradient(target, sources, output_gradients, unconnected_gradients)
            finally:
                self.intercepts = True
        return tape.differentiate(target, sources, output_gradients, unconnected_gradients,
                                  self)

    def vjp(self, fn, g, record, needs):
        """An op's array VJP ``fn`` in a traced backward pass: run now, and a step of the plan
        on the slots of the cotangent, the op's output and inputs (its saved intermediates)."""
        refs = [self.array_ref(g), self.ref(record.output), self.constant(needs)]
        refs += [self.ref(a) if not (isinstance(a, Variable) and array is not a._value)
                 else self._read_then(a, array, record) for a, array in zip(record.inputs,
                                                                            record.arrays)]
        values = [g, record.output._value, needs, *record.arrays]
        params = record.params
        kwargs = {k: self.array_ref(v) if k == "saved" else self.constant(v)
                  for k, v in params.items()}
        return self.array_step(fn, refs, values, kwargs, params)[0]

    def _read_then(self, variable, kept, record):
        """The ref of the value ``record``'s op read of a variable updated since (the copy
        ``kept`` that the tape kept): a step right after that op copies the variable, so a
        replay differentiates at the values read then, as the eager pass does."""
        ref = self._by_array.get(id(kept))
        if ref is None:
            produced = self._by_id[id(record.output)]
            at = next(i for i, step in enumerate(self.steps) if produced in step.outs)
            ref = self.new_slot(kept)
            self.steps.insert(at + 1, Step("op", _copy, [("v", self.variable_index(variable))],
                                           outs=[ref]))
        return ref

    def array_call(self, fn, *args):
        """A traced backward pass's sum, addition or densifying of cotangents: run now, and a
        step of the plan (arrays by their slots, anything else a constant)."""
        refs = [self.array_ref(a) if hasattr(a, "shape") and hasattr(a, "dtype")
                else self.constant(a) for a in args]
        return self.array_step(fn, refs, list(args))[0]

    def tensor_vjps(self, prim, g, record, reach, read):
        """An op without an array VJP in a traced backward pass: its tensor VJPs' ops are
        followed like any other, once ``g`` (which they read wrapped) has a ref."""
        self.array_ref(g)
        return super().tensor_vjps(prim, g, record, reach, read)

    @contextmanager
    def paused(self):
        """Framework code that runs whole (a replayed call, a raw backward pass): no op of it
        is followed, and a first-order gradient inside is raw, as outside a trace."""
        state.tracer = None
        state.recording.remove(self)
        try:
            yield
        finally:
            state.recording.append(self)
            state.tracer = self

    @contextmanager
    def active(self):
        if state.tracer is not None:
            raise RuntimeError("fw.function: a trace is already under way on this thread")
        state.recording.append(self)
        state.tracer = self
        try:
            yield self
        finally:
            state.tracer = None
            if self in state.recording:
                state.recording.remove(self)

    def release(self, results=()):
        """After the trace: let go of the traced values (the plan keeps only what it needs).
        A traced tensor other than the ``results`` that outlives the trace (kept in a list, an
        attribute) held this one call's value: it is made to refuse every use, as a graph
        tensor leaked out of ``tf.function`` does."""
        self.done = True
        kept = {id(t) for t in results}
        line = user_line()
        for t in results:  # (a free view's sizes are a trace's; the caller gets plain arrays)
            if type(t._value) is sizes.FreeArray:
                t._value = t._value.view(np.ndarray)
        for t in self._alive:
            if t.__class__ is Tensor and id(t) not in kept and self._by_id.get(
                    id(t), ("c",))[0] == "s" and sys.getrefcount(t) > _HELD_BY_TRACE:
                t._value = Leaked(line)
        self._by_id = self._by_array = None
        self._shadows, self._reals = ({}, {}), {}  # (a Dim kept past the trace holds the
        # tracer, not its runs)
        self._alive, self._unseen = [], {}


# references to a tensor while ``release`` looks at it: the list it is in, the loop's name and
# getrefcount's argument; one more means something outside the trace holds it
_HELD_BY_TRACE = 3


class Leaked:
    """The value of a tensor leaked out of a trace: every use raises, naming the function."""

    def __init__(self, line):
        self._line = line

    def _refuse(self, *args, **kwargs):
        raise TraceError(
            f"a tensor computed inside fw.function (called at {self._line}) was kept and used "
            f"after the call: it held that one trace's value. Return it from the function "
            f"instead")

    __array__ = __array_ufunc__ = __array_function__ = __getitem__ = __float__ = __int__ = \
        __bool__ = __len__ = __iter__ = _refuse

    def __getattr__(self, name):
        self._refuse()


def _size_array(size, dtype):
    """A size of this call (an int) as an array of ``dtype``."""
    return np.asarray(size, dtype)


def _copy(array):
    return array.copy()


def _shape(array):
    return array.shape


def _part(slices, name):
    """The array of one part of ``IndexedSlices`` (its values or indices)."""
    return getattr(slices, name)._value


def user_line():
    """``file:line`` of the innermost caller outside the framework's own packages."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGES):
        frame = frame.f_back
    if frame is None:
        return "<unknown>"
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


__all__ = ["Step", "TraceError", "Tracer", "user_line"]

# the tracer's own runners of steps (see ``sizes.STEP_CODES``)
sizes.STEP_CODES.update((Tracer.call.__code__, Tracer.array_step.__code__))
