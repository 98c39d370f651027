"""``fw.print`` (tf.print): tensors printed the way TensorFlow prints them.

TensorFlow does not print a tensor like NumPy: a float gets 6 significant digits (15 in
float64) when they read back as the same number, else 9 (17), bools print as 1 and 0, nested
rows are indented one space per level with a blank line between blocks, and an axis longer
than ``2 * summarize`` shows its first and last ``summarize`` entries around ``...``. Logs of a ported training loop therefore read the same as TensorFlow's.
"""
import builtins
import sys

import numpy as np

from .engine import backend
from .engine.tensor import Tensor


def _number(value, dtype):
    if dtype.kind == "b":
        return "1" if value else "0"
    if dtype.kind == "f":  # TensorFlow's rule: the short form if it reads back the same
        single = dtype.itemsize < 8
        kind, short, full = (np.float32, 6, 9) if single else (float, 15, 17)
        text = f"{value:.{short}g}"
        return text if kind(text) == kind(value) else f"{value:.{full}g}"
    return str(value)


def _summarized(items, summarize):
    if 0 <= summarize < len(items) and len(items) > 2 * summarize:
        return items[:summarize] + [None] + items[len(items) - summarize:]
    return items


def format_tensor(array, summarize=3):
    """A host array as TensorFlow's print shows it."""
    array = np.asarray(array)

    def render(block, depth):
        if block.ndim == 0:
            return _number(block.item(), array.dtype)
        if block.ndim > 1 and not block.shape[0]:
            return "[\n" + " " * (depth + 1) + "...]"  # (TensorFlow's text for a 0-row matrix)
        rows = _summarized(list(range(block.shape[0])), summarize)
        parts = ["..." if i is None else render(block[i], depth + 1) for i in rows]
        sep = "\n" * (block.ndim - 1) + " " * (depth + 1) if block.ndim > 1 else " "
        return "[" + sep.join(parts) + "]"
    return render(array, 0)


def _nested(value, summarize, top):
    if isinstance(value, Tensor):
        return format_tensor(backend.to_host(value._value), summarize)
    if isinstance(value, np.ndarray):
        return format_tensor(value, summarize)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_nested(v, summarize, False)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_nested(v, summarize, False) for v in value)
        if isinstance(value, list):
            return f"[{inner}]"
        return f"({inner}{',' if len(value) == 1 else ''})"
    return str(value) if top else repr(value)


def print(*inputs, output_stream=None, summarize=3, sep=" ", end="\n", name=None):  # noqa: A001
    """Print ``inputs`` (tensors, nested lists and dicts of them, anything else by ``str``) to
    ``output_stream``: a file object, or ``"file://path"`` to append to a file. Standard error
    by default, as in TensorFlow."""
    text = sep.join(_nested(x, -1 if summarize is None else int(summarize), True)
                    for x in inputs) + end
    if output_stream is None:  # (looked up now: a redirected stderr is the one written to)
        output_stream = sys.stderr
    if isinstance(output_stream, str):
        if not output_stream.startswith("file://"):
            raise ValueError(f"print: output_stream must be a file object or 'file://path', "
                             f"got {output_stream!r}")
        with builtins.open(output_stream[len("file://"):], "a") as f:
            f.write(text)
    else:
        output_stream.write(text)
        output_stream.flush()
