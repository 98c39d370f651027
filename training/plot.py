"""Loss and metric curves of a run as a PNG, when matplotlib is installed.

matplotlib is an optional extra (``pip install ".[plot]"``): training needs none of it, so its
absence costs one line of output, not a failed run. The figure is drawn through
``matplotlib.figure.Figure`` alone, without pyplot, so no GUI backend is ever touched.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

MISSING = ("curves: matplotlib is not installed; pip install \".[plot]\" (or matplotlib) "
           "to get curves.png")


def plot_curves(records: list[dict[str, Any]], quantities: list[str], path: Path) -> bool:
    """Draw one panel per quantity (``loss``, then each metric), train and test per epoch.

    Returns False, drawing nothing, when matplotlib is missing.
    """
    try:
        from matplotlib.figure import Figure
    except ModuleNotFoundError:
        return False
    epochs = [record["epoch"] for record in records]

    def values(key: str) -> list[float]:  # a value that was not finite is None: a gap
        return [math.nan if r.get(key) is None else r[key] for r in records]

    figure = Figure(figsize=(5 * len(quantities), 3.8), layout="constrained")
    for axes, quantity in zip(figure.subplots(1, len(quantities), squeeze=False)[0], quantities):
        axes.plot(epochs, values(quantity), marker="o", label="train")
        if f"test_{quantity}" in records[0]:
            axes.plot(epochs, values(f"test_{quantity}"), marker="o", label="test")
        axes.set_xlabel("epoch")
        axes.set_title(quantity)
        axes.grid(alpha=0.3)
        axes.legend()
    figure.savefig(path, dpi=100)
    return True
