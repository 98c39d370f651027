"""``fw.Module`` (TensorFlow's ``tf.Module``): a named container whose variables are found by
walking its attributes.

Tracking needs no registration: variables and submodules are found in the attributes and in the
lists, tuples and dicts they hold, each once, with a structural path (``dense1/kernel``,
``layers/0/bias``) that depends on how the module is built, never on process-wide names.
``tf.Module`` walks attributes sorted by name; a subclass may ask for assignment order instead
(``_tracking_order = "assignment"``, what Keras layers do).

The walk is cached. Every change to what any module tracks (an attribute set, a tracked list or
dict mutated) bumps one process-wide counter, and ``variables`` walks again only when the counter
has moved: a training step reads ``model.trainable_variables`` every time, and pays for the walk
once.
"""
import functools
import keyword
import re

from .engine.context import state
from .engine.tensor import Variable

__all__ = ["Module", "TrackedDict", "TrackedList", "changed", "structure_version", "tracked_items"]

_structure = [0]


def changed():
    """Note that some module's tracked structure changed: every cached walk is stale."""
    _structure[0] += 1


def structure_version():
    """A number that changes whenever any module's tracked structure does (a cache key)."""
    return _structure[0]


def _track(value):
    """Lists and dicts held by a module become tracking ones, whose changes are noticed."""
    if isinstance(value, list) and not isinstance(value, TrackedList):
        return TrackedList(value)
    if isinstance(value, dict) and not isinstance(value, TrackedDict):
        return TrackedDict(value)
    return value


def _mutator(method):
    def mutate(self, *args, **kwargs):
        changed()
        return method(self, *args, **kwargs)
    mutate.__name__ = method.__name__
    return mutate


class TrackedList(list):
    """A list a module holds: appending a submodule later still shows up in ``variables``."""

    def __init__(self, items=()):
        super().__init__(_track(item) for item in items)

    def append(self, item):
        changed()
        super().append(_track(item))

    def extend(self, items):
        changed()
        super().extend(_track(item) for item in items)

    def insert(self, index, item):
        changed()
        super().insert(index, _track(item))

    def __setitem__(self, index, item):
        changed()
        super().__setitem__(index, [_track(i) for i in item] if isinstance(index, slice)
                            else _track(item))

    for _name in ("remove", "pop", "clear", "sort", "reverse", "__delitem__", "__iadd__",
                  "__imul__"):
        locals()[_name] = _mutator(getattr(list, _name))
    del _name


class TrackedDict(dict):
    """A dict a module holds, with the same change tracking as ``TrackedList``."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for key, item in self.items():
            super().__setitem__(key, _track(item))

    def __setitem__(self, key, item):
        changed()
        super().__setitem__(key, _track(item))

    for _name in ("__delitem__", "pop", "popitem", "clear", "update", "setdefault"):
        locals()[_name] = _mutator(getattr(dict, _name))
    del _name


def tracked_items(value, path, sort_keys=False):
    """``(path, module or variable)`` for everything tracked inside an attribute's value."""
    stack = [(path, value)]  # iterative, depth first, in the containers' order
    while stack:
        path, value = stack.pop()
        if isinstance(value, (Module, Variable)):
            yield path, value
        elif isinstance(value, dict):
            keys = sorted(value, key=str) if sort_keys else list(value)
            stack.extend((f"{path}/{key}", value[key]) for key in reversed(keys))
        elif isinstance(value, (list, tuple)):
            stack.extend((f"{path}/{i}", item) for i, item in reversed(list(enumerate(value))))


def camel_to_snake(name):
    """TensorFlow's module-name form of a class name: ``MyModule`` -> ``my_module``."""
    name = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()


class NameScope:
    """An entered name scope (a module's, or ``name_scope``'s): it prefixes the names of
    variables created inside (``my_module/w:0``) and their paths (``my_module/w``)."""

    def __init__(self, name):
        self.name = name  # absolute, ending with "/", as tf.name_scope's

    def __enter__(self):
        scopes = state.__dict__.setdefault("name_scopes", [])
        scopes.append(self.name)
        return self.name

    def __exit__(self, *exc):
        state.name_scopes.pop()
        return False


def name_scope(name):
    """``tf.name_scope``: entered, it prefixes the names of the variables created inside
    (``model/x:0``). A name ending with "/" is absolute, "" returns to the top; scopes entered
    inside it nest (``model/inner/``), and what ``with`` gives is the full scope."""
    if not isinstance(name, str):
        raise ValueError(f"name for name_scope must be a string, got {name!r}")
    if name and not name.endswith("/"):
        name = f"{current_name_scope()}{name}/"
    return NameScope(name)


def current_name_scope():
    """The innermost entered name scope (``"outer/inner/"``), or ``""``."""
    scopes = state.__dict__.get("name_scopes")
    return scopes[-1] if scopes else ""


