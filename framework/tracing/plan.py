"""A recorded trace as a replay: straight-line Python, one line per raw array call.

``build`` drops the steps nothing needs (an initializer's draw on the first trace), moves the
guards and what they read to the front (so a replay whose branch differs stops before it has
changed any variable), and writes the rest as the source of one function::

    def replay(s0, s1):
        V0, V1 = r0(), r1()          # the variables, through weak references
        s2 = f0(s0, V0._value)       # a forward
        s3, _ = f1(s4, s2, c0, ...)  # a array VJP
        f2(O0(), [s5, s6], [V0, V1]) # a replayed framework call (an optimizer's update)
        return (W(s2),)

Locals and globals only: no tensor wrapping, no dispatch, no recording, no lookups by id. The
plan holds its variables and the objects its calls take (optimizers) weakly, so a model that
is dropped is freed: the replay then raises ``Stale`` and the function traces again.
"""
import itertools
import weakref

import numpy as np

from .. import random as fw_random
from ..engine import backend
from ..engine.indexed_slices import IndexedSlices
from ..engine.tensor import Tensor, wrap
from .tracer import Step, TraceError


class Mismatch(Exception):
    """A guard saw another value than the trace: this plan is not the one for the call."""


class Stale(Exception):
    """A variable or object of the plan has been freed."""


def build(rec, outputs, without=()):
    """The replay function for recorder ``rec`` whose function returned ``outputs`` (refs,
    ("pyout", value) for Python values, or ("var", k) for variables), leaving out the steps
    ``without`` (the shape checks a plan for every size needs not make)."""
    steps = [s for s in rec.steps if not any(s is w for w in without)] if without else rec.steps
    steps, outputs = _shared(rec, steps, outputs)
    steps = _live(steps, outputs)
    steps = _guards_first(steps)
    return _compile(rec, steps, outputs)


def _reads(step):
    """The slot numbers a step reads."""
    return [r[1] for r in _walk(step) if r[0] == "s"]


def _reads_variables(step):
    return any(r[0] in ("v", "var") for r in _walk(step))


def _draws(step):
    return step.kind == "call" and getattr(step.fn, "__module__", "") == fw_random.__name__


def _live(steps, outputs):
    """Steps an output, a call with effects or a guard needs; a random draw whose result no
    step reads is dropped (on a first trace, the initializers' draws)."""
    need = set()
    for ref in outputs:
        need.update(_reads(_as_step(ref)))
    kept = []
    for step in reversed(steps):
        effect = step.kind == "guard" or step.kind == "call" and not _draws(step)
        if effect or any(o is not None and o[1] in need for o in step.outs):
            kept.append(step)
            need.update(_reads(step))
    kept.reverse()
    return kept


def _shared(rec, steps, outputs):
    """One step for several that call the same raw function on the same values (a second
    ``gradient`` of a persistent tape repeats the first walk's start): the later ones' results
    are the first's. Raw functions write into none of their inputs, so sharing is safe."""
    seen, alias, kept = {}, {}, []
    for step in steps:
        if alias:
            step.args = [_renamed(r, alias) for r in step.args]
            step.kwargs = {k: _renamed(r, alias) for k, r in step.kwargs.items()}
        key = _step_key(rec, step) if step.kind == "op" else None
        first = seen.get(key) if key is not None else None
        if first is None:
            if key is not None:
                seen[key] = step
            kept.append(step)
            continue
        for mine, theirs in zip(step.outs, first.outs):
            if mine is not None:
                if theirs is None:  # (the first ignored this output: keep the step after all)
                    break
                alias[mine] = theirs
        else:
            continue
        kept.append(step)
    return kept, [_renamed(r, alias) for r in outputs]


