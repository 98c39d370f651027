"""``fw.function``: ``tf.function``'s semantics on a recorded plan of raw array calls.

The first call with a new input signature runs the Python function for real, under a recorder
(``framework.tracing.tracer``); later calls with that signature replay the plan (``.plan``)
and run no Python of the user's. The signature, as TensorFlow's: each tensor or NumPy array
argument by shape and dtype, a variable by identity, any other Python value by value (objects
by identity). ``input_signature`` fixes the arguments to tensors of the given specs; its None
dimensions are free sizes, and one trace serves every size of them where the traced Python
makes none a Python value (``framework.tracing.sizes``); ``reduce_retracing`` makes free the
sizes that differed between calls.

Consequences a TF user expects: Python side effects (``print``, appending to a list) happen
while tracing only; variables read and assigned inside persist; variables may be created on
the first trace only (a layer's lazy build); ``fw.random`` gives fresh numbers on every call;
tapes, ``gradient`` and ``apply_gradients`` inside work, and optimizer state, schedules and
``iterations`` advance on every call. A Python branch on a tensor's value is never frozen: the
plan checks the value and traces the other branch when it changes. Called under a recording
tape, or from another traced function, the Python function simply runs (so it is
differentiable, and inlined).
"""
import functools
import inspect
import warnings
import weakref

import numpy as np

from ..engine import nest
from ..engine.context import settings, state
from ..engine.dtypes import numpy_dtype
from ..engine.indexed_slices import IndexedSlices
from ..engine.tensor import Tensor, Variable, convert_to_tensor, wrap
from .sizes import Dim
from .tracer import TraceError, Tracer
from .plan import Mismatch, Stale, build, generalize

_RETRACE_WARNING = 8  # traces of one function before the warning TensorFlow also gives


class TensorSpec:
    """A shape (None for any size) and dtype: what an ``input_signature`` entry accepts, and
    what a dataset's elements are (``fw.data``)."""

    def __init__(self, shape, dtype="float32", name=None):
        self.shape = None if shape is None else tuple(None if d is None else int(d)
                                                      for d in shape)
        self.dtype = numpy_dtype(dtype)
        self.name = name

    def is_compatible_with(self, value):
        shape = tuple(value.shape)
        if value.dtype != self.dtype:
            return False
        if self.shape is None:
            return True
        return len(shape) == len(self.shape) and all(
            d is None or d == s for d, s in zip(self.shape, shape))

    def __eq__(self, other):
        return isinstance(other, TensorSpec) and (self.shape, self.dtype, self.name) == (
            other.shape, other.dtype, other.name)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.name))

    def __repr__(self):
        return f"TensorSpec(shape={self.shape}, dtype={self.dtype.name}, name={self.name})"


def function(func=None, input_signature=None, autograph=True, jit_compile=None,
             reduce_retracing=False, experimental_implements=None,
             experimental_autograph_options=None, experimental_attributes=None,
             experimental_relax_shapes=None, experimental_compile=None,
             experimental_follow_type_hints=None, name=None):
    """Trace ``func`` once per input signature and replay it (``tf.function``).

    ``reduce_retracing`` (or its old name ``experimental_relax_shapes``), as TensorFlow's: a
    call whose tensors' sizes differ from the last trace's traces the sizes that differed as
    None, so one trace serves them from then on (``framework.tracing.sizes``). ``autograph``
    and ``jit_compile`` are accepted for a port's sake: there is no graph compiler to hand the
    plan to, and a branch on a tensor is handled by the plan's guards instead of autograph."""
    relax = bool(reduce_retracing or experimental_relax_shapes)

    def decorate(f):
        return Function(f, input_signature, name=name, reduce_retracing=relax)
    return decorate if func is None else decorate(func)


