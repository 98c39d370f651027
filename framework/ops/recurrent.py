"""A whole LSTM sequence as one primitive: Keras's LSTM step (sigmoid gates, tanh) run over
every time step on arrays, for ``layers.LSTM``'s fast path.

The composite (a Python loop of framework ops, ``lstm_sequence_composite``) is the definition:
what every step computes and what the tensor VJPs differentiate (by recomputing it under a
tape, so an outer tape records them and every order stays exact). The primitive does the same
on arrays: the input projection of all steps in one product, one product per step for the
recurrence, and a first-order VJP by hand (backpropagation through time from the saved gates,
the weight gradients as products over all steps at the end). That is what a training step runs,
eagerly and under ``fw.function``, in place of a dozen recorded ops per step.

The output packs each step's ``h`` and ``c`` side by side, ``(batch, steps, 2 * units)``, one
tensor, since a primitive has one output.
"""
from .. import backend
from ..primitive import define
from ..tensor import convert_to_tensor
from .linalg import matmul
from .math import cast, sigmoid, tanh
from .shape import concat, reshape, stack


def lstm_sequence_composite(x, h, c, kernel, recurrent_kernel, bias, mask=None):
    """The definition, in framework ops: ``concat([h_t, c_t])`` for each step ``t``; where
    ``mask`` (batch, steps) is 0, the states carry through that step unchanged."""
    units = recurrent_kernel.shape[0]
    steps = []
    for t in range(x.shape[1]):
        z = matmul(x[:, t], kernel) + matmul(h, recurrent_kernel) + bias
        gates = sigmoid(z)
        new_c = (gates[:, units:2 * units] * c
                 + gates[:, :units] * tanh(z[:, 2 * units:3 * units]))
        new_h = gates[:, 3 * units:] * tanh(new_c)
        if mask is None:
            h, c = new_h, new_c
        else:
            keep = cast(mask[:, t:t + 1], new_h.dtype)
            h, c = keep * new_h + (1 - keep) * h, keep * new_c + (1 - keep) * c
        steps.append(concat([h, c], axis=-1))
    return stack(steps, axis=1)


def _vjp_by_recomputing(position):
    """The VJP for argument ``position``: the composite's, recomputed under a tape (row by row
    for a cotangent with leading axes, as ``jacobian`` stacks them)."""
    def vjp(g, out, *args, saved=None):
        from ..tape import GradientTape
        with GradientTape(persistent=True) as tape:
            tape.watch(list(args[:6]))  # (not a mask)
            packed = lstm_sequence_composite(*args)
        lead = g.shape[:g.ndim - out.ndim]
        if not lead:
            return tape.gradient(packed, args[position], output_gradients=g)
        rows = reshape(g, (-1, *out.shape))
        grads = [tape.gradient(packed, args[position], output_gradients=rows[k])
                 for k in range(rows.shape[0])]
        return reshape(stack(grads), (*lead, *args[position].shape))
    return vjp


def _inside(xp, a, units):
    """Keras's gate blocks ``i, f, c, o`` in the order the arrays use inside: ``o, i, f, c``,
    so that the three sigmoids are side by side, and so are the three blocks ``dc`` drives."""
    return xp.roll(a, units, axis=-1)


def _outside(xp, a, units):
    return xp.roll(a, -units, axis=-1)


def _array_vjp(g, out, needs, x, h0, c0, kernel, recurrent_kernel, bias, mask=None, *,
               saved):
    """Backpropagation through time from the saved gates: the gradients of all six inputs.

    Each step's local derivatives (the gates' slopes times what they multiply) are computed
    for all steps at once before the loop, which is left with what truly runs step after step:
    a few products of the carried ``dh`` and ``dc`` and one product with the recurrent kernel.
    """
    xp = backend.array_module(g)
    gates, cells, tanh_cells = saved  # time-major: (steps, batch, ...); the states c from c0
    # on; the tanh of each step's new c (which a masked step does not keep)
    steps, batch, units = tanh_cells.shape
    o, i, f, cand = (gates[..., k * units:(k + 1) * units] for k in range(4))
    slopes = xp.empty_like(gates)  # dz = [dh, dc, dc, dc] * slopes, block by block
    slopes[..., :units] = tanh_cells * o * (1 - o)
    slopes[..., units:2 * units] = cand * i * (1 - i)
    slopes[..., 2 * units:3 * units] = cells[:-1] * f * (1 - f)
    slopes[..., 3 * units:] = i * (1 - cand * cand)
    through_h = o * (1 - tanh_cells * tanh_cells)  # dc += dh * through_h
    g_h, g_c = g[..., :units].transpose(1, 0, 2), g[..., units:].transpose(1, 0, 2)
    dz = xp.empty_like(gates)
    blocks = dz.reshape(steps, batch, 4, units)
    slope_blocks = slopes.reshape(steps, batch, 4, units)
    recurrent_t = _inside(xp, recurrent_kernel, units).T.copy()
    dh = xp.zeros((batch, units), dtype=g.dtype)
    dc = xp.zeros_like(dh)
    keeps = None if mask is None else mask.T[..., None].astype(g.dtype)
    for t in range(steps - 1, -1, -1):
        dh += g_h[t]
        dc += g_c[t]
        if keeps is not None:  # the new states' share; the rest passes to the previous ones
            carried_h, carried_c = dh * (1 - keeps[t]), dc * (1 - keeps[t])
            dh *= keeps[t]
            dc *= keeps[t]
        dc += dh * through_h[t]
        block = blocks[t]
        block[:, 0] = dh
        block[:, 1:] = dc[:, None]
        block *= slope_blocks[t]
        dh = dz[t] @ recurrent_t
        dc *= f[t]
        if keeps is not None:
            dh += carried_h
            dc += carried_c
    flat = dz.reshape(-1, 4 * units)
    features = x.shape[-1]
    dx = dk = dr = None
    if needs[0]:
        dx = xp.ascontiguousarray((flat @ _inside(xp, kernel, units).T).reshape(
            steps, batch, features).transpose(1, 0, 2))
    if needs[3]:
        dk = _outside(xp, x.transpose(1, 0, 2).reshape(-1, features).T @ flat, units)
    if needs[4]:
        previous = xp.concatenate([h0[None], out[:, :-1, :units].transpose(1, 0, 2)])
        dr = _outside(xp, previous.reshape(-1, units).T @ flat, units)
    return (dx, dh if needs[1] else None, dc if needs[2] else None, dk, dr,
            _outside(xp, flat.sum(axis=0), units) if needs[5] else None) + (
        (None,) if mask is not None else ())


