"""Wrappers: ``Bidirectional`` (an RNN run both ways) and ``TimeDistributed`` (a layer applied
to every time step), and ``Masking`` (a padding mask from a marker value), with Keras 3's
arguments and outputs."""
import framework as fw

from .base import LAYERS, Layer, serialized

__all__ = ["Bidirectional", "Masking", "TimeDistributed"]

_MERGE_MODES = ("concat", "sum", "mul", "ave", None)


def _copy(layer, **changes):
    """A fresh layer of ``layer``'s class and config, with ``changes`` (Keras's way of taking a
    layer's settings without its state)."""
    return type(layer).from_config({**layer.get_config(), **changes})


@LAYERS.register
class Bidirectional(Layer):
    """``layer`` (an RNN) run forward and, as a copy with ``go_backwards``, backward; the two
    outputs merged by ``merge_mode``: ``"concat"`` (the default), ``"sum"``, ``"mul"``,
    ``"ave"``, or None (both, as a list).

    The forward layer is a copy named ``forward_<name>``, the backward one ``backward_layer``
    or a copy named ``backward_<name>``; the backward sequence is flipped back into time order.
    Returning sequences, both output zeros at masked steps (Keras sets their
    ``zero_output_for_mask``). ``initial_state``: the forward states, then the backward ones.
    """

    supports_masking = True

    def __init__(self, layer, merge_mode="concat", backward_layer=None, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(f"Bidirectional wraps a layer, got {layer!r:.80}")
        if backward_layer is not None and not isinstance(backward_layer, Layer):
            raise ValueError(f"Bidirectional: backward_layer must be a layer, got "
                             f"{backward_layer!r:.80}")
        if merge_mode not in _MERGE_MODES:
            raise ValueError(f"Bidirectional: merge_mode must be one of {list(_MERGE_MODES)}, "
                             f"got {merge_mode!r}")
        super().__init__(**kwargs)
        name = layer.name.removeprefix("forward_")
        self.forward_layer = _copy(layer, name=f"forward_{name}")
        if backward_layer is None:
            backward_layer = _copy(layer, go_backwards=True,
                                   name=f"backward_{layer.name.removeprefix('backward_')}")
        self.backward_layer = backward_layer
        if self.forward_layer.go_backwards == backward_layer.go_backwards:
            raise ValueError(f"Bidirectional: the forward and backward layers need different "
                             f"go_backwards, both have {backward_layer.go_backwards}")
        for attribute in ("stateful", "return_sequences", "return_state"):
            forward, backward = (getattr(self.forward_layer, attribute),
                                 getattr(backward_layer, attribute))
            if forward != backward:
                raise ValueError(f"Bidirectional: the forward and backward layers need the "
                                 f"same {attribute}, got {forward} and {backward}")
        for each in (self.forward_layer, backward_layer):
            each.zero_output_for_mask = each.return_sequences
        self.merge_mode = merge_mode
        self.stateful = layer.stateful
        self.return_sequences = layer.return_sequences
        self.return_state = layer.return_state

    def call(self, sequences, initial_state=None, mask=None, training=None):
        forward_state = backward_state = None
        if initial_state is not None:
            half = len(initial_state) // 2
            forward_state, backward_state = initial_state[:half], initial_state[half:]
        y = self.forward_layer(sequences, initial_state=forward_state, mask=mask,
                               training=training)
        y_rev = self.backward_layer(sequences, initial_state=backward_state, mask=mask,
                                    training=training)
        states = ()
        if self.return_state:
            states = tuple(y[1:]) + tuple(y_rev[1:])
            y, y_rev = y[0], y_rev[0]
        if self.return_sequences:
            y_rev = fw.reverse(y_rev, [1])
        if self.merge_mode == "concat":
            output = fw.concat([y, y_rev], axis=-1)
        elif self.merge_mode == "sum":
            output = y + y_rev
        elif self.merge_mode == "ave":
            output = (y + y_rev) / 2
        elif self.merge_mode == "mul":
            output = y * y_rev
        else:
            output = (y, y_rev)
        if self.return_state:
            return (*output, *states) if self.merge_mode is None else (output, *states)
        return output

    def compute_mask(self, inputs, previous_mask=None):
        output_mask = previous_mask if self.return_sequences else None
        masks = [output_mask, output_mask] if self.merge_mode is None else [output_mask]
        if self.return_state:
            masks += [None] * (2 * len(self.forward_layer.get_initial_state(1)))
        return masks if len(masks) > 1 else output_mask

    def reset_states(self):
        self.forward_layer.reset_states()
        self.backward_layer.reset_states()

    def get_config(self):
        return {**super().get_config(), "layer": serialized(LAYERS, self.forward_layer),
                "merge_mode": self.merge_mode,
                "backward_layer": serialized(LAYERS, self.backward_layer)}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        layer, backward = LAYERS.get(config.pop("layer")), config.pop("backward_layer", None)
        return cls(layer, backward_layer=backward and LAYERS.get(backward), **config)


@LAYERS.register
class TimeDistributed(Layer):
    """``layer`` applied to each time step of ``(batch, timesteps, ...)`` inputs, the same
    weights for every step; the outputs stacked back along the time axis. A padding mask
    passes through (and to ``layer`` step by step, if it takes one)."""

    supports_masking = True

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(f"TimeDistributed wraps a layer, got {layer!r:.80}")
        super().__init__(**kwargs)
        self.layer = layer

    def call(self, inputs, training=None, mask=None):
        shape = tuple(inputs.shape)
        if len(shape) < 3:
            raise ValueError(f"TimeDistributed '{self.name}' expects inputs of shape (batch, "
                             f"timesteps, ...), got shape {shape}")
        if mask is not None and tuple(mask.shape)[:2] != shape[:2]:
            raise ValueError(f"TimeDistributed '{self.name}': the mask must have shape "
                             f"{shape[:2]} (batch, timesteps), got {tuple(mask.shape)}")
        outputs = []
        for t in range(shape[1]):
            kwargs = {"training": training}
            if mask is not None and self.layer._call_takes_mask:
                kwargs["mask"] = mask[:, t]
            outputs.append(self.layer(inputs[:, t], **kwargs))
        return fw.stack(outputs, axis=1)

    def get_config(self):
        return {**super().get_config(), "layer": LAYERS.serialize(self.layer)}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        return cls(LAYERS.get(config.pop("layer")), **config)


@LAYERS.register
class Masking(Layer):
    """Marks the time steps whose features all equal ``mask_value`` as padding: those steps'
    outputs are zeros and the output carries the mask (``_keras_mask``) to the next layers."""

    def __init__(self, mask_value=0.0, **kwargs):
        super().__init__(**kwargs)
        self.mask_value = mask_value

    def compute_mask(self, inputs, previous_mask=None):
        return fw.reduce_any(fw.not_equal(inputs, self.mask_value), axis=-1)

    def call(self, inputs):
        keep = fw.reduce_any(fw.not_equal(inputs, self.mask_value), axis=-1, keepdims=True)
        outputs = fw.where(keep, inputs, fw.zeros_like(inputs))
        outputs._keras_mask = fw.squeeze(keep, -1)  # (computed once: compute_mask keeps it)
        return outputs

    def get_config(self):
        return {**super().get_config(), "mask_value": self.mask_value}
