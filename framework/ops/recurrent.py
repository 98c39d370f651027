"""A whole LSTM, GRU or SimpleRNN sequence as one primitive: Keras's LSTM step, GRU step
(reset after the product, Keras 3's default; sigmoid gates, tanh) and SimpleRNN step (tanh) run
over every time step on arrays, for ``layers.LSTM``'s, ``layers.GRU``'s and
``layers.SimpleRNN``'s fast paths. One primitive whatever the number of steps, so a traced
step serves every sequence length of an ``input_signature``'s None dimension.

The composite (a Python loop of framework ops, ``lstm_sequence_composite``,
``gru_sequence_composite``, ``simple_rnn_sequence_composite``) is the definition:
what every step computes and what the tensor VJPs differentiate (by recomputing it under a
tape, so an outer tape records them and every order stays exact). The primitive does the same
on arrays: the input projection of all steps in one product, one product per step for the
recurrence, and a first-order VJP by hand (backpropagation through time from the saved gates,
the weight gradients as products over all steps at the end). That is what a training step runs,
eagerly and under ``fw.function``, in place of a dozen recorded ops per step.

The LSTM's output packs each step's ``h`` and ``c`` side by side, ``(batch, steps, 2 *
units)``, one tensor, since a primitive has one output. A padding mask (batch, steps) makes the
states carry through the steps where it is False.
"""
from ..engine import backend
from ..engine.primitive import define
from ..engine.tensor import convert_to_tensor
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
        h, c = _kept(mask, t, new_h, h), _kept(mask, t, new_c, c)
        steps.append(concat([h, c], axis=-1))
    return stack(steps, axis=1)


def gru_sequence_composite(x, h, kernel, recurrent_kernel, bias, mask=None):
    """The definition, in framework ops: ``h_t`` for each step ``t`` (``bias``: Keras's
    ``(2, 3 * units)``, the input row and the recurrent row)."""
    units = recurrent_kernel.shape[0]
    steps = []
    for t in range(x.shape[1]):
        projected = matmul(x[:, t], kernel) + bias[0]
        inner = matmul(h, recurrent_kernel) + bias[1]
        z = sigmoid(projected[:, :units] + inner[:, :units])
        r = sigmoid(projected[:, units:2 * units] + inner[:, units:2 * units])
        candidate = tanh(projected[:, 2 * units:] + r * inner[:, 2 * units:])
        h = _kept(mask, t, z * h + (1 - z) * candidate, h)
        steps.append(h)
    return stack(steps, axis=1)


def simple_rnn_sequence_composite(x, h, kernel, recurrent_kernel, bias, mask=None):
    """The definition, in framework ops: ``h_t = tanh(x_t @ kernel + h @ recurrent_kernel +
    bias)`` for each step ``t``."""
    steps = []
    for t in range(x.shape[1]):
        h = _kept(mask, t, tanh(matmul(x[:, t], kernel) + matmul(h, recurrent_kernel) + bias), h)
        steps.append(h)
    return stack(steps, axis=1)


def _kept(mask, t, new, old):
    """A state after step ``t``: ``new``, or ``old`` carried through where ``mask`` drops it."""
    if mask is None:
        return new
    keep = cast(mask[:, t:t + 1], new.dtype)
    return keep * new + (1 - keep) * old


def _vjp_by_recomputing(composite, position, count):
    """The VJP for argument ``position``: the composite's, recomputed under a tape (row by row
    for a cotangent with leading axes, as ``jacobian`` stacks them); ``count`` arguments are
    differentiable (not a mask)."""
    def vjp(g, out, *args, saved=None):
        from ..engine.tape import GradientTape
        with GradientTape(persistent=True) as tape:
            tape.watch(list(args[:count]))
            packed = composite(*args)
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


_VJPS = [_vjp_by_recomputing(lstm_sequence_composite, k, 6) for k in range(6)]
_lstm_sequence = define("lstm_sequence", _forward, *_VJPS, array_vjp=_array_vjp, saves=True)
_lstm_sequence_masked = define("lstm_sequence_masked", _forward, *_VJPS, None,
                               array_vjp=_array_vjp, saves=True)


def _sigmoid_inplace(xp, a):
    """``a`` replaced by its sigmoid, ``tanh(a / 2) / 2 + 1/2`` (never overflows)."""
    a *= 0.5
    xp.tanh(a, out=a)
    a *= 0.5
    a += 0.5


