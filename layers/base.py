"""``Layer`` and ``Model``: Keras's building block, with lazy build and attribute tracking.

A layer creates its variables on its first call, from the shape of what it is called on, so a
user never states an input size twice. Everything that needs weights before then (summary,
get_weights, a checkpoint) builds from a given input shape or says how to build.

Tracking needs no registration: sublayers and variables are found by walking the layer's
attributes (and the lists, tuples and dicts in them) in assignment order, so ``variables`` has a
stable order and each variable a structural path (``dense1/kernel``) that does not depend on the
process-wide auto numbering of layer names. Variable *names* follow Keras 3's paths instead:
``mlp/dense_1/kernel``, the chain of layers being called when the variable was created.
"""
import inspect

import framework as fw
from framework import backend
from framework.registry import Registry
from framework.tensor import Tensor, Variable

from . import initializers
from .scope import build_wrapper, calls, scope_path, snake_case, unique_name
from .summary import summary_lines


# The layer types by Keras's names (``"dense"``), for configs: each layer class registers itself.
LAYERS = Registry("layer")

# Every change to what any layer tracks (an attribute set, a weight added, a tracked list or dict
# mutated) bumps this counter; ``variables`` caches its walk until the counter moves, so a
# training step pays for the walk once, not on every ``model.trainable_variables``.
_structure = [0]


def _changed():
    _structure[0] += 1


def _track(value):
    """Lists and dicts held by a layer become tracking ones, whose changes are noticed."""
    if isinstance(value, list) and not isinstance(value, TrackedList):
        return TrackedList(value)
    if isinstance(value, dict) and not isinstance(value, TrackedDict):
        return TrackedDict(value)
    return value


def _mutator(method):
    def mutate(self, *args, **kwargs):
        _changed()
        return method(self, *args, **kwargs)
    mutate.__name__ = method.__name__
    return mutate


class TrackedList(list):
    """A list a layer holds: appending a sublayer later still shows up in ``variables``."""

    def __init__(self, items=()):
        super().__init__(_track(item) for item in items)

    def append(self, item):
        _changed()
        super().append(_track(item))

    def extend(self, items):
        _changed()
        super().extend(_track(item) for item in items)

    def insert(self, index, item):
        _changed()
        super().insert(index, _track(item))

    def __setitem__(self, index, item):
        _changed()
        super().__setitem__(index, [_track(i) for i in item] if isinstance(index, slice)
                            else _track(item))

    for _name in ("remove", "pop", "clear", "sort", "reverse", "__delitem__", "__iadd__",
                  "__imul__"):
        locals()[_name] = _mutator(getattr(list, _name))
    del _name


class TrackedDict(dict):
    """A dict a layer holds, with the same change tracking as ``TrackedList``."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for key, item in self.items():
            super().__setitem__(key, _track(item))

    def __setitem__(self, key, item):
        _changed()
        super().__setitem__(key, _track(item))

    for _name in ("__delitem__", "pop", "popitem", "clear", "update", "setdefault"):
        locals()[_name] = _mutator(getattr(dict, _name))
    del _name


def _tracked(value, path):
    """``(path, layer or variable)`` for everything tracked inside an attribute's value."""
    if isinstance(value, (Layer, Variable)):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _tracked(item, f"{path}/{key}")
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from _tracked(item, f"{path}/{index}")


def _shape_of(inputs):
    """The shape (or nested shapes) a layer is built from."""
    if isinstance(inputs, (list, tuple)):
        return type(inputs)(_shape_of(x) for x in inputs)
    if isinstance(inputs, dict):
        return {key: _shape_of(x) for key, x in inputs.items()}
    return tuple(inputs.shape)


