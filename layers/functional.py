"""The functional API: ``x = Input((784,)); y = Dense(10)(x); model = Model(x, y)``.

``Model(inputs, outputs)`` walks the layer calls back from the outputs (``layers.node``) and
orders the layers as Keras 3 does (by depth from the outputs, inputs first; ties in the order a
depth-first walk from the outputs meets them), so ``model.layers`` and ``model.variables`` come
in Keras's order. Calling the model on real tensors replays the calls in that order.
"""
import collections

from framework.engine import nest
from framework.module import tracked_items

from .base import LAYERS, Layer
from .model import Model
from .model_config import functional_config, functional_from_config
from .node import KerasTensor, Node, as_array

__all__ = ["Functional", "Input", "InputLayer"]


@LAYERS.register
class InputLayer(Layer):
    """The source of one symbolic input; ``Input`` makes one and returns its tensor."""

    is_input_layer = True

    def __init__(self, shape=None, batch_size=None, dtype=None, batch_shape=None, name=None,
                 input_shape=None, batch_input_shape=None, **kwargs):
        """``input_shape`` and ``batch_input_shape`` are Keras 2's names for ``shape`` and
        ``batch_shape``, which Keras 3 still takes."""
        super().__init__(name=name, dtype=dtype, **kwargs)
        shape = input_shape if shape is None else shape
        batch_shape = batch_input_shape if batch_shape is None else batch_shape
        if batch_shape is None:
            if shape is None:
                raise ValueError("Input: give shape (without the batch axis) or batch_shape")
            shape = (shape,) if isinstance(shape, int) else tuple(shape)
            batch_shape = (batch_size, *shape)
        batch_shape = tuple(batch_shape)
        if any(d is not None and (isinstance(d, bool) or int(d) != d or d < 0)
               for d in batch_shape):
            raise ValueError(f"Input '{self.name}': sizes must be non-negative integers or "
                             f"None, got shape {batch_shape}")
        node = Node(self, ((), (), {}), None)
        tensor = KerasTensor(batch_shape, self.dtype, name=self.name, node=node)
        node.outputs, node.structure = [tensor], tensor
        self.output = tensor
        self.built = True
        self._build_input_shape = batch_shape

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {"batch_shape": self.output.shape, "dtype": self.dtype.name, "name": self.name}


def Input(shape=None, batch_size=None, dtype=None, batch_shape=None, name=None):
    """A symbolic input of ``shape`` (without the batch axis): what a functional model is
    defined on. ``dtype`` defaults to float32; integer inputs (``"int32"``) feed an Embedding."""
    return InputLayer(shape, batch_size=batch_size, dtype=dtype, batch_shape=batch_shape,
                      name=name).output


def _walk_back(inputs, outputs):
    """Keras's ``_build_map``: the nodes from the inputs to the outputs (each after the nodes
    it reads), and each layer's index in the order a depth-first walk from the outputs first
    meets it. Iterative: no recursion, however deep the model."""
    input_ids = {id(t) for t in inputs}
    finished, ordered, first_seen = set(), [], {}
    for output in outputs:
        stack = [(output, None)]  # (tensor, iterator over its node's inputs once entered)
        while stack:
            tensor, pending = stack[-1]
            node = tensor.node
            if pending is None:
                if id(tensor) in input_ids and not node.is_input:
                    finished.add(node)  # a declared input made by a layer outside this model
                if node in finished:
                    stack.pop()
                    continue
                first_seen.setdefault(node.layer, len(first_seen))
                pending = iter(node.inputs)
                stack[-1] = (tensor, pending)
            parent = next(pending, None)
            if parent is not None:
                stack.append((parent, None))
            else:
                finished.add(node)
                ordered.append(node)
                stack.pop()
    return ordered, first_seen


def _layers_by_depth(inputs, ordered, first_seen):
    """Keras's ``map_graph``: each layer's depth (the most calls between it and an output),
    and the layers sorted deepest first, ties by ``first_seen``."""
    in_graph = set(ordered)
    node_depth, layer_depth = {}, {}
    for node in reversed(ordered):
        depth = max(node_depth.setdefault(node, 0), layer_depth.get(node.layer, 0))
        layer_depth[node.layer] = node_depth[node] = depth
        for parent in node.parents:
            if parent in in_graph:
                node_depth[parent] = max(depth + 1, node_depth.get(parent, 0))
    for tensor in inputs:  # inputs no output depends on still belong to the model
        if tensor.node.is_input and tensor.node.layer not in layer_depth:
            layer_depth[tensor.node.layer] = 0
            first_seen[tensor.node.layer] = -1
    return sorted(layer_depth, key=lambda layer: (-layer_depth[layer], first_seen[layer]))


def _shapes(tensors):
    return [t.shape for t in tensors] if isinstance(tensors, list) else tensors.shape