def _step_key(rec, step):
    """What makes two op steps the same call: the function, and each argument's slot or
    variable, or a constant's value (an array constant by identity); None if not hashable."""
    parts = [step.fn, len(step.outs)]
    for name, r in [(None, a) for a in step.args] + list(step.kwargs.items()):
        if r[0] == "c":
            value = rec.constants[r[1]]
            if not isinstance(value, (np.ndarray, np.generic)) and not _on_device(value):
                r = ("c", type(value), value)
            elif value.__class__ is np.ndarray and value.size <= 16:  # (a seed of ones)
                r = ("c", value.dtype.str, value.shape, value.tobytes())
            else:
                r = ("c", id(value))
        parts.append((name, r))
    key = tuple(parts)
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _renamed(ref, alias):
    if ref[0] == "s":
        return alias.get(ref, ref)
    if ref[0] == "tensor":
        return ("tensor", _renamed(ref[1], alias))
    if ref[0] == "seq":
        return ("seq", ref[1], [_renamed(r, alias) for r in ref[2]])
    if ref[0] == "map":
        return ("map", {k: _renamed(r, alias) for k, r in ref[1].items()})
    if ref[0] == "slices":
        return ("slices", _renamed(ref[1], alias), _renamed(ref[2], alias), ref[3])
    if ref[0] == "size":
        return ("size", _renamed(ref[1], alias), ref[2])
    if ref[0] == "slice":
        return ("slice", [_renamed(r, alias) for r in ref[1]])
    if ref[0] == "arith":
        return ("arith", ref[1], tuple(_renamed(r, alias) for r in ref[2]))
    return ref


def _as_step(ref):
    return Step("op", None, [ref])


def _guards_first(steps):
    """Guards and the steps they depend on first, when that changes nothing: none of those
    is a call with effects, and none reads a variable after such a call has run."""
    guards = [i for i, s in enumerate(steps) if s.kind == "guard"]
    if not guards:
        return steps
    producer = {o[1]: i for i, s in enumerate(steps) for o in s.outs if o is not None}
    front, stack = set(guards), list(guards)
    while stack:
        for slot in _reads(steps[stack.pop()]):
            i = producer.get(slot)
            if i is not None and i not in front:
                front.add(i)
                stack.append(i)
    first_effect = next((i for i, s in enumerate(steps)
                         if s.kind == "call" and not _draws(s)), len(steps))
    for i in sorted(front):
        s = steps[i]
        if (s.kind == "call" and not _draws(s)) or (i > first_effect and _reads_variables(s)):
            raise TraceError(
                "fw.function: a Python branch (if/while/bool()/int()) on a tensor computed "
                "after a variable was updated in the same call (assign, apply_gradients); the "
                "replay checks branch conditions before it updates anything. Compute the "
                "condition before the update, or make the update unconditional (fw.where).")
    draws_front = [i for i in front if _draws(steps[i])]
    if draws_front:
        last = max(draws_front)
        if any(_draws(steps[i]) and i not in front for i in range(last)):
            raise TraceError("fw.function: a Python branch on a random draw that follows "
                             "another draw; draw the values the branch reads first")
    return [steps[i] for i in sorted(front)] + [s for i, s in enumerate(steps) if i not in front]


