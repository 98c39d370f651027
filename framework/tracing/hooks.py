"""What ``fw.function``'s recorder needs from the rest of the framework, in one small place.

While a ``fw.function`` traces, ``state.tracer`` holds its recorder (``framework.trace``);
otherwise it is None and each hook below costs one attribute read. The recorder sees every op
through the tapes' own recording path; these hooks cover what is not an op:

- ``replayed``: a framework function with effects beyond its result (a variable's ``assign``,
  an optimizer's update, a random draw). Traced, it runs once and becomes one step of the plan,
  which calls it again on every replay, on that call's values.
- ``tracing_tapes``: the tapes that stay active where a framework function pauses the user's
  (``custom_gradient``'s body): the recorder keeps following those ops.
"""
import functools

from ..engine.context import state


def replayed(fn):
    """Make ``fn`` one replayed step of a traced ``fw.function`` instead of a frozen result."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        tracer = state.tracer
        if tracer is None:
            return fn(*args, **kwargs)
        return tracer.call(fn, args, kwargs)
    return call


def tracing_tapes(recording):
    """Of the recording tapes, those that a pause of the user's tapes keeps (the recorder's)."""
    return [tape for tape in recording if getattr(tape, "follows_every_op", False)]