class Function:
    """A traced-and-replayed callable; see ``function``."""

    def __init__(self, python_function, input_signature=None, name=None,
                 reduce_retracing=False):
        if not callable(python_function):
            raise TypeError(f"fw.function wraps a callable, got {type(python_function).__name__}")
        if input_signature is not None:
            input_signature = list(input_signature)
            for i, spec in enumerate(nest.flatten(input_signature)):
                if not isinstance(spec, TensorSpec):
                    raise TypeError(f"input_signature entry {i} is a {type(spec).__name__}, "
                                    f"not an fw.TensorSpec")
        self._python_function = python_function
        self.input_signature = input_signature
        self._name = name or getattr(python_function, "__name__", "function")
        self._plans = {}  # signature key -> list of replays (one per branch outcome)
        # an input_signature's None dimensions (or, with reduce_retracing, the axes whose sizes
        # have differed between calls): per tensor input, its free axes
        self._free_axes = _free_axes(input_signature)
        self._reduce_retracing = reduce_retracing and input_signature is None
        self._last_key = None  # the signature of the last trace (what reduce_retracing relaxes)
        self._general = {}  # size class -> replays of one trace that read no free size
        self._proved = {}  # batch class -> replays proved on two traces for every batch size
        self._traced_at = {}  # signature key -> its batch class and batch sizes
        self._tracing_count = 0
        self._size_read = None  # where the last trace read a free size (None: it read none)
        self._traced_once = False
        self._bound = weakref.WeakKeyDictionary()  # instance -> its Function (methods)
        self._instance = None  # a weak reference, for a Function bound to one instance
        self._parameters = _parameters(python_function)
        functools.update_wrapper(self, python_function)

    @property
    def python_function(self):
        return self._python_function

    def experimental_get_tracing_count(self):
        """How many times the Python function has been traced."""
        return self._tracing_count

    def __get__(self, instance, owner):
        """A method: one Function, and so one set of traces, per instance (as TensorFlow)."""
        if instance is None:
            return self
        try:
            bound = self._bound.get(instance)
            cached = True
        except TypeError:  # an unhashable instance: no cache, still correct
            bound, cached = None, False
        if bound is None:
            bound = Function(self._python_function, self.input_signature, self._name,
                             self._reduce_retracing)
            bound._instance = weakref.ref(instance)
            if cached:
                self._bound[instance] = bound
        return bound

    def __call__(self, *args, **kwargs):
        if self._instance is not None:
            instance = self._instance()
            if instance is None:
                raise ReferenceError(f"fw.function '{self._name}': its instance is gone")
            args = (instance,) + args
        # A tape records this call, an outer fw.function traces it, or fw.config's
        # run_functions_eagerly(True) asks for it: the Python function runs as it is.
        if state.recording or settings.run_functions_eagerly:
            return self._python_function(*args, **kwargs)
        if self.input_signature is not None:
            args = self._bind_signature(args, kwargs)
            kwargs = {}
        elif self._parameters is not None and (kwargs or len(args) < self._parameters[1]):
            # f(x) and f(x, training=False) are one call, as in TensorFlow: one trace
            bound = self._parameters[0].bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        if not kwargs and _all_tensors(args):  # the usual call: key and arrays at once
            inputs = [arg._value for arg in args]
            key = tuple([(value.shape, value.dtype) for value in inputs])
            key += (len(args),)
            leaves = None
        else:
            leaves = nest.flatten((args, kwargs)) if kwargs else nest.flatten(args)
            key = _signature(args, kwargs, leaves)
            inputs = [_array(leaf) for leaf in leaves if _is_tensor_input(leaf)]
        if self._free_axes is not None:
            result = self._replay_general(key, inputs)
            if result is not _NO_PLAN:
                return result
        if key in self._plans:
            result = _replay(self._plans[key], inputs)
            if result is not _NO_PLAN:
                return result
        if self._reduce_retracing:
            self._relax(key)
        return self._trace(key, args, kwargs, list(args) if leaves is None else leaves,
                           None if self._free_axes is None else inputs)

    def _relax(self, key):
        """``reduce_retracing``: the axes whose sizes differ between signature ``key`` and the
        last trace's (the same arguments otherwise: ranks, dtypes, Python values) become free
        from now on, as TensorFlow relaxes them to None."""
        last, self._last_key = self._last_key, key
        if last is None or len(last) != len(key):
            return
        differ = []
        for old, new in zip(last, key):
            if _is_spec(old) != _is_spec(new) or not _is_spec(new) and old != new:
                return
            if _is_spec(new):
                if old[1] != new[1] or len(old[0]) != len(new[0]):
                    return
                differ.append({i for i, (a, b) in enumerate(zip(old[0], new[0])) if a != b})
        if not any(differ):
            return
        known = self._free_axes or [()] * len(differ)
        self._free_axes = [tuple(sorted(set(axes) | new)) for axes, new in zip(known, differ)]

    def _replay_general(self, key, inputs):
        """A call whose ``input_signature`` has None dimensions, by a plan for its class of
        sizes: one trace that read no free size (``_size_class``), or two that prove one plan
        for every batch size (``_batch_class``)."""
        if self._general:
            size_class = self._size_class(key)
            if size_class in self._general:
                result = _replay(self._general[size_class], inputs)
                if result is not _NO_PLAN:
                    return result
        if self._proved:
            batch_class = self._batch_class(key)
            if batch_class in self._proved:
                return _replay(self._proved[batch_class], inputs)
        return _NO_PLAN

    def _size_class(self, key):
        """A call's class of sizes: its signature ``key`` with each None dimension as None
        where it is 2 or more, as it is where it is 0 or 1 (where broadcasting and emptiness
        decide otherwise). A trace that read none of its free sizes
        (``framework.tracing.sizes``) serves the whole class, as TensorFlow's one graph serves
        every size."""
        return _masked(key, self._free_axes,
                       lambda shape, axes: tuple([None if i in axes and d > 1 else d
                                                  for i, d in enumerate(shape)]))

    def _batch_class(self, key):
        """A call's class of batch sizes, for a trace that read its sizes: its signature
        ``key`` with a None first dimension as 0, 1 or more. Once two traces at two batch
        sizes of one class prove a plan for all of them (``plan.generalize``), it serves every
        batch size of the class with no further trace."""
        return _masked(key, self._free_axes, lambda shape, axes: (
            (min(shape[0], 2),) + shape[1:] if shape and 0 in axes else shape))

    def _prove(self, key, plan, inputs):
        """A new trace's ``plan`` at signature ``key``: with a plan traced at another batch
        size of its class, one plan for the whole class, when the two prove one."""
        batch_class = self._batch_class(key)
        sizes = {(i, 0): a.shape[0] for i, (a, axes) in enumerate(zip(inputs, self._free_axes))
                 if a.ndim and 0 in axes}
        if not sizes:
            return
        self._traced_at[key] = (batch_class, sizes)
        for other_key, others in self._plans.items():
            other_class, other_sizes = self._traced_at.get(other_key, (None, None))
            if other_key == key or other_class != batch_class:
                continue
            for other in others:
                general = generalize(other[0], other_sizes, plan[0], sizes)
                if general is not None:
                    others.remove(other)
                    self._plans[key].remove(plan)
                    self._proved.setdefault(batch_class, []).append((general, plan[1]))
                    return

    def _bind_signature(self, args, kwargs):
        if kwargs:
            raise TypeError(f"fw.function '{self._name}' has an input_signature: pass its "
                            f"arguments by position, got keywords {sorted(kwargs)}")
        offset = 1 if self._instance is not None else 0
        given = args[offset:]
        specs = self.input_signature
        if len(given) != len(specs):
            raise TypeError(f"fw.function '{self._name}' takes {len(specs)} arguments by its "
                            f"input_signature, got {len(given)}")
        bound = []
        for i, (value, spec) in enumerate(zip(given, specs)):
            tensor = value if isinstance(value, Tensor) else convert_to_tensor(value, spec.dtype)
            if not spec.is_compatible_with(tensor):
                raise TypeError(f"fw.function '{self._name}': argument {i} is a "
                                f"{tensor.dtype.name} tensor of shape {tensor.shape}, which "
                                f"its input_signature {spec} does not accept")
            bound.append(tensor)
        return tuple(args[:offset]) + tuple(bound)

    def _trace(self, key, args, kwargs, leaves, inputs=None):
        free = None if inputs is None else [
            [i for i in axes if i < a.ndim and a.shape[i] > 1] if a.__class__ is np.ndarray
            else []
            for a, axes in zip(inputs, self._free_axes)]
        rec = Tracer(free=free is not None and any(free))
        traced_leaves = []
        for leaf in leaves:
            if _is_tensor_input(leaf):
                array = _array(leaf)
                tensor = wrap(array)
                ref = rec.new_slot(array, tensor)
                if rec.free:
                    tensor._value = rec.free_input(ref, array, free[len(rec.inputs)])
                    rec.bind(ref, tensor._value, tensor)
                rec.inputs.append(ref)
                traced_leaves.append(tensor)
            else:
                traced_leaves.append(leaf)
        structure = (args, kwargs) if kwargs else args
        t_args = nest.pack_sequence_as(structure, traced_leaves)
        if kwargs:
            t_args, t_kwargs = t_args
        else:
            t_kwargs = {}
        before = next(Variable._next_uid)
        with rec.active():
            result = self._python_function(*t_args, **t_kwargs)
        created = next(Variable._next_uid) - before > 1
        if created and self._traced_once:
            raise ValueError(
                f"fw.function '{self._name}' created a variable on a trace after its first: "
                f"variables may be created on the first call only (as tf.function). Create "
                f"them outside the function, or build the model before calling it with "
                f"another input signature.")
        self._traced_once = True
        self._tracing_count += 1
        out_leaves = nest.flatten(result) if result is not None else []
        if any(leaf.__class__ in _NUMBER_RESULTS or leaf.__class__ is Dim
               for leaf in out_leaves):
            # a Python number comes back as a tensor, as from a TensorFlow graph
            out_leaves = [convert_to_tensor(leaf.read() if leaf.__class__ is Dim else leaf)
                          if leaf.__class__ in _NUMBER_RESULTS or leaf.__class__ is Dim
                          else leaf for leaf in out_leaves]
            result = nest.pack_sequence_as(result, out_leaves) \
                if not isinstance(result, _NUMBER_RESULTS + (Dim,)) else out_leaves[0]
        outputs = [_output_ref(rec, leaf) for leaf in out_leaves]
        general = rec.free and rec.general
        self._size_read = rec.size_read  # (why a trace with free sizes serves its own only)
        if self._tracing_count == _RETRACE_WARNING:
            read = "" if rec.size_read is None else (
                f" The last trace read the size of a None dimension of its input_signature "
                f"at {rec.size_read}, so its plan serves that size only: use fw.shape(x) "
                f"for a size that changes between calls.")
            warnings.warn(f"fw.function '{self._name}' has been traced {self._tracing_count} "
                          f"times: each new shape, dtype or Python value of an argument (and "
                          f"each new branch of a Python if on a tensor) traces it again. Pass "
                          f"tensors instead of Python numbers, or give an input_signature."
                          f"{read}", stacklevel=3)
        replay = build(rec, outputs, without=rec.shape_guards if general else ())
        rec.release([t for leaf in out_leaves for t in (
            (leaf._values, leaf._indices) if leaf.__class__ is IndexedSlices else (leaf,))
            if isinstance(t, Tensor)])
        plan = (replay, _unpacker(result))
        if general:  # (it read no free size: every size of its class)
            self._general.setdefault(self._size_class(key), []).append(plan)
            return result
        self._plans.setdefault(key, []).append(plan)
        if inputs is not None:  # (an input_signature with None dimensions)
            self._prove(key, plan, inputs)
        return result

    def __repr__(self):
        return f"<fw.function {self._name}>"


