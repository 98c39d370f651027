"""Gradient accumulation: one optimizer step from the gradients of several micro-batches.

When a batch does not fit in memory, split it into micro-batches of equal size, compute each
one's gradients and ``accumulate`` them, then ``apply_gradients`` once. With a loss that is a
mean over the batch (as Keras's reductions are), the mean of the micro-batch gradients is the
gradient of the whole batch, so the step equals one step on the combined batch.
"""
from framework.indexed_slices import dense_raw, is_indexed_slices
from framework.tensor import Tensor, Variable, wrap
from framework.trace_hooks import replayed


class GradientAccumulator:
    """Sums ``(gradient, variable)`` pairs in place over micro-batches for ``optimizer``.

    ``apply_gradients()`` hands the optimizer the mean over the ``accumulate`` calls (or the sum
    with ``average=False``, for a loss summed over examples) and starts over.
    """

    def __init__(self, optimizer, average=True):
        self.optimizer = optimizer
        self.average = bool(average)
        self.steps = 0  # micro-batches accumulated since the last apply
        self._sums = {}  # variable -> summed gradient array (None while only None was seen)

    @replayed  # (a traced fw.function adds each call's gradients)
    def accumulate(self, grads_and_vars):
        """Add one micro-batch's gradients; all pairs are checked before any sum changes."""
        pairs = []
        for grad, variable in grads_and_vars:
            if not isinstance(variable, Variable):
                raise TypeError(f"accumulate() takes (gradient, variable) pairs; got a "
                                f"{type(variable).__name__} where a fw.Variable belongs")
            raw = grad._value if isinstance(grad, Tensor) else grad
            if is_indexed_slices(grad):  # (summed dense: the sum of a step's rows)
                raw = dense_raw(grad)
            if raw is not None and (tuple(raw.shape) != variable.shape
                                    or raw.dtype != variable.dtype):
                raise ValueError(f"the gradient for variable '{variable.name}' is "
                                 f"{raw.dtype.name}{list(raw.shape)}, the variable "
                                 f"{variable.dtype.name}{list(variable.shape)}")
            pairs.append((raw, variable))
        for raw, variable in pairs:
            total = self._sums.get(variable)
            if raw is None:
                self._sums.setdefault(variable, None)
            elif total is None:
                self._sums[variable] = raw.copy()
            else:
                total += raw
        self.steps += 1

    @replayed
    def apply_gradients(self):
        """One optimizer step with the accumulated gradients; returns its ``iterations``.

        The sums are cleared in any case, so the next micro-batch starts a new step.
        """
        if not self.steps:
            raise ValueError("GradientAccumulator.apply_gradients(): nothing accumulated yet; "
                             "call accumulate() once per micro-batch first")
        scale = 1.0 / self.steps if self.average else 1.0
        pairs = []
        for variable, total in self._sums.items():
            if total is not None and scale != 1.0:
                total *= scale
            pairs.append((None if total is None else wrap(total), variable))
        try:
            return self.optimizer.apply_gradients(pairs)
        finally:
            self.reset()

    def reset(self):
        """Drop what was accumulated (e.g. after a failed micro-batch)."""
        self._sums, self.steps = {}, 0

