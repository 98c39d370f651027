"""``fw.test.check_gradients``: compare a function's tape gradients with finite differences.

The check runs in float64 along random directions, as HIPS/autograd does: for a random cotangent
``u`` on the outputs and a random direction ``v`` on the inputs, the tape's ``<grad <u, f>, v>``
must equal the central difference of ``<u, f(x + h v)>``. With ``order=2`` the same check is
applied to the gradient function itself (computed with nested tapes), which covers the VJPs'
own derivatives, and so on for higher orders.
"""
import numpy as np

from .engine import nest
from .engine.dtypes import float64, is_floating
from .ops import cast, reduce_sum
from .engine.tape import GradientTape
from .engine.tensor import Tensor, convert_to_tensor


class GradientCheckError(AssertionError):
    """The tape's gradient disagrees with finite differences."""


def check_gradients(f, *args, order=2, eps=1e-6, rtol=1e-5, atol=1e-7, seed=0):
    """Raise ``GradientCheckError`` unless ``f``'s derivatives up to ``order`` are right.

    ``f`` takes tensors and returns a tensor or a nested structure of tensors. Floating
    arguments are converted to float64 and differentiated; other arguments (labels, indices)
    are passed through unchanged.
    """
    args = [cast(convert_to_tensor(a), float64) if is_floating(convert_to_tensor(a).dtype)
            else convert_to_tensor(a) for a in args]
    rng = np.random.default_rng(seed)
    fn = f
    for k in range(1, order + 1):
        _check_once(fn, args, rng, eps, rtol, atol, k)
        fn = _gradient_function(fn, args, rng)


def _float_positions(args):
    return [i for i, a in enumerate(args) if is_floating(a.dtype)]


def _outputs(fn, args):
    return [o for o in nest.flatten(fn(*args)) if isinstance(o, Tensor)]


def _check_once(fn, args, rng, eps, rtol, atol, order):
    positions = _float_positions(args)
    us = [rng.standard_normal(o.shape) for o in _outputs(fn, args)]
    vs = {i: rng.standard_normal(args[i].shape) for i in positions}

    def pairing(xs):
        return sum(float(np.sum(u * o.numpy())) for u, o in zip(us, _outputs(fn, xs)))

    def shifted(sign):
        return [convert_to_tensor(a.numpy() + sign * eps * vs[i]) if i in vs else a
                for i, a in enumerate(args)]

    numeric = (pairing(shifted(+1)) - pairing(shifted(-1))) / (2 * eps)
    sources = [args[i] for i in positions]
    with GradientTape() as tape:
        tape.watch(sources)
        total = _paired(fn(*args), us)
    grads = map(convert_to_tensor, tape.gradient(total, sources, unconnected_gradients="zero"))
    analytic = sum(float(np.sum(g.numpy() * vs[i])) for g, i in zip(grads, positions))
    if not np.isclose(analytic, numeric, rtol=rtol, atol=atol):
        raise GradientCheckError(
            f"order {order} derivative of {getattr(fn, '__name__', fn)}: the tape gives "
            f"{analytic!r}, finite differences give {numeric!r} (difference "
            f"{abs(analytic - numeric):.3g})")


def _paired(outputs, us):
    outs = [o for o in nest.flatten(outputs) if isinstance(o, Tensor)]
    return sum((reduce_sum(o * u) for o, u in zip(outs, us)), start=convert_to_tensor(0.0, float64))


def _gradient_function(fn, args, rng):
    """x -> gradient of <u, fn(x)> for a fixed random ``u``: the next order's function."""
    us = [rng.standard_normal(o.shape) for o in _outputs(fn, args)]
    positions = _float_positions(args)

    def gradient_of(*xs):
        sources = [xs[i] for i in positions]
        with GradientTape() as tape:
            tape.watch(sources)
            total = _paired(fn(*xs), us)
        # (an IndexedSlices, made dense by a recorded scatter, so the next order sees it)
        return [convert_to_tensor(g) for g in tape.gradient(total, sources,
                                                            unconnected_gradients="zero")]

    gradient_of.__name__ = f"grad({getattr(fn, '__name__', 'f')})"
    return gradient_of
