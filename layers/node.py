"""Symbolic tensors: what ``Input`` returns and a layer called on it gives back.

A ``KerasTensor`` has a shape (None where any size goes), a dtype and the ``Node`` that made it:
which layer was called, on which symbolic tensors, with which other arguments. A functional
``Model(inputs, outputs)`` walks these nodes back from its outputs and replays them on real
tensors.

A layer called symbolically is built right away, from the symbolic shapes, None included, so
its weights come from the known axes only (a Conv2D's channels; a Dense on an unknown last axis
is refused, as in Keras); its variables get Keras 3's paths, with no model prefix, as in
Keras's functional models. Its output shapes come from running it on zeros twice, each unknown
size set to two probe sizes (``probe_shape``: 1 and 2 for the batch axis, 16 and 24 for the
others, so a 3x3 window or a pooling fits): a size that differs between the runs follows the
input's and is unknown in the output too. That needs no ``compute_output_shape`` from any
layer, at the cost of two small forward passes per layer when the model is defined.
"""
import itertools

import numpy as np

import framework as fw
from framework.engine import nest

__all__ = ["KerasTensor", "Node", "is_symbolic", "probe_shape", "symbolic_call",
           "unknown_where_different"]

_counter = itertools.count()


class KerasTensor:
    """A symbolic tensor: a shape with None for unknown sizes, a dtype, and its history."""

    __slots__ = ("shape", "dtype", "name", "node", "index")

    def __init__(self, shape, dtype=fw.float32, name=None, node=None, index=0):
        self.shape = tuple(None if d is None else int(d) for d in shape)
        self.dtype = fw.as_dtype(dtype)
        count = next(_counter)
        self.name = name or ("keras_tensor" if count == 0 else f"keras_tensor_{count}")
        self.node = node  # the Node that produced this tensor
        self.index = index  # its position among that node's flat outputs

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return f"<KerasTensor shape={self.shape}, dtype={self.dtype.name}, name={self.name}>"

    def _refuse(self, *args, **kwargs):
        raise TypeError(f"{self.name} is a symbolic tensor of a functional model: it has no "
                        f"value. Use it in layer calls and operators (x + y, x[:, 0]), or "
                        f"wrap a function of it in layers.Lambda")

    # (the arithmetic operators are installed by layers.lambda_layer)
    __array__ = __float__ = __int__ = __bool__ = __len__ = __iter__ = numpy = _refuse


class Node:
    """One symbolic call: ``layer(*arguments)`` giving ``outputs`` (a flat list of tensors).

    ``arguments`` is ``(inputs, args, kwargs)`` with symbolic tensors among the leaves;
    ``structure`` the nesting of the outputs.
    """

    __slots__ = ("layer", "arguments", "inputs", "outputs", "structure")

    def __init__(self, layer, arguments, outputs_structure):
        self.layer = layer
        self.arguments = arguments
        self.inputs = [t for t in nest.flatten(arguments) if isinstance(t, KerasTensor)]
        self.structure = outputs_structure
        self.outputs = [leaf for leaf in nest.flatten(outputs_structure)]

    @property
    def parents(self):
        return [t.node for t in self.inputs if t.node is not None]

    @property
    def is_input(self):
        return not self.inputs and getattr(self.layer, "is_input_layer", False)

    def fill(self, values):
        """``(inputs, args, kwargs)`` with each symbolic tensor replaced by ``values[id(t)]``."""
        flat = [values[id(leaf)] if isinstance(leaf, KerasTensor) else leaf
                for leaf in nest.flatten(self.arguments)]
        return nest.pack_sequence_as(self.arguments, flat)


def is_symbolic(inputs):
    """Whether ``inputs`` is, or holds, a symbolic tensor (a functional model's definition)."""
    if inputs.__class__ is KerasTensor:
        return True
    if isinstance(inputs, (list, tuple, dict)):
        return any(isinstance(leaf, KerasTensor) for leaf in nest.flatten(inputs))
    return False


_PROBES = ((1, 16), (2, 24))  # (batch axis, other axes): the sizes of the two probe runs


def probe_shape(shape, run=0):
    """``shape`` with each unknown size (None) set to probe run ``run``'s size: 1 or 2 on the
    batch axis, 16 or 24 elsewhere (never 1, which no 3x3 window fits)."""
    batch, other = _PROBES[run]
    return tuple((batch if axis == 0 else other) if d is None else d
                 for axis, d in enumerate(shape))


def _concrete(arguments, run):
    """``arguments`` with each symbolic tensor replaced by zeros of its probe shape."""
    flat = [fw.zeros(probe_shape(leaf.shape, run), dtype=leaf.dtype)
            if isinstance(leaf, KerasTensor) else leaf for leaf in nest.flatten(arguments)]
    return nest.pack_sequence_as(arguments, flat)


def _symbolic_shapes(inputs):
    """The shapes (None where unknown) of symbolic ``inputs``, nested as they are."""
    if isinstance(inputs, KerasTensor):
        return inputs.shape
    if isinstance(inputs, (list, tuple)):
        return type(inputs)(_symbolic_shapes(x) for x in inputs)
    if isinstance(inputs, dict):
        return {key: _symbolic_shapes(x) for key, x in inputs.items()}
    return None


def probe_runs(layer, arguments):
    """The flat outputs of ``layer`` on the two probe runs' zeros (see the module docstring)."""
    runs = []
    for run in (0, 1):
        concrete_inputs, concrete_args, concrete_kwargs = _concrete(arguments, run)
        concrete_kwargs = dict(concrete_kwargs, training=False)  # no state updates while defining
        runs.append(layer(concrete_inputs, *concrete_args, **concrete_kwargs))
    layer._clear_losses()  # the zeros' activity penalties are no loss of any real call
    return runs


def unknown_where_different(small, large):
    """The shape of ``small`` with None where the two probe runs' sizes differ."""
    return tuple(a if a == b else None for a, b in zip(small.shape, large.shape))


def symbolic_call(layer, inputs, args, kwargs):
    """Call ``layer`` on symbolic ``inputs``: build it from their shapes, and return symbolic
    outputs recording the call as a ``Node``."""
    from .base import Layer
    arguments = (inputs, tuple(args), kwargs)
    if not layer.built and type(layer).build is not Layer.build:
        layer.build(_symbolic_shapes(inputs))  # from the known axes: see the module docstring
    runs = probe_runs(layer, arguments)
    flat_small, flat_large = (nest.flatten(outputs) for outputs in runs)
    node = Node(layer, arguments, None)
    symbolic = []
    for index, (small, large) in enumerate(zip(flat_small, flat_large, strict=True)):
        if not isinstance(small, fw.Tensor):
            raise TypeError(f"layer '{layer.name}' returned {small!r:.60} for symbolic inputs; "
                            f"a layer in a functional model must return tensors")
        symbolic.append(KerasTensor(unknown_where_different(small, large), small.dtype,
                                    node=node, index=index))
    node.structure = nest.pack_sequence_as(runs[0], symbolic)
    node.outputs = symbolic
    return node.structure


def as_array(value, dtype):
    """A real input for a symbolic one of ``dtype``: a tensor of that dtype (Keras casts the
    inputs of a functional model to its ``Input``'s dtype)."""
    if isinstance(value, fw.Tensor):
        return value if value.dtype == dtype else fw.cast(value, dtype)
    if not hasattr(value, "dtype"):
        value = np.asarray(value)
    return fw.cast(fw.convert_to_tensor(value), dtype) if value.dtype != dtype else \
        fw.convert_to_tensor(value)
