"""``Layer``: Keras's building block, an ``fw.Module`` with lazy build, names and losses.

A layer creates its variables on its first call, from the shape of what it is called on, so a
user never states an input size twice. Everything that needs weights before then (summary,
get_weights, a checkpoint) builds from a given input shape or says how to build.

Tracking is ``fw.Module``'s (one mechanism): sublayers and variables are found by walking the
attributes, here in assignment order as Keras does, so ``variables`` has a stable order and each
variable a structural path (``dense1/kernel``) that does not depend on the process-wide auto
numbering of layer names; checkpoints are keyed by it. A variable's ``name`` is Keras 3's short
one (``kernel``) and its ``path`` Keras 3's full one (``mlp/dense_1/kernel``): the chain of layers
being called when the variable was created.

Masks are Keras 3's: a layer whose ``call`` takes ``mask`` receives the ``_keras_mask`` of its
input (unless given one), and a layer that ``supports_masking`` attaches ``compute_mask``'s
answer to its output, so a padding mask travels through Sequential and functional models.

Losses are Keras 3's: ``add_loss`` during a call, activity regularization of the outputs
(divided by the batch size), and weight regularization computed from the current values each
time ``losses`` is read; the outermost call clears the tree's call losses first.
"""
import inspect
import operator
import weakref

import framework as fw
from framework.engine import backend, nest
from framework.keras import mixed_precision
from framework.module import Module, changed, structure_version
from framework.registry import Registry
from framework.engine.tensor import Tensor, Variable

from . import constraints, initializers, regularizers
from .node import is_symbolic, probe_shape, symbolic_call, unknown_where_different
from .scope import build_wrapper, calls, scope_path, snake_case, unique_name
from .summary import summary_lines


# The layer types by Keras's names (``"dense"``), for configs: each layer class registers itself.
LAYERS = Registry("layer")


# The layers whose ``_losses`` are not empty, so that a call with no losses anywhere clears
# nothing; weak, so that holding a loss does not keep a layer alive.
_holding_losses = weakref.WeakSet()


def _shape_of(inputs):
    """The shape (or nested shapes) a layer is built from."""
    if isinstance(inputs, (list, tuple)):
        return type(inputs)(_shape_of(x) for x in inputs)
    if isinstance(inputs, dict):
        return {key: _shape_of(x) for key, x in inputs.items()}
    shape = getattr(inputs, "shape", None)
    if shape is None:  # (a constant among the inputs: no shape)
        return None
    # a size of each call (a traced None dimension) is None, as in a Keras graph
    return tuple(d if d is None or d.__class__ is int else
                 None if getattr(d, "per_call_size", False) else operator.index(d) for d in shape)


