"""Which tapes are recording on this thread: the one piece of state every op consults.

Kept in its own module because tensors, primitives and tapes all read it, and the first check of
every op (``if state.recording``) must be a single attribute read.
"""
import functools
import threading
import weakref
from types import SimpleNamespace


class _ThreadState(threading.local):
    def __init__(self):
        self.recording = []  # the recording tapes, outermost first
        self.tracer = None  # fw.function's recorder while it traces (framework.tracing.tracer)


state = _ThreadState()

# Process-wide settings (``fw.config``): ``run_functions_eagerly`` makes fw.function call its
# Python function instead of replaying.
settings = SimpleNamespace(run_functions_eagerly=False)


def note_escape(tensor):
    """Tell the listeners that a value left for NumPy (``recording.Listener.escaped``)."""
    for listener in state.recording:
        listener.escaped(tensor)


# The tapes that may hold records, by id, each through a weak reference (a tape forgotten by
# its user goes by itself; a non-persistent one leaves when its one gradient releases it): an
# in-place update asks them first to keep the values they read (``before_update``). A plain
# dict, so that an optimizer's ``if holders`` costs nothing in an ordinary step.
holders = {}


def hold(tape):
    """Count ``tape`` among the ``holders`` (from when it records until it is released)."""
    key = id(tape)
    holders[key] = weakref.ref(tape, lambda _, key=key: holders.pop(key, None))


def before_update(variables):
    """Before ``variables`` are written in place: each tape still holding records that read
    one of them keeps a copy of the value it read, so differentiating it later gives the
    recorded computation's gradient, at the old values, as TensorFlow's tape does. An ordinary
    step's tape has let go of its records by then: nothing is copied."""
    for ref in list(holders.values()):
        tape = ref()
        if tape is not None and tape._records:
            tape.keep_values(variables)


def note_assign(variable):
    """Tell the listeners that a variable changed in place (``recording.Listener.assigned``)."""
    for listener in state.recording:
        listener.assigned(variable)


# --- effects: what the tracer (``state.tracer``) is told besides the ops ----------------------
def replayed(fn=None, *, draws=False):
    """Mark ``fn`` as an effect beyond its result (a variable's ``assign``, an optimizer's
    update, a random draw, a summary write): traced by ``fw.function``, it runs once and becomes
    one step of the plan, which calls it again on every replay with that call's values.
    Outside a trace it costs one attribute read. ``draws``: its only effect is to move a
    random generator on (the global one, or a NumPy ``Generator`` it is given), so a trace
    may run it again on other values with the generators put back as they were."""
    if fn is None:
        return functools.partial(replayed, draws=draws)
    fn.draws = draws

    @functools.wraps(fn)
    def call(*args, **kwargs):
        tracer = state.tracer
        if tracer is None:
            return fn(*args, **kwargs)
        return tracer.call(fn, args, kwargs)
    return call


def tracing_tapes(recording):
    """Of the listeners, those a pause of the user's tapes keeps (``custom_gradient``'s body):
    the tracer, which must follow every op."""
    return [listener for listener in recording if getattr(listener, "follows_every_op", False)]
