"""A first-order ``tape.gradient`` while tracing, written down as raw steps.

The tape's raw backward pass runs as usual (the trace is a real call and needs the numbers);
this module walks the same records the same way (records reading a source, in reverse, one
cotangent per tensor, added up in the same order) and records each array VJP call, each sum back
to an input's shape and each addition as a step of the plan, so a replay pulls the cotangents
back with exactly the kernels and in exactly the order of an eager step. A primitive without a
array VJP is pulled back with its tensor VJPs, whose ops the recorder follows as usual.
"""
from . import backend, nest
from .indexed_slices import IndexedSlices, dense_array
from .tape import _fit_array, _ones_like as _tape_ones, _plus
from .tensor import Tensor, wrap


def backward(rec, records, tracked, target, sources, output_gradients):
    """The refs of the sources' gradients (None where unconnected), in flat order."""
    targets = nest.flatten(target)
    flat_sources = nest.flatten(sources)
    source_ids = {id(s) for s in flat_sources if id(s) in tracked}
    reach, relevant = set(source_ids), []
    for i, (_, args, out, _, _) in enumerate(records):
        for a in args:
            if id(a) in reach:
                relevant.append(i)
                reach.add(id(out))
                break
    cot = {}  # id(tensor) -> (ref, array)
    seeds = None if output_gradients is None else nest.flatten(output_gradients)
    for i, t in enumerate(targets):
        if id(t) not in reach:
            continue
        seed = None if seeds is None else seeds[i]
        if seed is None:
            entry = _const(rec, _ones_like(t._value))
        elif isinstance(seed, Tensor):
            entry = (rec.ref(seed), seed._value)
        else:
            entry = _const(rec, backend.array_module(t._value).asarray(seed, dtype=t.dtype))
        _accumulate(rec, cot, id(t), entry)
    for i in reversed(relevant):
        prim, args, out, params, values = records[i]
        key = id(out)
        entry = cot.get(key) if key in source_ids else cot.pop(key, None)
        if entry is None:
            continue
        if entry[1].__class__ is IndexedSlices:  # (a gather's sparse gradient, reaching an op)
            value, ref = rec.array_step(dense_array, [entry[0]], [entry[1]])
            entry = (ref, value)
        if prim.array_vjp is not None:
            pulled = _array_pull(rec, prim, entry, out, args, params, values, reach)
        else:
            pulled = _tensor_pull(rec, prim, entry, out, args, params, reach)
        for a, ga in zip(args, pulled):
            if ga is None:
                continue
            shape = a._value.shape
            if ga[1].shape != shape:  # the tape's own sum back to the input's shape
                value, ref = rec.array_step(_fit_array, [ga[0], rec.constant(shape)], [ga[1], shape])
                ga = (ref, value)
            _accumulate(rec, cot, id(a), ga)
    return [None if (e := cot.get(id(s))) is None or id(s) not in source_ids else e[0]
            for s in flat_sources]


def _array_pull(rec, prim, entry, out, args, params, values, reach):
    needs = tuple(id(a) in reach for a in args)
    refs = [entry[0], rec.ref(out), rec.constant(needs)] + [rec.ref(a) for a in args]
    vals = [entry[1], out._value, needs] + list(values)
    kwargs, kwvals = {}, {}
    for k, v in params.items():
        kwargs[k] = rec.array_ref(v) if k == "saved" else rec.constant(v)
        kwvals[k] = v
    vjp = prim.array_vjp if backend.is_device_array(entry[1]) else prim.host_array_vjp
    result, refs_out = rec.array_step(vjp, refs, vals, kwargs, kwvals)
    return [None if g is None else (r, g) for g, r in zip(result, refs_out)]


def _tensor_pull(rec, prim, entry, out, args, params, reach):
    """``tape._pull`` on tensors the recorder follows: the VJPs' ops become steps."""
    g = wrap(entry[1])
    rec.bind(entry[0], entry[1], g)
    pulled = []
    for a, vjp in zip(args, prim.vjps):
        if vjp is None or id(a) not in reach:
            pulled.append(None)
            continue
        ga = vjp(g, out, *args, **params) if params else vjp(g, out, *args)
        pulled.append(None if ga is None else (rec.ref(ga), ga._value))
    return pulled


def _accumulate(rec, cot, key, entry):
    prev = cot.get(key)
    if prev is None:
        cot[key] = entry
    else:
        value, ref = rec.array_step(_plus, [prev[0], entry[0], rec.constant(True)],
                                  [prev[1], entry[1], True])
        cot[key] = (ref, value)


def _const(rec, array):
    return rec.constant(array), array


def _ones_like(value):
    return _tape_ones(value, True)
