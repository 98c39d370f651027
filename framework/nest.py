"""Flatten and rebuild nested lists, tuples, namedtuples and dicts of tensors.

``GradientTape.gradient`` takes targets and sources in any such structure and answers in the
structure of the sources; these two functions are all it needs. Dicts are walked in sorted key
order, as ``tf.nest`` does, so the flat order does not depend on insertion order.
"""


def flatten(structure):
    """The leaves of ``structure`` in a stable order (no recursion: deep nests are fine)."""
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
    """Rebuild ``structure``'s shape with the leaves taken in order from ``flat``."""
    leaves = iter(flat)

    def build(item):
        if isinstance(item, dict):
            built = {k: build(item[k]) for k in sorted(item)}
            return type(item)((k, built[k]) for k in item)
        if isinstance(item, (list, tuple)):
            parts = [build(x) for x in item]
            if hasattr(item, "_fields"):  # namedtuple
                return type(item)(*parts)
            return type(item)(parts)
        return next(leaves)

    return build(structure)


def is_nested(structure):
    return isinstance(structure, (list, tuple, dict))
