"""A module of ``fw.keras`` that is a view over another package (``fw.keras.layers`` over
``layers``): its names are the package's own objects, looked up when first used, so the engine
imports nothing above it until a program reaches for Keras, and ``fw.keras.layers.Dense is
layers.Dense``. An unknown name is an ``AttributeError`` suggesting the closest ones."""
import importlib

from ..namespaces import unknown_name


def _public(module):
    names = getattr(module, "__all__", None)
    return list(names) if names is not None else [n for n in vars(module) if n[:1] != "_"]


def view(label, target=None, names=None):
    """A module's ``(__getattr__, __dir__)``: ``names`` maps a name to ``"module:attribute"``
    (or ``"module"`` for a module); every other name is looked up on the module ``target``."""
    names = dict(names or {})

    def resolve(attr):
        where = names[attr]
        module, _, attribute = where.partition(":")
        module = importlib.import_module(module)
        return getattr(module, attribute) if attribute else module

    def all_names():
        return sorted(set(names) | set(_public(importlib.import_module(target)) if target
                                       else ()))

    def __getattr__(attr):
        if attr == "__all__":
            return all_names()
        if attr.startswith("__") and attr.endswith("__"):  # Python's own probes
            raise AttributeError(f"module '{label}' has no attribute '{attr}'")
        if attr in names:
            return resolve(attr)
        if target is not None:
            try:
                return getattr(importlib.import_module(target), attr)
            except AttributeError:
                pass
        raise unknown_name(label, all_names(), attr)

    def __dir__():
        return all_names()

    return __getattr__, __dir__
