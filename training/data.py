"""Datasets for the training runner: ``load_dataset(spec, seed)`` turns a run
config's ``[data]`` table into float32 train/test arrays. Sources are
scikit-learn's bundled and generated sets, MNIST IDX files, ``.npz`` archives
and CSV files (read by ``training.datafiles``), all local or computed, so runs
never download and work offline.

Spec keys are checked strictly: a typo such as ``nosie`` that silently fell
back to a default would waste a whole run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import framework as fw
from sklearn import datasets as skdata
from sklearn.model_selection import train_test_split

from .datafiles import (DataError, Loaded, load_csv, load_mnist_idx, load_npz, read_idx,
                        require_finite)

__all__ = ["DataError", "Dataset", "iterate_batches", "load_dataset", "num_batches", "read_idx"]

TASKS = ("classification", "binary", "regression")


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
    labels: str = "the labels"  # where the labels come from, for errors about them
    classes: np.ndarray | None = None  # the label of each class id, where they differ


def _bundled(load: Callable[..., Any], task: str, opts: dict[str, Any], seed: int,
             where: str) -> Loaded:
    return Loaded(*load(return_X_y=True), task)


def _generated(make: Callable[..., Any], task: str | None, opts: dict[str, Any], seed: int,
               where: str, **fixed: Any) -> Loaded:
    """Call a sklearn generator with the spec's parameters. Without
    n_informative every feature is informative, so n_features alone can be set."""
    params = {key: value for key, value in opts.items() if key not in _SPLIT}
    if "n_informative" in params:
        params["n_informative"] = params["n_informative"] or params["n_features"]
    try:
        x, y = make(**params, **fixed, random_state=seed)
    except ValueError as error:  # a parameter combination that sklearn rejects
        raise DataError(f"{where}: {error}") from None
    return Loaded(x, y, task)


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
_SOURCES: dict[str, tuple[Callable[..., Loaded], dict[str, Any]]] = {
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
    "mnist_idx": (load_mnist_idx, {"path": _REQUIRED, **_PREPARE}),
    "npz": (load_npz, {"path": _REQUIRED, "x_key": None, "y_key": None, "task": None, **_SPLIT}),
    "csv": (load_csv, {"path": _REQUIRED, "label": -1, "header": "auto", "task": None, **_SPLIT}),
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


def _encode_labels(y: np.ndarray, task: str | None, where: str, lines: list[int] | None = None
                   ) -> tuple[np.ndarray, str, int, np.ndarray | None]:
    """Labels as int64 class ids or float32 (n, 1) targets, with task, class count and the
    label of each class id where the ids were numbered here (None where they are the labels).

    Without a given task, integer labels mean classification ("binary" for two
    classes) and fractional ones regression. Non-negative integer labels stay
    the class ids, so a subset lacking a class keeps the others' ids; other
    labels (class names, -1/1) are numbered in sorted order. A fractional label or two among
    whole-number class ids is blamed on itself (``_stray_fraction``), not read as regression.
    """
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise DataError(f"{where}: expected one label per sample, got shape {y.shape}")
    numeric = y.dtype.kind in "iuf"
    if numeric and not np.isfinite(y).all():
        index = int(np.argmax(~np.isfinite(y)))
        raise DataError(f"{where}: label {index} is {y[index]}; labels and targets must be "
                        f"finite numbers or class names")
    whole = numeric and bool(np.all(y == np.round(y)))
    integral = y.dtype.kind in "iu" or whole
    inferred = task is None
    if inferred and numeric and not integral:
        _stray_fraction(y, where, lines)
    task = task or ("regression" if numeric and not integral else "classification")
    if task == "regression":
        if not numeric:
            raise DataError(f"{where}: regression targets must be numbers, got {y.dtype}")
        return y.astype(np.float32).reshape(-1, 1), task, 0, None
    if not integral and numeric:
        raise DataError(f"{where}: {task} labels must be integers or class names")
    classes = None
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
    return ids.astype(np.int64), task, num_classes, classes


MAX_GUESSED_CLASSES = 100  # whole-number labels with at most this many values look like classes


def _stray_fraction(y: np.ndarray, where: str, lines: list[int] | None) -> None:
    """Refuse labels that are whole-number class ids but for a few fractional ones (at most 1%):
    a mistyped label far more often than regression targets; ``data.task`` says otherwise."""
    fractional = np.flatnonzero(y != np.round(y))
    classes = np.unique(np.delete(y, fractional))
    if len(fractional) > max(1, len(y) // 100) or len(classes) > MAX_GUESSED_CLASSES:
        return
    index = int(fractional[0])
    row = f"line {lines[index]}" if lines else f"example {index}"
    raise DataError(f"{where}: label {y[index]:g} ({row}) is fractional among whole-number "
                    f"labels ({len(classes)} values, {classes.min():g} to "
                    f"{classes.max():g}); correct it, or set data.task = \"regression\" "
                    f"if the labels are numeric targets")


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
    loaded = loader(options, seed, where)
    x, y, task, test = loaded[:4]
    if test is not None and "test_size" in spec:
        raise DataError(f"{where}.test_size: not used, the data has its own test split")

    x_test, y_test = test if test is not None else (x[:0], y[:0])
    described = loaded.labels or f"{where}: the labels of {name!r}"
    labels, task, num_classes, classes = _encode_labels(np.concatenate([y, y_test]), task,
                                                        described, loaded.lines)
    y, y_test = labels[:len(y)], labels[len(y):]
    try:
        with np.errstate(over="ignore"):  # a value beyond float32's range: refused just below
            x, x_test = (np.asarray(a, dtype=np.float32) for a in (x, x_test))
    except ValueError as error:
        raise DataError(f"{where}: features must be numbers: {error}") from None
    x, x_test = (a.reshape(len(a), math.prod(a.shape[1:])) for a in (x, x_test))
    for part in (x, x_test):  # after the cast: a float64 beyond float32's range is infinite
        require_finite(part, f"{loaded.features or where} (as float32)", loaded.columns)
    if test is None and task != "regression":
        _check_strata(y, classes, options["test_size"], described)
    if test is None:
        try:
            x, x_test, y, y_test = train_test_split(
                x, y, test_size=options["test_size"], random_state=seed,
                stratify=y if task != "regression" else None)
        except ValueError as error:
            classes_in = "" if task == "regression" else f" of {num_classes} classes" + (
                f" (labels: {loaded.labels})" if loaded.labels else "")
            raise DataError(f"{where}.test_size: cannot split {len(y)} samples{classes_in}: "
                            f"{error}") from None
    if options["scale"] != 1:
        x, x_test = x / np.float32(options["scale"]), x_test / np.float32(options["scale"])
    if options["standardize"]:
        x, x_test = _standardize(x, x_test)
    return Dataset(x.astype(np.float32), y, x_test.astype(np.float32), y_test,
                   task, num_classes, x.shape[1], described, classes)


def _check_strata(ids: np.ndarray, classes: np.ndarray | None, test_size: float,
                  labels: str) -> None:
    """A stratified split puts each class on both sides, so each needs two examples; a class
    with one is most often a mistyped or out-of-range label, and is blamed as one."""
    counts = np.bincount(ids)
    single = np.flatnonzero(counts == 1)
    if len(single):
        shown = ", ".join(repr(_plain(classes[i] if classes is not None else i))
                          for i in single[:5])
        raise DataError(f"{labels}: only one example has label {shown}"
                        f"{' (and each of the others)' if len(single) > 1 else ''}; the split "
                        f"into train and test (test_size {test_size}) needs at least 2 examples "
                        f"of each class: correct or drop such labels")


def _plain(value: Any) -> Any:
    """A NumPy scalar as the Python value it shows (``7``, ``'cat'``), for messages."""
    return value.item() if isinstance(value, np.generic) else value


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
