"""Metrics files: one record per line, JSON lines or CSV, appended as training goes.

Records hold only what the training computed (epoch, step, losses, metrics, learning rates),
never wall-clock times, so two runs with the same config and seed write identical files. On
resume the file is cut back to the records up to the checkpoint, so a resumed run's file is the
one an uninterrupted run would have written.

Every file stays readable by any JSON or CSV reader: a value that is not a finite number (a
diverged loss) is written as ``null`` in JSON lines and as an empty cell in CSV, never as a bare
``NaN``. A record is appended whole or not at all: a write that fails (a full disk) is cut back,
and a last line that a killed process left without its newline is dropped when the file is next
cut back. Any other line that cannot be read is a ``RecordsError`` naming the file and line.
A run resumed in the other format takes its records along (``adopt_other_format``), so the
history is whole in the file the run writes.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from pathlib import Path
from typing import Any


STAGED = ".new"  # the suffix of a new run's records until its first checkpoint
FORMATS = ("jsonl", "csv")


class RecordsError(ValueError):
    """A metrics file holds a line that is not a record; the message names file and line."""


class MetricsFile:
    """Append-only records in ``path`` (``.jsonl`` or ``.csv``, from ``fmt``).

    With ``staged=True`` (a new run), records go to ``path`` + ``STAGED`` until ``commit``
    renames that file over ``path``: a file an earlier run left there stays whole until then.
    """

    def __init__(self, directory: Path, stem: str, fmt: str, staged: bool = False):
        self.path = Path(directory) / f"{stem}.{fmt}"
        self.fmt = fmt
        self._staged = self.path.with_name(self.path.name + STAGED) if staged else None
        self._fresh = staged  # the staged file starts empty, whatever a killed run left

    def append(self, record: dict[str, Any]) -> None:
        target = self._staged or self.path
        if self._fresh:
            target.unlink(missing_ok=True)
            self._fresh = False
        with _appending(target) as (handle, size):
            text = (self._header(record) if size == 0 else "") + self._line(record)
            _write_all(handle, text.encode("utf-8"))

    def commit(self) -> None:
        """Put the staged records in place (one rename) and append there from now on."""
        if self._staged is None:
            return
        if self._fresh:  # nothing recorded yet: the new run's file starts empty
            self._staged.write_text("", encoding="utf-8")
        os.replace(self._staged, self.path)
        self._staged, self._fresh = None, False

    def _header(self, record: dict[str, Any]) -> str:
        return _csv_line(list(record)) if self.fmt == "csv" else ""

    def _line(self, record: dict[str, Any]) -> str:
        values = {key: _finite_or_none(value) for key, value in record.items()}
        if self.fmt == "jsonl":
            return json.dumps(values, allow_nan=False) + "\n"
        return _csv_line(["" if value is None else value for value in values.values()])

    def read(self) -> list[dict[str, Any]]:
        """The records so far, with numbers as numbers (CSV cells are parsed back) and a value
        that was not finite as None."""
        path = self._staged or self.path
        if not path.exists():
            return []
        return [record for _, _, record in self._parsed(self._lines(path))]

    def truncate(self, key: str, last: int, then: dict[str, Any] | None = None) -> None:
        """Keep the records whose ``key`` (epoch or step) is at most ``last``, byte for byte,
        and append ``then`` after them, all in one rename."""
        lines = self._complete_lines(self.path)
        header = lines[:1] if self.fmt == "csv" else []
        kept = header + [line for _, line, record in self._parsed(lines) if record[key] <= last]
        if then is not None:
            kept += ([] if header else [self._header(then)]) + [self._line(then)]
        if kept or self.path.exists():
            _write_replacing(self.path, "".join(kept))

    def rewrite(self, records: list[dict[str, Any]]) -> None:
        """``records`` as the whole file (one rename)."""
        text = self._header(records[0]) if records else ""
        _write_replacing(self.path, text + "".join(map(self._line, records)))

    def adopt_other_format(self) -> Path | None:
        """Where this file is missing but the same records are in the other format (a run
        resumed with another ``output.format``): rewrite them here and delete that file.
        Returns the file converted, or None."""
        for fmt in FORMATS:
            other = MetricsFile(self.path.parent, self.path.stem, fmt)
            if fmt != self.fmt and other.path.exists() and not self.path.exists():
                lines = other._complete_lines(other.path)
                self.rewrite([record for _, _, record in other._parsed(lines)])
                other.path.unlink()
                return other.path
        return None

    def _complete_lines(self, path: Path) -> list[str]:
        """The file's lines, less a last one a killed process left without its newline (a
        record cut short is never complete)."""
        lines = self._lines(path) if path.exists() else []
        return lines[:-1] if lines and not lines[-1].endswith("\n") else lines

    def _lines(self, path: Path) -> list[str]:
        try:
            with open(path, encoding="utf-8", newline="") as file:  # CSV's \r\n kept
                return file.read().splitlines(keepends=True)
        except UnicodeDecodeError as error:
            raise RecordsError(f"{path}: not a text file of records ({error})") from None

    def _parsed(self, lines: list[str]) -> list[tuple[int, str, dict[str, Any]]]:
        """``(line number, line, record)`` for each record line."""
        names = next(csv.reader(lines[:1]), []) if self.fmt == "csv" else []
        parsed = []
        for number, line in enumerate(lines, start=1):
            if not line.strip() or (self.fmt == "csv" and number == 1):
                continue
            try:
                if self.fmt == "jsonl":
                    record = json.loads(line)
                    if not isinstance(record, dict):
                        raise ValueError(f"a JSON {type(record).__name__}, not an object")
                else:
                    cells = next(csv.reader([line]))
                    if len(cells) != len(names):
                        raise ValueError(f"{len(cells)} cells under {len(names)} column names")
                    record = {name: _number(cell) for name, cell in zip(names, cells)}
                if not all(isinstance(record.get(k), int) for k in ("epoch", "step")):
                    raise ValueError("no whole-number epoch and step")
            except ValueError as error:
                raise RecordsError(f"{self.path}:{number}: not a record ({error}); correct or "
                                   f"delete that line") from None
            parsed.append((number, line, record))
        return parsed


def _finite_or_none(value: Any) -> Any:
    return None if isinstance(value, float) and not math.isfinite(value) else value


def _csv_line(cells: list[Any]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer).writerow(cells)
    return buffer.getvalue()


def _number(text: str) -> Any:
    if text == "":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


class _appending:
    """An append-only handle and the file's size; whatever a failed write added is cut off."""

    def __init__(self, path: Path):
        self.path = path

    def __enter__(self) -> tuple[int, int]:
        self.handle = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        self.size = os.fstat(self.handle).st_size
        return self.handle, self.size

    def __exit__(self, kind: Any, error: Any, traceback: Any) -> None:
        try:
            if error is not None:
                os.ftruncate(self.handle, self.size)
        finally:
            os.close(self.handle)


def _write_all(handle: int, data: bytes) -> None:
    while data:
        data = data[os.write(handle, data):]


def _write_replacing(path: Path, text: str) -> None:
    """``text`` as the whole of ``path``, by a rename: the old file stays whole until then."""
    temporary = path.with_name(path.name + ".tmp")
    try:
        with open(temporary, "w", encoding="utf-8", newline="") as file:
            file.write(text)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