def _compile(rec, steps, outputs):
    names = {"W": wrap, "Mismatch": Mismatch, "Stale": Stale,
             "rng_state": fw_random.get_state, "set_rng_state": fw_random.set_state}
    counter = itertools.count()

    def glob(value):
        name = f"g{next(counter)}"
        names[name] = value
        return name

    const_names = {}
    slot_names = {}

    def slot(k):
        """Slots numbered as the replay first meets them: the traces of one computation
        read alike (``same_plan``), whatever steps the plan dropped."""
        name = slot_names.get(k)
        if name is None:
            name = slot_names[k] = f"s{len(slot_names)}"
        return name

    def render(ref):
        kind = ref[0]
        if kind == "s":
            return slot(ref[1])
        if kind == "v":
            return f"V{ref[1]}._value"
        if kind == "c":
            name = const_names.get(ref[1])
            if name is None:
                name = const_names[ref[1]] = glob(rec.constants[ref[1]])
            return name
        if kind == "var":
            return f"V{ref[1]}"
        if kind == "obj":
            return f"O{ref[1]}"
        if kind == "tensor":
            inner = ref[1]
            if inner[0] == "v":
                return f"V{inner[1]}"
            return f"W({render(inner)})"
        if kind == "seq":
            items = ", ".join(render(r) for r in ref[2])
            if ref[1] is tuple:
                return f"({items},)" if ref[2] else "()"
            return f"[{items}]" if ref[1] is list else f"{glob(ref[1])}([{items}])"
        if kind == "map":
            return "{" + ", ".join(f"{glob(k)}: {render(v)}" for k, v in ref[1].items()) + "}"
        if kind == "slice":
            return f"slice({', '.join(render(r) for r in ref[1])})"
        if kind == "size":  # (a size read in traced code: computed on every call)
            return f"{render(ref[1])}.shape[{ref[2]}]"
        if kind == "arith":
            return f"{glob(ref[1])}({', '.join(render(r) for r in ref[2])})"
        if kind == "num":
            return repr(ref[1])
        raise AssertionError(ref)

    used_vars = sorted({k for s in steps for k in _var_indices(s)} |
                       {r[1] for r in outputs if r[0] in ("v", "var")})
    used_objs = sorted({k for s in steps for k in _obj_indices(s)})
    inputs = ", ".join(slot(r[1]) for r in rec.inputs)
    lines = [f"def replay({inputs}):"]
    held = [f"V{k}" for k in used_vars] + [f"O{k}" for k in used_objs]
    if held:
        refs = [glob(rec.variables[k]) for k in used_vars] + [glob(rec.objects[k])
                                                             for k in used_objs]
        lines.append(f"    {', '.join(held)}, = {', '.join(r + '()' for r in refs)},")
        lines.append(f"    if {' or '.join(h + ' is None' for h in held)}: raise Stale")
    n_guards = sum(s.kind == "guard" for s in steps)
    draws_first = any(_draws(s) for s in steps[:_last_guard(steps) + 1]) if n_guards else False
    if draws_first:
        lines.append("    rs = rng_state()")
    dead_after = _last_reads(steps, outputs)
    for i, step in enumerate(steps):
        if i in dead_after:  # (the array goes as its last reader has run, as in eager)
            lines.append(f"    del {', '.join(slot(k) for k in dead_after[i])}")
        if step.kind == "guard":
            check = f"{glob(step.fn)}({render(step.args[0])}) != {glob(step.expect)}"
            undo = "set_rng_state(rs); " if draws_first else ""
            lines.append(f"    if {check}: {undo}raise Mismatch")
            continue
        args = [render(a) for a in step.args]
        args += [f"{k}={render(v)}" for k, v in step.kwargs.items()]
        call = f"{glob(step.fn)}({', '.join(args)})"
        if step.kind == "call" and step.result == "tensors":
            targets = ", ".join(slot(o[1]) for o in step.outs)
            lines.append(f"    {targets}, = [t._value for t in {call}]")
        elif step.kind == "call":
            lhs = f"{slot(step.outs[0][1])} = " if step.outs else ""
            tail = "._value" if step.outs else ""
            lines.append(f"    {lhs}{call}{tail}")
        elif step.unpack:
            targets = [("_" if o is None else slot(o[1])) for o in step.outs]
            lines.append(f"    {', '.join(targets)}, = {call}")
        else:
            lines.append(f"    {slot(step.outs[0][1])} = {call}")
    results = []
    for ref in outputs:
        if ref[0] == "pyout":
            results.append(glob(ref[1]))
        elif ref[0] in ("v", "var"):
            results.append(f"W(V{ref[1]}._value.copy())")
        elif ref[0] == "c":
            results.append(glob(wrap(rec.constants[ref[1]])))
        elif ref[0] == "slices":
            results.append(f"{glob(IndexedSlices)}(W({render(ref[1])}), W({render(ref[2])}), "
                           f"{glob(ref[3])})")
        else:
            results.append(f"W({render(ref)})")
    lines.append(f"    return ({', '.join(results)}{',' if results else ''})")
    source = "\n".join(lines) + "\n"
    namespace = dict(names)
    exec(compile(source, "<fw.function replay>", "exec"), namespace)
    replay = namespace["replay"]
    replay.source, replay.names = source, names
    return replay


