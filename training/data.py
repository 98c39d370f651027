"""Datasets for the training runner: ``load_dataset(spec, seed)`` turns a run
config's ``[data]`` table into float32 train/test arrays. Sources are
scikit-learn's bundled and generated sets, MNIST IDX files, ``.npz`` archives
and CSV files, all local or computed, so runs never download and work offline.

Spec keys are checked strictly: a typo such as ``nosie`` that silently fell
back to a default would waste a whole run.
"""

from __future__ import annotations

import csv
import gzip
import math
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import framework as fw
from sklearn import datasets as skdata
from sklearn.model_selection import train_test_split

TASKS = ("classification", "binary", "regression")


class DataError(ValueError):
    """A dataset spec or data file is invalid; the message names the key or file."""


@dataclass
class Dataset:
    """Train and test arrays plus what a model needs to know to fit them.

    Features are float32 of shape (n, num_features). Labels are int64 class ids
    of shape (n,) for the "classification" and "binary" tasks (binary labels
    are 0/1; the runner shapes them for its loss) and float32 targets of shape
    (n, 1) for "regression". ``num_classes`` is 2 for binary, 0 for regression.
    """

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    task: str
    num_classes: int
    num_features: int


class _Loaded(NamedTuple):
    """A source's samples; ``test`` is set when the source comes already split,
    ``task`` is None when it is to be inferred from the labels."""

    x: np.ndarray
    y: np.ndarray
    task: str | None
    test: tuple[np.ndarray, np.ndarray] | None = None


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
    return images.reshape(len(images), -1).astype(np.float32) / 255, labels


def _mnist_idx(opts: dict[str, Any], seed: int, where: str) -> _Loaded:
    directory = Path(opts["path"])
    if not directory.is_dir():
        raise DataError(f"{where}.path: {directory}: directory not found")
    test = _mnist_split(directory, "t10k")
    return _Loaded(*_mnist_split(directory, "train"), "classification", test)


def _npz(opts: dict[str, Any], seed: int, where: str) -> _Loaded:
    """Arrays ``x``/``y`` (or the spec's keys), or the file's own split when it
    has x_train/y_train/x_test/y_test and no keys are given."""
    path = Path(opts["path"])
    try:
        with np.load(path, allow_pickle=False) as archive:  # TypeError for a .npy array
            arrays = {key: archive[key] for key in archive.files}
    except FileNotFoundError:
        raise DataError(f"{path}: file not found") from None
    except (OSError, ValueError, EOFError, TypeError, zipfile.BadZipFile) as error:
        raise DataError(f"{path}: not a readable .npz archive: {error}") from None

    def pair(x_key: str, y_key: str) -> tuple[np.ndarray, np.ndarray]:
        for key in (x_key, y_key):
            if key not in arrays:
                raise DataError(f"{path}: no array {key!r}; it has {', '.join(arrays) or 'none'}")
        x, y = arrays[x_key], arrays[y_key]
        if x.ndim == 0 or len(x) != len(y):
            raise DataError(f"{path}: {x_key!r} has shape {x.shape} but {y_key!r} has {y.shape}")
        return x, y

    keys_given = opts["x_key"] is not None or opts["y_key"] is not None
    if not keys_given and {"x_train", "y_train", "x_test", "y_test"} <= arrays.keys():
        return _Loaded(*pair("x_train", "y_train"), opts["task"], pair("x_test", "y_test"))
    return _Loaded(*pair(opts["x_key"] or "x", opts["y_key"] or "y"), opts["task"])


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


def _csv(opts: dict[str, Any], seed: int, where: str) -> _Loaded:
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
    if header == "auto":
        second = rows[1][1] if len(rows) > 1 else []
        header = any(not _is_number(a) and _is_number(b)
                     for a, b in zip(first, second, strict=False))
    names = [name.strip() for name in first] if header else None
    data = rows[1:] if header else rows
    width = len(first)
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
    labels = np.char.strip(table[:, label])
    if np.any(labels == ""):
        raise DataError(f"{path}:{data[int(np.argmax(labels == ''))][0]}: missing label")
    y = labels.astype(np.float64) if all(map(_is_number, labels)) else labels
    return _Loaded(x, y, opts["task"])


def _bundled(load: Callable[..., Any], task: str, opts: dict[str, Any], seed: int,
             where: str) -> _Loaded:
    return _Loaded(*load(return_X_y=True), task)


def _generated(make: Callable[..., Any], task: str | None, opts: dict[str, Any], seed: int,
               where: str, **fixed: Any) -> _Loaded:
    """Call a sklearn generator with the spec's parameters. Without
    n_informative every feature is informative, so n_features alone can be set."""
    params = {key: value for key, value in opts.items() if key not in _SPLIT}
    if "n_informative" in params:
        params["n_informative"] = params["n_informative"] or params["n_features"]
    try:
        x, y = make(**params, **fixed, random_state=seed)
    except ValueError as error:  # a parameter combination that sklearn rejects
        raise DataError(f"{where}: {error}") from None
    return _Loaded(x, y, task)


