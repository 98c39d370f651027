"""Save and restore a training run's state: model weights, optimizer state and the runner's
own ``extra`` (epoch, step, RNG state, config), in one ``.npz`` file.

Arrays are keyed by the model's structural variable paths (``Layer.named_variables``), so a
checkpoint restores into a fresh model built the same way, in this process or another, even
though its layers' auto names differ::

    model/dense1/kernel                       a model variable
    optimizers/<key>/iterations               an optimizer's step count (drives its schedule)
    optimizers/<key>/learning_rate            its learning rate, when it is a number
    optimizers/<key>/slots/dense1/kernel/momentum   a slot, by the path of its variable

``<key>`` is the name the optimizer has in the ``optimizers`` dict, so one optimizer per layer
works. A save writes a temporary file beside the target, flushes it to disk and renames it over
the target, so an interrupted save leaves the previous checkpoint whole. A restore checks
everything first (names, shapes, dtypes) and reports every mismatch in one error; then nothing
has been changed.

A file that cannot be read as a checkpoint at all (cut short by a full disk, damaged, or not a
checkpoint) raises ``CheckpointReadError`` naming the file, whatever the archive reader's own
exception was. ``read_extra`` reads only the ``extra`` dict, so a caller can compare what it
describes (the runner: the config) before building anything into it. A save killed outright
(``kill -9``, a power cut) can leave its temporary file beside the target;
``remove_stale_temporaries`` clears those before the next save.
"""
import glob
import json
import os
import tempfile
import warnings
import zipfile
import zlib

import numpy as np

from framework import backend

__all__ = ["CheckpointMismatchError", "CheckpointReadError", "read_extra",
           "remove_stale_temporaries", "restore_checkpoint", "save_checkpoint"]

_FORMAT = 1
_EXTRA_KEY, _FORMAT_KEY = "__extra__", "__format__"
_TEMPORARY_SUFFIX = ".npz.tmp"
# What reading a damaged archive can raise: the zip layer, the compressed stream, NumPy's header
# parser, a missing entry, the JSON of ``extra``, the file system.
# parser, a missing entry, the JSON of ``extra``, the file system; TypeError: a ``.npy`` array.
_READ_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, KeyError,
                TypeError, UnicodeDecodeError)


class CheckpointMismatchError(ValueError):
    """The checkpoint and the objects restored into it do not match; the message lists how."""


class CheckpointReadError(ValueError):
    """The file is missing, damaged or not a checkpoint; the message names it and says how."""


def save_checkpoint(path, model, optimizers=None, extra=None):
    """Write ``model``'s weights, the optimizers' state and ``extra`` (a JSON-able dict) to
    ``path`` atomically. ``optimizers`` is a dict ``{name: optimizer}`` or one optimizer."""
    try:
        extra_json = json.dumps({} if extra is None else extra)
    except TypeError as e:
        raise TypeError(f"save_checkpoint: extra must be JSON-serialisable: {e}") from None
    arrays = {_FORMAT_KEY: np.array(_FORMAT), _EXTRA_KEY: np.array(extra_json)}
    named = _named_variables(model, "save_checkpoint()")
    paths = {id(variable): name for name, variable in named.items()}
    for name, variable in named.items():
        arrays[f"model/{name}"] = variable.numpy()
    for key, optimizer in _as_dict(optimizers).items():
        state = optimizer.get_state()
        prefix = f"optimizers/{key}"
        arrays[f"{prefix}/iterations"] = np.array(state["iterations"], dtype=np.int64)
        if state["learning_rate"] is not None:
            arrays[f"{prefix}/learning_rate"] = np.array(state["learning_rate"])
        for variable, slots in state["slots"].items():
            if id(variable) not in paths:
                raise ValueError(f"save_checkpoint: optimizer '{key}' keeps slots for variable "
                                 f"'{variable.name}', which is not part of the model")
            for slot_name, value in slots.items():
                arrays[f"{prefix}/slots/{paths[id(variable)]}/{slot_name}"] = value
    _write_atomically(os.fspath(path), arrays)


def restore_checkpoint(path, model, optimizers=None, strict=True):
    """Load a checkpoint written by ``save_checkpoint`` into ``model`` and ``optimizers`` (the
    same keys as when saving) and return its ``extra`` dict.

    The model must be built (call it once, or ``model.build(input_shape)``). Names the
    checkpoint lacks (missing) or has in excess (unexpected) raise one
    ``CheckpointMismatchError`` listing them all; with ``strict=False`` they are a warning and
    the matching part is restored. Shape and dtype mismatches always raise.
    """
    named = _named_variables(model, "restore_checkpoint()")
    stored = _read(path, all_entries=True)
    extra = stored.pop(_EXTRA_KEY)
    missing, wrong = [], []
    model_values = _match({f"model/{p}": v for p, v in named.items()}, stored, missing, wrong)
    states = {key: _optimizer_state(key, optimizer, named, stored, missing, wrong)
              for key, optimizer in _as_dict(optimizers).items()}
    unexpected = sorted(stored)
    if wrong or missing or unexpected:
        where = f"restore_checkpoint({os.fspath(path)!r})"
        message = "; ".join([f"{where}: missing from the checkpoint: {missing or 'nothing'}",
                             f"unexpected in the checkpoint: {unexpected or 'nothing'}", *wrong])
        if strict or wrong:
            raise CheckpointMismatchError(message)
        warnings.warn(message + "; restored the rest", stacklevel=2)
    for variable, value in model_values:
        variable.assign(backend.to_device(value, variable.device))
    for key, optimizer in _as_dict(optimizers).items():
        optimizer.set_state(states[key])
    return extra