_NUMBER_RESULTS = (int, float, bool, np.bool_, np.int32, np.int64, np.float32, np.float64)
_NO_PLAN = object()


def _replay(plans, inputs):
    """The result of the first of ``plans`` whose guards pass on ``inputs``; ``_NO_PLAN``
    when none does (a new branch or a freed model: trace again)."""
    for plan in plans:
        try:
            return plan[1](plan[0](*inputs))
        except Mismatch:  # another branch: the next plan, or a new trace
            continue
        except Stale:  # its model is gone: never again
            plans.remove(plan)
            break
    return _NO_PLAN


def _free_axes(input_signature):
    """Per tensor of an ``input_signature``, the axes whose size is None; None when there
    are none (or there is no signature): every call then keys by its exact shapes."""
    if input_signature is None:
        return None
    specs = nest.flatten(input_signature)
    free = [() if spec.shape is None else tuple(i for i, d in enumerate(spec.shape) if d is None)
            for spec in specs]
    return free if any(free) else None


def _masked(key, free_axes, mask):
    """Signature ``key`` with each tensor's shape (a ``(shape, dtype)`` entry) as
    ``mask(shape, axes)`` gives it, ``axes`` that tensor's free axes, in order."""
    axes = iter(free_axes)
    return tuple([(mask(part[0], next(axes)), part[1]) if _is_spec(part) else part
                  for part in key])