def generalize(a, sizes_a, b, sizes_b):
    """One replay for every batch size, from replays ``a`` and ``b`` traced at two batch sizes
    of an ``input_signature`` whose first dimension is None (``sizes_*``: (input, axis) ->
    the size of each None first dimension), or None where they do not prove one.

    The batch is one size: the None first dimensions whose sizes agree in both traces, the
    only ones that changed between them. The two replays must be the same source over the same
    globals (functions, variables and objects by identity, constants by value). A constant
    that differs must be an integer, or a tuple or list of them, or an array filled with one
    value or holding ``0 .. k - 1``, whose every integer is a whole multiple of the batch or of
    its square by one factor in both traces (a reshape's ``batch * time``, an RNN's zero state
    of ``(batch, units)``): the general replay computes it from its inputs' shapes, and checks
    at every call that the dimensions the batch stands for are still equal (else it traces
    again). A constant that fits no such rule was read from the batch some other way: no
    proof, and each size keeps a trace of its own.

    Why the batch only: shape arithmetic on the batch is a multiple of it, so two sizes tell
    a constant from a size-dependent value; along a sequence or an image side a strided
    window's ``(n - k) // s + 1`` gives equal values at two sizes and others at a third, so
    those dimensions are part of the signature, as without an ``input_signature``."""
    if a.source != b.source or a.names.keys() != b.names.keys():
        return None
    groups = {}
    for dim, size in sizes_a.items():
        groups.setdefault((size, sizes_b[dim]), []).append(dim)
    if len(groups) != 1:
        return None
    ((x, y), members), = groups.items()
    if x == y:
        return None
    batch = _dim(members[0])
    terms = [(batch, x, y), (f"{batch} * {batch}", x * x, y * y)]
    computed, helpers = {}, {}
    for name, value in a.names.items():
        other = b.names[name]
        if not _same_value(value, other):
            expression = _sized(value, other, terms, helpers)
            if expression is None:
                return None
            computed[name] = expression
    lines = a.source.splitlines()
    head = [f"    {name} = {expression}" for name, expression in computed.items()]
    if len(members) > 1:
        same = " or ".join(f"{batch} != {_dim(m)}" for m in members[1:])
        head.insert(0, f"    if {same}: raise Mismatch")
    if not head:
        return a
    source = "\n".join(lines[:1] + head + lines[1:]) + "\n"
    namespace = dict(a.names, **helpers)
    exec(compile(source, "<fw.function replay>", "exec"), namespace)
    replay = namespace["replay"]
    replay.source, replay.names = source, a.names
    return replay


def _dim(dim):
    return f"s{dim[0]}.shape[{dim[1]}]"