# key: (accepted types, description for errors, extra check)
_KEYS: dict[str, tuple[tuple[type, ...], str, Callable[[Any], bool] | None]] = {
    "path": ((str,), "a path", None),
    "test_size": ((float,), "a number between 0 and 1", lambda v: 0 < v < 1),
    "standardize": ((bool,), "true or false", None),
    "scale": ((float,), "a positive number (features are divided by it)", lambda v: v > 0),
    **dict.fromkeys(("n_samples", "n_features", "n_informative"),
                    ((int,), "a positive integer", lambda v: v > 0)),
    "n_classes": ((int,), "an integer of at least 2", lambda v: v >= 2),
    "noise": ((float,), "a non-negative number", lambda v: v >= 0),
    "factor": ((float,), "a number between 0 and 1", lambda v: 0 < v < 1),
    **dict.fromkeys(("x_key", "y_key"), ((str,), "an array name", None)),
    "task": ((str,), f"one of {', '.join(TASKS)}", lambda v: v in TASKS),
    "label": ((int, str), "a column name or index", None),
    "header": ((bool, str), 'true, false or "auto"', lambda v: v in (True, False, "auto")),
}
_REQUIRED = object()
_PREPARE = {"standardize": False, "scale": 1.0}
_SPLIT = {"test_size": 0.2, **_PREPARE}
_SOURCES: dict[str, tuple[Callable[..., _Loaded], dict[str, Any]]] = {
    "digits": (partial(_bundled, skdata.load_digits, "classification"), _SPLIT),
    "iris": (partial(_bundled, skdata.load_iris, "classification"), _SPLIT),
    "wine": (partial(_bundled, skdata.load_wine, "classification"), _SPLIT),
    "breast_cancer": (partial(_bundled, skdata.load_breast_cancer, "binary"), _SPLIT),
    "diabetes": (partial(_bundled, skdata.load_diabetes, "regression"), _SPLIT),
    "moons": (partial(_generated, skdata.make_moons, "binary"),
              {"n_samples": 1000, "noise": 0.1, **_SPLIT}),
    "circles": (partial(_generated, skdata.make_circles, "binary"),
                {"n_samples": 1000, "noise": 0.05, "factor": 0.5, **_SPLIT}),
    "classification": (partial(_generated, skdata.make_classification, None, n_redundant=0),
                       {"n_samples": 1000, "n_features": 20, "n_informative": None,
                        "n_classes": 2, **_SPLIT}),
    "regression": (partial(_generated, skdata.make_regression, "regression"),
                   {"n_samples": 1000, "n_features": 10, "n_informative": None,
                    "noise": 0.1, **_SPLIT}),
    "mnist_idx": (_mnist_idx, {"path": _REQUIRED, **_PREPARE}),
    "npz": (_npz, {"path": _REQUIRED, "x_key": None, "y_key": None, "task": None, **_SPLIT}),
    "csv": (_csv, {"path": _REQUIRED, "label": -1, "header": "auto", "task": None, **_SPLIT}),
}


def _options(spec: dict[str, Any], defaults: dict[str, Any], where: str) -> dict[str, Any]:
    """The spec's values over the source's defaults, every key and value checked."""
    for key in spec:
        if key not in defaults:
            valid = ", ".join(["name", *sorted(defaults)])
            raise DataError(f"{where}.{key}: unknown key; expected one of {valid}")
    options = {**defaults, **spec}
    for key, value in options.items():
        if value is _REQUIRED:
            raise DataError(f"{where}.{key}: missing required key")
        types, description, check = _KEYS[key]
        accepted = types + ((int,) if float in types else ())
        valid = isinstance(value, accepted) and (bool in types or not isinstance(value, bool))
        if value is not None and not (valid and (check is None or check(value))):
            raise DataError(f"{where}.{key}: expected {description}, got {value!r}")
    return options