def _forward(x, h0, c0, kernel, recurrent_kernel, bias, mask=None):
    """The packed ``[h, c]`` of every step, and (time-major) the activated gates (in the
    inside order, see ``_inside``), every state ``c`` from ``c0`` on, and the tanh of each
    step's new ``c``.

    A sigmoid is ``tanh(z / 2) / 2 + 1/2``: the sigmoid gates' columns of the weights are
    halved first (exact in floating point), which leaves three operations per step on one
    block for the three of them."""
    xp = backend.array_module(x)
    batch, steps, features = x.shape
    units = recurrent_kernel.shape[0]
    weights = [_inside(xp, w, units) for w in (kernel, recurrent_kernel, bias)]
    for w in weights:
        w[..., :3 * units] *= 0.5
    kernel, recurrent_kernel, bias = weights
    gates = (x.transpose(1, 0, 2).reshape(-1, features) @ kernel + bias).reshape(
        steps, batch, 4 * units)
    cells = xp.empty((steps + 1, batch, units), dtype=gates.dtype)
    tanh_cells = xp.empty((steps, batch, units), dtype=gates.dtype)
    hs = xp.empty((steps, batch, units), dtype=gates.dtype)
    h, cells[0] = h0, c0
    for t in range(steps):
        z = gates[t]
        z += h @ recurrent_kernel
        sigmoids, candidate = z[:, :3 * units], z[:, 3 * units:]
        xp.tanh(sigmoids, out=sigmoids)
        sigmoids *= 0.5
        sigmoids += 0.5
        xp.tanh(candidate, out=candidate)
        c = cells[t + 1]
        xp.multiply(z[:, 2 * units:3 * units], cells[t], out=c)
        c += z[:, units:2 * units] * candidate
        xp.tanh(c, out=tanh_cells[t])
        if mask is None:
            h = xp.multiply(z[:, :units], tanh_cells[t], out=hs[t])
        else:
            keep = mask[:, t:t + 1]
            hs[t] = xp.where(keep, z[:, :units] * tanh_cells[t], h)
            h = hs[t]
            xp.copyto(c, cells[t], where=~keep)
    out = xp.concatenate([hs, cells[1:]], axis=-1).transpose(1, 0, 2)
    return xp.ascontiguousarray(out), (gates, cells, tanh_cells)


_VJPS = [_vjp_by_recomputing(k) for k in range(6)]
_lstm_sequence = define("lstm_sequence", _forward, *_VJPS, array_vjp=_array_vjp, saves=True)
_lstm_sequence_masked = define("lstm_sequence_masked", _forward, *_VJPS, None,
                               array_vjp=_array_vjp, saves=True)


def lstm_sequence(x, h, c, kernel, recurrent_kernel, bias, mask=None):
    """Keras's LSTM (sigmoid gates, tanh) over ``x`` of shape ``(batch, steps, features)``
    from the states ``h`` and ``c``: ``(batch, steps, 2 * units)``, each step's ``h`` then
    ``c``; where the boolean ``mask`` (batch, steps) is False, the states carry through. One
    primitive; ``lstm_sequence_composite`` is its definition."""
    args = [x, h, c, kernel, recurrent_kernel, bias] + ([] if mask is None else [mask])
    args = tuple(convert_to_tensor(a) for a in args)
    op = _lstm_sequence if mask is None else _lstm_sequence_masked
    return op.run(args, [a._value for a in args], {})
