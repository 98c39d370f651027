"""Who hears the computation, and what a tape keeps of it.

The one recording interface is ``Listener``: the events an active listener (on this thread's
``state.recording``) hears are an op recorded (``recorded``, from ``record``, the one place ops
report to), a recorded value leaving for NumPy (``escaped``) and a variable written in place
(``assigned``). A ``GradientTape`` and ``fw.function``'s tracer (``framework.tracing.tracer.Tracer``) each
implement it: the tape keeps records of what it tracks, the tracer writes every op into its
plan. What only the tracer answers (a replayed effect, a guard on a value, a tensor wrapping an
unseen array) it is asked directly, as ``state.tracer``.

A ``Record`` is one op that read a tensor the tape tracks: its primitive, input tensors, output
tensor, parameters, and the input arrays the forward read (so that a backward pass on arrays
need not unwrap them again). A variable's array stays the same until an in-place update, which
asks the tapes holding records first (``context.before_update``): a record that read the
variable then keeps a copy of the value it read (``keep_values``), and the backward pass uses
it, as TensorFlow's tape differentiates the computation it recorded. ``record`` is the one place a record is
made. Every op is recorded, differentiable or not (``argmax`` and comparisons too), so that a
trainable variable read by any op is watched, as in TensorFlow, and a missing gradient can be
explained by the op that stopped it.

Records hold their tensors, so the ids a tape tracks stay valid while the records live; no
tensor points back at a tape, so graphs are freed by reference counting alone.
"""
import warnings

from . import nest
from .context import holders, state
from .dtypes import FLOATING_KINDS, is_floating
from .tensor import Tensor, Variable


class Record:
    """One recorded op: ``op`` (its ``Primitive``), ``inputs``, ``output``, ``params`` and the
    input ``arrays`` its forward read. ``record`` fills its slots directly (no ``__init__``
    call): a record costs a few attribute stores beyond a plain tuple's."""

    __slots__ = ("op", "inputs", "output", "params", "arrays")

    def __repr__(self):
        return f"<record of {self.op.name}>"


_new = object.__new__
_NO_PARAMS = {}  # shared by every record of an op without parameters (never mutated)


def record(prim, args, out, params, values):
    """An op ran: every active listener hears it."""
    for listener in state.recording:
        listener.recorded(prim, args, out, params, values)


class Listener:
    """The events of the computation (see the module's docstring). ``follows_every_op``: kept
    listening where a framework function pauses the user's tapes (``custom_gradient``'s
    body), as the tracer must be."""

    follows_every_op = False

    def recorded(self, prim, args, out, params, values):
        """An op ran on ``args`` (their arrays ``values``) and produced ``out``."""

    def escaped(self, tensor):
        """``tensor``'s value left for NumPy (``.numpy()``, ``float()``)."""

    def assigned(self, variable):
        """``variable`` was written in place."""


class TapeRecording(Listener):
    """The recording half of a ``GradientTape``: its records and the tensors it tracks (the
    watched tensors, the accessed trainable variables and the outputs of recorded ops). The
    tape sets ``_watch_accessed`` (``watch_accessed_variables``) and calls ``_clear``."""

    def recorded(self, prim, args, out, params, values):
        """Keep a record when the op read a tensor this tape tracks; a trainable variable
        among the inputs is watched on the way (``watch_accessed_variables``)."""
        tracked = self._tracked
        hit = False
        for a in args:
            if id(a) in tracked or a._trainable and self._watch_accessed and self._watch_new(a):
                hit = True
        if hit:
            r = _new(Record)
            r.op = prim
            r.inputs = args
            r.output = out
            r.params = params or _NO_PARAMS
            r.arrays = values
            self._records.append(r)
            tracked.add(id(out))

    def _clear(self):
        self._records = []
        self._tracked = set()  # ids of the tracked tensors
        self._watched = []  # watched tensors and variables, holding them alive
        self._versions = {}  # id(variable) -> (variable, its version when first watched)
        self._escaped = []  # recorded tensors whose value went to NumPy
        self._memo = None  # the cotangents of a persistent tape's last array pass (the tape's)
        self._reads = {}  # id(variable) -> the (record, position) pairs that read it
        self._indexed = 0  # how many records ``_reads`` has looked at

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

    def keep_values(self, variables):
        """Before ``variables`` change in place: each record that read one of them (the array it
        holds is the variable's live one) holds a copy instead, one copy per variable."""
        versions = self._versions
        wanted = [v for v in variables if id(v) in versions]
        if not wanted:
            return
        reads = self._variable_reads()
        for v in wanted:
            old = None
            for r, k in reads.get(id(v), ()):
                if r.arrays[k] is v._value:
                    if old is None:
                        old = v._value.copy()
                    arrays = list(r.arrays)
                    arrays[k] = old
                    r.arrays = arrays

    def _variable_reads(self):
        """Which records read which variables, indexed once per record (the optimizers of one
        step each ask, for their own variables)."""
        records, reads = self._records, self._reads
        for r in records[self._indexed:]:
            if r is not None:
                for k, a in enumerate(r.inputs):
                    if isinstance(a, Variable):
                        reads.setdefault(id(a), []).append((r, k))
        self._indexed = len(records)
        return reads

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

    def watched_variables(self):
        """The variables this tape watches, in the order they were created."""
        return tuple(sorted((v for v in self._watched if isinstance(v, Variable)),
                            key=lambda v: v._uid))

    def assigned(self, variable):
        """An assign while recording: take a new snapshot unless a recorded op read the old value."""
        if id(variable) in self._versions and not any(
                a is variable for r in self._records if r is not None for a in r.inputs):
            self._versions[id(variable)] = (variable, variable._version)

    def escaped(self, tensor):
        """A recorded value left for NumPy: its gradient cannot flow back from there."""
        if id(tensor) in self._tracked:
            self._escaped.append(tensor)

    def _stale_variables(self):
        """The ids of the watched variables updated since the tape read them (usually none:
        one comparison per variable)."""
        for var, version in self._versions.values():
            if var._version != version:
                break
        else:
            return ()
        return {k for k, (var, version) in self._versions.items() if var._version != version}

    def _release(self):
        """After a non-persistent tape's one differentiation, drop all but the watched variables
        (``watched_variables()`` still answers, as in TensorFlow)."""
        if len(self._watched) != len(self._versions):  # (some watched tensor is no variable)
            self._watched = [v for v in self._watched if isinstance(v, Variable)]
        for kept in (self._records, self._tracked, self._escaped, self._reads):
            kept.clear()
        self._indexed = 0
        holders.pop(id(self), None)  # (nothing left to keep before an update)
