"""Flatten and rebuild nested lists, tuples, namedtuples and dicts of tensors.

``GradientTape.gradient`` takes targets and sources in any such structure and answers in the
structure of the sources; these two functions are all it needs. Dicts are walked in sorted key
order, as ``tf.nest`` does, so the flat order does not depend on insertion order.
"""


def flatten(structure):
    """The leaves of ``structure`` in a stable order (no recursion: deep nests are fine)."""
    if _is_flat(structure):  # a leaf, or a plain list or tuple of leaves: every training step
        return list(structure) if structure.__class__ in _SEQUENCES else [structure]
    leaves, stack = [], [structure]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item[k] for k in reversed(sorted(item)))
        elif isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
        else:
            leaves.append(item)
    return leaves


def pack_sequence_as(structure, flat):
    """Rebuild ``structure``'s shape with the leaves taken in order from ``flat``.

    Iterative, like ``flatten``, and without a self-referencing closure: a recursive inner
    function is a reference cycle that would keep the gradients alive until the next GC pass.
    """
    if _is_flat(structure):
        return structure.__class__(flat) if structure.__class__ in _SEQUENCES else flat[0]
    if structure.__class__ is dict and not any(
            isinstance(v, _NESTS) for v in structure.values()):  # a dict of leaves: fit's logs
        by_key = dict(zip(sorted(structure), flat))
        return {k: by_key[k] for k in structure}
    items, children, stack = [], [], [(structure, None)]
    while stack:  # pre-order, the order in which flatten reads the leaves
        item, parent = stack.pop()
        if parent is not None:
            children[parent].append(len(items))
        index = len(items)
        items.append(item)
        children.append([])
        if isinstance(item, dict):
            stack.extend((item[k], index) for k in reversed(sorted(item)))
        elif isinstance(item, (list, tuple)):
            stack.extend((x, index) for x in reversed(item))
    leaves = iter(flat)
    built = [None if is_nested(item) else next(leaves) for item in items]
    for i in reversed(range(len(items))):  # children before their parents
        item, parts = items[i], [built[c] for c in children[i]]
        if isinstance(item, dict):
            by_key = dict(zip(sorted(item), parts))
            built[i] = type(item)((k, by_key[k]) for k in item)
        elif isinstance(item, (list, tuple)):
            built[i] = type(item)(*parts) if hasattr(item, "_fields") else type(item)(parts)
    return built[0]


def is_nested(structure):
    return isinstance(structure, _NESTS)


_SEQUENCES = (list, tuple)
_NESTS = (list, tuple, dict)


def _is_flat(structure):
    """A leaf, or a plain list or tuple (not a subclass, such as a namedtuple) of leaves."""
    if structure.__class__ in _SEQUENCES:
        for item in structure:
            if isinstance(item, _NESTS):
                return False
        return True
    return not isinstance(structure, _NESTS)