def _gru_forward(x, h0, kernel, recurrent_kernel, bias, mask=None):
    """Every step's ``h``, and (time-major) the gates ``z, r``, the candidates and the
    recurrent part of the candidates' argument."""
    xp = backend.array_module(x)
    batch, steps, features = x.shape
    units = recurrent_kernel.shape[0]
    projected = (x.transpose(1, 0, 2).reshape(-1, features) @ kernel + bias[0]).reshape(
        steps, batch, 3 * units)
    gates = xp.empty((steps, batch, 2 * units), dtype=projected.dtype)
    candidates = xp.empty((steps, batch, units), dtype=projected.dtype)
    inners = xp.empty_like(candidates)
    hs = xp.empty_like(candidates)
    h = h0
    for t in range(steps):
        inner = h @ recurrent_kernel
        inner += bias[1]
        s = gates[t]
        xp.add(projected[t, :, :2 * units], inner[:, :2 * units], out=s)
        _sigmoid_inplace(xp, s)
        inners[t] = inner[:, 2 * units:]
        candidate = candidates[t]
        xp.multiply(s[:, units:], inners[t], out=candidate)
        candidate += projected[t, :, 2 * units:]
        xp.tanh(candidate, out=candidate)
        z = s[:, :units]
        new_h = z * h + (1 - z) * candidate
        hs[t] = new_h if mask is None else xp.where(mask[:, t:t + 1], new_h, h)
        h = hs[t]
    return xp.ascontiguousarray(hs.transpose(1, 0, 2)), (gates, candidates, inners)


def _gru_array_vjp(g, out, needs, x, h0, kernel, recurrent_kernel, bias, mask=None, *,
                   saved):
    """Backpropagation through time as the LSTM's: the local slopes of all steps first, then a
    loop of a few products and one product with the recurrent kernel per step."""
    xp = backend.array_module(g)
    gates, candidates, inners = saved
    steps, batch, units = candidates.shape
    z, r = gates[..., :units], gates[..., units:]
    previous = xp.concatenate([h0[None], out[:, :-1].transpose(1, 0, 2)])
    through_x = xp.empty((steps, batch, 3, units), dtype=g.dtype)  # d(projected) = dh * these
    through_x[:, :, 0] = (previous - candidates) * z * (1 - z)
    through_x[:, :, 2] = (1 - z) * (1 - candidates * candidates)
    through_x[:, :, 1] = through_x[:, :, 2] * inners * r * (1 - r)
    through_inner = through_x.copy()  # d(inner) = dh * these
    through_inner[:, :, 2] *= r
    d_projected, d_inner = xp.empty_like(through_x), xp.empty_like(through_x)
    recurrent_t = recurrent_kernel.T.copy()

    def step(t, dh):
        xp.multiply(through_x[t], dh[:, None], out=d_projected[t])
        xp.multiply(through_inner[t], dh[:, None], out=d_inner[t])
        return dh * z[t] + d_inner[t].reshape(batch, -1) @ recurrent_t
    dh = _through_time(g, mask, step)
    flat_x, flat_inner = d_projected.reshape(-1, 3 * units), d_inner.reshape(-1, 3 * units)
    features = x.shape[-1]
    return ((flat_x @ kernel.T).reshape(steps, batch, features).transpose(1, 0, 2).copy()
            if needs[0] else None,
            dh if needs[1] else None,
            x.transpose(1, 0, 2).reshape(-1, features).T @ flat_x if needs[2] else None,
            previous.reshape(-1, units).T @ flat_inner if needs[3] else None,
            xp.stack([flat_x.sum(axis=0), flat_inner.sum(axis=0)]) if needs[4] else None
            ) + ((None,) if mask is not None else ())


_GRU_VJPS = [_vjp_by_recomputing(gru_sequence_composite, k, 5) for k in range(5)]
_gru_sequence = define("gru_sequence", _gru_forward, *_GRU_VJPS, array_vjp=_gru_array_vjp,
                       saves=True)
_gru_sequence_masked = define("gru_sequence_masked", _gru_forward, *_GRU_VJPS, None,
                              array_vjp=_gru_array_vjp, saves=True)


def _through_time(g, mask, step):
    """The state's cotangent pulled back from the last step to the first (``g``: every step's
    output cotangent, (batch, steps, units)): at each step ``t`` the output's joins it, a step
    the ``mask`` drops passes it on to the state before unchanged, and ``step(t, dh)`` gives
    the previous state's share of the rest. Returns the first state's cotangent."""
    xp = backend.array_module(g)
    g_t = g.transpose(1, 0, 2)
    keeps = None if mask is None else mask.T[..., None].astype(g.dtype)
    dh = xp.zeros(g_t.shape[1:], dtype=g.dtype)
    for t in range(g_t.shape[0] - 1, -1, -1):
        dh += g_t[t]
        if keeps is not None:  # the new state's share; the rest passes to the previous one
            carried = dh * (1 - keeps[t])
            dh *= keeps[t]
        dh = step(t, dh)
        if keeps is not None:
            dh += carried
    return dh


