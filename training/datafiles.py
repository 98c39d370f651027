"""The data files a run config can name: MNIST's IDX files, ``.npz`` archives and CSV files.

Each reader returns a ``Loaded`` (the samples and where they came from, so that later checks
can name the file, the array or the column at fault) or raises ``DataError`` with one line
naming the file, and the line or key where there is one. Features that are NaN or infinite are
refused here (``require_finite``): a model trained on them learns NaN without a word.
"""

from __future__ import annotations

import csv
import gzip
import math
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np


class DataError(ValueError):
    """A dataset spec or data file is invalid; the message names the key or file."""


class Loaded(NamedTuple):
    """A source's samples; ``test`` is set when the source comes already split,
    ``task`` is None when it is to be inferred from the labels."""

    x: np.ndarray
    y: np.ndarray
    task: str | None
    test: tuple[np.ndarray, np.ndarray] | None = None
    features: str | None = None  # the file the features come from, for errors about them
    labels: str | None = None  # the same for the labels
    columns: list[str] | None = None  # the features' column names in that file
    lines: list[int] | None = None  # each example's line in its file (a CSV's)


_IDX_DTYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def _read_bytes(path: Path) -> bytes:
    """Contents of ``path``, gunzipped when they start with the gzip magic: by
    content, not name, since browsers often unpack ``.gz`` downloads in place."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DataError(f"{path}: file not found") from None
    except OSError as error:
        raise DataError(f"{path}: cannot read: {error.strerror or error}") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as error:
            raise DataError(f"{path}: corrupt gzip data: {error}") from None
    return raw


def read_idx(path: str | Path) -> np.ndarray:
    """Read an IDX file (raw or gzip'd) into an array of its own shape and dtype.

    The format is two zero bytes, a dtype code, the number of dimensions, one
    big-endian uint32 per dimension, then big-endian data. The data size must
    match the dimensions exactly, so that a cut-off download is reported rather
    than reshaped into garbage.
    """
    path = Path(path)
    raw = _read_bytes(path)
    if len(raw) < 4 or raw[:2] != b"\0\0" or raw[2] not in _IDX_DTYPES:
        raise DataError(f"{path}: not an IDX file (bad magic number 0x{raw[:4].hex()})")
    dtype = np.dtype(_IDX_DTYPES[raw[2]])
    header_size = 4 + 4 * raw[3]
    if len(raw) < header_size:
        raise DataError(f"{path}: truncated IDX header")
    dims = struct.unpack(f">{raw[3]}I", raw[4:header_size])
    expected, found = math.prod(dims) * dtype.itemsize, len(raw) - header_size
    if found != expected:
        problem = "truncated IDX file" if found < expected else "IDX file has trailing bytes"
        raise DataError(f"{path}: {problem}: dims {dims} of {dtype.name} need "
                        f"{expected} data bytes, found {found}")
    data = np.frombuffer(raw, dtype, offset=header_size).reshape(dims)
    return data.astype(dtype.newbyteorder("="))  # native byte order, writable


def _mnist_split(directory: Path, prefix: str) -> tuple[np.ndarray, np.ndarray]:
    """Images flattened, pixels 0..255 scaled to 0..1, and their labels."""
    def find(stem: str) -> Path:
        path = next((p for p in (directory / stem, directory / f"{stem}.gz") if p.is_file()), None)
        if path is None:
            raise DataError(f"{directory}: missing {stem} (or {stem}.gz)")
        return path

    images_path = find(f"{prefix}-images-idx3-ubyte")
    labels_path = find(f"{prefix}-labels-idx1-ubyte")
    images, labels = read_idx(images_path), read_idx(labels_path)
    if images.ndim != 3 or labels.ndim != 1:
        raise DataError(f"{images_path}, {labels_path}: expected 3-D images and 1-D labels, "
                        f"got shapes {images.shape} and {labels.shape}")
    if len(images) != len(labels):
        raise DataError(f"{images_path} has {len(images)} images but "
                        f"{labels_path} has {len(labels)} labels")
    require_finite(images, str(images_path))
    return images.reshape(len(images), -1).astype(np.float32) / 255, labels


def load_mnist_idx(opts: dict[str, Any], seed: int, where: str) -> Loaded:
    directory = Path(opts["path"])
    if not directory.is_dir():
        raise DataError(f"{where}.path: {directory}: directory not found")
    test = _mnist_split(directory, "t10k")
    return Loaded(*_mnist_split(directory, "train"), "classification", test,
                   features=f"{directory}/*-images-idx3-ubyte",
                   labels=f"{directory}/*-labels-idx1-ubyte")


def load_npz(opts: dict[str, Any], seed: int, where: str) -> Loaded:
    """Arrays ``x``/``y`` (or the spec's keys), or the file's own split when it
    has x_train/y_train/x_test/y_test and no keys are given."""
    path = Path(opts["path"])
    _require_archive(path)
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {key: archive[key] for key in archive.files}
    except (OSError, ValueError, EOFError, TypeError, zipfile.BadZipFile) as error:
        if "pickle" in str(error):  # NumPy's advice to unpickle is not given: it runs code
            raise DataError(f"{path}: holds an array of Python objects (pickled), which is not "
                            f"loaded; save numeric arrays (np.savez with numbers)") from None
        raise DataError(f"{path}: not a readable .npz archive: {error}") from None

    def pair(x_key: str, y_key: str) -> tuple[np.ndarray, np.ndarray]:
        for key in (x_key, y_key):
            if key not in arrays:
                raise DataError(f"{path}: no array {key!r}; it has {', '.join(arrays) or 'none'}")
        x, y = arrays[x_key], arrays[y_key]
        if x.ndim == 0 or len(x) != len(y):
            raise DataError(f"{path}: {x_key!r} has shape {x.shape} but {y_key!r} has {y.shape}")
        if x.dtype.kind in "fc":
            require_finite(x, f"{path}: array {x_key!r}")
        return x, y

    keys_given = opts["x_key"] is not None or opts["y_key"] is not None
    if not keys_given and {"x_train", "y_train", "x_test", "y_test"} <= arrays.keys():
        return Loaded(*pair("x_train", "y_train"), opts["task"], pair("x_test", "y_test"),
                       features=f"{path}: arrays 'x_train', 'x_test'",
                       labels=f"{path}: arrays 'y_train', 'y_test'")
    x_key, y_key = opts["x_key"] or "x", opts["y_key"] or "y"
    return Loaded(*pair(x_key, y_key), opts["task"], features=f"{path}: array {x_key!r}",
                   labels=f"{path}: array {y_key!r}")


def _require_archive(path: Path) -> None:
    """Refuse a file that is not a zip archive (as ``.npz`` files are) by its first bytes, so
    that a CSV or text file is named as one, before NumPy tries to unpickle it."""
    try:
        with path.open("rb") as file:
            start = file.read(64)
    except FileNotFoundError:
        raise DataError(f"{path}: file not found") from None
    except OSError as error:
        raise DataError(f"{path}: cannot read: {error.strerror or error}") from None
    if start.startswith(b"PK\x03\x04"):
        return
    if start.startswith(b"\x93NUMPY"):
        kind = "a single .npy array; save x and y together with np.savez(path, x=x, y=y)"
    elif start and all(32 <= byte < 127 or byte in b"\t\r\n" for byte in start):
        kind = "a text file (a CSV? give it as [data] name = \"csv\")"
    else:
        kind = "not a zip archive of .npy arrays"
    raise DataError(f"{path}: not an .npz archive: {'empty' if not start else kind}")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _label_column(label: int | str, names: list[str] | None, width: int, path: Path,
                  where: str) -> int:
    if isinstance(label, str):
        if names is None:
            raise DataError(f"{where}.label: {label!r} names a column but {path} has no "
                            "header row; give a column index or set header = true")
        if label not in names:
            raise DataError(f"{where}.label: no column {label!r} in {path}; "
                            f"columns: {', '.join(names)}")
        return names.index(label)
    if not -width <= label < width:
        raise DataError(f"{where}.label: column {label} out of range, {path} has {width} columns")
    return label % width


def load_csv(opts: dict[str, Any], seed: int, where: str) -> Loaded:
    """Numeric feature columns plus one label column (numbers or class names).

    With ``header = "auto"`` the first row is a header when it has a non-number
    where the second row has a number: features must be numeric, so only a
    header can do that.
    """
    path = Path(opts["path"])
    try:
        with path.open(newline="", encoding="utf-8-sig") as file:
            reader = csv.reader(file)
            rows = [(reader.line_num, row) for row in reader if any(cell.strip() for cell in row)]
    except FileNotFoundError:
        raise DataError(f"{path}: file not found") from None
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise DataError(f"{path}: cannot read CSV: {error}") from None
    first = rows[0][1] if rows else []
    header = opts["header"]
    if header == "auto":  # (a row alone is a header if it has a non-number: features can't)
        second = rows[1][1] if len(rows) > 1 else []
        header = any(not _is_number(a) and _is_number(b)
                     for a, b in zip(first, second, strict=False)) if second else \
            not all(map(_is_number, first))
    names = [name.strip() for name in first] if header else None
    data = rows[1:] if header else rows
    width = len(first)
    if header and rows and not data:
        raise DataError(f"{path}: a header row ({', '.join(names)}) and no data rows")
    if width < 2 or not data:
        raise DataError(f"{path}: need a feature column, a label column and a data row")
    for line, row in data:
        if len(row) != width:
            raise DataError(f"{path}:{line}: expected {width} columns, found {len(row)}")
    label = _label_column(opts["label"], names, width, path, where)
    table = np.array([row for _, row in data], dtype=str)
    columns = [i for i in range(width) if i != label]
    try:
        x = table[:, columns].astype(np.float64)
    except ValueError:
        line, row, i = next((line, row, i) for line, row in data for i in columns
                            if not _is_number(row[i]))
        column = names[i] if names else f"#{i}"
        raise DataError(f"{path}:{line}: column {column}: {row[i]!r} is not a number") from None
    bad = np.argwhere(~np.isfinite(x))
    if len(bad):
        (row_index, position), = bad[:1]
        line, row = data[row_index]
        i = columns[position]
        raise DataError(f"{path}:{line}: column {names[i] if names else f'#{i}'}: "
                        f"{row[i].strip()!r} is not a finite number; features must be finite")
    labels = np.char.strip(table[:, label])
    if np.any(labels == ""):
        raise DataError(f"{path}:{data[int(np.argmax(labels == ''))][0]}: missing label")
    y = labels.astype(np.float64) if all(map(_is_number, labels)) else labels
    label_name = names[label] if names else f"#{label}"
    return Loaded(x, y, opts["task"], features=str(path), labels=f"{path}: column {label_name}",
                   columns=[names[i] if names else f"#{i}" for i in columns],
                   lines=[line for line, _ in data])


def require_finite(x: np.ndarray, origin: str, columns: list[str] | None = None) -> None:
    """Refuse features that are NaN or infinite, naming ``origin`` (the file), the column and
    the row: a model trained on them learns NaN, silently."""
    if x.size == 0:
        return
    flat = x.reshape(len(x), -1) if x.ndim else x.reshape(1, 1)
    if not np.isfinite(flat).all():
        row, column = (int(i) for i in np.argwhere(~np.isfinite(flat))[0])
        name = columns[column] if columns else f"#{column}"
        raise DataError(f"{origin}: feature column {name}, row {row}: {flat[row, column]} is not "
                        f"a finite number; features must be finite (drop or fill such rows)")
