"""Metrics files: one record per line, JSON lines or CSV, appended as training goes.

Records hold only what the training computed (epoch, step, losses, metrics, learning rates),
never wall-clock times, so two runs with the same config and seed write identical files. On
resume the file is cut back to the records up to the checkpoint, so a resumed run's file is the
one an uninterrupted run would have written.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any


class MetricsFile:
    """Append-only records in ``path`` (``.jsonl`` or ``.csv``, from ``fmt``)."""

    def __init__(self, directory: Path, stem: str, fmt: str):
        self.path = Path(directory) / f"{stem}.{fmt}"
        self.fmt = fmt

    def append(self, record: dict[str, Any]) -> None:
        with open(self.path, "a", encoding="utf-8", newline="") as file:
            if self.fmt == "jsonl":
                file.write(json.dumps(record) + "\n")
                return
            writer = csv.DictWriter(file, fieldnames=list(record))
            if file.tell() == 0:
                writer.writeheader()
            writer.writerow(record)

    def read(self) -> list[dict[str, Any]]:
        """The records so far, with numbers as numbers (CSV cells are parsed back)."""
        if not self.path.exists():
            return []
        text = self.path.read_text(encoding="utf-8")
        if self.fmt == "jsonl":
            return [json.loads(line) for line in text.splitlines() if line.strip()]
        return [{key: _number(value) for key, value in row.items()}
                for row in csv.DictReader(io.StringIO(text))]

    def truncate(self, key: str, last: int) -> None:
        """Keep the records whose ``key`` (epoch or step) is at most ``last``, byte for byte."""
        if not self.path.exists():
            return
        lines = self.path.read_text(encoding="utf-8").splitlines(keepends=True)
        if self.fmt == "jsonl":
            kept = [line for line in lines if line.strip() and json.loads(line)[key] <= last]
        else:
            column = next(csv.reader(lines[:1]), [key]).index(key)
            kept = lines[:1] + [line for line in lines[1:]
                                if int(next(csv.reader([line]))[column]) <= last]
        self.path.write_text("".join(kept), encoding="utf-8")


def _number(text: str) -> Any:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text
