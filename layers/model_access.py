"""What Keras's ``Model`` tells about itself and saves: ``get_layer``, ``input_shape``,
``output_shape`` and ``save`` (a ``.keras`` file, ``layers.keras_file``). A mixin of ``Model``,
kept apart from its training methods."""

__all__ = ["ModelAccess"]


class ModelAccess:
    """``get_layer``, ``input_shape``, ``output_shape`` and ``save``, with Keras 3's errors."""

    def get_layer(self, name=None, index=None):
        """The layer called ``name``, or at ``index`` in ``layers`` (one of the two)."""
        if name is not None and index is not None:
            raise ValueError(f"Provide only a layer name or a layer index. Received: "
                             f"index={index}, name={name}.")
        layers = self.layers
        if index is not None:
            if len(layers) <= index:
                raise ValueError(f"Was asked to retrieve layer at index {index} but model only "
                                 f"has {len(layers)} layers.")
            return layers[index]
        if name is None:
            raise ValueError("Provide either a layer name or layer index at `get_layer`.")
        for layer in layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No such layer: {name}. Existing layers are: "
                         f"{[layer.name for layer in layers]}.")

    @property
    def input_shape(self):
        """The shape the model was built for, batch axis first (the declared ``Input``'s, or
        the first call's)."""
        shape = self._build_input_shape or self._declared_input_shape
        if shape is None:
            raise AttributeError(f"{type(self).__name__} model '{self.name}' has no defined "
                                 f"input shape yet.")
        return shape

    @property
    def output_shape(self):
        """The output shape for ``input_shape`` (a list or dict of them for several outputs)."""
        try:
            shape = self.input_shape
        except AttributeError:
            raise AttributeError(f"{type(self).__name__} model '{self.name}' has no defined "
                                 f"output shape yet.") from None
        return self.compute_output_shape(shape)

    def save(self, filepath, overwrite=True, zipped=None, **kwargs):
        """Write the model to a ``.keras`` file: its architecture and its weights."""
        from .keras_file import save_model
        save_model(self, filepath, overwrite=overwrite, zipped=zipped, **kwargs)
