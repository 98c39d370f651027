"""Recurrent cells: one time step of ``SimpleRNN``, ``GRU`` and ``LSTM``, as Keras 3 computes it.

A cell is any layer with ``state_size`` and ``call(inputs, states)`` returning ``(output,
new_states)``; ``layers.recurrent.RNN`` loops one over time. The weights are Keras's, in its
order and layout: ``kernel`` (inputs to every gate, the gates side by side on the last axis),
``recurrent_kernel`` (the previous output to every gate) and ``bias``; the gates come in Keras's
order (GRU: update, reset, candidate; LSTM: input, forget, cell, output).

Dropout is Keras's too: a cell draws its masks on the first step of a sequence and keeps them
for every step, until the RNN calls ``reset_dropout_mask`` at the end. With
``recurrent_dropout`` a gated cell draws one mask per gate (Keras's ``implementation=1``), else
one for all.
"""
import framework as fw

from . import activations, initializers, regularizers
from .base import LAYERS, Layer, serialized
from .core import _keep_scale

__all__ = ["GRUCell", "LSTMCell", "SimpleRNNCell", "StackedRNNCells"]


def _rate(value, name, cell):
    if not 0 <= value < 1:
        raise ValueError(f"{cell}: {name} must be in [0, 1), got {value!r}")
    return float(value)


def _project(x, kernel, masks, units):
    """``x @ kernel``; with one dropout mask per gate, each gate's block of the kernel takes
    ``x`` times its own mask."""
    if masks is None:
        return fw.matmul(x, kernel)
    if len(masks) == 1:
        return fw.matmul(x * masks[0], kernel)
    return fw.concat([fw.matmul(x * mask, kernel[:, i * units:(i + 1) * units])
                      for i, mask in enumerate(masks)], axis=-1)


