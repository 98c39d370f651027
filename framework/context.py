"""Which tapes are recording on this thread: the one piece of state every op consults.

Kept in its own module because tensors, primitives and tapes all read it, and the first check of
every op (``if state.recording``) must be a single attribute read.
"""
import threading
from types import SimpleNamespace


class _ThreadState(threading.local):
    def __init__(self):
        self.recording = []  # the recording tapes, outermost first
        self.tracer = None  # fw.function's recorder while it traces (framework.trace)


state = _ThreadState()

# Process-wide settings (``fw.config``): ``run_functions_eagerly`` makes fw.function call its
# Python function instead of replaying.
settings = SimpleNamespace(run_functions_eagerly=False)


def note_escape(tensor):
    """Tell the listeners that a value left for NumPy (``recording.Listener.escaped``)."""
    for listener in state.recording:
        listener.escaped(tensor)


def note_assign(variable):
    """Tell the listeners that a variable changed in place (``recording.Listener.assigned``)."""
    for listener in state.recording:
        listener.assigned(variable)
