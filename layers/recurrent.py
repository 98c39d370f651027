"""``RNN``: a cell looped over time, and ``SimpleRNN``, ``GRU`` and ``LSTM``, an RNN around
their cell, with Keras 3's arguments, outputs and states.

The loop is Python calling framework ops, one cell step per time step, so a tape records it and
``fw.function`` traces it like any other code. A padding mask (``Embedding(mask_zero=True)``,
``Masking``, or ``mask=``) is honoured as Keras's loop does: at a masked step the states carry
through unchanged and the output repeats the previous step's (zeros before the first unmasked
step, even with an ``initial_state``), or is zeros with ``zero_output_for_mask`` (what
``Bidirectional`` sets when it returns sequences). ``go_backwards`` runs the steps last to
first and returns the outputs in that order, as Keras does.
"""
import framework as fw
from framework.engine import nest
from framework.ops.recurrent import gru_sequence, lstm_sequence, simple_rnn_sequence

from . import activations
from .base import LAYERS, Layer
from .rnn_cells import GRUCell, LSTMCell, SimpleRNNCell, StackedRNNCells, _check_cell, \
    initial_state

__all__ = ["GRU", "LSTM", "RNN", "SimpleRNN"]


@LAYERS.register
class RNN(Layer):
    """Loop ``cell`` (or a list of cells, stacked) over the time axis of ``(batch, timesteps,
    features)`` inputs.

    Returns the last output ``(batch, units)``, or every step's with ``return_sequences``, then,
    with ``return_state``, the final states (one list per cell for stacked cells). ``stateful``
    starts each call from the previous call's final states (``reset_states`` zeroes them; the
    batch size must stay the same). ``unroll`` is accepted: the loop is always unrolled here.
    """

    supports_masking = True
    _untracked_attributes = Layer._untracked_attributes | {"states"}

    def __init__(self, cell, return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, unroll=False, zero_output_for_mask=False, **kwargs):
        if isinstance(cell, (list, tuple)):
            cell = StackedRNNCells(cell, dtype=kwargs.get("dtype"))
        _check_cell(cell, type(self).__name__)
        super().__init__(**kwargs)
        self.cell = cell
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.stateful = bool(stateful)
        self.unroll = bool(unroll)
        self.zero_output_for_mask = bool(zero_output_for_mask)
        self.states = None  # stateful: the states carried from call to call (variables)

    def _describe(self):
        return f"{type(self).__name__} '{self.name}'"

    def _check_inputs(self, shape):
        if len(shape) != 3:
            raise ValueError(f"{self._describe()} expects inputs of shape (batch, timesteps, "
                             f"features), got shape {tuple(shape)}")

    def build(self, input_shape):
        self._check_inputs(input_shape)
        if isinstance(self.cell, Layer) and type(self.cell).build is not Layer.build:
            self.cell.build((input_shape[0], *input_shape[2:]))
        if self.stateful:
            if input_shape[0] is None:
                raise ValueError(f"{self._describe()}: stateful=True needs a known batch size, "
                                 f"got inputs of shape {tuple(input_shape)}")
            self.states = [fw.Variable(state, trainable=False, name="rnn_state") for state in
                           nest.flatten(self.get_initial_state(input_shape[0]))]

    def get_initial_state(self, batch_size):
        """Zeros for every state (the cell's ``get_initial_state`` when it has one), a list."""
        state = initial_state(self.cell, batch_size, self.dtype)
        return list(state) if isinstance(state, (list, tuple)) else [state]

    def reset_states(self):
        """Zero the states a stateful layer carries."""
        for variable in self.states or ():
            variable.assign(fw.zeros_like(variable))

    reset_state = reset_states

    def call(self, sequences, initial_state=None, mask=None, training=False):
        self._check_inputs(sequences.shape)
        batch, steps = sequences.shape[:2]
        expected = self.get_initial_state(batch)
        if initial_state is None and self.stateful:
            if self.states[0].shape[0] != batch:
                raise ValueError(f"{self._describe()} is stateful with batch size "
                                 f"{self.states[0].shape[0]}, got inputs of batch size {batch}")
            initial_state = nest.pack_sequence_as(expected, list(self.states))
        elif initial_state is None:
            initial_state = expected
        else:
            initial_state = self._checked_state(initial_state, expected)
        if mask is not None:
            mask = self._checked_mask(mask, batch, steps)
        last, sequence, states = self._loop(sequences, initial_state, mask, training)
        if self.stateful:
            for variable, state in zip(self.states, nest.flatten(states), strict=True):
                variable.assign(state)
        output = sequence if self.return_sequences else last
        if self.return_state:
            return (output, *states)
        return output

    def _checked_state(self, given, expected):
        """``given`` as a list shaped like the zeros ``expected``, or one line saying what was
        expected."""
        given = list(given) if isinstance(given, (list, tuple)) else [given]
        flat_given, flat_expected = nest.flatten(given), nest.flatten(expected)
        shapes = [tuple(getattr(t, "shape", ())) for t in flat_given]
        wanted = [tuple(t.shape) for t in flat_expected]
        if shapes != wanted:
            raise ValueError(f"{self._describe()}: initial_state expects {len(wanted)} "
                             f"tensor(s) of shapes {wanted}, got shapes {shapes}")
        flat = [fw.cast(fw.convert_to_tensor(t), self.dtype) for t in flat_given]
        return nest.pack_sequence_as(expected, flat)

    def _checked_mask(self, mask, batch, steps):
        mask = fw.convert_to_tensor(mask)
        if tuple(mask.shape) != (batch, steps):
            raise ValueError(f"{self._describe()}: the mask must have shape {(batch, steps)} "
                             f"(batch, timesteps), got {tuple(mask.shape)}")
        return mask if mask.dtype == fw.bool else fw.cast(mask, fw.bool)

    def _loop(self, sequences, states, mask, training):
        """``(last output, the outputs in the order computed (with ``return_sequences``),
        final states)``."""
        cell, steps = self.cell, sequences.shape[1]
        keep = None if mask is None else fw.expand_dims(mask, -1)
        outputs, previous = [], None
        try:
            for t in (reversed(range(steps)) if self.go_backwards else range(steps)):
                output, new_states = cell(sequences[:, t], states, training=training)
                if not isinstance(new_states, (list, tuple)):
                    new_states = [new_states]
                if keep is not None:
                    keep_t = keep[:, t]
                    new_states = nest.pack_sequence_as(new_states, [
                        fw.where(keep_t, new, old) for new, old in
                        zip(nest.flatten(new_states), nest.flatten(states), strict=True)])
                    skipped = (previous if previous is not None and not self.zero_output_for_mask
                               else fw.zeros_like(output))
                    output = fw.where(keep_t, output, skipped)
                outputs.append(output)
                previous, states = output, list(new_states)
        finally:
            if hasattr(cell, "reset_dropout_mask"):
                cell.reset_dropout_mask()
        return outputs[-1], fw.stack(outputs, axis=1) if self.return_sequences else None, states

    def compute_mask(self, inputs, previous_mask=None):
        """The input's mask on the sequence output (no mask on a last output or the states)."""
        output_mask = previous_mask if self.return_sequences else None
        if self.return_state:
            return [output_mask] + [None] * len(nest.flatten(self.cell.state_size))
        return output_mask

    def get_config(self):
        return {**super().get_config(), "return_sequences": self.return_sequences,
                "return_state": self.return_state, "go_backwards": self.go_backwards,
                "stateful": self.stateful, "unroll": self.unroll,
                "zero_output_for_mask": self.zero_output_for_mask,
                "cell": LAYERS.serialize(self.cell)}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        return cls(LAYERS.get(config.pop("cell")), **config)