class _Cell(Layer):
    """What the three cells share: units, the activation, the weights' initializers and
    regularizers, dropout, and the zeros they start from."""

    gates = 1  # blocks of ``units`` in the kernels
    _untracked_attributes = Layer._untracked_attributes | {"_masks"}

    def __init__(self, units, activation="tanh", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, dropout=0.0, recurrent_dropout=0.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        if isinstance(units, bool) or int(units) != units or units <= 0:
            raise ValueError(f"{type(self).__name__}: units must be a positive integer, "
                             f"got {units!r}")
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.dropout = _rate(dropout, "dropout", type(self).__name__)
        self.recurrent_dropout = _rate(recurrent_dropout, "recurrent_dropout",
                                       type(self).__name__)
        self.seed = seed
        self._generator = None if seed is None else fw.random.generator(seed)
        self._masks = None
        self.kernel = self.recurrent_kernel = self.bias = None

    @property
    def state_size(self):
        return self.units

    @property
    def output_size(self):
        return self.units

    def build(self, input_shape):
        width = self.gates * self.units
        self.kernel = self.add_weight("kernel", (input_shape[-1], width),
                                      self.kernel_initializer,
                                      regularizer=self.kernel_regularizer)
        self.recurrent_kernel = self.add_weight("recurrent_kernel", (self.units, width),
                                                self.recurrent_initializer,
                                                regularizer=self.recurrent_regularizer)
        if self.use_bias:
            self.bias = self.add_weight("bias", self._bias_shape(), self._bias_initializer(),
                                        regularizer=self.bias_regularizer)

    def _bias_shape(self):
        return (self.gates * self.units,)

    def _bias_initializer(self):
        return self.bias_initializer

    def get_initial_state(self, batch_size=None):
        sizes = self.state_size if isinstance(self.state_size, list) else [self.state_size]
        return [fw.zeros((batch_size, size), dtype=self.dtype) for size in sizes]

    # --- dropout --------------------------------------------------------------------------------
    def _dropout_masks(self, inputs, state, training):
        """``(input masks, state masks)``, each a list or None: drawn on the first step of a
        sequence in training, kept until ``reset_dropout_mask``."""
        if not training or not (self.dropout or self.recurrent_dropout):
            return None, None
        if self._masks is None:
            count = self.gates if self.recurrent_dropout else 1

            def draw(like, rate):
                return [_keep_scale(self._generator, tuple(like.shape), rate, like)
                        for _ in range(count)] if rate else None
            self._masks = (draw(inputs, self.dropout), draw(state, self.recurrent_dropout))
        return self._masks

    def reset_dropout_mask(self):
        self._masks = None

    def call(self, inputs, states, training=False):
        nested = isinstance(states, (list, tuple))
        states = list(states) if nested else [states]
        input_masks, state_masks = self._dropout_masks(inputs, states[0], training)
        output, new_states = self._step(inputs, states, input_masks, state_masks)
        return output, new_states if nested or len(new_states) > 1 else new_states[0]

    def get_config(self):
        return {**super().get_config(), "units": self.units,
                "activation": serialized(activations.ACTIVATIONS, self.activation),
                "use_bias": self.use_bias,
                **{name: serialized(initializers.INITIALIZERS, getattr(self, name))
                   for name in ("kernel_initializer", "recurrent_initializer",
                                "bias_initializer")},
                **{name: regularizers.serialize(getattr(self, name))
                   for name in ("kernel_regularizer", "recurrent_regularizer",
                                "bias_regularizer")},
                "dropout": self.dropout, "recurrent_dropout": self.recurrent_dropout,
                "seed": self.seed}


@LAYERS.register
class SimpleRNNCell(_Cell):
    """``activation(x @ kernel + bias + h @ recurrent_kernel)``: output and state alike."""

    def _step(self, x, states, input_masks, state_masks):
        h = _project(x, self.kernel, input_masks, self.units)
        if self.use_bias:
            h = h + self.bias
        output = self.activation(h + _project(states[0], self.recurrent_kernel, state_masks,
                                              self.units))
        return output, [output]


class _GatedCell(_Cell):
    """A cell with a ``recurrent_activation`` for its gates (GRU, LSTM)."""

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", **kwargs):
        super().__init__(units, activation, **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)

    def get_config(self):
        return {**super().get_config(), "recurrent_activation": serialized(
            activations.ACTIVATIONS, self.recurrent_activation)}


@LAYERS.register
class GRUCell(_GatedCell):
    """Keras's GRU step: ``h = z * h_prev + (1 - z) * candidate``.

    ``reset_after=True`` (Keras 3's default, cuDNN's form) applies the reset gate after the
    recurrent product and has a bias of shape ``(2, 3 * units)`` (input and recurrent rows);
    ``False`` applies it to the previous state before the product, with one bias row.
    """

    gates = 3

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid",
                 reset_after=True, **kwargs):
        super().__init__(units, activation, recurrent_activation, **kwargs)
        self.reset_after = bool(reset_after)

    def _bias_shape(self):
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def _step(self, x, states, input_masks, state_masks):
        h, units = states[0], self.units
        projected = _project(x, self.kernel, input_masks, units)
        if self.use_bias:
            projected = projected + (self.bias[0] if self.reset_after else self.bias)
        x_z, x_r, x_h = fw.split(projected, 3, axis=-1)
        if self.reset_after:
            inner = _project(h, self.recurrent_kernel, state_masks, units)
            if self.use_bias:
                inner = inner + self.bias[1]
            r_z, r_r, r_h = fw.split(inner, 3, axis=-1)
        else:
            r_z, r_r = fw.split(_project(h, self.recurrent_kernel[:, :2 * units],
                                         state_masks and state_masks[:2], units), 2, axis=-1)
        z = self.recurrent_activation(x_z + r_z)
        r = self.recurrent_activation(x_r + r_r)
        if self.reset_after:
            r_h = r * r_h
        else:
            h_h = h * state_masks[2] if state_masks else h
            r_h = fw.matmul(r * h_h, self.recurrent_kernel[:, 2 * units:])
        candidate = self.activation(x_h + r_h)
        new_h = z * h + (1 - z) * candidate
        return new_h, [new_h]

    def get_config(self):
        return {**super().get_config(), "reset_after": self.reset_after}


