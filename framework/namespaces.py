"""What an unknown name on a namespace (``fw``, ``fw.math``, ``fw.linalg``, ``fw.nn``,
``fw.random``) says: an ``AttributeError`` that suggests the closest names that exist, so a
ported TensorFlow program that reaches for a missing or misspelt op learns what to use.

A module's ``__getattr__`` (PEP 562) is only consulted for names the module lacks, so the
lookup of every existing op costs nothing extra.
"""
import difflib


def unknown_name(label, names, attr):
    """The AttributeError for ``label.attr``, naming up to three close ``names``."""
    message = f"module '{label}' has no attribute '{attr}'"
    close = difflib.get_close_matches(attr, [n for n in names if not n.startswith("_")], n=3,
                                      cutoff=0.6)
    if close:
        message += "; did you mean " + ", ".join(f"{label}.{c}" for c in close) + "?"
    return AttributeError(message)


def suggest_close_names(module, label):
    """Give ``module`` a ``__getattr__`` that raises ``unknown_name`` (``label``: how users
    spell the module, e.g. ``"fw.math"``)."""
    def __getattr__(attr):
        if attr.startswith("__") and attr.endswith("__"):  # Python's own probes: plain and quick
            raise AttributeError(f"module '{label}' has no attribute '{attr}'")
        raise unknown_name(label, list(vars(module)), attr)
    module.__getattr__ = __getattr__