_RNN_ARGUMENTS = ("return_sequences", "return_state", "go_backwards", "stateful", "unroll",
                  "zero_output_for_mask")
_LAYER_ARGUMENTS = ("name", "trainable", "dtype", "input_shape", "activity_regularizer")


class _CellRNN(RNN):
    """An RNN that makes its own cell from its arguments (SimpleRNN, GRU, LSTM): the layer's
    arguments are the cell's and the RNN's, and so is its config."""

    cell_class = None

    def __init__(self, arguments):
        """``arguments``: the subclass's ``locals()``, its whole signature (which names the
        Layer's arguments too, rather than ``**kwargs``, so a config sees every key)."""
        arguments = {k: v for k, v in arguments.items() if k not in ("self", "__class__")}
        rnn = {k: arguments.pop(k) for k in _RNN_ARGUMENTS + _LAYER_ARGUMENTS if k in arguments}
        cell = self.cell_class(**arguments, dtype=rnn.get("dtype"),
                               trainable=rnn.get("trainable", True))
        super().__init__(cell, **rnn)

    @property
    def units(self):
        return self.cell.units

    def _fused(self, sequences, mask, training):
        """``(sequences, mask)`` in the order of the steps when the cell's fused primitive
        may run them (Keras's activations, no dropout in training), else None."""
        cell = self.cell
        if cell.activation is not activations.tanh or \
                getattr(cell, "recurrent_activation", activations.sigmoid) \
                is not activations.sigmoid or \
                (training and (cell.dropout or cell.recurrent_dropout)):
            return None
        if self.go_backwards:
            sequences = fw.reverse(sequences, [1])
            mask = None if mask is None else fw.reverse(mask, [1])
        return sequences, mask

    def _outputs(self, h, sequence, mask):
        """``(last output, output sequence or None)`` from the last state ``h`` and
        ``sequence()``, every step's: a masked step repeats the output before it, which is
        the state h once a step was kept, and zeros before that (zeros at every masked step
        with ``zero_output_for_mask``)."""
        if mask is None:
            return h, sequence() if self.return_sequences else None
        shown = mask if self.zero_output_for_mask else fw.cumsum(fw.cast(mask, fw.int32), 1) > 0
        shown = fw.cast(shown, self.dtype)
        return h * shown[:, -1:], (sequence() * fw.expand_dims(shown, -1)
                                   if self.return_sequences else None)

    def get_config(self):
        config = super().get_config()
        cell = config.pop("cell")["config"]
        for key in ("name", "trainable", "dtype"):
            cell.pop(key, None)
        return {**config, **cell}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