def _simple_forward(x, h0, kernel, recurrent_kernel, bias, mask=None):
    """Every step's ``h``, and (time-major) every step's ``tanh`` before the mask."""
    xp = backend.array_module(x)
    batch, steps, features = x.shape
    units = recurrent_kernel.shape[0]
    news = (x.transpose(1, 0, 2).reshape(-1, features) @ kernel + bias).reshape(
        steps, batch, units)
    hs = xp.empty_like(news)
    h = h0
    for t in range(steps):
        new_h = news[t]
        new_h += h @ recurrent_kernel
        xp.tanh(new_h, out=new_h)
        hs[t] = new_h if mask is None else xp.where(mask[:, t:t + 1], new_h, h)
        h = hs[t]
    return xp.ascontiguousarray(hs.transpose(1, 0, 2)), news


def _simple_array_vjp(g, out, needs, x, h0, kernel, recurrent_kernel, bias, mask=None, *,
                      saved):
    """Backpropagation through time: ``d(pre-activation) = dh * (1 - tanh^2)`` at each step,
    one product with the recurrent kernel per step, the weight gradients as products over all
    steps at the end."""
    xp = backend.array_module(g)
    news = saved
    steps, batch, units = news.shape
    previous = xp.concatenate([h0[None], out[:, :-1].transpose(1, 0, 2)])
    slopes = 1 - news * news
    d_pre = xp.empty_like(news)
    recurrent_t = recurrent_kernel.T.copy()

    def step(t, dh):
        xp.multiply(dh, slopes[t], out=d_pre[t])
        return d_pre[t] @ recurrent_t
    dh = _through_time(g, mask, step)
    flat = d_pre.reshape(-1, units)
    features = x.shape[-1]
    return ((flat @ kernel.T).reshape(steps, batch, features).transpose(1, 0, 2).copy()
            if needs[0] else None,
            dh if needs[1] else None,
            x.transpose(1, 0, 2).reshape(-1, features).T @ flat if needs[2] else None,
            previous.reshape(-1, units).T @ flat if needs[3] else None,
            flat.sum(axis=0) if needs[4] else None) + ((None,) if mask is not None else ())


_SIMPLE_VJPS = [_vjp_by_recomputing(simple_rnn_sequence_composite, k, 5) for k in range(5)]
_simple_rnn_sequence = define("simple_rnn_sequence", _simple_forward, *_SIMPLE_VJPS,
                              array_vjp=_simple_array_vjp, saves=True)
_simple_rnn_sequence_masked = define("simple_rnn_sequence_masked", _simple_forward,
                                     *_SIMPLE_VJPS, None, array_vjp=_simple_array_vjp,
                                     saves=True)


def lstm_sequence(x, h, c, kernel, recurrent_kernel, bias, mask=None):
    """Keras's LSTM (sigmoid gates, tanh) over ``x`` of shape ``(batch, steps, features)``
    from the states ``h`` and ``c``: ``(batch, steps, 2 * units)``, each step's ``h`` then
    ``c``; where the boolean ``mask`` (batch, steps) is False, the states carry through. One
    primitive; ``lstm_sequence_composite`` is its definition."""
    return _sequence(_lstm_sequence, _lstm_sequence_masked,
                     [x, h, c, kernel, recurrent_kernel, bias], mask)


def gru_sequence(x, h, kernel, recurrent_kernel, bias, mask=None):
    """Keras's GRU (reset after the product; sigmoid gates, tanh) over ``x`` of shape
    ``(batch, steps, features)`` from the state ``h``: every step's ``h``, ``(batch, steps,
    units)``; ``bias`` is Keras's ``(2, 3 * units)``; where the boolean ``mask`` (batch, steps)
    is False, the state carries through. One primitive; ``gru_sequence_composite`` is its
    definition."""
    return _sequence(_gru_sequence, _gru_sequence_masked,
                     [x, h, kernel, recurrent_kernel, bias], mask)


def simple_rnn_sequence(x, h, kernel, recurrent_kernel, bias, mask=None):
    """Keras's SimpleRNN (tanh) over ``x`` of shape ``(batch, steps, features)`` from the state
    ``h``: every step's ``h``, ``(batch, steps, units)``; where the boolean ``mask`` (batch,
    steps) is False, the state carries through. One primitive;
    ``simple_rnn_sequence_composite`` is its definition."""
    return _sequence(_simple_rnn_sequence, _simple_rnn_sequence_masked,
                     [x, h, kernel, recurrent_kernel, bias], mask)


def _sequence(op, masked_op, args, mask):
    """One of the sequence primitives on ``args`` (and the ``mask``, with ``masked_op``)."""
    args = tuple(convert_to_tensor(a) for a in args + ([] if mask is None else [mask]))
    return (op if mask is None else masked_op).run(args, [a._value for a in args], {})