def _is_spec(part):
    """Whether an entry of a signature key is a tensor's ``(shape, dtype)``."""
    return part.__class__ is tuple and len(part) == 2 and isinstance(part[1], np.dtype)


def _parameters(python_function):
    """The function's signature and how many positional parameters it has, when it has
    defaults to bind (None otherwise: every call is bound as given)."""
    try:
        signature = inspect.signature(python_function)
    except (TypeError, ValueError):
        return None
    positional = [p for p in signature.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if not any(p.default is not p.empty for p in signature.parameters.values()) or any(
            p.kind is p.VAR_POSITIONAL for p in signature.parameters.values()):
        return None
    return signature, len(positional)


def _all_tensors(args):
    for arg in args:
        if arg.__class__ is not Tensor:
            return False
    return True


def _is_tensor_input(leaf):
    return isinstance(leaf, (Tensor, np.ndarray)) and not isinstance(leaf, Variable) \
        or _is_device_array(leaf)


def _is_device_array(leaf):
    return hasattr(leaf, "__cuda_array_interface__") and not isinstance(leaf, Tensor)


def _array(leaf):
    return leaf._value if isinstance(leaf, Tensor) else convert_to_tensor(leaf)._value


def _signature(args, kwargs, leaves):
    """The trace cache key: tensors by shape and dtype, variables and objects by identity,
    Python values by type and value, plus the nesting."""
    parts = []
    for leaf in leaves:
        cls = leaf.__class__
        if cls is Tensor or cls is np.ndarray:
            value = leaf._value if cls is Tensor else leaf
            parts.append((value.shape, value.dtype))
        elif isinstance(leaf, Variable):
            parts.append(("var", id(leaf)))
        elif _is_tensor_input(leaf):
            value = _array(leaf)
            parts.append((value.shape, value.dtype))
        elif cls in _BY_VALUE:
            parts.append((cls, leaf))
        else:
            parts.append(_ObjectKey(leaf))
    if kwargs or any(isinstance(a, (list, tuple, dict)) for a in args):
        parts.append(_structure((args, kwargs)))
    else:
        parts.append(len(args))
    return tuple(parts)


_BY_VALUE = (int, float, bool, str, bytes, type(None), complex)


class _ObjectKey:
    """An object in a trace key: by identity, held weakly where it can be (a model, a
    training set-up), so the cache keeps nothing alive; equal only while the object lives."""

    __slots__ = ("ref", "id")

    def __init__(self, obj):
        self.id = id(obj)
        try:
            self.ref = weakref.ref(obj)
        except TypeError:  # (a tuple, a dict: held, and then compared by identity)
            self.ref = lambda: obj

    def __hash__(self):
        return self.id

    def __eq__(self, other):
        if other.__class__ is not _ObjectKey or self.id != other.id:
            return False
        obj = self.ref()
        return obj is not None and obj is other.ref()


def _structure(value):
    if isinstance(value, dict):
        return ("d", tuple((k, _structure(value[k])) for k in sorted(value)))
    if isinstance(value, (list, tuple)):
        return (value.__class__, tuple(_structure(v) for v in value))
    return None


def _output_ref(rec, leaf):
    if isinstance(leaf, Variable):
        return ("var", rec.variable_index(leaf))
    if isinstance(leaf, Tensor):
        return rec.ref(leaf)
    if leaf.__class__ is IndexedSlices:  # (an embedding's gradient)
        return ("slices", rec.ref(leaf._values), rec.ref(leaf._indices), leaf._dense_shape)
    if hasattr(leaf, "shape") and hasattr(leaf, "dtype") and not isinstance(leaf, np.generic):
        raise TraceError(f"fw.function: the function returned a raw array of shape "
                         f"{leaf.shape}; return tensors (fw ops), not arrays")
    return ("pyout", leaf)


def _unpacker(result):
    """How a replay's flat results become the structure the function returned."""
    if result is None:
        return lambda flat: None
    if isinstance(result, Tensor):
        return _first
    skeleton = nest.pack_sequence_as(result, [None] * len(nest.flatten(result)))
    return lambda flat: nest.pack_sequence_as(skeleton, list(flat))


def _first(flat):
    return flat[0]


def cond(pred, true_fn=None, false_fn=None, name=None):
    """``tf.cond``: ``true_fn()`` if ``pred`` else ``false_fn()``. Inside ``fw.function`` the
    plan checks ``pred`` on every call and traces the other branch when it changes."""
    if true_fn is None or false_fn is None:
        raise TypeError("cond: both true_fn and false_fn are required")
    return true_fn() if bool(pred) else false_fn()


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10,
               back_prop=True, swap_memory=False, maximum_iterations=None, name=None):
    """``tf.while_loop``: ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)``, at most
    ``maximum_iterations`` times. Inside ``fw.function`` the number of iterations is checked
    on every call (a call that needs another number traces again)."""
    nested = isinstance(loop_vars, (list, tuple))
    values = list(loop_vars) if nested else [loop_vars]
    count = 0
    while (maximum_iterations is None or count < int(maximum_iterations)) \
            and bool(cond(*values)):
        out = body(*values)
        values = list(out) if isinstance(out, (list, tuple)) else [out]
        if len(values) != (len(loop_vars) if nested else 1):
            raise ValueError(f"while_loop: body returned {len(values)} values for "
                             f"{len(loop_vars) if nested else 1} loop variables")
        count += 1
    if not nested:
        return values[0]
    return type(loop_vars)(values) if not hasattr(loop_vars, "_fields") else \
        type(loop_vars)(*values)