class Layer:
    """The base of every layer and model: subclass it, create sublayers in ``__init__``, weights
    in ``build(input_shape)`` with ``add_weight``, and write the forward pass in ``call``."""

    _call_takes_training = False
    # Class defaults, so that a subclass that forgot super().__init__() gets an error saying so.
    built = False
    dtype = fw.float32
    # Bookkeeping attributes whose variables or layers are accounted for elsewhere.
    _untracked_attributes = frozenset({"_own_weights", "_frozen", "_variables_cache"})

    def __init__(self, trainable=True, name=None, dtype=None, input_shape=None):
        """``input_shape`` (without the batch axis) is Keras 2's way to declare what the layer
        will see: what needs the weights before the first call then builds from it."""
        if name is None:
            name = unique_name(snake_case(type(self).__name__))
        elif not isinstance(name, str) or "/" in name or not name:
            raise ValueError(f"a layer name must be a non-empty string without '/', got {name!r}")
        self.name = name
        self.dtype = fw.as_dtype(dtype) or fw.float32
        self.built = False
        self._trainable = bool(trainable)
        self._own_weights = []  # created by add_weight, in creation order
        self._frozen = []  # variables this layer made non-trainable, to restore on unfreeze
        self._build_input_shape = None
        self._declared_input_shape = None if input_shape is None else (None, *input_shape)

    def __setattr__(self, name, value):
        _changed()
        object.__setattr__(self, name, _track(value))

    def __delattr__(self, name):
        _changed()
        object.__delattr__(self, name)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "build" in cls.__dict__:
            cls.build = build_wrapper(cls.__dict__["build"])
        params = inspect.signature(cls.call).parameters
        cls._call_takes_training = "training" in params or any(
            p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}, built={self.built}>"

    # --- calling --------------------------------------------------------------------------------
    def __call__(self, inputs, *args, training=None, **kwargs):
        """Build on the first call, then run ``call``.

        ``training`` defaults to the calling layer's; when neither says, ``call`` keeps the
        default of its own signature, as in Keras.
        """
        frames = calls.frames
        if training is None and frames:
            training = frames[-1][1]
        if inputs.__class__ is not Tensor or inputs._value.dtype is not self.dtype:
            inputs = self._autocast(inputs)  # (a tensor of the layer's dtype needs nothing)
        frames.append((self, training))
        try:
            if not self.built:
                return self._first_call(inputs, args, kwargs, training)
            if training is not None and self._call_takes_training:
                kwargs["training"] = training
            return self.call(inputs, *args, **kwargs) if args or kwargs else self.call(inputs)
        finally:
            frames.pop()

    def _autocast(self, inputs):
        """Arrays become tensors and floating inputs take the layer's dtype, as in Keras."""
        if not isinstance(inputs, Tensor):
            if not hasattr(inputs, "__array__") and not backend.is_device_array(inputs):
                return inputs  # a nested structure: the layer's call handles it
            inputs = fw.convert_to_tensor(inputs)
        if inputs.dtype != self.dtype and inputs.dtype.kind == "f":
            return fw.cast(inputs, self.dtype)
        return inputs

    def _first_call(self, inputs, args, kwargs, training):
        if "_own_weights" not in vars(self):
            raise RuntimeError(f"{type(self).__name__}.__init__ must call super().__init__() "
                               f"before the layer is used")
        shape = _shape_of(inputs)
        if type(self).build is not Layer.build:
            self.build(shape)
        if training is None or not self._call_takes_training:
            outputs = self.call(inputs, *args, **kwargs)
        else:
            outputs = self.call(inputs, *args, training=training, **kwargs)
        self._build_input_shape = shape
        self.built = True
        return outputs

    def call(self, inputs):
        """The forward pass; subclasses override it (a ``training`` argument is optional)."""
        return inputs

    def build(self, input_shape):
        """Create the weights for inputs of ``input_shape`` (the batch dimension may be None).

        Layers with weights of their own override this. The default, for a model made of
        sublayers, runs one forward pass on zeros of that shape, which builds every sublayer
        in order: ``model.build((None, 784))`` works for a subclassed model as in Keras.
        """
        if type(self).build is Layer.build and input_shape is not None:
            zeros = fw.zeros(tuple(1 if d is None else d for d in input_shape), dtype=self.dtype)
            if self._call_takes_training:
                self.call(zeros, training=False)
            else:
                self.call(zeros)

    def compute_output_shape(self, input_shape):
        """The output shape for ``input_shape``, found by running the layer on zeros."""
        shape = tuple(1 if d is None else d for d in input_shape)
        outputs = self(fw.zeros(shape, dtype=self.dtype), training=False)
        return tuple(input_shape[:1]) + tuple(outputs.shape[1:])

    # --- weights --------------------------------------------------------------------------------
    def add_weight(self, name=None, shape=None, initializer=None, trainable=True, dtype=None):
        """Create a variable owned by this layer, named ``<layer path>/<name>``.

        ``initializer`` is an initializer, its name or a callable ``(shape, dtype)``; it
        defaults to ``glorot_uniform`` for floating weights and ``zeros`` for the others.
        """
        dtype = fw.as_dtype(dtype) or self.dtype
        shape = () if shape is None else tuple(shape)
        if any(d is None for d in shape):
            raise ValueError(f"layer '{self.name}': weight '{name}' needs a fully known shape, "
                             f"got {shape}")
        taken = {v.name.rsplit("/", 1)[-1] for v in self._own_weights}
        if name is None:
            name = _unique_among("variable", taken)
        elif name in taken:
            raise ValueError(f"layer '{self.name}' already has a weight named '{name}'")
        if initializer is None:
            initializer = "glorot_uniform" if dtype.kind == "f" else "zeros"
        value = initializers.get(initializer)(shape, dtype=dtype)
        variable = Variable(value, trainable=trainable and self._trainable,
                            name=f"{scope_path(self)}/{name}", dtype=dtype)
        if trainable and not self._trainable:
            self._frozen.append(variable)
        self._own_weights.append(variable)
        _changed()
        return variable

    def _attribute_items(self):
        """``(path segment, layer or variable)`` for what this layer's attributes hold."""
        for attribute, value in vars(self).items():
            if attribute not in self._untracked_attributes:
                yield from _tracked(value, attribute)

    def _own_variables(self):
        """``(path, variable)`` for the variables this layer holds itself."""
        pairs = [(v.name.rsplit("/", 1)[-1], v) for v in self._own_weights]
        pairs += [(p, v) for p, v in self._attribute_items() if isinstance(v, Variable)]
        return pairs

    def _sublayers(self):
        """``(path, layer)`` for the direct sublayers, each once, in assignment order."""
        seen, pairs = {id(self)}, []
        for path, item in self._attribute_items():
            if isinstance(item, Layer) and id(item) not in seen:
                seen.add(id(item))
                pairs.append((path, item))
        return pairs

    def _walk(self, prefix, seen_vars, seen_layers):
        """``(structural path, variable)`` for every variable of this tree, each once."""
        seen_layers.add(id(self))
        for path, variable in self._own_variables():
            if id(variable) not in seen_vars:
                seen_vars.add(id(variable))
                yield prefix + path, variable
        for path, layer in self._sublayers():
            if id(layer) not in seen_layers:
                yield from layer._walk(f"{prefix}{path}/", seen_vars, seen_layers)

    def named_variables(self):
        """``{structural path: variable}`` for all variables, in the order of ``variables``.

        Paths follow attributes, list indices and dict keys (``dense1/kernel``,
        ``layers/0/bias``), so a second model built the same way gets the same paths even
        though its layers' auto names differ; checkpoints are keyed by them.
        """
        named = {}
        for path, variable in self._walk("", set(), set()):
            if path in named:
                raise ValueError(f"two variables of '{self.name}' have the path '{path}' "
                                 f"('{named[path].name}' and '{variable.name}')")
            named[path] = variable
        return named

    @property
    def variables(self):
        """All variables of this layer and its sublayers: own ones first, then each sublayer's."""
        return list(self._cached_variables())

    def _cached_variables(self):
        """``variables``, kept until the layer structure changes; read every training step."""
        cache = self.__dict__.get("_variables_cache")
        if cache is None or cache[0] != _structure[0]:
            cache = (_structure[0], [variable for _, variable in self._walk("", set(), set())])
            object.__setattr__(self, "_variables_cache", cache)
        return cache[1]

    @property
    def trainable_variables(self):
        if not self._trainable:
            return []
        return [v for v in self._cached_variables() if v._trainable]

    @property
    def non_trainable_variables(self):
        if not self._trainable:
            return self.variables
        return [v for v in self._cached_variables() if not v._trainable]

    weights = variables
    trainable_weights = trainable_variables
    non_trainable_weights = non_trainable_variables

    @property
    def trainable(self):
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        """Freeze (False) or unfreeze this layer and all its sublayers, before or after build."""
        value = bool(value)
        self._trainable = value
        if value:
            for variable in self._frozen:
                variable.trainable = True
            self._frozen.clear()
        else:
            for _, variable in self._own_variables():
                if variable.trainable:
                    variable.trainable = False
                    self._frozen.append(variable)
        for _, layer in self._sublayers():
            layer.trainable = value

    def _unbuilt(self):
        """The layers of this tree whose weights do not exist yet."""
        if self.built:
            return []
        if type(self).build is not Layer.build:
            return [self]
        return [unbuilt for _, layer in self._sublayers() for unbuilt in layer._unbuilt()]

    def _require_built(self, what):
        """Build from the declared input shape if there is one; else raise unless built."""
        if not self.built and self._declared_input_shape is not None:
            self.build(self._declared_input_shape)
        unbuilt = self._unbuilt()
        if unbuilt:
            names = ", ".join(f"'{layer.name}'" for layer in unbuilt)
            raise ValueError(
                f"{what} needs the weights of {type(self).__name__} '{self.name}', but {names} "
                f"{'is' if len(unbuilt) == 1 else 'are'} not built yet: weights are created on "
                f"the first call. Call it once on a batch of inputs, or build it from the input "
                f"shape with .build(input_shape), e.g. .build((None, 784)).")

    def get_weights(self):
        """The values of ``variables`` as NumPy arrays."""
        self._require_built("get_weights()")
        return [variable.numpy() for variable in self.variables]

    def set_weights(self, weights):
        """Load ``weights`` (arrays in the order of ``variables``); checks all before writing."""
        self._require_built("set_weights()")
        variables, weights = self.variables, [backend.to_host(w) for w in weights]
        if len(weights) != len(variables):
            raise ValueError(f"set_weights() on '{self.name}' got {len(weights)} arrays for its "
                             f"{len(variables)} variables ({[v.name for v in variables]})")
        for variable, value in zip(variables, weights):
            if value.shape != variable.shape:
                raise ValueError(f"set_weights(): variable '{variable.name}' has shape "
                                 f"{variable.shape}, the array given for it {value.shape}")
        for variable, value in zip(variables, weights):
            variable.assign(backend.to_device(value, variable.device))

    def to_device(self, device):
        """Move every variable of this layer and its sublayers to ``"cpu"`` or ``"gpu"``, in
        place, and return the layer.

        The variables stay the same objects, so optimizers keep them (their slots follow on
        the next step) and so do checkpoints. Inputs must then live on that device too:
        ``fw.set_backend("cupy")`` creates new tensors on the GPU, ``fw.to_device`` moves one.
        """
        self._require_built("to_device()")
        for variable in self.variables:
            variable.to_device(device)
        return self

    def count_params(self):
        self._require_built("count_params()")
        return sum(int(v._value.size) for v in self.variables)

    def summary(self, input_shape=None, print_fn=print):
        """Print each sublayer's output shape and parameter count, then the totals.

        An unbuilt model is built from ``input_shape`` first (or the error says how to build).
        """
        if input_shape is not None and not self.built:
            self.build(input_shape)
        self._require_built("summary()")
        for line in summary_lines(self):
            print_fn(line)


class Model(Layer):
    """A whole model: a ``Layer`` with the same tracking, plus Keras's ``layers`` list."""

    @property
    def layers(self):
        """The direct sublayers, in assignment order."""
        return [layer for _, layer in self._sublayers()]


def _unique_among(base, taken):
    name, count = base, 0
    while name in taken:
        count += 1
        name = f"{base}_{count}"
    return name


Layer.build = build_wrapper(Layer.build)


from .saving import load_weights, save_weights  # noqa: E402 (saving reads Layer's tracking)

Layer.save_weights, Layer.load_weights = save_weights, load_weights