def read_extra(path):
    """The ``extra`` dict of the checkpoint at ``path``, without reading its arrays."""
    return _read(path, all_entries=False)[_EXTRA_KEY]


def remove_stale_temporaries(path):
    """Delete the temporary files that saves to ``path`` killed mid-write left beside it; return
    their names. Call it only where no save to ``path`` is under way."""
    directory = os.path.dirname(os.path.abspath(path))
    stem = os.path.splitext(os.path.basename(path))[0]
    removed = []
    for leftover in sorted(glob.glob(os.path.join(glob.escape(directory),
                                                  f"{glob.escape(stem)}.*{_TEMPORARY_SUFFIX}"))):
        os.unlink(leftover)
        removed.append(os.path.basename(leftover))
    return removed


def _read(path, all_entries):
    """The archive's entries (all, or only format and extra), ``extra`` parsed; any failure to
    read it is one ``CheckpointReadError`` naming the file."""
    path = os.fspath(path)
    try:
        with np.load(path, allow_pickle=False) as archive:
            keys = archive.files if all_entries else [k for k in (_FORMAT_KEY, _EXTRA_KEY)
                                                      if k in archive.files]
            stored = {key: archive[key] for key in keys}
        if int(stored.pop(_FORMAT_KEY, -1)) != _FORMAT:
            raise CheckpointReadError(f"{path} is not a checkpoint of format {_FORMAT} (no "
                                      f"{_FORMAT_KEY} entry, or another format)")
        stored[_EXTRA_KEY] = json.loads(str(stored[_EXTRA_KEY]))
    except FileNotFoundError:
        raise CheckpointReadError(f"{path}: no such checkpoint file") from None
    except CheckpointReadError:
        raise
    except _READ_ERRORS as error:
        raise CheckpointReadError(f"{path}: not a readable checkpoint (truncated or damaged: "
                                  f"{type(error).__name__}: {error})") from None
    return stored


def _as_dict(optimizers):
    if optimizers is None:
        return {}
    if isinstance(optimizers, dict):
        return optimizers
    return {"optimizer": optimizers}


def _named_variables(model, what):
    model._require_built(what)  # an unbuilt model: the error says to call it once or build it
    return model.named_variables()


def _match(expected, stored, missing, wrong):
    """``[(variable, array)]`` for the expected keys found in ``stored`` (popped from it)."""
    pairs = []
    for key, variable in expected.items():
        if key not in stored:
            missing.append(key)
            continue
        value = stored.pop(key)
        if value.shape != variable.shape or value.dtype != variable.dtype:
            wrong.append(f"'{key}' is {value.dtype.name}{list(value.shape)} in the checkpoint "
                         f"but {variable.dtype.name}{list(variable.shape)} in the model")
        pairs.append((variable, value))
    return pairs


def _optimizer_state(key, optimizer, named, stored, missing, wrong):
    """The ``set_state`` argument for one optimizer, from the entries under its prefix."""
    prefix = f"optimizers/{key}"
    current = optimizer.get_state()
    state = {"slots": {}}
    if f"{prefix}/iterations" in stored:
        state["iterations"] = int(stored.pop(f"{prefix}/iterations"))
    else:
        missing.append(f"{prefix}/iterations")
    if current["learning_rate"] is not None:
        if f"{prefix}/learning_rate" in stored:
            state["learning_rate"] = float(stored.pop(f"{prefix}/learning_rate"))
        else:
            missing.append(f"{prefix}/learning_rate")
    slot_names = optimizer.get_slot_names()
    for path, variable in named.items():
        keys = {name: f"{prefix}/slots/{path}/{name}" for name in slot_names}
        if not any(k in stored for k in keys.values()):
            missing.extend(keys.values() if variable in current["slots"] else ())
            continue
        expected = {keys[name]: variable for name in slot_names}
        found = _match(expected, stored, missing, wrong)
        if len(found) == len(slot_names):
            state["slots"][variable] = {name: value for name, (_, value) in zip(slot_names, found)}
    return state


def _write_atomically(path, arrays):
    """Write the archive to a temporary file beside ``path``, fsync it, rename it over ``path``."""
    directory = os.path.dirname(os.path.abspath(path))
    stem = os.path.splitext(os.path.basename(path))[0]
    handle, temporary = tempfile.mkstemp(prefix=f"{stem}.", suffix=_TEMPORARY_SUFFIX,
                                         dir=directory)
    try:
        with os.fdopen(handle, "wb") as f:
            np.savez(f, **arrays)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
    if hasattr(os, "O_DIRECTORY"):  # make the rename itself durable (POSIX)
        directory_handle = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(directory_handle)
        finally:
            os.close(directory_handle)
