"""What ``gradient`` answers for a source that gets no gradient, and why it gets none.

The ``"raise"`` mode (beyond TensorFlow) explains each such source from what the tape kept: a
dtype that is not differentiable, a tensor the tape never watched, a value that left for NumPy,
an op on the way that has no gradient (``argmax``, a comparison, a cast to an integer
dtype), or no recorded op at all between the source and the target.
"""
import enum

from .dtypes import FLOATING_KINDS, is_floating
from .tensor import Variable


class UnconnectedGradients(enum.Enum):
    """What ``gradient`` answers for a source the target does not depend on."""
    NONE = "none"
    ZERO = "zero"
    RAISE = "raise"  # beyond TensorFlow: an error that says why each source got no gradient


def unconnected_mode(value):
    """``unconnected_gradients`` as an ``UnconnectedGradients`` (a member or its name)."""
    if value.__class__ is UnconnectedGradients:
        return value
    try:
        return UnconnectedGradients(value.value if isinstance(value, UnconnectedGradients)
                                    else str(value).lower())
    except ValueError:
        raise ValueError(f"unconnected_gradients must be 'none', 'zero' or 'raise', "
                         f"got {value!r}") from None


def describe(t):
    kind = f"variable '{t.name}'" if isinstance(t, Variable) else "tensor"
    return f"{kind} of shape {t.shape} and dtype {t.dtype.name}"


def why_unconnected(tape, source, targets):
    """Why ``source`` gets no gradient of ``targets`` on ``tape``, in words for an error."""
    if not is_floating(source.dtype):
        return (f"its dtype is {source.dtype.name}; only floating tensors are "
                f"differentiable (fw.cast it to float32 before the computation)")
    if id(source) not in tape._tracked:
        if isinstance(source, Variable) and not source.trainable:
            return "it is a non-trainable variable, which the tape does not watch on access"
        if isinstance(source, Variable) and tape._watch_accessed:
            return ("no op inside the tape read it (a variable is watched when an op reads it "
                    "while the tape records; fw.stop_gradient reads it as a constant)")
        return ("the tape never watched it: call tape.watch() on it inside the tape, or use "
                "a trainable fw.Variable (and watch_accessed_variables=True)")
    reach, path = {id(source)}, []
    for r in tape._records:
        if any(id(a) in reach for a in r.inputs):
            reach.add(id(r.output))
            path.append(r)
    if not any(id(t) in reach for t in targets):
        escaped = [t for t in tape._escaped if id(t) in reach]
        if escaped:
            return (f"the target depends on it only through a value that left the tape via "
                    f".numpy()/NumPy/float() ({describe(escaped[0])}); keep the computation in "
                    f"framework ops")
        return "the target does not depend on it (no recorded op connects them)"
    stops = _stopping_ops(path, reach, {id(t) for t in targets})
    names = ", ".join(f"'{name}'" for name in stops) or "an op"
    return (f"the target depends on it only through {names}, which "
            f"{'is' if len(stops) < 2 else 'are'} not differentiable (its gradient is None)")


def _stopping_ops(path, reach, needed):
    """The names of the ops on the way from the source to the target whose VJP gives nothing
    for the argument the source reaches: no VJP, or an output that is not floating."""
    stops = []
    for r in reversed(path):
        if id(r.output) not in needed:
            continue
        for k, a in enumerate(r.inputs):
            if id(a) not in reach:
                continue
            if r.op.vjps is None or r.op.vjps[k] is None or \
                    r.output._value.dtype.kind not in FLOATING_KINDS:
                if r.op.name not in stops:
                    stops.append(r.op.name)
            else:
                needed.add(id(a))
    return stops