def _encode_labels(y: np.ndarray, task: str | None, where: str) -> tuple[np.ndarray, str, int]:
    """Labels as int64 class ids or float32 (n, 1) targets, with task and class count.

    Without a given task, integer labels mean classification ("binary" for two
    classes) and fractional ones regression. Non-negative integer labels stay
    the class ids, so a subset lacking a class keeps the others' ids; other
    labels (class names, -1/1) are numbered in sorted order.
    """
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise DataError(f"{where}: expected one label per sample, got shape {y.shape}")
    numeric = y.dtype.kind in "iuf"
    whole = numeric and bool(np.all(np.isfinite(y) & (y == np.round(y))))
    integral = y.dtype.kind in "iu" or whole
    inferred = task is None
    task = task or ("regression" if numeric and not integral else "classification")
    if task == "regression":
        if not numeric:
            raise DataError(f"{where}: regression targets must be numbers, got {y.dtype}")
        return y.astype(np.float32).reshape(-1, 1), task, 0
    if not integral and numeric:
        raise DataError(f"{where}: {task} labels must be integers or class names")
    if integral and y.min(initial=0) >= 0:
        ids = y.astype(np.int64)
        num_classes = int(ids.max(initial=-1)) + 1
    else:
        classes, ids = np.unique(y, return_inverse=True)
        num_classes = len(classes)
    if inferred and num_classes == 2:
        task = "binary"
    if task == "binary" and num_classes != 2:
        raise DataError(f"{where}: a binary task needs 2 classes (0/1), found {num_classes}")
    return ids.astype(np.int64), task, num_classes


def _standardize(x_train: np.ndarray, x_test: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Centre and scale by the train split's statistics only, so that nothing of
    the test samples leaks into training; constant columns are only centred."""
    mean, std = x_train.mean(axis=0, dtype=np.float64), x_train.std(axis=0, dtype=np.float64)
    std[np.ptp(x_train, axis=0) == 0] = 1.0  # exact: the float std of a constant can be tiny
    return (x_train - mean) / std, (x_test - mean) / std


def load_dataset(spec: dict[str, Any], seed: int, where: str = "data") -> Dataset:
    """Load the dataset that a config's ``[data]`` table describes.

    ``spec["name"]`` picks the source and the other keys depend on it (see
    ``_SOURCES``; paths are used as given). ``seed`` drives the generated sets
    and the train/test split, which is stratified for classification.
    ``scale`` divides the features (16 puts digits' pixels in 0..1), then
    ``standardize`` uses the train split's mean and std. ``where`` prefixes
    key errors: ``"configs/x.toml: data"`` gives
    ``configs/x.toml: data.nosie: unknown key; expected one of ...``.
    """
    spec = dict(spec)
    name = spec.pop("name", None)
    if name not in _SOURCES:
        problem = "missing key" if name is None else f"unknown dataset {name!r}"
        raise DataError(f"{where}.name: {problem}; expected one of {', '.join(_SOURCES)}")
    loader, defaults = _SOURCES[name]
    options = _options(spec, defaults, where)
    x, y, task, test = loader(options, seed, where)
    if test is not None and "test_size" in spec:
        raise DataError(f"{where}.test_size: not used, the data has its own test split")

    x_test, y_test = test if test is not None else (x[:0], y[:0])
    labels, task, num_classes = _encode_labels(np.concatenate([y, y_test]), task, where)
    y, y_test = labels[:len(y)], labels[len(y):]
    try:
        x, x_test = (np.asarray(a, dtype=np.float32) for a in (x, x_test))
    except ValueError as error:
        raise DataError(f"{where}: features must be numbers: {error}") from None
    x, x_test = (a.reshape(len(a), math.prod(a.shape[1:])) for a in (x, x_test))
    if test is None:
        try:
            x, x_test, y, y_test = train_test_split(
                x, y, test_size=options["test_size"], random_state=seed,
                stratify=y if task != "regression" else None)
        except ValueError as error:
            raise DataError(f"{where}.test_size: cannot split {len(y)} samples: {error}") from None
    if options["scale"] != 1:
        x, x_test = x / np.float32(options["scale"]), x_test / np.float32(options["scale"])
    if options["standardize"]:
        x, x_test = _standardize(x, x_test)
    return Dataset(x.astype(np.float32), y, x_test.astype(np.float32), y_test,
                   task, num_classes, x.shape[1])


def num_batches(n: int, batch_size: int) -> int:
    """Batches per epoch over ``n`` samples, counting the last partial one."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    return -(-n // batch_size)


def iterate_batches(x: np.ndarray, y: np.ndarray, batch_size: int, rng: np.random.Generator,
                    shuffle: bool = True) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Yield ``(xb, yb)`` mini-batches that cover every sample exactly once.

    The order is drawn from ``rng`` when called, so a run seeded once repeats
    its epochs. The last batch is kept even when partial: dropping it would
    lose a visible share of a small dataset.
    """
    if len(x) != len(y):
        raise ValueError(f"x has {len(x)} samples but y has {len(y)}")
    num_batches(len(x), batch_size)  # (checks batch_size)
    batches = fw.data.Dataset.from_tensor_slices((x, y))
    if shuffle:  # a full-buffer shuffle: one rng.permutation per epoch, drawn here
        batches = batches.shuffle(max(len(x), 1), seed=rng)
    return batches.batch(batch_size).as_numpy_iterator()