class Functional(Model):
    """A model defined by layer calls on ``Input`` tensors: what ``Model(inputs, outputs)``
    returns. ``inputs`` and ``outputs`` may be single tensors, lists or dicts of them."""

    _untracked_attributes = Model._untracked_attributes | {
        "_graph_layers", "_nodes", "_inputs_structure", "_outputs_structure", "inputs",
        "outputs"}

    def __init__(self, inputs, outputs, name=None, trainable=True):
        super().__init__(name=name, trainable=trainable)
        flat_inputs, flat_outputs = nest.flatten(inputs), nest.flatten(outputs)
        for role, tensors in (("inputs", flat_inputs), ("outputs", flat_outputs)):
            for tensor in tensors:
                if not isinstance(tensor, KerasTensor):
                    raise TypeError(f"Model({role}=...) takes the symbolic tensors of Input() "
                                    f"and of layer calls on them, got {tensor!r:.80}")
        ordered, first_seen = _walk_back(flat_inputs, flat_outputs)
        self._check_connected(flat_inputs, ordered)
        graph_layers = _layers_by_depth(flat_inputs, ordered, first_seen)
        names = collections.Counter(layer.name for layer in graph_layers)
        repeated = sorted(name for name, count in names.items() if count > 1)
        if repeated:
            raise ValueError(f"Model '{self.name}': the layer names {repeated} are used more "
                             f"than once; layer names in a model must be unique")
        self._graph_layers = graph_layers
        self._nodes = [node for node in ordered if not node.is_input]
        self._inputs_structure, self._outputs_structure = inputs, outputs
        self.inputs, self.outputs = flat_inputs, flat_outputs
        self._build_input_shape = nest.pack_sequence_as(inputs, [t.shape for t in flat_inputs])
        self.built = True

    @staticmethod
    def _check_connected(inputs, ordered):
        """Every tensor the outputs need is an input or computed from the inputs."""
        known = {id(t) for t in inputs}
        for node in ordered:
            if node.is_input and id(node.outputs[0]) not in known:
                raise ValueError(f"Graph disconnected: the outputs need {node.outputs[0].name} "
                                 f"(of layer '{node.layer.name}'), which is not among the "
                                 f"model's inputs")
            known.update(id(t) for t in node.outputs)

    @property
    def layers(self):
        """The layers in Keras's order: the input layers first, then by depth (the operators
        applied to symbolic tensors are not layers, as in Keras)."""
        return [layer for layer in self._graph_layers
                if not getattr(layer, "is_operation", False)]

    @property
    def input(self):
        """The symbolic input, or the list of them (Keras's ``model.input``)."""
        return self.inputs[0] if isinstance(self._inputs_structure, KerasTensor) else \
            list(self.inputs)

    @property
    def output(self):
        """The symbolic output, or the list of them (Keras's ``model.output``)."""
        return self.outputs[0] if isinstance(self._outputs_structure, KerasTensor) else \
            list(self.outputs)

    @property
    def input_shape(self):
        """The symbolic input's shape, None where any size goes (a list for several inputs)."""
        return _shapes(self.input)

    @property
    def output_shape(self):
        """The symbolic output's shape, None where it follows an unknown input size (a list for
        several outputs), as Keras's ``model.output_shape``."""
        return _shapes(self.output)

    def _attribute_items(self):
        yield from tracked_items(self.layers, "layers")
        yield from super()._attribute_items()

    def call(self, inputs, training=None):
        flat = self._flat_inputs(inputs)
        values = {id(symbolic): as_array(value, symbolic.dtype)
                  for symbolic, value in zip(self.inputs, flat)}
        for node in self._nodes:
            args, extra, kwargs = node.fill(values)
            if kwargs.get("training") is None:
                kwargs = dict(kwargs, training=training)
            outputs = node.layer(args, *extra, **kwargs)
            for symbolic, value in zip(node.outputs, nest.flatten(outputs), strict=True):
                values[id(symbolic)] = value
        return nest.pack_sequence_as(self._outputs_structure,
                                     [values[id(t)] for t in self.outputs])

    def _flat_inputs(self, inputs):
        """The real inputs in the order of ``self.inputs``; a dict is matched by key."""
        structure = self._inputs_structure
        if isinstance(structure, dict) and isinstance(inputs, dict):
            missing = sorted(set(structure) - set(inputs))
            if missing:
                raise ValueError(f"Model '{self.name}' expects the inputs {sorted(structure)}, "
                                 f"missing {missing}")
            inputs = {key: inputs[key] for key in structure}
        flat = [inputs] if isinstance(structure, KerasTensor) else nest.flatten(inputs)
        if len(flat) != len(self.inputs):
            raise ValueError(f"Model '{self.name}' expects {len(self.inputs)} input(s) "
                             f"({[t.name for t in self.inputs]}), got {len(flat)}")
        for symbolic, value in zip(self.inputs, flat):
            shape = getattr(value, "shape", None)
            if shape is not None and (len(shape) != len(symbolic.shape) or any(
                    d is not None and d != s for d, s in zip(symbolic.shape, shape))):
                raise ValueError(f"Model '{self.name}': input '{symbolic.name}' expects shape "
                                 f"{symbolic.shape}, got {tuple(shape)}")
        return flat

    def get_config(self):
        return functional_config(self)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return functional_from_config(cls, config, custom_objects)

    def compute_output_shape(self, input_shape):
        shapes = [t.shape for t in self.outputs]
        return shapes[0] if isinstance(self._outputs_structure, KerasTensor) else \
            nest.pack_sequence_as(self._outputs_structure, shapes)

    def _unbuilt(self):
        return []

