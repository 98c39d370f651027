"""``clone_model``: a new model of the same architecture with new weights (Keras's)."""
from .containers import Sequential
from .functional import Functional

__all__ = ["clone_model"]


def clone_model(model, input_tensors=None, clone_function=None):
    """A ``Sequential`` or functional model rebuilt from its config: new layers, freshly
    initialized (copy the weights with ``set_weights(model.get_weights())``), of the same
    class (a functional ``CustomModel`` stays one)."""
    for name, value in (("input_tensors", input_tensors), ("clone_function", clone_function)):
        if value is not None:
            raise ValueError(f"clone_model: {name} is not supported here; clone the model, "
                             f"then change or call the clone")
    if not isinstance(model, (Sequential, Functional)):
        raise ValueError(f"clone_model takes a Sequential or functional model; "
                         f"{type(model).__name__} '{model.name}' is subclassed: build a new "
                         f"instance of it instead")
    return type(model).from_config(model.get_config())