class Layer(Module):
    """The base of every layer and model: subclass it, create sublayers in ``__init__``, weights
    in ``build(input_shape)`` with ``add_weight``, and write the forward pass in ``call``."""

    _tracking_order = "assignment"  # Keras's: the order in which attributes were set
    _call_takes_training = False
    _call_takes_mask = False
    # Whether ``compute_mask`` gives the output's mask (by default, the input's): Keras's rule,
    # True for a class that defines ``compute_mask`` or sets it (Dense, Dropout, ...).
    supports_masking = False
    _makes_masks = False  # (a compute_mask of its own: asked even without an input mask)
    # Class defaults, so that a subclass that forgot super().__init__() gets an error saying so.
    built = False
    dtype = _variable_dtype = fw.float32.dtype  # (NumPy's: what the layer computes and keeps)
    activity_regularizer = None
    _losses = _weight_regularizers = ()
    # Bookkeeping attributes whose variables or layers are accounted for elsewhere.
    _untracked_attributes = Module._untracked_attributes | {
        "_own_weights", "_frozen", "_losses", "_weight_regularizers", "_layers_cache"}

    def __init__(self, trainable=True, name=None, dtype=None, input_shape=None,
                 activity_regularizer=None):
        """``input_shape`` (without the batch axis) is Keras 2's way to declare what the layer
        will see: what needs the weights before the first call then builds from it."""
        if name is None:
            name = unique_name(snake_case(type(self).__name__))
        super().__init__(name=name)
        self._dtype_policy = mixed_precision.as_policy(dtype)  # (floatx, or the global policy)
        self.dtype = fw.dtypes.numpy_dtype(self._dtype_policy.compute_dtype)
        self._variable_dtype = fw.dtypes.numpy_dtype(self._dtype_policy.variable_dtype)
        self.built = False
        self._trainable = bool(trainable)
        self.activity_regularizer = regularizers.get(activity_regularizer)
        self._own_weights = []  # created by add_weight, in creation order
        self._weight_regularizers = []  # (variable, regularizer) pairs from add_weight
        self._losses = []  # added during the current call
        self._frozen = []  # variables this layer made non-trainable, to restore on unfreeze
        self._build_input_shape = None
        self._declared_input_shape = None if input_shape is None else (None, *input_shape)

    @property
    def dtype_policy(self):
        """Keras's policy: ``compute_dtype`` for the computations, ``variable_dtype`` for the
        weights (``mixed_float16``: float16 over float32)."""
        return self._dtype_policy

    @property
    def compute_dtype(self):
        return self._dtype_policy.compute_dtype

    @property
    def variable_dtype(self):
        return self._dtype_policy.variable_dtype

    @staticmethod
    def _check_name(name):
        """Keras accepts any non-empty name without '/' (the path separator)."""
        if not isinstance(name, str) or "/" in name or not name:
            raise ValueError(f"a layer name must be a non-empty string without '/', got {name!r}")

    @property
    def name(self):
        return self._name

    @name.setter
    def name(self, value):
        """Keras lets a layer be renamed (before it creates variables, whose paths keep the
        name they were created under)."""
        self._check_name(value)
        self._name = value

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "build" in cls.__dict__:
            cls.build = build_wrapper(cls.__dict__["build"])
        params = inspect.signature(cls.call).parameters
        cls._call_takes_training = "training" in params or any(
            p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
        cls._call_takes_mask = "mask" in params
        if "compute_mask" in cls.__dict__ and "supports_masking" not in cls.__dict__:
            cls.supports_masking = True
        cls._makes_masks = cls.compute_mask is not Layer.compute_mask

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}, built={self.built}>"

    # --- calling --------------------------------------------------------------------------------
    def __call__(self, inputs, *args, training=None, **kwargs):
        """Build on the first call, then run ``call``.

        ``training`` defaults to the calling layer's; when neither says, ``call`` keeps the
        default of its own signature, as in Keras. Called on symbolic inputs (``Input``), the
        layer builds and returns symbolic outputs: a node of a functional model.
        """
        frames = calls.frames
        if inputs.__class__ is not Tensor:
            if is_symbolic(inputs):
                return symbolic_call(self, inputs, args, dict(kwargs, training=training))
            inputs = self._autocast(inputs)
        elif inputs._value.dtype is not self.dtype:
            inputs = self._autocast(inputs)  # (a tensor of the layer's dtype needs nothing)
        if frames:
            if training is None:
                training = frames[-1][1]
        else:
            self._clear_losses()  # the outermost call starts the tree's losses afresh
        if self._call_takes_mask:
            if kwargs.get("mask") is None:
                kwargs["mask"] = getattr(inputs, "_keras_mask", None)
            previous_mask = kwargs["mask"]
        elif self.supports_masking:
            previous_mask = getattr(inputs, "_keras_mask", None)
        else:  # (a model's call: its layers read the masks; a missing slot costs an exception)
            previous_mask = None
        frames.append((self, training))
        try:
            if not self.built:
                outputs = self._first_call(inputs, args, kwargs, training)
            else:
                if training is not None and self._call_takes_training:
                    kwargs["training"] = training
                if self._variable_dtype is not self.dtype:
                    outputs = self._call_mixed(inputs, args, kwargs)
                else:
                    outputs = (self.call(inputs, *args, **kwargs) if args or kwargs
                               else self.call(inputs))
        finally:
            frames.pop()
        if self.supports_masking and (previous_mask is not None or self._makes_masks):
            _attach_masks(outputs, self.compute_mask(inputs, previous_mask))
        if self.activity_regularizer is not None:
            self._regularize_activity(outputs)
        return outputs

    def _call_mixed(self, inputs, args, kwargs):
        """``call`` under a mixed policy: the trainable float weights are read as casts to the
        compute dtype (recorded ops, so their gradients reach the float32 variables), as
        Keras's autocast scope reads them; the attributes hold the variables again after."""
        own = {id(v) for v in self._own_weights}
        saved = {name: value for name, value in vars(self).items()
                 if id(value) in own and value.trainable
                 and value._value.dtype is self._variable_dtype}
        self.__dict__.update({name: fw.cast(value, self.dtype) for name, value in saved.items()})
        try:  # (not setattr: the swap is no change of what the layer tracks)
            return self.call(inputs, *args, **kwargs)
        finally:
            self.__dict__.update(saved)

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
        if training is not None and self._call_takes_training:
            kwargs = dict(kwargs, training=training)
        outputs = (self._call_mixed(inputs, args, kwargs) if self._variable_dtype is not self.dtype
                   else self.call(inputs, *args, **kwargs))
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
            dtype = getattr(self, "_declared_input_dtype", None) or self.dtype
            zeros = fw.zeros(probe_shape(input_shape), dtype=dtype)  # (no size 1 for None)
            if self._call_takes_training:
                self.call(zeros, training=False)
            else:
                self.call(zeros)

    def compute_mask(self, inputs, previous_mask=None):
        """The mask of the output (Keras's default: the input's), attached to it when the
        layer ``supports_masking``."""
        return previous_mask

    def compute_output_shape(self, input_shape):
        """The output shape for ``input_shape``, found by running the layer on zeros of both
        probe shapes (``layers.node``): a size that differs between them is None."""
        small, large = (self(fw.zeros(probe_shape(input_shape, run), dtype=self.dtype),
                             training=False) for run in (0, 1))
        return unknown_where_different(small, large)

    def get_config(self):
        """Keras's config: the constructor arguments that rebuild this layer with
        ``from_config`` (its weights are not part of it)."""
        config = {"name": self.name, "trainable": self.trainable,
                  "dtype": self._dtype_policy.name}
        if self.activity_regularizer is not None:
            config["activity_regularizer"] = regularizers.serialize(self.activity_regularizer)
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    # --- weights --------------------------------------------------------------------------------
    def add_weight(self, name=None, shape=None, initializer=None, trainable=True, dtype=None,
                   regularizer=None, constraint=None):
        """Create a variable owned by this layer: ``.name`` is ``name``, ``.path``
        ``<layer path>/<name>`` (Keras 3's).

        ``initializer`` is an initializer, its name or a callable ``(shape, dtype)``; it
        defaults to ``glorot_uniform`` for floating weights and ``zeros`` for the others.
        ``regularizer`` (a regularizer or its name) adds its penalty to ``losses``;
        ``constraint`` (a constraint or its name) projects the variable after each optimizer
        update.
        """
        dtype = fw.dtypes.numpy_dtype(dtype) or self._variable_dtype
        shape = () if shape is None else tuple(shape)
        if any(d is None for d in shape):
            raise ValueError(f"layer '{self.name}': weight '{name}' needs a fully known shape, "
                             f"got {shape}")
        taken = {v.name for v in self._own_weights}
        if name is None:
            name = _unique_among("variable", taken)
        elif name in taken:
            raise ValueError(f"layer '{self.name}' already has a weight named '{name}'")
        regularizer = regularizers.get(regularizer)
        if initializer is None:
            initializer = "glorot_uniform" if dtype.kind == "f" else "zeros"
        value = initializers.get(initializer)(shape, dtype=dtype)
        variable = Variable(value, trainable=trainable and self._trainable, name=name,
                            dtype=dtype, constraint=constraints.get(constraint))
        variable.name, variable.path = name, f"{scope_path(self)}/{name}"  # Keras 3's names
        if trainable and not self._trainable:
            self._frozen.append(variable)
        self._own_weights.append(variable)
        if regularizer is not None:
            self._weight_regularizers.append((variable, regularizer))
        changed()
        return variable

    def _own_variables(self):
        """``(path, variable)`` for the variables this layer holds itself: ``add_weight``'s
        first, then those held in attributes."""
        return [(v.name, v) for v in self._own_weights] + super()._own_variables()

    def _sublayers(self):
        """``(path, layer)`` for the direct sublayers, each once, in assignment order."""
        return [(p, m) for p, m in self._submodule_items() if isinstance(m, Layer)]

    @property
    def trainable_variables(self):
        if not self._trainable:
            return []
        return super().trainable_variables

    @property
    def non_trainable_variables(self):
        if not self._trainable:
            return self.variables
        return super().non_trainable_variables

    # --- losses ---------------------------------------------------------------------------------
    def add_loss(self, loss):
        """Add a scalar loss (or a list of them) during ``call``; ``losses`` returns it until the
        next outermost call."""
        for value in nest.flatten(loss):
            if not isinstance(value, Tensor):
                raise ValueError(f"add_loss() on '{self.name}' takes tensors computed in call(), "
                                 f"got {value!r:.80}")
            self._losses.append(value)
        _holding_losses.add(self)

    def _layer_tree(self):
        """This layer and every layer inside it, each once (cached like ``variables``)."""
        cache = self.__dict__.get("_layers_cache")
        if cache is None or cache[0] != structure_version():
            tree = [self, *(m for m in self.submodules if isinstance(m, Layer))]
            cache = (structure_version(), tree)
            object.__setattr__(self, "_layers_cache", cache)
        return cache[1]

    def _clear_losses(self):
        if not _holding_losses:  # nobody added a loss: nothing to walk (every training step)
            return
        for layer in self._layer_tree():
            if layer._losses:
                layer._losses.clear()
                _holding_losses.discard(layer)

    def _regularize_activity(self, outputs):
        """Keras's activity penalty: the regularizer of each output over its batch size (a
        value of each call, ``fw.shape``, as Keras's ``cast(shape(output)[0])``: under
        ``fw.function`` one plan serves every batch size)."""
        for output in nest.flatten(outputs):
            if isinstance(output, Tensor):
                loss = self.activity_regularizer(output)
                if output.ndim and output.shape[0]:
                    loss = loss / fw.cast(fw.shape(output)[0], loss.dtype)
                self.add_loss(loss)

    @property
    def losses(self):
        """The call losses of this layer and its sublayers (``add_loss``, activity
        regularization), then the weight penalties of the trainable variables, computed now
        from their current values (inside a tape, they are differentiable)."""
        tree = self._layer_tree()
        losses = [loss for layer in tree for loss in layer._losses]
        penalties = {id(v): r for layer in tree for v, r in layer._weight_regularizers}
        if penalties:
            losses += [penalties[id(v)](v) for v in self.trainable_variables
                       if id(v) in penalties]
        return losses

    weights = Module.variables
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
                             f"{len(variables)} variables ({[v.path for v in variables]})")
        for variable, value in zip(variables, weights):
            if value.shape != variable.shape:
                raise ValueError(f"set_weights(): variable '{variable.path}' has shape "
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


def serialized(registry, thing):
    """``thing`` as a config holds it: its registered name (or class name and config); an
    unregistered callable is kept as it is. None stays None."""
    if thing is None:
        return None
    try:
        return registry.serialize(thing)
    except ValueError:
        return thing


def _attach_masks(outputs, masks):
    """Set each output's ``_keras_mask`` (one mask, or one per output), keeping one it has."""
    if masks is None:
        return
    outputs, masks = nest.flatten(outputs), nest.flatten(masks)
    if len(masks) == 1 and len(outputs) > 1:
        return  # (a single mask for several outputs: Keras attaches it to none either)
    for output, mask in zip(outputs, masks):
        if isinstance(output, Tensor) and mask is not None and \
                getattr(output, "_keras_mask", None) is None:
            output._keras_mask = mask


def _unique_among(base, taken):
    name, count = base, 0
    while name in taken:
        count += 1
        name = f"{base}_{count}"
    return name


Layer.build = build_wrapper(Layer.build)


from .saving import load_weights, save_weights  # noqa: E402 (saving reads Layer's tracking)

Layer.save_weights, Layer.load_weights = save_weights, load_weights
