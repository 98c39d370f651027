"""The configs of ``Sequential`` and functional models, and the models rebuilt from them: what
``clone_model`` and a ``.keras`` file's ``config.json`` hold.

A layer is ``{"class_name", "config"}`` (its ``get_config``), found again by its registered name
(``layers.LAYERS``) or in ``custom_objects``. A functional model also lists its calls: each the
index of its layer and its arguments, where a symbolic tensor is
``{"keras_tensor": [call, output]}``, the ``output``-th tensor of an earlier call (the inputs
are calls ``0 .. n-1``); the model is rebuilt by replaying the calls on new ``Input`` tensors.
"""
from framework.engine import nest

from .base import LAYERS
from .node import KerasTensor

__all__ = ["functional_config", "functional_from_config", "layer_from_config",
           "sequential_config", "sequential_from_config"]


def _serialized(layer, model):
    if getattr(layer, "is_operation", False):
        raise ValueError(f"model '{model.name}': '{layer.name}' is an operator on symbolic "
                         f"tensors, which has no config; wrap it in a layer (layers.Lambda "
                         f"does not save either) to save or clone the model")
    return {"class_name": type(layer).__name__, "config": layer.get_config()}


def layer_from_config(item, custom_objects=None):
    """The layer ``{"class_name", "config"}`` describes, ``custom_objects`` first."""
    cls = (custom_objects or {}).get(item["class_name"]) or LAYERS.lookup(item["class_name"])
    return cls.from_config(dict(item["config"]))


def sequential_config(model):
    layers = [_serialized(layer, model) for layer in model.layers]
    if model._declared_input_shape is not None:
        layers.insert(0, {"class_name": "InputLayer",
                          "config": {"batch_shape": list(model._declared_input_shape),
                                     "dtype": model.dtype.name}})
    return {"name": model.name, "trainable": model.trainable, "dtype": model.dtype.name,
            "layers": layers}


def sequential_from_config(cls, config, custom_objects=None):
    model = cls(name=config["name"], trainable=config.get("trainable", True),
                dtype=config.get("dtype"))
    for item in config["layers"]:
        model.add(layer_from_config(item, custom_objects))
    return model


def functional_config(model):
    calls = {}  # id(symbolic tensor) -> [call, output]
    for position, tensor in enumerate(model.inputs):
        calls[id(tensor)] = [position, 0]
    layers = model._graph_layers
    index_of = {id(layer): i for i, layer in enumerate(layers)}
    nodes = []
    for position, node in enumerate(model._nodes, start=len(model.inputs)):
        nodes.append([index_of[id(node.layer)], _encode(node.arguments, calls)])
        for output, tensor in enumerate(node.outputs):
            calls[id(tensor)] = [position, output]
    return {"name": model.name, "trainable": model.trainable,
            "layers": [_serialized(layer, model) for layer in layers],
            "input_layers": [index_of[id(t.node.layer)] for t in model.inputs],
            "nodes": nodes, "inputs": _encode(model._inputs_structure, calls),
            "outputs": _encode(model._outputs_structure, calls)}


def functional_from_config(cls, config, custom_objects=None):
    layers = [layer_from_config(item, custom_objects) for item in config["layers"]]
    outputs = [[layers[i].output] for i in config["input_layers"]]  # call -> its flat outputs
    for layer_index, arguments in config["nodes"]:
        inputs, args, kwargs = _decode(arguments, outputs)
        result = layers[layer_index](inputs, *args, **kwargs)
        outputs.append(nest.flatten(result))
    return cls(_decode(config["inputs"], outputs), _decode(config["outputs"], outputs),
               name=config["name"], trainable=config.get("trainable", True))


def _encode(value, calls):
    """``value`` as JSON: symbolic tensors by their call, tuples as lists."""
    if isinstance(value, KerasTensor):
        return {"keras_tensor": calls[id(value)]}
    if isinstance(value, (list, tuple)):
        return [_encode(item, calls) for item in value]
    if isinstance(value, dict):
        return {key: _encode(item, calls) for key, item in value.items()}
    return value


def _decode(value, outputs):
    if isinstance(value, dict) and set(value) == {"keras_tensor"}:
        call, output = value["keras_tensor"]
        return outputs[call][output]
    if isinstance(value, list):
        return [_decode(item, outputs) for item in value]
    if isinstance(value, dict):
        return {key: _decode(item, outputs) for key, item in value.items()}
    return value