def _sized(x, y, terms, helpers):
    """The expression of a constant that is ``x`` in one trace and ``y`` in the other, from
    the ``terms``; None if no single rule fits. An array filled with one value (an RNN's zero
    state) is made anew at its sized shape; ``helpers`` takes the names the expression uses."""
    if x.__class__ is not y.__class__:
        return None
    if isinstance(x, (tuple, list)):
        if len(x) != len(y):
            return None
        parts = [(repr(p) if p.__class__ is int else _helper(helpers, p))
                 if _same_value(p, q) else _sized(p, q, terms, helpers) for p, q in zip(x, y)]
        if any(p is None for p in parts):
            return None
        items = f"({', '.join(parts)},)"
        if x.__class__ is tuple:
            return items
        return f"{_helper(helpers, x.__class__)}({items})"
    if hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, np.generic):
        return _sized_array(x, y, terms, helpers)
    if not isinstance(x, (int, np.integer)) or isinstance(x, bool):
        return None
    fits = {f"{x // tx} * {e}" if x // tx != 1 else e for e, tx, ty in terms
            if tx and x % tx == 0 and ty and y % ty == 0 and x // tx == y // ty}
    return fits.pop() if len(fits) == 1 else None


def _sized_array(x, y, terms, helpers):
    """An array constant of a sized shape that is made the same way at every size: filled
    with one value (an RNN's zero state), or the positions ``0 .. n - 1`` (a causal mask's)."""
    if x.dtype != y.dtype or not x.size or not y.size:
        return None
    xp = backend.array_module(x)
    dtype = _helper(helpers, x.dtype)
    first = x.reshape(-1)[:1]
    if bool((x == first).all()) and bool((y == first).all()):
        shape = _sized(tuple(x.shape), tuple(y.shape), terms, helpers)
        return shape and f"{_helper(helpers, xp.full)}({shape}, {_helper(helpers, first[0])}, {dtype})"
    if x.ndim == 1 == y.ndim and bool((x == xp.arange(x.size)).all()) and bool(
            (y == xp.arange(y.size)).all()):
        length = _sized(x.size, y.size, terms, helpers)
        return length and f"{_helper(helpers, xp.arange)}({length}, dtype={dtype})"
    return None


def _helper(helpers, value):
    name = f"h{len(helpers)}"
    helpers[name] = value
    return name


_COMPARED = 1 << 16


def _same_value(x, y):
    """Whether two traces' globals are the same constant (see ``generalize``)."""
    if x is y:
        return True
    if x.__class__ is not y.__class__:
        return False
    if x.__class__ is weakref.ref:
        return x() is not None and x() is y()
    if x.__class__ is Tensor:
        return _same_value(x._value, y._value)
    if isinstance(x, (tuple, list)):
        return len(x) == len(y) and all(map(_same_value, x, y))
    if x.__class__ is slice:
        return _same_value((x.start, x.stop, x.step), (y.start, y.stop, y.step))
    if hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, np.generic):
        if x.shape != y.shape or x.dtype != y.dtype or x.size > _COMPARED:
            return False
        xp = backend.array_module(x)
        return bool(xp.array_equal(x, y, equal_nan=x.dtype.kind in "fc"))
    if isinstance(x, (int, float, complex, str, bytes, np.generic, np.dtype)) or x is None:
        return x == y or x != x and y != y  # (NaN: the same constant)
    return False


def _last_reads(steps, outputs):
    """The slots no step after step ``i`` reads, nor the outputs, by ``i + 1``: the replay
    lets go of each before that step (a slot nothing reads, right after it is made)."""
    last = {}
    for i, step in enumerate(steps):
        for k in _reads(step):
            last[k] = i
        for o in step.outs:
            if o is not None:
                last.setdefault(o[1], i)
    kept = {k for ref in outputs for k in _reads(_as_step(ref))}
    dead = {}
    for k, i in last.items():
        if k not in kept:
            dead.setdefault(i + 1, []).append(k)
    return dead


def _last_guard(steps):
    return max(i for i, s in enumerate(steps) if s.kind == "guard")


def _walk(step):
    stack = list(step.args) + list(step.kwargs.values())
    while stack:
        r = stack.pop()
        yield r
        if r[0] == "tensor":
            stack.append(r[1])
        elif r[0] == "seq":
            stack.extend(r[2])
        elif r[0] == "map":
            stack.extend(r[1].values())
        elif r[0] == "slices":
            stack.extend(r[1:3])
        elif r[0] == "size":
            stack.append(r[1])
        elif r[0] == "slice":
            stack.extend(r[1])
        elif r[0] == "arith":
            stack.extend(r[2])


def _var_indices(step):
    return [r[1] for r in _walk(step) if r[0] in ("v", "var")]


def _obj_indices(step):
    return [r[1] for r in _walk(step) if r[0] == "obj"]


def _on_device(value):
    return hasattr(value, "__cuda_array_interface__")