@LAYERS.register
class SimpleRNN(_CellRNN):
    """A fully connected RNN: ``h = activation(x @ kernel + h_prev @ recurrent_kernel + bias)``.

    With ``tanh`` and no dropout in training, the whole sequence is one primitive
    (``framework.ops.recurrent.simple_rnn_sequence``), as ``LSTM``'s and ``GRU``'s.
    """

    cell_class = SimpleRNNCell

    def __init__(self, units, activation="tanh", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, dropout=0.0, recurrent_dropout=0.0, seed=None,
                 return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, unroll=False, zero_output_for_mask=False, name=None,
                 trainable=True, dtype=None, input_shape=None, activity_regularizer=None):
        super().__init__(locals())

    def _loop(self, sequences, states, mask, training):
        cell = self.cell
        fused = self._fused(sequences, mask, training)
        if fused is None:
            return super()._loop(sequences, states, mask, training)
        bias = cell.bias if cell.use_bias else fw.zeros((cell.units,), dtype=self.dtype)
        hs = simple_rnn_sequence(fused[0], states[0], cell.kernel, cell.recurrent_kernel, bias,
                                 mask=fused[1])
        h = hs[:, -1]
        last, sequence = self._outputs(h, lambda: hs, fused[1])
        return last, sequence, [h]


@LAYERS.register
class GRU(_CellRNN):
    """Keras's GRU (``reset_after=True`` by default; see ``GRUCell``).

    With ``reset_after``, Keras's activations and no dropout in training, the whole sequence
    is one primitive (``framework.ops.recurrent.gru_sequence``), as ``LSTM``'s.
    """

    cell_class = GRUCell

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, dropout=0.0, recurrent_dropout=0.0, seed=None,
                 return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, unroll=False, reset_after=True, zero_output_for_mask=False,
                 name=None, trainable=True, dtype=None, input_shape=None,
                 activity_regularizer=None):
        super().__init__(locals())

    def _loop(self, sequences, states, mask, training):
        cell = self.cell
        fused = self._fused(sequences, mask, training) if cell.reset_after else None
        if fused is None:
            return super()._loop(sequences, states, mask, training)
        bias = cell.bias if cell.use_bias else fw.zeros((2, 3 * cell.units), dtype=self.dtype)
        hs = gru_sequence(fused[0], states[0], cell.kernel, cell.recurrent_kernel, bias,
                          mask=fused[1])
        h = hs[:, -1]
        last, sequence = self._outputs(h, lambda: hs, fused[1])
        return last, sequence, [h]


@LAYERS.register
class LSTM(_CellRNN):
    """Keras's LSTM (``unit_forget_bias=True`` by default; see ``LSTMCell``); the states
    ``return_state`` gives are ``h`` and ``c``.

    Without dropout, with Keras's activations, the whole sequence is one primitive
    (``framework.ops.recurrent.lstm_sequence``, the cell's maths on arrays, masked steps
    carrying the states) instead of a loop of a dozen ops per step: the same numbers, several
    times faster to train.
    """

    cell_class = LSTMCell

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", unit_forget_bias=True, kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, dropout=0.0,
                 recurrent_dropout=0.0, seed=None, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, unroll=False, zero_output_for_mask=False,
                 name=None, trainable=True, dtype=None, input_shape=None,
                 activity_regularizer=None):
        super().__init__(locals())

    def _loop(self, sequences, states, mask, training):
        cell = self.cell
        fused = self._fused(sequences, mask, training)
        if fused is None:
            return super()._loop(sequences, states, mask, training)
        units = cell.units
        bias = cell.bias if cell.use_bias else fw.zeros((4 * units,), dtype=self.dtype)
        packed = lstm_sequence(fused[0], states[0], states[1], cell.kernel,
                               cell.recurrent_kernel, bias, mask=fused[1])
        last = packed[:, -1]
        h, c = last[:, :units], last[:, units:]
        last, sequence = self._outputs(h, lambda: packed[:, :, :units], fused[1])
        return last, sequence, [h, c]