@LAYERS.register
class LSTMCell(_GatedCell):
    """Keras's LSTM step: ``c = f * c_prev + i * activation(g)``, ``h = o * activation(c)``;
    the states are ``[h, c]``.

    ``unit_forget_bias`` (the default) starts the forget gate's bias at 1.
    """

    gates = 4

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid",
                 unit_forget_bias=True, **kwargs):
        super().__init__(units, activation, recurrent_activation, **kwargs)
        self.unit_forget_bias = bool(unit_forget_bias)

    @property
    def state_size(self):
        return [self.units, self.units]

    def _bias_initializer(self):
        if not self.unit_forget_bias:
            return self.bias_initializer
        units, init = self.units, self.bias_initializer

        def forget_ones(shape, dtype=None):
            return fw.concat([fw.convert_to_tensor(init((units,), dtype=dtype)),
                              fw.ones((units,), dtype=dtype),
                              fw.convert_to_tensor(init((2 * units,), dtype=dtype))], 0)
        return forget_ones

    def _step(self, x, states, input_masks, state_masks):
        h, c = states
        z = (_project(x, self.kernel, input_masks, self.units)
             + _project(h, self.recurrent_kernel, state_masks, self.units))
        if self.use_bias:
            z = z + self.bias
        z_i, z_f, z_c, z_o = fw.split(z, 4, axis=1)
        act, gate = self.activation, self.recurrent_activation
        c = gate(z_f) * c + gate(z_i) * act(z_c)
        h = gate(z_o) * act(c)
        return h, [h, c]

    def get_config(self):
        return {**super().get_config(), "unit_forget_bias": self.unit_forget_bias}


@LAYERS.register
class StackedRNNCells(Layer):
    """Several cells as one: each step runs them in order, each on the previous one's output;
    the state is one entry per cell (Keras's)."""

    def __init__(self, cells, **kwargs):
        super().__init__(**kwargs)
        for cell in cells:
            _check_cell(cell, "StackedRNNCells")
        self.cells = list(cells)

    @property
    def state_size(self):
        return [cell.state_size for cell in self.cells]

    @property
    def output_size(self):
        last = self.cells[-1]
        return getattr(last, "output_size", None) or _sizes(last.state_size)[0]

    def build(self, input_shape):
        for cell in self.cells:
            if isinstance(cell, Layer) and type(cell).build is not Layer.build:
                cell.build(input_shape)
            input_shape = (input_shape[0], getattr(cell, "output_size", None)
                           or _sizes(cell.state_size)[0])

    def get_initial_state(self, batch_size=None):
        return [initial_state(cell, batch_size, self.dtype) for cell in self.cells]

    def reset_dropout_mask(self):
        for cell in self.cells:
            if hasattr(cell, "reset_dropout_mask"):
                cell.reset_dropout_mask()

    def call(self, inputs, states, training=False):
        new_states = []
        for cell, cell_states in zip(self.cells, states, strict=True):
            nested = isinstance(cell_states, (list, tuple))
            cell_states = list(cell_states) if nested else [cell_states]
            inputs, cell_states = cell(inputs, cell_states, training=training)
            if not isinstance(cell_states, (list, tuple)):
                cell_states = [cell_states]
            new_states.append(cell_states if nested or len(cell_states) > 1
                              else cell_states[0])
        return inputs, new_states

    def get_config(self):
        return {**super().get_config(), "cells": [LAYERS.serialize(c) for c in self.cells]}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        cells = [LAYERS.get(cell) for cell in config.pop("cells")]
        return cls(cells, **config)


def _sizes(state_size):
    return list(state_size) if isinstance(state_size, (list, tuple)) else [state_size]


def _check_cell(cell, owner):
    """A cell is anything with ``call`` and ``state_size`` (Keras's contract)."""
    if not callable(getattr(cell, "call", None)):
        raise ValueError(f"{owner}: a cell needs a call(inputs, states) method, got {cell!r:.80}")
    if getattr(cell, "state_size", None) is None:
        raise ValueError(f"{owner}: the cell {type(cell).__name__} has no state_size; a cell "
                         f"gives state_size (an int, or a list of ints, one per state) and "
                         f"call(inputs, states)")


def initial_state(cell, batch_size, dtype):
    """The cell's ``get_initial_state``, or zeros for each of its states (a list)."""
    make = getattr(cell, "get_initial_state", None)
    if make is not None:
        return make(batch_size=batch_size)
    if isinstance(cell.state_size, int):
        return fw.zeros((batch_size, cell.state_size), dtype=dtype)
    return [fw.zeros((batch_size, size), dtype=dtype) for size in cell.state_size]