class Module:
    """A named container of variables and other modules, as ``tf.Module``.

    ``variables``, ``trainable_variables``, ``non_trainable_variables`` and ``submodules``
    walk the attributes (and the lists, tuples and dicts in them); ``name_scope`` is entered
    by methods decorated with ``Module.with_name_scope``.
    """

    _tracking_order = "sorted"  # tf.Module's: attributes and dict keys by name
    # Bookkeeping attributes whose contents are accounted for elsewhere (never walked).
    _untracked_attributes = frozenset({"_variables_cache", "_name_scope"})

    def __init__(self, name=None):
        if name is None:
            name = camel_to_snake(type(self).__name__)
        self._check_name(name)
        self._name = name
        self._name_scope = NameScope(f"{current_name_scope()}{name}/")

    @staticmethod
    def _check_name(name):
        if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
            raise ValueError(f"{name!r} is not a valid module name. Module names must be valid "
                             f"Python identifiers (e.g. a valid class name).")

    def __setattr__(self, name, value):
        changed()
        object.__setattr__(self, name, _track(value))

    def __delattr__(self, name):
        changed()
        object.__delattr__(self, name)

    @property
    def name(self):
        return self._name

    @property
    def name_scope(self):
        """The context manager that prefixes what is created inside with ``<name>/``."""
        if "_name_scope" not in vars(self):
            raise RuntimeError(f"{type(self).__name__}.__init__ must call super().__init__() "
                               f"before the module is used")
        return self._name_scope

    @classmethod
    def with_name_scope(cls, method):
        """Decorate a method so that it runs inside its module's ``name_scope``."""
        @functools.wraps(method)
        def method_with_name_scope(self, *args, **kwargs):
            with self.name_scope:
                return method(self, *args, **kwargs)
        return method_with_name_scope

    # --- the walk --------------------------------------------------------------------------------
    def _attribute_items(self):
        """``(path segment, module or variable)`` for what this module's attributes hold."""
        attributes = vars(self).items()
        sort_keys = self._tracking_order == "sorted"
        if sort_keys:
            attributes = sorted(attributes)
        for attribute, value in attributes:
            if attribute not in self._untracked_attributes:
                yield from tracked_items(value, attribute, sort_keys)

    def _own_variables(self):
        """``(path, variable)`` for the variables this module holds itself."""
        return [(p, v) for p, v in self._attribute_items() if isinstance(v, Variable)]

    def _submodule_items(self):
        """``(path, module)`` for the direct submodules, each once, in walking order."""
        seen, pairs = {id(self)}, []
        for path, item in self._attribute_items():
            if isinstance(item, Module) and id(item) not in seen:
                seen.add(id(item))
                pairs.append((path, item))
        return pairs

    def _walk(self):
        """``(structural path, variable)`` for every variable of this tree, each once: a
        module's own variables first, then each submodule's, depth first (no recursion)."""
        seen_vars, seen_modules = set(), {id(self)}
        stack = [("", self)]
        while stack:
            prefix, module = stack.pop()
            for path, variable in module._own_variables():
                if id(variable) not in seen_vars:
                    seen_vars.add(id(variable))
                    yield prefix + path, variable
            children = []
            for path, sub in module._submodule_items():
                if id(sub) not in seen_modules:
                    seen_modules.add(id(sub))
                    children.append((f"{prefix}{path}/", sub))
            stack.extend(reversed(children))

    def named_variables(self):
        """``{structural path: variable}`` for all variables, in the order of ``variables``.

        Paths follow attributes, list indices and dict keys (``dense1/kernel``,
        ``layers/0/bias``), so a second model built the same way gets the same paths even
        though its auto names differ; checkpoints are keyed by them.
        """
        named = {}
        for path, variable in self._walk():
            if path in named:
                raise ValueError(f"two variables of '{self.name}' have the path '{path}' "
                                 f"('{named[path].path}' and '{variable.path}')")
            named[path] = variable
        return named

    def _cached_variables(self):
        """``variables``, kept until some tracked structure changes; read every training step."""
        cache = self.__dict__.get("_variables_cache")
        if cache is None or cache[0] != _structure[0]:
            cache = (_structure[0], [variable for _, variable in self._walk()])
            object.__setattr__(self, "_variables_cache", cache)
        return cache[1]

    @property
    def variables(self):
        """Every variable of this module and its submodules, each once."""
        return list(self._cached_variables())

    @property
    def trainable_variables(self):
        return [v for v in self._cached_variables() if v._trainable]

    @property
    def non_trainable_variables(self):
        return [v for v in self._cached_variables() if not v._trainable]

    @property
    def submodules(self):
        """Every module inside this one (not itself), each once, in TF's order: a module's
        direct submodules, then, for each of them in turn, its own (no recursion)."""
        found, seen, stack = [], {id(self)}, [iter([self])]
        while stack:
            module = next(stack[-1], None)
            if module is None:
                stack.pop()
                continue
            children = [sub for _, sub in module._submodule_items() if id(sub) not in seen]
            seen.update(id(sub) for sub in children)
            found.extend(children)
            stack.append(iter(children))
        return tuple(found)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"
