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

import numpy as np

from .. import random as fw_random
from ..engine.tensor import wrap
from .tracer import Step, TraceError


class Mismatch(Exception):
    """A guard saw another value than the trace: this plan is not the one for the call."""


class Stale(Exception):
    """A variable or object of the plan has been freed."""


def build(rec, outputs):
    """The replay function for recorder ``rec`` whose function returned ``outputs`` (refs,
    ("pyout", value) for Python values, or ("var", k) for variables)."""
    steps, outputs = _shared(rec, rec.steps, outputs)
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

    def render(ref):
        kind = ref[0]
        if kind == "s":
            return f"s{ref[1]}"
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
        raise AssertionError(ref)

    used_vars = sorted({k for s in steps for k in _var_indices(s)} |
                       {r[1] for r in outputs if r[0] in ("v", "var")})
    used_objs = sorted({k for s in steps for k in _obj_indices(s)})
    inputs = ", ".join(f"s{r[1]}" for r in rec.inputs)
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
    dead = _dead_after(steps, outputs, rec.inputs)
    for i, step in enumerate(steps):
        if i and dead[i - 1]:  # (after the step that read them last, as soon as it has run)
            lines.append(f"    del {', '.join(f's{k}' for k in dead[i - 1])}")
        if step.kind == "guard":
            check = f"{glob(step.fn)}({render(step.args[0])}) != {glob(step.expect)}"
            undo = "set_rng_state(rs); " if draws_first else ""
            lines.append(f"    if {check}: {undo}raise Mismatch")
            continue
        args = [render(a) for a in step.args]
        args += [f"{k}={render(v)}" for k, v in step.kwargs.items()]
        call = f"{glob(step.fn)}({', '.join(args)})"
        if step.kind == "call" and step.result == "tensors":
            targets = ", ".join(f"s{o[1]}" for o in step.outs)
            lines.append(f"    {targets}, = [t._value for t in {call}]")
        elif step.kind == "call":
            lhs = f"s{step.outs[0][1]} = " if step.outs else ""
            tail = "._value" if step.outs else ""
            lines.append(f"    {lhs}{call}{tail}")
        elif step.unpack:
            targets = [("_" if o is None else f"s{o[1]}") for o in step.outs]
            lines.append(f"    {', '.join(targets)}, = {call}")
        else:
            lines.append(f"    s{step.outs[0][1]} = {call}")
    results = []
    for ref in outputs:
        if ref[0] == "pyout":
            results.append(glob(ref[1]))
        elif ref[0] in ("v", "var"):
            results.append(f"W(V{ref[1]}._value.copy())")
        elif ref[0] == "c":
            results.append(glob(wrap(rec.constants[ref[1]])))
        else:
            results.append(f"W({render(ref)})")
    lines.append(f"    return ({', '.join(results)}{',' if results else ''})")
    source = "\n".join(lines) + "\n"
    namespace = dict(names)
    exec(compile(source, "<fw.function replay>", "exec"), namespace)
    replay = namespace["replay"]
    replay.source = source
    return replay


def _dead_after(steps, outputs, inputs):
    """Per step, the slots no later step nor the outputs read (in the order they were last
    read): the replay lets go of them right after that step, so that a step's large arrays
    are freed (and their memory reused by the next ones) while the replay goes on, as eager
    code drops a tensor when its last reference goes, instead of all at the return."""
    kept = {r[1] for ref in outputs for r in _walk(_as_step(ref)) if r[0] == "s"}
    last = {r[1]: -1 for r in inputs}
    for i, step in enumerate(steps):
        for slot in _reads(step):
            last[slot] = i
        for o in step.outs:
            if o is not None:
                last.setdefault(o[1], i)
    dead = [[] for _ in steps]
    for slot, i in last.items():
        if slot not in kept and i >= 0:
            dead[i].append(slot)
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


def _var_indices(step):
    return [r[1] for r in _walk(step) if r[0] in ("v", "var")]


def _obj_indices(step):
    return [r[1] for r in _walk(step) if r[0] == "obj"]


def _on_device(value):
    return hasattr(value, "__cuda_array_interface__")
