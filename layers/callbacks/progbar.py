"""``ProgbarLogger``: what ``fit(verbose=...)`` prints.

``verbose=1`` on a terminal draws a tqdm bar per epoch with the running metrics; anywhere else
(a log file, a pipe, a notebook's captured output) and with ``verbose=2`` it prints Keras's
line once per epoch: ``Epoch 1/3``, then ``4/4 - 0s - 12ms/step - accuracy: 0.5250 - loss:
1.4167``. ``evaluate`` prints the same line once at its end.
"""
import sys
import time

from .base import Callback

__all__ = ["ProgbarLogger"]


def _format(logs):
    parts = []
    for name, value in logs.items():
        try:
            value = float(value)
        except (TypeError, ValueError):
            continue
        parts.append(f"{name}: {value:.4f}" if abs(value) >= 1e-3 or value == 0
                     else f"{name}: {value:.4e}")
    return "".join(f" - {part}" for part in parts)


class ProgbarLogger(Callback):
    """Prints training progress; ``fit`` adds one unless ``verbose=0``."""

    def __init__(self):
        super().__init__()
        self._bar = None
        self._start = None
        self._seen = 0

    @property
    def _verbose(self):
        return self.params.get("verbose", 1)

    def _on_terminal(self):
        return self._verbose == 1 and sys.stdout.isatty()

    def on_epoch_begin(self, epoch, logs=None):
        if self._verbose:
            print(f"Epoch {epoch + 1}/{self.params.get('epochs', 1)}")
        self._begin()

    def on_test_begin(self, logs=None):
        if self._start is None:  # evaluate alone (validation belongs to the epoch's line)
            self._begin()

    def _begin(self):
        self._start, self._seen = time.perf_counter(), 0
        if self._on_terminal():
            from tqdm.auto import tqdm
            self._bar = tqdm(total=self.params.get("steps"), unit="step", leave=False,
                             file=sys.stdout)

    def on_train_batch_end(self, batch, logs=None):
        self._seen = batch + 1
        if self._bar is not None:
            self._bar.update(self._seen - self._bar.n)
            self._bar.set_postfix_str(_format(logs or {})[3:], refresh=False)

    def on_test_batch_end(self, batch, logs=None):
        if self._bar is not None and self.params.get("epochs") == 1 and self._seen == 0:
            self._bar.update(batch + 1 - self._bar.n)

    def on_epoch_end(self, epoch, logs=None):
        self._line(logs)

    def on_test_end(self, logs=None):
        if self._seen == 0 and self._start is not None:  # evaluate alone
            self._line(logs, steps=self.params.get("steps"))

    def _line(self, logs, steps=None):
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        if not self._verbose or self._start is None:
            return
        steps = steps or self._seen or 1
        seconds = time.perf_counter() - self._start
        print(f"{steps}/{steps} - {seconds:.0f}s - {1000 * seconds / steps:.0f}ms/step"
              f"{_format(logs or {})}")
        self._start = None
